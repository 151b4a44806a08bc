//! Today's models, through the real binary (and the workbench's runner)
//! against local servers that answer as those APIs do now, per the
//! providers' current SDKs (anthropic 2.14, openai 3.57, google-genai 3.6):
//!
//! - current Claude: `temperature` deprecated, `temperature` with `top_p`
//!   refused, `top_p` deprecated, no assistant prefill, only adaptive
//!   thinking, a Models API that reports capabilities and retirement, usage
//!   with exact `thinking_tokens` and cache reads;
//! - an OpenAI model only `/v1/responses` serves (404 on chat completions),
//!   its typed event stream, a cut that ends `response.incomplete`;
//! - Gemini 3: no temperature below 1.0 by default, `thinkingLevel`, and a
//!   `CONTINUATION` resumed with its `continuationToken`.
//!
//! The provider entries hold nothing but name, kind, base URL, model and
//! key. Each learning test runs the same command again as a second process
//! and checks that it sends no request that is refused; `cutline probe`
//! finds each capability within eight requests.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use support::{Recorded, Reply, Server};

const KEY_ENV: &str = "CUTLINE_NOW_TEST_KEY";

const LINES_1: &str = "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}\n{\"entity\": \"stoma";
const LINES_2: &str = "{\"entity\": \"stomata\", \"definition\": \"pores in a leaf\"}\n{\"entity\": \"xylem\", \"definition\": \"tissue that carries water\"}";

fn cutline(dir: &Path, config: &str) -> Command {
    cutline_on(dir, config, &Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts"))
}

fn cutline_on(dir: &Path, config: &str, prompts: &Path) -> Command {
    std::fs::write(dir.join("cutline.toml"), config).unwrap();
    let mut c = Command::cargo_bin("cutline").unwrap();
    c.current_dir(dir)
        .env("CUTLINE_CONFIG", dir.join("cutline.toml"))
        .env("CUTLINE_LEARNED_FILE", dir.join("models.json"))
        .env(KEY_ENV, "sk-now-test-0000")
        .args(["--prompts"])
        .arg(prompts)
        .args(["--sessions", "sessions"])
        .timeout(Duration::from_secs(60));
    c
}

/// A provider entry with nothing but name, kind, base URL, model and key.
fn provider(name: &str, kind: &str, base: &str, model: &str) -> String {
    format!(
        "[[provider]]\nname = \"{name}\"\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"{model}\"\napi_key_env = \"{KEY_ENV}\"\n"
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

fn body(r: &Recorded) -> Value {
    if r.body.is_empty() { Value::Null } else { r.json() }
}

fn posts(server: &Server) -> Vec<Value> {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(body)
        .collect()
}

fn items(data: &Value) -> Vec<String> {
    data["analysis"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["entity"].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------- Claude

fn anthropic_error(message: &str) -> Reply {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}, "request_id": "req_011"});
    Reply::status(400, &body.to_string())
}

fn claude_stream(text: &str, stop: &str, thinking: bool) -> Reply {
    let start = json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "stop_reason": null, "usage": {"input_tokens": 388, "output_tokens": 1, "cache_read_input_tokens": 512, "cache_creation_input_tokens": 0}}});
    let mut events = vec![format!("event: message_start\ndata: {start}")];
    if thinking {
        // Current models return thinking blocks empty unless asked.
        events.push("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}".into());
        events.push("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQB\"}}".into());
        events.push("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}".into());
    }
    events.push("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}".into());
    for part in text.split_inclusive('\n') {
        let d = json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": part}});
        events.push(format!("event: content_block_delta\ndata: {d}"));
    }
    let thinking_tokens = if thinking { 37 } else { 0 };
    let delta = json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null, "stop_details": null}, "usage": {"output_tokens": 80, "output_tokens_details": {"thinking_tokens": thinking_tokens}}});
    events.push(format!("event: message_delta\ndata: {delta}"));
    events.push("event: message_stop\ndata: {\"type\":\"message_stop\"}".into());
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    Reply::sse(&refs)
}

fn model_info(id: &str) -> Value {
    // One deprecated model with a retirement date far off, so the test
    // does not change with the calendar.
    let (lifecycle, retires) = if id == "claude-sonnet-4-5" {
        ("deprecated", json!("2099-01-31T00:00:00Z"))
    } else {
        ("active", Value::Null)
    };
    json!({
        "id": id, "type": "model", "display_name": id, "created_at": "2026-09-01T00:00:00Z",
        "lifecycle": lifecycle, "deprecated_at": null, "retires_at": retires, "line": "opus",
        "max_input_tokens": 1_000_000, "max_tokens": 128_000,
        "capabilities": {
            "batch": {"supported": true}, "structured_outputs": {"supported": true},
            "thinking": {"supported": true, "types": {"enabled": {"supported": false}, "adaptive": {"supported": true}, "disabled": {"supported": true}, "between_tools": {"supported": true}}},
            "effort": {"supported": true, "low": {"supported": true}, "medium": {"supported": true}, "high": {"supported": true}, "max": {"supported": true}, "xhigh": {"supported": true}}
        }
    })
}

/// Answers as current Claude does. `models`: the ids its Models API knows.
fn claude(models: &'static [&'static str]) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        if r.method == "GET" {
            let id = r.path.trim_start_matches("/v1/models/");
            return if models.contains(&id) {
                Reply::status(200, &model_info(id).to_string())
            } else {
                let e =
                    json!({"type": "error", "error": {"type": "not_found_error", "message": format!("model: {id}")}});
                Reply::status(404, &e.to_string())
            };
        }
        let b = r.json();
        if b.get("temperature").is_some() && b.get("top_p").is_some() {
            return anthropic_error(
                "`temperature` and `top_p` cannot both be specified for this model. Please use only one.",
            );
        }
        for field in ["temperature", "top_p", "top_k"] {
            if b.get(field).is_some() {
                return anthropic_error(&format!("`{field}` is deprecated for this model."));
            }
        }
        let messages = b["messages"].as_array().unwrap();
        if messages.last().unwrap()["role"] == "assistant" {
            return anthropic_error(
                "This model does not support assistant message prefill. The conversation must end with a user message.",
            );
        }
        if b["thinking"]["type"] == "enabled" {
            return anthropic_error(
                "`thinking.type=enabled` is not supported for this model. Use `thinking.type=adaptive` and `output_config.effort` to control thinking behavior.",
            );
        }
        let schema = b["output_config"]["format"]["schema"].to_string();
        for keyword in ["\"minLength\"", "\"maxItems\"", "\"pattern\""] {
            if schema.contains(keyword) {
                return anthropic_error(&format!(
                    "output_config.format.schema: keyword {keyword} is not supported"
                ));
            }
        }
        let thinking = b["thinking"]["type"] == "adaptive";
        let content = messages[0]["content"].as_str().unwrap_or("");
        if content.contains("Your answer so far was cut off") {
            claude_stream(LINES_2, "end_turn", thinking)
        } else {
            claude_stream(LINES_1, "max_tokens", thinking)
        }
    }
}

fn refused(server: &Server) -> usize {
    // Every POST the server refused is one whose body it answered 400 to:
    // count them by replaying the handler's rules on the bodies.
    let h = claude(&[]);
    server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && h(r).status == 400)
        .count()
}

/// An unknown Claude model, a prompt run with temperature and `top_p` and
/// a continuation, then with a thinking budget: every refusal teaches
/// something, the runs end with all the items, and a second process sends
/// nothing the server refuses.
#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn current_claude_learns_what_it_refuses_and_the_next_process_is_refused_nothing() {
    let server = Server::handler(claude(&[])).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("claude", "anthropic", &server.url(), "claude-nova-6");
    let run = |extra: &[&str]| {
        let mut c = cutline(dir.path(), &config);
        c.args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "claude",
            "--max-tokens",
            "3000",
        ])
        .args(extra)
        .args(["--output", "json"]);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let env = envelope(&out);
        (env["data"].clone(), env["warnings"].to_string())
    };
    let sampled = ["--temperature", "0.2", "--top-p", "0.9", "--continue", "3"];
    let (data, warnings) = run(&sampled);
    assert_eq!(
        items(&data),
        ["photosynthesis", "chlorophyll", "stomata", "xylem"],
        "{data:#}"
    );
    assert_eq!(data["continuation"]["ended"], "finished");
    assert_eq!(data["continuation"]["calls"][1]["how"], "follow_up");
    let learned = |data: &Value| -> Vec<String> {
        data["adjustments"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["kind"] == "learned")
            .map(|a| a["fact"].as_str().unwrap().to_owned())
            .collect()
    };
    // Claude takes temperature or top_p, not both: top_p was left off from
    // the start (the table says so), then each was refused.
    assert_eq!(learned(&data), ["temperature: not accepted", "top_p: not accepted"]);
    assert!(warnings.contains("learned from a refusal"), "{warnings}");
    // Cached tokens, from the usage itself; the prompt is all three counts.
    assert_eq!(data["usage"]["cached_tokens"], 512);
    assert_eq!(data["usage"]["prompt_tokens"], 900);
    let bodies = posts(&server);
    // The continuation's prefill was refused, then asked as a follow-up.
    let prefill = &bodies[bodies.len() - 2];
    assert_eq!(prefill["messages"][1]["role"], "assistant");
    let follow = &bodies[bodies.len() - 1];
    assert_eq!(follow["messages"].as_array().unwrap().len(), 1);
    assert!(
        follow["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}\n\nContinue")
    );
    assert_eq!(refused(&server), 3, "{bodies:#?}");

    // A thinking budget: enabled thinking refused, adaptive learned, and
    // the thinking tokens exact although the thinking block is empty.
    let thinking = ["--thinking-budget", "2048"];
    let (data, _) = run(&thinking);
    assert_eq!(learned(&data), ["thinking: adaptive"]);
    assert_eq!(posts(&server).last().unwrap()["thinking"], json!({"type": "adaptive"}));
    assert_eq!(data["usage"]["reasoning_tokens"], 37);
    assert!(data["usage"].get("reasoning_estimated").is_none(), "{}", data["usage"]);
    assert_eq!(refused(&server), 4);

    // A second process: what was learned is read back; nothing is refused.
    let before = server.requests().len();
    let (data, _) = run(&sampled);
    assert_eq!(items(&data).len(), 4);
    let (_, _) = run(&thinking);
    assert_eq!(refused(&server), 4, "{:#?}", &server.requests()[before..]);

    // `cutline models` lists what was learned, with its evidence.
    let models = |args: &[&str]| {
        let out = cutline(dir.path(), &config)
            .arg("models")
            .args(args)
            .args(["--output", "json"])
            .output()
            .unwrap();
        envelope(&out)["data"].clone()
    };
    let m = models(&[])["models"][0].clone();
    assert_eq!(m["model"], "claude-nova-6");
    assert_eq!(m["learned"]["prefill"], false);
    assert_eq!(m["learned"]["thinking"], json!(["adaptive"]));
    let facts: Vec<&str> = m["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["fact"].as_str().unwrap())
        .collect();
    assert_eq!(
        facts,
        [
            "temperature: not accepted",
            "top_p: not accepted",
            "assistant prefill: not accepted",
            "thinking: adaptive"
        ]
    );
    assert_eq!(models(&["--forget", "claude-nova-6"])["forgot"], 1);
    assert_eq!(models(&[])["models"], json!([]));
}

/// A current Claude model the table knows, with its Models API: the first
/// request is right (no sampling parameter, adaptive thinking's effort in
/// `output_config`), and so are eval's; a schema with keywords
/// `output_config` does not take goes with them in descriptions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_current_claude_gets_a_request_that_works_the_first_time() {
    let server = Server::handler(claude(&["claude-opus-4-8"])).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("claude", "anthropic", &server.url(), "claude-opus-4-8");
    let out = cutline(dir.path(), &config)
        .args([
            "eval",
            "--prompt",
            "extract-definitions-jsonl",
            "--no-twins",
            "--provider",
            "claude",
            "--max-tokens",
            "3000",
            "--effort",
            "high",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(refused(&server), 0);
    let reqs = server.requests();
    assert_eq!(reqs[0].method, "GET");
    assert_eq!(reqs[0].path, "/v1/models/claude-opus-4-8");
    assert_eq!(reqs[0].header("anthropic-version"), Some("2026-10-21"));
    for b in posts(&server) {
        assert!(b.get("temperature").is_none() && b.get("top_p").is_none(), "{b}");
        assert_eq!(b["output_config"], json!({"effort": "high"}));
        assert!(b.get("thinking").is_none());
    }

    // Structured output with keywords output_config refuses: moved.
    let prompts = dir.path().join("p");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("terms.toml"),
        r#"id = "terms"
response-type = "json"
prompt = "List the terms."
schema = '''
{"type": "object", "properties": {"terms": {"type": "array", "items": {"type": "string", "minLength": 2, "pattern": "^[a-z]"}, "maxItems": 5}}, "required": ["terms"], "additionalProperties": false}
'''
"#,
    )
    .unwrap();
    let out = cutline_on(dir.path(), &config, &prompts)
        .args([
            "run",
            "terms",
            "--provider",
            "claude",
            "--structured",
            "native",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    let env = envelope(&out);
    let sent = posts(&server).pop().unwrap();
    let schema = &sent["output_config"]["format"]["schema"];
    assert_eq!(
        schema["properties"]["terms"],
        json!({"type": "array", "items": {"type": "string", "description": "{minLength: 2, pattern: ^[a-z]}"}, "description": "{maxItems: 5}"})
    );
    let moved = env["data"]["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "schema_moved")
        .unwrap_or_else(|| panic!("{env:#}"))
        .clone();
    assert_eq!(
        moved["keywords"],
        json!([
            "minLength at #/properties/terms/items",
            "pattern at #/properties/terms/items",
            "maxItems at #/properties/terms"
        ])
    );
    assert_eq!(refused(&server), 0);
}

/// A model its Models API calls deprecated gets a warning naming the date
/// the API gives (over the table's own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deprecated_model_is_named_with_its_retirement_date() {
    let server = Server::handler(claude(&["claude-sonnet-4-5"])).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("claude", "anthropic", &server.url(), "claude-sonnet-4-5");
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "claude",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env = envelope(&out);
    let warnings = env["warnings"].to_string();
    assert!(
        warnings.contains("claude-sonnet-4-5 is deprecated: it retires on 2099-01-31 (models api)"),
        "{warnings}"
    );
    let retiring: Vec<&Value> = env["data"]["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "retiring")
        .collect();
    assert_eq!(retiring.len(), 1);
}

/// `cutline probe` on the unknown Claude model: every capability within
/// eight requests of at most 16 tokens, kept for the next run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_finds_what_current_claude_accepts_in_at_most_eight_requests() {
    let server = Server::handler(claude(&[])).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("claude", "anthropic", &server.url(), "claude-nova-6");
    let out = cutline(dir.path(), &config)
        .args(["probe", "claude", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let data = envelope(&out)["data"].clone();
    let bodies = posts(&server);
    assert!(bodies.len() <= 8, "{} requests", bodies.len());
    assert_eq!(data["calls"], bodies.len());
    assert!(bodies.iter().all(|b| b["max_tokens"].as_u64().unwrap() <= 16));
    let found = |cap: &str| -> String {
        data["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["capability"] == cap)
            .unwrap_or_else(|| panic!("{cap}: {data:#}"))["found"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(found("temperature"), "not accepted");
    assert_eq!(found("top_p"), "not accepted");
    assert_eq!(found("stop"), "accepted");
    assert_eq!(found("structured output"), "accepted");
    assert_eq!(found("assistant prefill"), "not accepted");
    // The next run is fitted from its first request: nothing refused.
    let before = server.requests().len();
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "claude",
            "--temperature",
            "0.1",
            "--continue",
            "2",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let h = claude(&[]);
    let again = server.requests().split_off(before);
    assert!(again.iter().all(|r| h(r).status != 400), "{again:#?}");
}

// ---------------------------------------------------------------- OpenAI

fn responses_event(v: &Value) -> String {
    format!("event: {}\ndata: {v}", v["type"].as_str().unwrap())
}

/// A Responses stream of `text`, ending `completed` or `incomplete`.
fn responses_stream(text: &str, cut: bool) -> Reply {
    let response = |status: &str| {
        let mut r =
            json!({"id": "resp_1", "object": "response", "status": status, "model": "m", "output": [], "usage": null});
        if status != "in_progress" {
            r["usage"] = json!({"input_tokens": 900, "input_tokens_details": {"cached_tokens": 128, "cache_write_tokens": 0}, "output_tokens": 64, "output_tokens_details": {"reasoning_tokens": 40}, "total_tokens": 964});
        }
        if status == "incomplete" {
            r["incomplete_details"] = json!({"reason": "max_output_tokens"});
        }
        r
    };
    let mut events = vec![
        responses_event(
            &json!({"type": "response.created", "sequence_number": 0, "response": response("in_progress")}),
        ),
        responses_event(
            &json!({"type": "response.in_progress", "sequence_number": 1, "response": response("in_progress")}),
        ),
        responses_event(
            &json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        ),
        responses_event(
            &json!({"type": "response.reasoning_summary_text.delta", "sequence_number": 3, "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Find the terms."}),
        ),
        // A type newer than this build: ignored, not fatal.
        responses_event(&json!({"type": "response.sky_is_blue", "sequence_number": 4})),
        // An unknown event whose data is not JSON (issue 32, case 25): ignored too.
        "event: keepalive\ndata: ping".to_owned(),
    ];
    for (i, part) in text.split_inclusive('\n').enumerate() {
        events.push(responses_event(&json!({"type": "response.output_text.delta", "sequence_number": 5 + i, "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": part, "logprobs": []})));
    }
    let end = if cut {
        "response.incomplete"
    } else {
        "response.completed"
    };
    let status = if cut { "incomplete" } else { "completed" };
    events.push(responses_event(
        &json!({"type": end, "sequence_number": 99, "response": response(status)}),
    ));
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    Reply::sse(&refs)
}

/// Answers as a Responses-only model does: 404 on chat completions.
fn responses_only(r: &Recorded) -> Reply {
    if r.path.ends_with("/chat/completions") {
        let e = json!({"error": {"message": "This model is only supported in v1/responses and not in v1/chat/completions.", "type": "invalid_request_error", "param": "model", "code": null}});
        return Reply::status(404, &e.to_string());
    }
    let b = r.json();
    if b.get("temperature").is_some() && b["model"].as_str().unwrap().ends_with("-pro") {
        let e = json!({"error": {"message": "Unsupported parameter: 'temperature' is not supported with this model.", "type": "invalid_request_error", "param": "temperature", "code": "unsupported_parameter"}});
        return Reply::status(400, &e.to_string());
    }
    if b["input"]
        .as_str()
        .unwrap_or("")
        .contains("Your answer so far was cut off")
    {
        responses_stream(LINES_2, false)
    } else {
        responses_stream(LINES_1, true)
    }
}

/// A model the table knows as Responses-only goes to `/responses` at once;
/// one it does not know learns it from the 404 and the next run does not
/// ask chat again. A cut is `length`, reasoning and cache counts exact.
#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_only_models_run_on_the_responses_wire() {
    let server = Server::handler(responses_only).await;
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url());
    let config = format!(
        "{}{}",
        provider("pro", "openai", &base, "o3-pro"),
        provider("sky", "openai", &base, "gpt-6-nebula-pro"),
    );
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "pro",
            "--max-tokens",
            "64",
            "--effort",
            "high",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let data = envelope(&out)["data"].clone();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/responses");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-now-test-0000"));
    let b = reqs[0].json();
    assert_eq!(b["model"], "o3-pro");
    assert_eq!(b["max_output_tokens"], 64);
    assert_eq!(b["reasoning"], json!({"effort": "high"}));
    assert_eq!((b["stream"].clone(), b["store"].clone()), (json!(true), json!(false)));
    assert!(b["input"].as_str().unwrap().contains("Find every term"));
    for absent in ["temperature", "top_p", "stop", "messages", "max_completion_tokens"] {
        assert!(b.get(absent).is_none(), "{absent} in {b}");
    }
    assert_eq!(data["finish_reason"], "length");
    assert_eq!(data["raw_reason"], "incomplete: max_output_tokens");
    assert_eq!(data["thinking"], "Find the terms.");
    assert_eq!(
        data["usage"],
        json!({"prompt_tokens": 900, "completion_tokens": 64, "reasoning_tokens": 40, "cached_tokens": 128, "cache_write_tokens": 0})
    );
    assert_eq!(items(&data), ["photosynthesis", "chlorophyll"]);

    // An unknown model: chat, a 404, learned; eval's later runs and a
    // continuation (a follow-up on the Responses wire) go there at once.
    let before = server.requests().len();
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "sky",
            "--max-tokens",
            "64",
            "--continue",
            "2",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let data = envelope(&out)["data"].clone();
    assert_eq!(items(&data), ["photosynthesis", "chlorophyll", "stomata", "xylem"]);
    let paths: Vec<String> = server.requests()[before..].iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/v1/chat/completions", "/v1/responses", "/v1/responses"]);
    let before = server.requests().len();
    let out = cutline(dir.path(), &config)
        .args([
            "eval",
            "--prompt",
            "extract-definitions-jsonl",
            "--no-twins",
            "--provider",
            "sky",
            "--max-tokens",
            "64",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(server.requests()[before..].iter().all(|r| r.path == "/v1/responses"));
}

/// `api = "responses"` in cutline.toml: a chat model asked there, its
/// stop sequences applied by cutline (the Responses API has none).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_responses_in_the_config_sends_a_chat_model_there() {
    let server = Server::handler(responses_only).await;
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url());
    let config = format!(
        "{}api = \"responses\"\n",
        provider("asked", "openai", &base, "gpt-4.1-mini")
    );
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "asked",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/responses");
    let b = reqs[0].json();
    assert_eq!(b["temperature"], 0.0, "a chat model keeps its greedy default");
    assert!(
        b.get("stop").is_none(),
        "the Responses API has no stop: cutline applies it"
    );
    let data = envelope(&out)["data"].clone();
    assert_eq!(data["params"]["stop"], json!(["\n###", "\n\n"]));
}

// ---------------------------------------------------------------- Gemini

fn gemini_chunk(text: &str, finish: Option<&str>, token: Option<&str>) -> String {
    let mut c = json!({"content": {"parts": [{"text": text}], "role": "model"}, "index": 0});
    if let Some(f) = finish {
        c["finishReason"] = json!(f);
    }
    if let Some(t) = token {
        c["continuationToken"] = json!(t);
    }
    let mut v = json!({"candidates": [c], "modelVersion": "gemini-3-pro-preview"});
    if finish.is_some() {
        v["usageMetadata"] = json!({"promptTokenCount": 700, "candidatesTokenCount": 30, "thoughtsTokenCount": 12, "cachedContentTokenCount": 256, "totalTokenCount": 742});
    }
    v.to_string()
}

/// Answers as Gemini 3 does: a `CONTINUATION` with a token, then the rest
/// when the same request comes back with it.
fn gemini3(r: &Recorded) -> Reply {
    let b = r.json();
    let chunks = match b.get("continuationToken").and_then(Value::as_str) {
        Some("Q0hFQ0tQT0lOVC0x") => vec![
            gemini_chunk("mata\", \"definition\": \"pores in a leaf\"}\n", None, None),
            gemini_chunk(
                "{\"entity\": \"xylem\", \"definition\": \"tissue that carries water\"}",
                Some("STOP"),
                None,
            ),
        ],
        Some(_) => {
            return Reply::status(
                400,
                r#"{"error":{"code":400,"message":"invalid continuation token","status":"INVALID_ARGUMENT"}}"#,
            );
        }
        None => vec![
            gemini_chunk(
                "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n",
                None,
                None,
            ),
            gemini_chunk(
                "{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}\n{\"entity\": \"sto",
                Some("CONTINUATION"),
                Some("Q0hFQ0tQT0lOVC0x"),
            ),
        ],
    };
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    Reply::data(&refs)
}

/// Gemini 3: no temperature unless asked (Google keeps it at 1.0), effort as
/// `thinkingLevel`, an answer Gemini leaves incomplete resumed by its token
/// (the same request again), usage with thoughts and cache exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_3_runs_at_its_own_temperature_and_resumes_by_its_token() {
    let server = Server::handler(gemini3).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("gem", "gemini", &server.url(), "gemini-3-pro-preview");
    let out = cutline(dir.path(), &config)
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "gem",
            "--max-tokens",
            "512",
            "--effort",
            "low",
            "--continue",
            "2",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let data = envelope(&out)["data"].clone();
    assert_eq!(items(&data), ["photosynthesis", "chlorophyll", "stomata", "xylem"]);
    assert_eq!(data["finish_reason"], "incomplete", "the first call");
    assert_eq!(data["continuation"]["calls"][1]["how"], "native");
    assert_eq!(data["greedy"], false);
    let adjustments = data["adjustments"].to_string();
    assert!(
        adjustments.contains("not_greedy") && adjustments.contains("Gemini 3"),
        "{adjustments}"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let (first, second) = (reqs[0].json(), reqs[1].json());
    let config = &first["generationConfig"];
    assert!(config.get("temperature").is_none(), "{config}");
    assert_eq!(config["thinkingConfig"], json!({"thinkingLevel": "LOW"}));
    assert_eq!(config["maxOutputTokens"], 512);
    assert!(first.get("continuationToken").is_none());
    assert_eq!(second["continuationToken"], "Q0hFQ0tQT0lOVC0x");
    assert_eq!(
        second["contents"], first["contents"],
        "the same request, with the token"
    );
    assert_eq!(data["usage"]["cached_tokens"], 256);
    assert_eq!(data["usage"]["reasoning_tokens"], 12);
    assert_eq!(data["usage"]["completion_tokens"], 42);
}

/// Finish reasons Gemini uses for failure are never a normal stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_failure_finish_reasons_are_errors_with_the_text_kept() {
    for reason in [
        "MALFORMED_RESPONSE",
        "MISSING_THOUGHT_SIGNATURE",
        "OTHER",
        "FINISH_REASON_UNSPECIFIED",
    ] {
        let chunk = gemini_chunk("{\"entity\": \"a\", \"definition\": \"b\"}\n", Some(reason), None);
        let server = Server::start(vec![Reply::data(&[&chunk])]).await;
        let dir = tempfile::tempdir().unwrap();
        let config = provider("gem", "gemini", &server.url(), "gemini-3-flash-preview");
        let out = cutline(dir.path(), &config)
            .args([
                "run",
                "extract-definitions-jsonl",
                "--provider",
                "gem",
                "--output",
                "json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(5), "{reason}");
        let env = envelope(&out);
        assert!(env["error"]["message"].as_str().unwrap().contains(reason), "{env}");
        assert_eq!(env["error"]["detail"]["analysis"]["items"][0]["entity"], "a");
    }
}

// ---------------------------------------------------------------- retries

/// Retries as the SDKs do them: quota never, `x-should-retry: false` never,
/// 408 and 409 yes, `retry-after` as an HTTP date honoured.
#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_follow_the_sdks() {
    let ok = || {
        let parts = [
            json!({"choices": [{"index": 0, "delta": {"content": "{\"entity\": \"a\", \"definition\": \"b\"}"}, "finish_reason": "stop"}]}).to_string(),
            "[DONE]".to_owned(),
        ];
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        Reply::data(&refs)
    };
    let quota = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(1));
    let cases: Vec<(Vec<Reply>, usize, Option<i32>, &str)> = vec![
        (vec![Reply::status(429, quota), ok()], 1, Some(5), "out of quota"),
        (
            vec![
                Reply::status(503, r#"{"error":{"message":"down"}}"#).header("x-should-retry", "false"),
                ok(),
            ],
            1,
            Some(5),
            "down",
        ),
        (
            vec![
                Reply::status(400, r#"{"error":{"message":"busy"}}"#).header("x-should-retry", "true"),
                ok(),
            ],
            2,
            Some(0),
            "",
        ),
        (
            vec![Reply::status(408, r#"{"error":{"message":"slow"}}"#), ok()],
            2,
            Some(0),
            "",
        ),
        (
            vec![Reply::status(409, r#"{"error":{"message":"conflict"}}"#), ok()],
            2,
            Some(0),
            "",
        ),
        (
            vec![
                Reply::status(429, r#"{"error":{"message":"wait"}}"#).header("retry-after", &date),
                ok(),
            ],
            2,
            Some(0),
            "",
        ),
    ];
    for (replies, requests, code, says) in cases {
        // The Models API (asked once, first) does not know the model; the
        // scripted replies answer the generation requests.
        let queue = std::sync::Mutex::new(std::collections::VecDeque::from(replies));
        let server = Server::handler(move |r| {
            if r.method == "GET" {
                return Reply::status(404, r#"{"error":{"message":"no such model","code":"model_not_found"}}"#);
            }
            queue
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| Reply::status(500, "{}"))
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let config = provider("gpt", "openai", &format!("{}/v1", server.url()), "gpt-4.1-mini");
        let out = cutline(dir.path(), &config)
            .args([
                "run",
                "extract-definitions-jsonl",
                "--provider",
                "gpt",
                "--output",
                "json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), code, "{}", String::from_utf8_lossy(&out.stdout));
        assert_eq!(
            posts(&server).len(),
            requests,
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        if !says.is_empty() {
            let env = envelope(&out);
            assert!(env["error"]["message"].as_str().unwrap().contains(says), "{env}");
        }
    }
}

// ------------------------------------------------------------ workbench

async fn run_end(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<cutline::tui::event::Event>,
) -> cutline::tui::event::RunEnd {
    use cutline::tui::event::{Event, RunMsg};
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the run ends")
            .expect("channel open");
        match ev {
            Event::Run {
                msg: RunMsg::Done(end), ..
            } => return *end,
            Event::Run {
                msg: RunMsg::Failed(e), ..
            } => panic!("{e}"),
            _ => {}
        }
    }
}

/// The workbench's runner on current Claude, a Responses-only model and
/// Gemini 3: each run ends, every refusal learned and named in its notes;
/// the next run is refused nothing.
#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workbench_runs_todays_models_and_says_what_it_learned() {
    use cutline::llm::FinishReason;
    use cutline::llm::config::Config;
    use cutline::llm::registry::Registry;
    use cutline::tui::event::{Effect, Prefill, ProviderChoice, RunJob, Source};
    use cutline::tui::runner::Runner;

    let claude_server = Server::handler(claude(&[])).await;
    let openai = Server::handler(responses_only).await;
    let google = Server::handler(gemini3).await;
    let dir = tempfile::tempdir().unwrap();
    // The key is read from the environment when a provider is built: a
    // variable cargo sets for every test process serves as one.
    let entries = format!(
        "{}{}{}",
        provider("claude", "anthropic", &claude_server.url(), "claude-nova-7"),
        provider("pro", "openai", &format!("{}/v1", openai.url()), "o3-pro"),
        provider("gem", "gemini", &google.url(), "gemini-3-flash-preview"),
    )
    .replace(KEY_ENV, "CARGO_MANIFEST_DIR");
    let config = cutline::llm::config::parse(&entries, Path::new("t.toml")).unwrap();
    let registry = Registry::new(Config { providers: config });
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let prompt = cutline::store::resolve("extract-definitions-jsonl", &prompts).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut runner = Runner::new(
        tx,
        cutline::store::Workspace::at(&prompts),
        dir.path().join("sessions"),
        std::time::Instant::now(),
    )
    .with_registry(registry);
    let mut run = |id: u64, name: &str, prefill: Prefill| {
        let mut spec = cutline::run::Spec::new(prompt.clone(), prompt.inputs[0].vars.clone());
        spec.cli.temperature = (name == "claude").then_some(0.3);
        runner.apply(Effect::Start(Box::new(RunJob {
            prefill,
            id,
            provider: ProviderChoice::Configured {
                name: name.into(),
                model: None,
            },
            source: Source::Prompt(Box::new(spec)),
            schemas: Arc::new(cutline::tui::run::schemas_for(&prompt)),
            max_tokens: Some(3000),
            tg_python: cutline::output::tg::TgPython::default(),
            sessions_dir: dir.path().join("sessions"),
        })));
    };
    run(1, "claude", Prefill::default());
    let end = run_end(&mut rx).await;
    assert_eq!(end.error, None);
    let notes = end.notes.join("\n");
    assert!(
        notes.contains("learned from a refusal") && notes.contains("temperature: not accepted"),
        "{notes}"
    );
    // `c`: the answer so far goes on; the prefill is refused once, learned,
    // and asked as a follow-up.
    run(
        2,
        "claude",
        Prefill {
            text: LINES_1.to_owned(),
            token_ids: None,
            continuation_token: None,
        },
    );
    let end = run_end(&mut rx).await;
    assert_eq!(end.error, None, "{:?}", end.notes);
    assert!(
        end.notes.join("\n").contains("assistant prefill: not accepted"),
        "{:?}",
        end.notes
    );
    let before = claude_server.requests().len();
    run(3, "claude", Prefill::default());
    let end = run_end(&mut rx).await;
    assert_eq!(end.error, None);
    let h = claude(&[]);
    assert!(claude_server.requests()[before..].iter().all(|r| h(r).status != 400));

    run(4, "pro", Prefill::default());
    let end = run_end(&mut rx).await;
    assert_eq!((end.error, end.finish), (None, FinishReason::Length));
    assert_eq!(end.jsonl.items.len(), 2);
    assert_eq!(openai.requests()[0].path, "/v1/responses");
    run(5, "gem", Prefill::default());
    let end = run_end(&mut rx).await;
    assert_eq!((end.error, end.finish), (None, FinishReason::Incomplete));
    assert!(
        google.requests()[0].json()["generationConfig"]
            .get("temperature")
            .is_none()
    );
}
