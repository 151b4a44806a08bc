//! Every lesson end to end, through the real binary against local servers
//! that answer as the APIs do today (their request rules, refusals and
//! streams written from their current sources: the openai SDK 3.57,
//! Ollama's `api/types.go` and `server/routes.go`, llama.cpp's server):
//! a request field refused once is sent right on the retry in the same
//! run, and from the first request of a second process reading the same
//! learned file (`CUTLINE_LEARNED_FILE`). Each test asserts the exact
//! bodies sent and what the record keeps.

mod support;

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use support::{Recorded, Reply, Server};

const KEY_ENV: &str = "CUTLINE_LEARNED_TEST_KEY";

/// A prompts directory with one short text prompt, so bodies are exact.
fn prompts(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("prompts");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("hello.toml"), "id = \"hello\"\nprompt = \"Say hello.\"\n").unwrap();
    std::fs::write(
        p.join("terms.toml"),
        "id = \"terms\"\nresponse-type = \"jsonl\"\nprompt = \"List the terms, one JSON object per line.\"\n\
         schema = '{\"type\": \"object\", \"properties\": {\"term\": {\"type\": \"string\"}}, \"required\": [\"term\"]}'\n",
    )
    .unwrap();
    p
}

/// `cutline` in `dir` with `config` as its only providers and a learned
/// file of its own: each call is a new process.
fn cutline(dir: &Path, config: &str) -> Command {
    std::fs::write(dir.join("cutline.toml"), config).unwrap();
    let mut c = Command::cargo_bin("cutline").unwrap();
    c.current_dir(dir)
        .env("CUTLINE_CONFIG", dir.join("cutline.toml"))
        .env("CUTLINE_LEARNED_FILE", dir.join("models.json"))
        .env(KEY_ENV, "sk-learned-test-0000")
        .args(["--prompts"])
        .arg(prompts(dir))
        .args(["--sessions", "sessions"])
        .timeout(Duration::from_secs(60));
    c
}

fn provider(kind: &str, base: &str, model: &str) -> String {
    format!(
        "[[provider]]\nname = \"p\"\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"{model}\"\napi_key_env = \"{KEY_ENV}\"\n"
    )
}

/// `cutline run hello --provider p ARGS --output json`: the run's data and
/// the envelope's warnings.
fn run(dir: &Path, config: &str, args: &[&str]) -> (Value, String) {
    let out = cutline(dir, config)
        .args(["run", "hello", "--provider", "p"])
        .args(args)
        .args(["--output", "json"])
        .output()
        .unwrap();
    let env: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one envelope ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (env["data"].clone(), env["warnings"].to_string())
}

fn posts(server: &Server) -> Vec<Value> {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path != "/api/show")
        .map(Recorded::json)
        .collect()
}

fn learned(data: &Value) -> Vec<Value> {
    data["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "learned")
        .cloned()
        .collect()
}

fn models(dir: &Path, config: &str) -> Value {
    let out = cutline(dir, config)
        .args(["models", "--output", "json"])
        .output()
        .unwrap();
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    env["data"]["models"][0].clone()
}

// ------------------------------------------------- the max-token field

fn chat_ok(text: &str) -> Reply {
    let chunk = json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
    let end = json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    let usage = json!({"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}});
    Reply::data(&[&chunk.to_string(), &end.to_string(), &usage.to_string(), "[DONE]"])
}

/// A compatible server in front of a reasoning model: `max_tokens` is
/// refused as OpenAI refuses it (the SDK's `BadRequestError` body).
fn completion_tokens_only(r: &Recorded) -> Reply {
    if r.json().get("max_tokens").is_some() {
        let e = json!({"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}});
        return Reply::status(400, &e.to_string());
    }
    chat_ok("Hello.")
}

/// Issue 33, item 10: the field's name is decided with what was learned,
/// in the run that learned it and in the next process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_max_tokens_is_sent_as_max_completion_tokens_on_the_retry_and_in_the_next_process() {
    let server = Server::handler(completion_tokens_only).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("openai-compatible", &format!("{}/v1", server.url()), "o-next");
    let (data, warnings) = run(dir.path(), &config, &["--max-tokens", "64"]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(data["finish_reason"], "stop");
    let sent = |field: &str| {
        let mut b = json!({"model": "o-next", "messages": [{"role": "user", "content": "Say hello."}], "stream": true,
                           "stream_options": {"include_usage": true}, "temperature": 0.0});
        b[field] = json!(64);
        b
    };
    assert_eq!(posts(&server), [sent("max_tokens"), sent("max_completion_tokens")]);
    let l = learned(&data);
    assert_eq!(l.len(), 1, "{data:#}");
    assert_eq!(l[0]["fact"], "max-token field: max_completion_tokens");
    assert_eq!(l[0]["status"], 400);
    assert!(warnings.contains("max_completion_tokens"), "{warnings}");
    assert_eq!(
        models(dir.path(), &config)["learned"]["token_field"],
        "max_completion_tokens"
    );

    // A second process reads the lesson: one request, right the first time.
    let (data, _) = run(dir.path(), &config, &["--max-tokens", "64"]);
    assert_eq!(data["text"], "Hello.");
    assert_eq!(posts(&server)[2..], [sent("max_completion_tokens")]);
    assert!(learned(&data).is_empty(), "{data:#}");
}

// ------------------------------------------------------------- Ollama

/// An Ollama server as `server/routes.go` answers `/api/chat` today:
/// `think` is bound by `api.ThinkValue` (a bool, or one of the words it
/// lists: an older server lists no `max`); a model with thinking thinks
/// when `think` is absent; a model without it refuses a truthy `think`.
/// `/api/show` answers `capabilities` on a current server (`takes_max`),
/// none on an older one.
fn ollama(thinks: &'static [&'static str], takes_max: bool) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let b = r.json();
        let model = b["model"].as_str().unwrap_or("");
        if r.path == "/api/show" {
            let mut show = json!({"modelfile": "FROM x", "template": "{{ .Prompt }}", "details": {"family": "x"}});
            if takes_max {
                let caps = if thinks.contains(&model) {
                    json!(["completion", "thinking"])
                } else {
                    json!(["completion"])
                };
                show["capabilities"] = caps;
            }
            return Reply::status(200, &show.to_string());
        }
        let words: &[&str] = if takes_max {
            &["high", "medium", "low", "max"]
        } else {
            &["high", "medium", "low"]
        };
        if let Some(w) = b["think"].as_str()
            && !words.contains(&w)
        {
            let listed: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
            let e = format!(
                "invalid think value: \"{w}\" (must be {}, true, or false)",
                listed.join(", ")
            );
            return Reply::status(400, &json!({ "error": e }).to_string());
        }
        let truthy = b.get("think").is_some_and(|t| t != &json!(false));
        let thinking = thinks.contains(&model) && (truthy || b.get("think").is_none());
        if !thinks.contains(&model) && truthy {
            return Reply::status(
                400,
                &json!({"error": format!("\"{model}\" does not support thinking")}).to_string(),
            );
        }
        let line = |m: Value, done: bool| {
            let mut v = json!({"model": model, "created_at": "2026-11-29T09:00:00Z", "message": m, "done": done});
            if done {
                v["done_reason"] = json!("stop");
                v["prompt_eval_count"] = json!(9);
                v["eval_count"] = json!(5);
            }
            v.to_string()
        };
        let mut lines = Vec::new();
        if thinking {
            lines.push(line(
                json!({"role": "assistant", "content": "", "thinking": "The user wants a greeting."}),
                false,
            ));
        }
        lines.push(line(json!({"role": "assistant", "content": "Hello."}), false));
        lines.push(line(json!({"role": "assistant", "content": ""}), true));
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        Reply::ndjson(&refs)
    }
}

fn ollama_body(model: &str, think: Option<Value>) -> Value {
    let mut b = json!({"model": model, "messages": [{"role": "user", "content": "Say hello."}], "stream": true,
                       "options": {"temperature": 0.0}});
    if let Some(t) = think {
        b["think"] = t;
    }
    b
}

fn thinking_notes(data: &Value) -> Vec<String> {
    data["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "thinking")
        .map(|a| a["reason"].as_str().unwrap().to_owned())
        .collect()
}

/// Issue 33, items 1 and 2: every effort goes as a word `think` takes;
/// `none` switches thinking off, which is on when `think` is absent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_gets_each_effort_as_a_think_value_it_takes() {
    let server = Server::handler(ollama(&["qwen3:8b"], true)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("ollama", &server.url(), "qwen3:8b");
    let cases: [(&[&str], Option<Value>); 5] = [
        (&[], None),
        (&["--effort", "none"], Some(json!(false))),
        (&["--effort", "minimal"], Some(json!("low"))),
        (&["--effort", "xhigh"], Some(json!("high"))),
        (&["--effort", "max"], Some(json!("max"))),
    ];
    let mut notes = Vec::new();
    for (i, (args, think)) in cases.iter().enumerate() {
        let (data, _) = run(dir.path(), &config, args);
        assert_eq!(data["text"], "Hello.", "{data:#}");
        assert_eq!(posts(&server)[i..], [ollama_body("qwen3:8b", think.clone())]);
        // Thinking is Ollama's default for a thinking model; only `none`
        // switches it off.
        let thought = if think == &Some(json!(false)) {
            ""
        } else {
            "The user wants a greeting."
        };
        assert_eq!(data["thinking"].as_str().unwrap_or(""), thought, "{data:#}");
        notes.extend(thinking_notes(&data));
    }
    assert_eq!(
        notes,
        [
            "effort minimal sent as low: open-reasoning models take none, low, medium, high, max",
            "effort xhigh sent as high: open-reasoning models take none, low, medium, high, max",
        ]
    );
}

/// Issue 33, item 1: both of Ollama's refusals are learned; the run sends
/// again rightly and the next process sends it right the first time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_think_refusals_are_learned_for_the_retry_and_the_next_process() {
    // A server from before `max`: the word is refused with the ones it takes.
    let server = Server::handler(ollama(&["qwen3:8b"], false)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("ollama", &server.url(), "qwen3:8b");
    let (data, _) = run(dir.path(), &config, &["--effort", "max"]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(
        posts(&server),
        [
            ollama_body("qwen3:8b", Some(json!("max"))),
            ollama_body("qwen3:8b", Some(json!("high")))
        ]
    );
    assert_eq!(learned(&data)[0]["fact"], "effort: none, low, medium, high");
    let (data, _) = run(dir.path(), &config, &["--effort", "max"]);
    assert_eq!(posts(&server)[2..], [ollama_body("qwen3:8b", Some(json!("high")))]);
    assert_eq!(
        thinking_notes(&data),
        ["effort max sent as high: learned models take none, low, medium, high"]
    );

    // A model without thinking refuses any truthy `think` (an Ollama that
    // does not report capabilities, so only the refusal can teach it).
    let server = Server::handler(ollama(&[], false)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("ollama", &server.url(), "gemma3:4b");
    let (data, _) = run(dir.path(), &config, &["--effort", "high"]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(
        posts(&server),
        [
            ollama_body("gemma3:4b", Some(json!("high"))),
            ollama_body("gemma3:4b", None)
        ]
    );
    assert_eq!(learned(&data)[0]["fact"], "thinking: not accepted");
    let (data, _) = run(dir.path(), &config, &["--effort", "high"]);
    assert_eq!(posts(&server)[2..], [ollama_body("gemma3:4b", None)]);
    let omitted: Vec<&Value> = data["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "omitted" && a["param"] == "effort")
        .collect();
    assert_eq!(omitted.len(), 1, "{data:#}");
    assert_eq!(models(dir.path(), &config)["learned"]["effort"], json!([]));
}

/// Issue 33: an Ollama model no row knows is looked up with `/api/show`
/// when an effort is asked for: without the `thinking` capability no
/// `think` is sent (and nothing refused); with it, `none` switches
/// thinking off. Asked once, kept for the next process; a run without an
/// effort asks nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ollama_model_no_table_knows_is_asked_whether_it_thinks() {
    let server = Server::handler(ollama(&["smollm3:3b"], true)).await;
    let dir = tempfile::tempdir().unwrap();
    let shows = |s: &Server| {
        s.requests()
            .iter()
            .filter(|r| r.path == "/api/show")
            .map(Recorded::json)
            .collect::<Vec<_>>()
    };

    let plain = provider("ollama", &server.url(), "granite4:tiny");
    let (data, _) = run(dir.path(), &plain, &[]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert!(shows(&server).is_empty(), "no effort asked: nothing to look up");
    let (data, _) = run(dir.path(), &plain, &["--effort", "high"]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(shows(&server), [json!({"model": "granite4:tiny"})]);
    assert_eq!(posts(&server)[1..], [ollama_body("granite4:tiny", None)]);
    assert!(learned(&data).is_empty(), "nothing was refused: {data:#}");
    let omitted = data["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "omitted" && a["param"] == "effort")
        .count();
    assert_eq!(omitted, 1, "{data:#}");

    let thinker = provider("ollama", &server.url(), "smollm3:3b");
    let (data, _) = run(dir.path(), &thinker, &["--effort", "none"]);
    assert_eq!(data["thinking"].as_str().unwrap_or(""), "", "{data:#}");
    assert_eq!(posts(&server)[2..], [ollama_body("smollm3:3b", Some(json!(false)))]);
    let (_, _) = run(dir.path(), &thinker, &["--effort", "none"]);
    assert_eq!(
        shows(&server).len(),
        2,
        "each model read once, kept for the next process"
    );
    let kept = cutline(dir.path(), &thinker)
        .args(["models", "--output", "json"])
        .output()
        .unwrap();
    let kept: Value = serde_json::from_slice(&kept.stdout).unwrap();
    let reasons: Vec<(&str, &Value)> = kept["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["model"].as_str().unwrap(), &m["api"]["facts"]["reasons"]))
        .collect();
    assert_eq!(
        reasons,
        [("granite4:tiny", &json!(false)), ("smollm3:3b", &json!(true))]
    );
}

// ------------------------------------- llama-server's OpenAI endpoint

/// llama-server's `/v1/chat/completions` (tools/server): a thinking
/// template thinks unless `chat_template_kwargs.enable_thinking` is false,
/// `reasoning_budget_tokens` bounds the thinking, `reasoning_effort` is
/// ignored; thinking streams as `delta.reasoning_content` and the usage
/// carries no reasoning count. `strict`: a proxy in front of it that
/// refuses fields OpenAI does not have (pydantic's `extra_forbidden`).
fn llama_openai(strict: bool) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let b = r.json();
        if strict {
            for field in ["reasoning_budget_tokens", "chat_template_kwargs"] {
                if let Some(v) = b.get(field) {
                    let msg = format!(
                        "[{{'type': 'extra_forbidden', 'loc': ('body', '{field}'), 'msg': 'Extra inputs are not permitted', 'input': {v}}}]"
                    );
                    let e = json!({"error": {"message": msg, "type": "BadRequestError", "param": null, "code": 400}});
                    return Reply::status(400, &e.to_string());
                }
            }
        }
        let thinks = b["chat_template_kwargs"]["enable_thinking"] != json!(false);
        let chunk = |delta: Value, finish: Value| {
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "qwen3", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
        };
        let mut events = Vec::new();
        if thinks {
            events.push(chunk(
                json!({"role": "assistant", "reasoning_content": "The user wants fruit. "}),
                Value::Null,
            ));
            events.push(chunk(json!({"reasoning_content": "Apples are fruit."}), Value::Null));
        }
        events.push(chunk(json!({"content": "Hello."}), Value::Null));
        events.push(chunk(json!({}), json!("stop")));
        events.push(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 14, "total_tokens": 23}}).to_string());
        events.push("[DONE]".into());
        let refs: Vec<&str> = events.iter().map(String::as_str).collect();
        Reply::data(&refs)
    }
}

fn compat_body(extra: &Value) -> Value {
    let mut b = json!({"model": "qwen3", "messages": [{"role": "user", "content": "Say hello."}], "stream": true,
                       "stream_options": {"include_usage": true}, "temperature": 0.0});
    for (k, v) in extra.as_object().unwrap() {
        b[k] = v.clone();
    }
    b
}

/// Issue 33, items 2, 3 and 4: effort none switches the template's
/// thinking off, a budget goes as `reasoning_budget_tokens`, and the
/// reasoning llama-server does not count is estimated and marked so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_servers_openai_endpoint_gets_its_own_thinking_fields() {
    let server = Server::handler(llama_openai(false)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("openai-compatible", &format!("{}/v1", server.url()), "qwen3");
    let (data, _) = run(dir.path(), &config, &["--effort", "none"]);
    assert_eq!(
        posts(&server),
        [compat_body(
            &json!({"chat_template_kwargs": {"enable_thinking": false}})
        )]
    );
    assert!(data["usage"].get("reasoning_tokens").is_none(), "{data:#}");
    assert!(data["adjustments"].as_array().unwrap().is_empty(), "{data:#}");

    let (data, _) = run(dir.path(), &config, &["--thinking-budget", "256"]);
    assert_eq!(
        posts(&server)[1..],
        [compat_body(&json!({"reasoning_budget_tokens": 256}))]
    );
    assert_eq!(data["text"], "Hello.");
    // Nine o200k tokens of thinking, counted by cutline and marked so.
    assert_eq!(
        data["usage"],
        json!({"prompt_tokens": 9, "completion_tokens": 14, "reasoning_tokens": 9, "reasoning_estimated": true})
    );
}

/// Issue 33, item 4: a server that refuses the budget's field is taught;
/// the record says the budget was not sent, in this run and the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_thinking_budget_is_learned_and_recorded_as_not_sent() {
    let server = Server::handler(llama_openai(true)).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("openai-compatible", &format!("{}/v1", server.url()), "qwen3");
    let (data, _) = run(dir.path(), &config, &["--thinking-budget", "256"]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(
        posts(&server),
        [
            compat_body(&json!({"reasoning_budget_tokens": 256})),
            compat_body(&json!({}))
        ]
    );
    assert_eq!(learned(&data)[0]["fact"], "thinking budget: not accepted");
    let not_sent = |data: &Value| {
        data["adjustments"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["kind"] == "not_sent" && a["param"] == "thinking")
    };
    assert!(not_sent(&data), "{data:#}");
    let (data, _) = run(dir.path(), &config, &["--thinking-budget", "256"]);
    assert_eq!(posts(&server)[2..], [compat_body(&json!({}))]);
    assert!(not_sent(&data) && learned(&data).is_empty(), "{data:#}");

    // Effort none through the same proxy: the switch is refused, learned,
    // and left off with a note.
    let (data, _) = run(dir.path(), &config, &["--effort", "none"]);
    assert_eq!(
        posts(&server)[3..],
        [
            compat_body(&json!({"chat_template_kwargs": {"enable_thinking": false}})),
            compat_body(&json!({}))
        ]
    );
    assert_eq!(learned(&data)[0]["fact"], "effort none: not accepted");
}

// --------------------------------------------------- OpenAI effort max

/// A gpt-6 model that takes no `max`, refusing it as OpenAI refuses an
/// effort level (the levels it takes listed).
fn no_max(r: &Recorded) -> Reply {
    if r.method == "GET" {
        return Reply::status(
            404,
            &json!({"error": {"message": "no such model", "type": "invalid_request_error"}}).to_string(),
        );
    }
    if r.json()["reasoning_effort"] == "max" {
        let e = json!({"error": {"message": "Unsupported value: 'reasoning_effort' does not support 'max' with this model. Supported values are: 'none', 'low', 'medium', 'high', and 'xhigh'.", "type": "invalid_request_error", "param": "reasoning_effort", "code": "unsupported_value"}});
        return Reply::status(400, &e.to_string());
    }
    chat_ok("Hello.")
}

/// Issue 33, item 7: `--effort max` is sent to gpt-5.x and gpt-6 (the
/// SDK lists it); a model that refuses it teaches its levels, and the next
/// process leaves `max` off with a note instead of asking again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effort_max_is_sent_to_gpt_6_and_a_refusal_is_learned() {
    let server = Server::handler(no_max).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("openai", &format!("{}/v1", server.url()), "gpt-6-nova");
    let body = |effort: Option<&str>| {
        let mut b = json!({"model": "gpt-6-nova", "messages": [{"role": "user", "content": "Say hello."}], "stream": true,
                           "stream_options": {"include_usage": true}, "max_completion_tokens": 64});
        if let Some(e) = effort {
            b["reasoning_effort"] = json!(e);
        }
        b
    };
    let (data, _) = run(dir.path(), &config, &["--effort", "max", "--max-tokens", "64"]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(posts(&server), [body(Some("max")), body(None)]);
    assert_eq!(learned(&data)[0]["fact"], "effort: none, low, medium, high, xhigh");
    let (data, _) = run(dir.path(), &config, &["--effort", "max", "--max-tokens", "64"]);
    assert_eq!(posts(&server)[2..], [body(None)]);
    let omitted: Vec<String> = data["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "omitted" && a["param"] == "effort")
        .map(|a| a["reason"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(omitted, ["learned models do not take effort max"]);
}

// ------------------------------------------------------------ retirement

/// OpenAI's Models API as the SDK's `Model` describes it: `shutdown_date`
/// where one is announced. `dates`: model id → its date (`None`: 404).
fn openai_models(dates: &'static [(&'static str, Option<&'static str>)]) -> impl Fn(&Recorded) -> Reply + Send + Sync {
    move |r: &Recorded| {
        if r.method == "GET" {
            let id = r.path.trim_start_matches("/v1/models/");
            return match dates.iter().find(|(m, _)| *m == id) {
                Some((_, date)) => Reply::status(
                    200,
                    &json!({"id": id, "object": "model", "created": 1_760_000_000, "owned_by": "system", "shutdown_date": date}).to_string(),
                ),
                None => Reply::status(404, &json!({"error": {"message": format!("The model '{id}' does not exist"), "type": "invalid_request_error", "code": "model_not_found"}}).to_string()),
            };
        }
        chat_ok("Hello.")
    }
}

fn retiring(data: &Value) -> Vec<Value> {
    data["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "retiring")
        .cloned()
        .collect()
}

/// Issue 33, item 6: the Models API's `shutdown_date` wins over the table
/// (read once, kept for the next process); a past date says the model is
/// gone; the table's dates are the SDK's, per exact id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_date_from_the_models_api_wins_and_a_past_one_says_the_model_is_gone() {
    let server = Server::handler(openai_models(&[("gpt-5.1", Some("2026-11-02")), ("gpt-5.2", None)])).await;
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url());
    // The table says 2027-04-01 for gpt-5.1; the API says it is past.
    let config = provider("openai", &base, "gpt-5.1");
    let (data, warnings) = run(dir.path(), &config, &[]);
    assert_eq!(
        retiring(&data),
        [
            json!({"kind": "retiring", "model": "gpt-5.1", "lifecycle": "retired", "date": "2026-11-02", "source": "models api"})
        ]
    );
    assert!(
        warnings.contains(
            "gpt-5.1 is retired: it shut down on 2026-11-02 (models api); requests to it are expected to fail"
        ),
        "{warnings}"
    );
    let gets = |s: &Server| {
        s.requests()
            .iter()
            .filter(|r| r.method == "GET")
            .map(|r| r.path.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(gets(&server), ["/v1/models/gpt-5.1"]);
    // The next process reads the kept answer rather than asking again.
    let (data, _) = run(dir.path(), &config, &[]);
    assert_eq!(retiring(&data)[0]["source"], "models api");
    assert_eq!(gets(&server), ["/v1/models/gpt-5.1"]);

    // No date announced: nothing to say.
    let config = provider("openai", &base, "gpt-5.2");
    let (data, _) = run(dir.path(), &config, &[]);
    assert_eq!(retiring(&data), Vec::<Value>::new());

    // The API does not know it: the table's date (the SDK's), past.
    let config = provider("openai", &base, "o4-mini");
    let (data, _) = run(dir.path(), &config, &[]);
    assert_eq!(
        retiring(&data),
        [
            json!({"kind": "retiring", "model": "o4-mini", "lifecycle": "retired", "date": "2026-10-23", "source": "profile"})
        ]
    );
}

// ------------------------------------------------ models no table knows

/// Gemini as the google-genai SDK's `Model` describes a thinking model,
/// and its stream.
fn gemini_unknown(r: &Recorded) -> Reply {
    if r.method == "GET" {
        let info = json!({"name": "models/gemini-5-flash", "version": "5.0", "displayName": "Gemini 5 Flash", "inputTokenLimit": 1_048_576,
                          "outputTokenLimit": 65536, "supportedGenerationMethods": ["generateContent"], "temperature": 1.0,
                          "maxTemperature": 2.0, "topP": 0.95, "topK": 64, "thinking": true});
        return Reply::status(200, &info.to_string());
    }
    Reply::data(&[
        r#"{"candidates":[{"content":{"parts":[{"text":"Hello."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"thoughtsTokenCount":12,"totalTokenCount":18}}"#,
    ])
}

/// Issue 33, item 5: a Gemini model no row knows is asked about first; a
/// thinking model keeps its own temperature (Google's guidance) and takes
/// effort as a thinking level; the answer is kept for the next process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_model_no_table_knows_gets_its_defaults_from_the_models_api() {
    let server = Server::handler(gemini_unknown).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("gemini", &server.url(), "gemini-5-flash");
    let sent = json!({"contents": [{"role": "user", "parts": [{"text": "Say hello."}]}],
                      "generationConfig": {"thinkingConfig": {"thinkingLevel": "LOW"}}});
    let (data, _) = run(dir.path(), &config, &["--effort", "low"]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(posts(&server), std::slice::from_ref(&sent));
    assert_eq!(data["greedy"], false);
    let paths: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        paths,
        [
            "GET /v1beta/models/gemini-5-flash",
            "POST /v1beta/models/gemini-5-flash:streamGenerateContent?alt=sse"
        ]
    );
    let (_, _) = run(dir.path(), &config, &["--effort", "low"]);
    assert_eq!(posts(&server)[1..], [sent]);
    assert_eq!(server.requests().len(), 3, "read once, kept for the next process");
}

/// Issue 33: when the Models API cannot say (404), a Gemini model newer
/// than the table still keeps its own temperature (every Gemini since 2.5
/// thinks; Google's guidance is 1.0); one from before thinking is greedy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_model_the_models_api_does_not_know_keeps_its_temperature() {
    let server = Server::handler(|r: &Recorded| {
        if r.method == "GET" {
            return Reply::status(
                404,
                r#"{"error": {"code": 404, "message": "models/x is not found", "status": "NOT_FOUND"}}"#,
            );
        }
        gemini_unknown(r)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = run(dir.path(), &provider("gemini", &server.url(), "gemini-5-pro"), &[]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(data["greedy"], false);
    let (data, _) = run(dir.path(), &provider("gemini", &server.url(), "gemini-2.0-flash"), &[]);
    assert_eq!(data["greedy"], true);
    let sent = posts(&server);
    assert_eq!(
        sent[0],
        json!({"contents": [{"role": "user", "parts": [{"text": "Say hello."}]}]})
    );
    assert_eq!(sent[1]["generationConfig"]["temperature"], json!(0.0));
}

/// Issue 33, item 5: an OpenAI model no row knows is sent the effort asked
/// for (it was dropped), and `probe` finds effort in its eight calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_model_no_table_knows_is_sent_its_effort_and_probed_for_it() {
    let server = Server::handler(openai_models(&[("o9-preview", None)])).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("openai", &format!("{}/v1", server.url()), "o9-preview");
    let (data, _) = run(dir.path(), &config, &["--effort", "high"]);
    assert_eq!(data["text"], "Hello.", "{data:#}");
    assert_eq!(posts(&server)[0]["reasoning_effort"], "high");
    let out = cutline(dir.path(), &config)
        .args(["probe", "p", "--output", "json"])
        .output()
        .unwrap();
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = env["data"]["findings"].as_array().unwrap().clone();
    let effort = findings
        .iter()
        .find(|f| f["capability"] == "effort")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(
        (effort["found"].as_str(), effort["how"].as_str()),
        (Some("accepted (low)"), Some("probe"))
    );
    assert!(env["data"]["calls"].as_u64().unwrap() <= 8);
    assert_eq!(posts(&server).last().unwrap()["reasoning_effort"], "low");
}

// ------------------------------------------- Gemini's mid-stream checkpoints

/// Gemini 3 streaming with checkpoints: each chunk carries a
/// `continuationToken` and no finish reason; the first request's stream
/// breaks after two chunks; a request resumed with a token goes on from it.
fn gemini_checkpoints(r: &Recorded) -> Reply {
    let chunk = |text: &str, token: Option<&str>, finish: Option<&str>| {
        let mut c = json!({"content": {"parts": [{"text": text}], "role": "model"}, "index": 0});
        if let Some(t) = token {
            c["continuationToken"] = json!(t);
        }
        if let Some(f) = finish {
            c["finishReason"] = json!(f);
        }
        json!({"candidates": [c]}).to_string()
    };
    match r.json().get("continuationToken").and_then(Value::as_str) {
        None => {
            let a = chunk("{\"term\": \"xylem\"}\n", Some("ckpt-1"), None);
            let b = chunk("{\"term\": \"phloem\"}\n", Some("ckpt-2"), None);
            Reply::data(&[&a, &b]).cut()
        }
        Some("ckpt-2") => Reply::data(&[&chunk("{\"term\": \"stoma\"}\n", None, Some("STOP"))]),
        Some(other) => Reply::status(
            400,
            &json!({"error": {"code": 400, "message": format!("bad token {other}"), "status": "INVALID_ARGUMENT"}})
                .to_string(),
        ),
    }
}

/// Issue 33, item 9: a stream that breaks after a checkpoint keeps the
/// latest token, and `--continue` resends the same request with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_gemini_stream_is_continued_from_its_latest_checkpoint() {
    let server = Server::handler(gemini_checkpoints).await;
    let dir = tempfile::tempdir().unwrap();
    let config = provider("gemini", &server.url(), "gemini-3-flash-preview");
    let out = cutline(dir.path(), &config)
        .args(["run", "terms", "--provider", "p", "--continue", "2", "--output", "json"])
        .output()
        .unwrap();
    let env: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let data = &env["data"];
    let terms: Vec<&str> = data["analysis"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{env:#}"))
        .iter()
        .map(|i| i["term"].as_str().unwrap())
        .collect();
    assert_eq!(terms, ["xylem", "phloem", "stoma"], "{env:#}");
    assert_eq!(data["continuation"]["ended"], "finished", "{env:#}");
    assert_eq!(data["continuation"]["calls"][1]["how"], "native");
    let bodies = posts(&server);
    assert_eq!(bodies.len(), 2);
    let mut resumed = bodies[0].clone();
    resumed["continuationToken"] = json!("ckpt-2");
    assert_eq!(bodies[1], resumed, "the same request, with the latest token");
}
