//! Today's hosted models, through the real binary against local servers that
//! answer as those APIs do: an OpenAI reasoning model (400 for
//! `temperature`, `stop` and `max_tokens`; reasoning tokens in the usage),
//! an unknown model that refuses parameters only at run time (the dynamic
//! fallback), OpenAI and Anthropic refusing non-object schema roots (the
//! wrapped native path), and Gemini's 429 whose wait is in the body.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{Value, json};
use support::{Recorded, Reply, Server};

const KEY_ENV: &str = "CUTLINE_HOSTED_TEST_KEY";

fn openai_error(status: u16, message: &str, param: &str, code: &str) -> Reply {
    let body = json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}});
    Reply::status(status, &body.to_string())
}

/// One OpenAI chunk with `content`.
fn chunk(content: &str) -> String {
    json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]}).to_string()
}

/// A reasoning model's stream: it cannot be stopped, so it runs past the
/// prompt's stop sequence to its limit; the usage says 256 of the 300
/// tokens went to reasoning.
fn reasoning_answer() -> Reply {
    let parts = [
        chunk("{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n"),
        chunk("{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}\n"),
        chunk("\n"),
        chunk("\nText: something the model made up"),
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}).to_string(),
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 812, "completion_tokens": 300, "total_tokens": 1112, "completion_tokens_details": {"reasoning_tokens": 256}}}).to_string(),
        "[DONE]".to_owned(),
    ];
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    Reply::data(&refs)
}

/// Answers as OpenAI's reasoning models do: 400 for `temperature` other
/// than 1, for `stop`, and (when `refuse_max_tokens`) for `max_tokens`.
fn reasoning_server(refuse_max_tokens: bool) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let b = r.json();
        if b.get("temperature").is_some_and(|t| t != &json!(1)) {
            return openai_error(
                400,
                "Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) value is supported.",
                "temperature",
                "unsupported_value",
            );
        }
        if b.get("stop").is_some() {
            return openai_error(
                400,
                "Unsupported parameter: 'stop' is not supported with this model.",
                "stop",
                "unsupported_parameter",
            );
        }
        if refuse_max_tokens && b.get("max_tokens").is_some() {
            return openai_error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "max_tokens",
                "unsupported_parameter",
            );
        }
        reasoning_answer()
    }
}

fn cutline(dir: &Path, config: &str) -> Command {
    std::fs::write(dir.join("cutline.toml"), config).unwrap();
    let mut c = Command::cargo_bin("cutline").unwrap();
    c.current_dir(dir)
        .env("CUTLINE_CONFIG", dir.join("cutline.toml"))
        .env("CUTLINE_LEARNED_FILE", dir.join("learned.json"))
        .env(KEY_ENV, "sk-hosted-test-0000")
        .args(["--prompts"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts"))
        .args(["--sessions", "sessions"])
        .timeout(Duration::from_secs(60));
    c
}

fn provider_toml(name: &str, kind: &str, base: &str, model: &str, extra: &str) -> String {
    format!(
        "[[provider]]\nname = \"{name}\"\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"{model}\"\napi_key_env = \"{KEY_ENV}\"\nmax_retries = 2\nretry_base_secs = 0.01\n{extra}\n"
    )
}

fn envelope(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON envelope ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

const TWO_ITEMS: &str = "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reasoning_model_runs_with_its_profile_stop_applied_by_cutline() {
    let server = Server::handler(reasoning_server(true)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider_toml("reasoner", "openai", &format!("{}/v1", server.url()), "gpt-5-mini", "");
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "reasoner",
            "--max-tokens",
            "300",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env = envelope(&out);
    let data = &env["data"];
    // The profile knew: one request, nothing the model refuses.
    let body = server.only_request().json();
    assert_eq!(body["max_completion_tokens"], json!(300));
    for refused in ["temperature", "stop", "max_tokens", "top_p"] {
        assert!(body.get(refused).is_none(), "{refused} sent: {body}");
    }
    // The text ends before the prompt's stop sequence "\n\n".
    assert_eq!(data["text"], TWO_ITEMS);
    assert_eq!(data["finish_reason"], "stop");
    assert!(
        data["raw_reason"].as_str().unwrap().contains("applied by cutline"),
        "{}",
        data["raw_reason"]
    );
    assert_eq!(data["analysis"]["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        data["usage"],
        json!({"prompt_tokens": 812, "completion_tokens": 300, "reasoning_tokens": 256})
    );
    let adjustments = data["adjustments"].as_array().unwrap();
    assert_eq!(
        adjustments,
        &vec![
            json!({"kind": "not_sent", "param": "temperature", "family": "openai-reasoning"}),
            json!({"kind": "not_sent", "param": "stop", "family": "openai-reasoning"}),
            // The openai SDK's model list announces gpt-5-mini's shutdown.
            json!({"kind": "retiring", "model": "gpt-5-mini", "lifecycle": "deprecated", "date": "2026-12-11", "source": "profile"}),
        ]
    );
    let warnings = env["warnings"].to_string();
    assert!(
        warnings.contains("stop sequences not sent (openai-reasoning models refuse them); applied by cutline"),
        "{warnings}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_model_that_refuses_parameters_is_retried_without_them_and_remembered() {
    let server = Server::handler(reasoning_server(false)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider_toml(
        "mystery",
        "openai-compatible",
        &format!("{}/v1", server.url()),
        "house-reasoner-7",
        "",
    );
    let out = cutline(dir.path(), &config)
        .args([
            "eval",
            "--prompt",
            "extract-definitions-jsonl",
            "--no-twins",
            "--provider",
            "mystery",
            "--max-tokens",
            "300",
            "--concurrency",
            "1",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bodies: Vec<Value> = server.requests().iter().map(Recorded::json).collect();
    // First run: refused temperature, then stop, then accepted. Every later
    // run goes without them at once (three inputs: 3 + 1 + 1 requests).
    assert_eq!(bodies.len(), 5, "{bodies:#?}");
    assert_eq!(bodies[0]["temperature"], json!(0.0));
    assert!(bodies[1].get("temperature").is_none() && bodies[1].get("stop").is_some());
    for b in &bodies[2..] {
        assert!(b.get("temperature").is_none() && b.get("stop").is_none(), "{b}");
        assert_eq!(b["max_tokens"], json!(300));
    }
    // The session records why, run by run.
    let session = std::fs::read_dir(dir.path().join("sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let s = cutline::session::load(&session).unwrap();
    let first = &s.runs[0];
    let kinds: Vec<Value> = first
        .adjustments
        .iter()
        .map(|a| serde_json::to_value(a).unwrap())
        .collect();
    assert_eq!(kinds[0]["kind"], "learned");
    assert_eq!(kinds[0]["fact"], "temperature: not accepted");
    assert_eq!(kinds[0]["status"], 400);
    assert_eq!(kinds[1]["fact"], "stop sequences: not accepted");
    assert_eq!(first.text, TWO_ITEMS);
    assert_eq!(first.params.temperature, None);
    assert_eq!(first.params.stop, vec!["\n###".to_owned(), "\n\n".to_owned()]);
    assert!(!cutline::run::replay_exact(first));
    let later = serde_json::to_value(&s.runs[1].adjustments).unwrap();
    assert_eq!(
        later,
        json!([
            {"kind": "not_sent", "param": "temperature", "family": "learned"},
            {"kind": "not_sent", "param": "stop", "family": "learned"}
        ])
    );
}

/// OpenAI answers 400 for a `response_format` schema whose root is not an
/// object, as its API does.
fn openai_object_roots_only(r: &Recorded) -> Reply {
    let b = r.json();
    let schema = &b["response_format"]["json_schema"]["schema"];
    if schema["type"] != "object" {
        return openai_error(
            400,
            "Invalid schema for response_format 'x': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"array\"'.",
            "response_format",
            "invalid_json_schema",
        );
    }
    let parts = [
        chunk("{\"items\": [{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}, "),
        chunk("{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}]}"),
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string(),
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 30}}).to_string(),
        "[DONE]".to_owned(),
    ];
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    Reply::data(&refs)
}

fn two_items() -> Value {
    json!([
        {"entity": "photosynthesis", "definition": "how plants make sugar"},
        {"entity": "chlorophyll", "definition": "the green pigment"}
    ])
}

fn assert_wrapped_items(out: &std::process::Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let data = &envelope(out)["data"];
    assert_eq!(data["structured_path"], "native_wrapped");
    assert_eq!(data["parsed"], two_items());
    assert_eq!(data["analysis"]["items"], two_items());
    assert_eq!(data["analysis"]["status"], "ok");
    assert_eq!(data["adjustments"][0]["kind"], "wrapped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_array_schema_goes_native_wrapped_to_openai() {
    let server = Server::handler(openai_object_roots_only).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider_toml("o", "openai", &format!("{}/v1", server.url()), "gpt-4.1-mini", "");
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions",
            "--provider",
            "o",
            "--structured",
            "native",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert_wrapped_items(&out);
    let body = server.only_request().json();
    let rf = &body["response_format"]["json_schema"];
    assert_eq!(rf["schema"]["required"], json!(["items"]));
    assert_eq!(rf["schema"]["properties"]["items"]["type"], "array");
    assert!(rf["schema"]["properties"]["items"].get("$schema").is_none());
    // The bundled schema uses `minLength`, which strict mode lacks: strict is off.
    assert_eq!(rf["strict"], json!(false));
}

/// Anthropic: a forced tool's `input_schema` and `output_config`'s schema
/// must be objects; the answer comes as tool input deltas or text.
fn anthropic_object_roots_only(r: &Recorded) -> Reply {
    let b = r.json();
    let (schema, tool) = match (
        b.pointer("/tools/0/input_schema"),
        b.pointer("/output_config/format/schema"),
    ) {
        (Some(s), _) => (s.clone(), true),
        (None, Some(s)) => (s.clone(), false),
        (None, None) => {
            return Reply::status(
                500,
                "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"no schema\"}}",
            );
        }
    };
    if schema["type"] != "object" {
        let field = if tool {
            "tools.0.custom.input_schema.type"
        } else {
            "output_config.format.schema.type"
        };
        let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!("{field}: Input should be 'object'")}});
        return Reply::status(400, &body.to_string());
    }
    let (start, delta_type, field, stop) = if tool {
        (
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "x", "input": {}}}),
            "input_json_delta",
            "partial_json",
            "tool_use",
        )
    } else {
        (
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            "text_delta",
            "text",
            "end_turn",
        )
    };
    let delta = |s: &str| json!({"type": "content_block_delta", "index": 0, "delta": {"type": delta_type, field: s}});
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        ("content_block_start", start),
        (
            "content_block_delta",
            delta("{\"items\": [{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}, "),
        ),
        (
            "content_block_delta",
            delta("{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}]}"),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 30}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let raw: Vec<String> = events.iter().map(|(e, d)| format!("event: {e}\ndata: {d}")).collect();
    let refs: Vec<&str> = raw.iter().map(String::as_str).collect();
    Reply::sse(&refs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_array_schema_goes_native_wrapped_to_anthropic_by_tool_and_by_output_config() {
    let server = Server::handler(anthropic_object_roots_only).await;
    for (model, via_tool) in [("claude-3-5-haiku-latest", true), ("claude-sonnet-4-5", false)] {
        let dir = tempfile::tempdir().unwrap();
        let config = provider_toml("a", "anthropic", &server.url(), model, "");
        let before = server.requests().len();
        let out = cutline(dir.path(), &config)
            .args([
                "run",
                "extract-definitions",
                "--provider",
                "a",
                "--structured",
                "native",
                "--output",
                "json",
            ])
            .output()
            .unwrap();
        let body = server.requests()[before].json();
        if via_tool {
            assert_eq!(body["tool_choice"]["type"], "tool", "{model}: {body}");
            assert_eq!(body["tools"][0]["input_schema"]["properties"]["items"]["type"], "array");
            assert!(body.get("output_config").is_none());
        } else {
            let schema = &body["output_config"]["format"]["schema"];
            assert_eq!(schema["properties"]["items"]["type"], "array", "{model}: {body}");
            assert!(body.get("tools").is_none());
        }
        assert_wrapped_items(&out);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_429_with_retry_info_in_the_body_waits_that_long() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let server = Server::handler(move |_| {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            let body = json!({"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details.", "status": "RESOURCE_EXHAUSTED", "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}
            ]}});
            return Reply::status(429, &body.to_string());
        }
        Reply::data(&[
            r#"{"candidates":[{"content":{"parts":[{"text":"{\"entity\": \"a\", \"definition\": \"b\"}\n"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":12,"thoughtsTokenCount":40,"totalTokenCount":61},"modelVersion":"gemini-2.5-flash"}"#,
        ])
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider_toml("g", "gemini", &server.url(), "gemini-2.5-flash", "");
    let started = Instant::now();
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "g",
            "--no-record",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    let waited = started.elapsed();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(
        waited >= Duration::from_secs(2),
        "waited only {waited:?}: the body's RetryInfo was ignored"
    );
    let data = &envelope(&out)["data"];
    assert_eq!(
        data["usage"],
        json!({"prompt_tokens": 9, "completion_tokens": 52, "reasoning_tokens": 40})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_wait_over_the_cap_is_an_error_that_names_it() {
    let server = Server::handler(|_| {
        let body = json!({"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED", "details": [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3600s"}
        ]}});
        Reply::status(429, &body.to_string())
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider_toml(
        "g",
        "gemini",
        &server.url(),
        "gemini-2.5-flash",
        "retry_max_wait_secs = 5",
    );
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "g",
            "--no-record",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stdout));
    let err = &envelope(&out)["error"];
    let msg = err["message"].as_str().unwrap();
    assert!(msg.contains("asked to wait 3600.0 s, over the 5 s cap"), "{msg}");
    assert_eq!(server.requests().len(), 1, "no retry after a refused wait");
}

/// A provider that says `stop` for an answer the limit cut: the run says
/// it was cut, with the evidence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_finish_reason_is_caught_by_the_evidence() {
    let server = Server::handler(|_| {
        let parts = [
            chunk(
                "[{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}, {\"entity\": \"chloro",
            ),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string(),
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 40}}).to_string(),
            "[DONE]".to_owned(),
        ];
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        Reply::data(&refs)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider_toml("liar", "openai-compatible", &format!("{}/v1", server.url()), "m", "");
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions",
            "--provider",
            "liar",
            "--max-tokens",
            "40",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env = envelope(&out);
    assert_eq!(env["data"]["finish_reason"], "stop");
    assert_eq!(
        env["data"]["checks"],
        json!([{"kind": "stop_but_cut", "reported": "stop", "tokens": 40, "limit": 40}])
    );
    assert!(
        env["warnings"].to_string().contains("it was cut by the limit"),
        "{}",
        env["warnings"]
    );
    // The session keeps it with the run.
    let session = std::fs::read_dir(dir.path().join("sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let s = cutline::session::load(&session).unwrap();
    assert_eq!(s.runs[0].checks.len(), 1);
}
