//! The providers' batch APIs against local servers that emulate each one's
//! lifecycle as their current SDKs and docs describe it: states that
//! advance per poll, a 429 on a poll, results shuffled out of order, an
//! errored line, an expired line, a cancelled batch. Each request's exact
//! batch line, and each result matched by custom id to the transcript a
//! stream of the same answer gives.

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cutline::llm::batch::{BatchApi, Item, Outcome, Phase, Result1, Submitted, Window};
use cutline::llm::config::{self, ProviderConfig};
use cutline::llm::{FinishReason, Provider, Request};
use serde_json::{Value, json};
use support::{Recorded, Reply, Server};

const ENV: &str = "CUTLINE_BATCH_TEST_KEY";
const KEY: &str = "sk-batch-test-Qw8Er7Ty6";

fn cfg(kind: &str, base: &str, model: &str) -> ProviderConfig {
    let text = format!(
        "[[provider]]\nname = \"b\"\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"{model}\"\napi_key_env = \"{ENV}\"\nmax_retries = 2\nretry_base_secs = 0.001\n"
    );
    config::parse(&text, Path::new("t.toml")).unwrap().remove(0)
}

fn provider(kind: &str, base: &str, model: &str) -> Box<dyn Provider> {
    config::build_with_env(&cfg(kind, base, model), &|n: &str| (n == ENV).then(|| KEY.to_owned())).unwrap()
}

fn items(n: usize) -> Vec<Item> {
    (0..n)
        .map(|i| Item {
            custom_id: format!("c{i}"),
            request: Request {
                system: "Extract fruit.".into(),
                prompt: format!("text {i}"),
                max_tokens: Some(64),
                temperature: Some(0.0),
                ..Request::default()
            },
        })
        .collect()
}

/// Poll until the batch ends (each poll advances the emulated state).
async fn until_ended(api: &dyn BatchApi, b: &Submitted) -> Vec<String> {
    let mut states = Vec::new();
    for _ in 0..20 {
        let s = api.status(b.clone()).await.expect("status");
        states.push(s.state.clone());
        if s.phase == Phase::Ended {
            return states;
        }
    }
    panic!("never ended: {states:?}");
}

fn by_id(results: Vec<Result1>) -> HashMap<String, Outcome> {
    results.into_iter().map(|r| (r.custom_id, r.outcome)).collect()
}

fn text(o: &Outcome) -> (String, Option<FinishReason>) {
    match o {
        Outcome::Succeeded(t) => (t.text.clone(), t.finish),
        other => panic!("not a success: {other:?}"),
    }
}

/// A server whose state lives in a map the handler reads and writes.
type State = Arc<Mutex<HashMap<String, Value>>>;

fn openai_server(state: State) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let mut s = state.lock().unwrap();
        let polls = s.get("polls").and_then(Value::as_u64).unwrap_or(0);
        match (r.method.as_str(), r.path.as_str()) {
            ("POST", "/v1/files") => {
                s.insert("upload".into(), json!(String::from_utf8_lossy(&r.body)));
                Reply::status(200, r#"{"id": "file-in", "object": "file", "purpose": "batch"}"#)
            }
            ("POST", "/v1/batches") => {
                s.insert("create".into(), r.json());
                Reply::status(200, r#"{"id": "batch_1", "object": "batch", "status": "validating"}"#)
            }
            ("GET", "/v1/batches/batch_1") => {
                s.insert("polls".into(), json!(polls + 1));
                if polls == 1 {
                    return Reply::status(429, r#"{"error": {"message": "slow down", "type": "rate_limit"}}"#)
                        .header("retry-after-ms", "5");
                }
                let status = ["validating", "in_progress", "in_progress", "finalizing", "completed"][polls.min(4) as usize];
                let b = json!({"id": "batch_1", "status": status, "output_file_id": "file-out", "error_file_id": "file-err",
                    "request_counts": {"completed": 2, "failed": 2, "total": 4}, "metadata": {"cutline_session": "sess-1"}});
                Reply::status(200, &b.to_string())
            }
            ("GET", "/v1/files/file-out/content") => {
                let line = |id: &str, text: &str, finish: &str| {
                    json!({"id": "r", "custom_id": id, "response": {"status_code": 200, "request_id": "q", "body": {
                        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1-mini",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 64, "prompt_tokens_details": {"cached_tokens": 4}}}}, "error": null})
                    .to_string()
                };
                // Shuffled: the second request's answer first.
                let body = format!("{}\n{}\n", line("c1", "{\"name\": \"pear\"}", "stop"), line("c0", "{\"name\": \"app", "length"));
                Reply::status(200, &body)
            }
            ("GET", "/v1/files/file-err/content") => {
                let body = format!(
                    "{}\n{}\n",
                    json!({"id": "r3", "custom_id": "c3", "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}),
                    json!({"id": "r2", "custom_id": "c2", "response": {"status_code": 400, "request_id": "q", "body": {"error": {"message": "Invalid 'max_tokens'", "type": "invalid_request_error", "param": "max_tokens", "code": null}}}, "error": null}),
                );
                Reply::status(200, &body)
            }
            ("GET", p) if p.starts_with("/v1/batches?") => Reply::status(
                200,
                &json!({"object": "list", "data": [{"id": "batch_0", "metadata": {"cutline_session": "other"}}, {"id": "batch_1", "metadata": {"cutline_session": "sess-1"}}], "has_more": false}).to_string(),
            ),
            ("POST", "/v1/batches/batch_1/cancel") => {
                Reply::status(200, r#"{"id": "batch_1", "object": "batch", "status": "cancelling"}"#)
            }
            _ => Reply::status(404, r#"{"error": {"message": "no such route"}}"#),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_batches_upload_a_file_advance_and_match_results_by_custom_id() {
    let state: State = Arc::default();
    let server = Server::handler(openai_server(state.clone())).await;
    let gpt = provider("openai", &format!("{}/v1", server.url()), "gpt-4.1-mini");
    let api = cutline::llm::batch::api(gpt.as_ref(), Window::Day).expect("openai has batches");
    let b = api.submit(items(4), "sess-1".into()).await.expect("submit");
    assert_eq!(b.id, "batch_1");
    let s = state.lock().unwrap().clone();
    // The upload: one JSONL line per request, the chat body without stream.
    let upload = s["upload"].as_str().unwrap();
    assert!(upload.contains("name=\"purpose\"\r\n\r\nbatch"), "{upload}");
    let c0 = upload
        .lines()
        .find(|l| l.starts_with("{\"custom_id\":\"c0\""))
        .unwrap_or_else(|| panic!("{upload}"));
    let line: Value = serde_json::from_str(c0).unwrap();
    assert_eq!(
        line,
        json!({"custom_id": "c0", "method": "POST", "url": "/v1/chat/completions", "body": {
            "model": "gpt-4.1-mini",
            "messages": [{"role": "system", "content": "Extract fruit."}, {"role": "user", "content": "text 0"}],
            "max_completion_tokens": 64, "temperature": 0.0}})
    );
    assert_eq!(
        s["create"],
        json!({"input_file_id": "file-in", "endpoint": "/v1/chat/completions", "completion_window": "24h", "metadata": {"cutline_session": "sess-1"}})
    );
    let states = until_ended(api.as_ref(), &b).await;
    // The 429 on the second poll was retried inside that poll.
    assert_eq!(states, ["validating", "in_progress", "finalizing", "completed"]);
    assert_eq!(state.lock().unwrap()["polls"], 5);
    let r = by_id(api.results(b.clone()).await.expect("results"));
    assert_eq!(text(&r["c0"]), ("{\"name\": \"app".into(), Some(FinishReason::Length)));
    assert_eq!(
        text(&r["c1"]),
        ("{\"name\": \"pear\"}".into(), Some(FinishReason::Stop))
    );
    if let Outcome::Succeeded(t) = &r["c1"] {
        assert_eq!((t.usage.prompt_tokens, t.usage.cached_tokens), (Some(10), Some(4)));
    }
    assert!(matches!(&r["c2"], Outcome::Errored(e) if e.status == Some(400) && e.message.contains("max_tokens")));
    assert_eq!(r["c3"], Outcome::Expired);
    assert_eq!(api.find("sess-1".into()).await.unwrap(), ["batch_1"]);
    api.cancel(b).await.expect("cancel");
}

fn anthropic_server(state: State, results_origin: String) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let mut s = state.lock().unwrap();
        let polls = s.get("polls").and_then(Value::as_u64).unwrap_or(0);
        assert_eq!(r.header("x-api-key"), Some(KEY));
        match (r.method.as_str(), r.path.as_str()) {
            ("POST", "/v1/messages/batches") => {
                s.insert("create".into(), r.json());
                Reply::status(
                    200,
                    r#"{"id": "msgbatch_1", "type": "message_batch", "processing_status": "in_progress"}"#,
                )
            }
            ("GET", "/v1/messages/batches/msgbatch_1") => {
                s.insert("polls".into(), json!(polls + 1));
                let status = if polls >= 2 { "ended" } else { "in_progress" };
                let b = json!({"id": "msgbatch_1", "type": "message_batch", "processing_status": status,
                    "request_counts": {"processing": if polls >= 2 { 0 } else { 4 }, "succeeded": 1, "errored": 1, "canceled": 1, "expired": 1},
                    "results_url": if polls >= 2 { json!(format!("{results_origin}/v1/messages/batches/msgbatch_1/results")) } else { Value::Null }});
                Reply::status(200, &b.to_string())
            }
            ("GET", "/v1/messages/batches/msgbatch_1/results") => {
                let ok = json!({"custom_id": "c2", "result": {"type": "succeeded", "message": {
                    "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                    "content": [{"type": "text", "text": "{\"name\": \"fig\"}"}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 7, "output_tokens": 9, "cache_read_input_tokens": 3, "output_tokens_details": {"thinking_tokens": 2}}}}});
                let lines = [
                    json!({"custom_id": "c3", "result": {"type": "expired"}}),
                    ok,
                    json!({"custom_id": "c0", "result": {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}}}),
                    json!({"custom_id": "c1", "result": {"type": "canceled"}}),
                ];
                Reply::status(200, &lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"))
            }
            _ => Reply::status(
                404,
                r#"{"type": "error", "error": {"type": "not_found_error", "message": "no"}}"#,
            ),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_batch_requests_and_a_results_link_to_another_host() {
    let state: State = Arc::default();
    // Its results link names another host: never fetched with the key.
    let server = Server::handler(anthropic_server(state.clone(), "http://127.0.0.1:9".into())).await;
    let p = provider("anthropic", &server.url(), "claude-opus-4-8");
    let api = cutline::llm::batch::api(p.as_ref(), Window::Day).expect("anthropic has batches");
    let b = api.submit(items(4), "ignored".into()).await.expect("submit");
    assert_eq!(b.id, "msgbatch_1");
    let create = state.lock().unwrap()["create"].clone();
    assert_eq!(
        create["requests"][0],
        json!({"custom_id": "c0", "params": {"model": "claude-opus-4-8", "max_tokens": 64,
            "messages": [{"role": "user", "content": "text 0"}], "system": "Extract fruit.", "temperature": 0.0}})
    );
    until_ended(api.as_ref(), &b).await;
    let e = api.results(b).await.unwrap_err();
    assert!(e.message.contains("not fetched"), "{e}");
    assert!(api.find("t".into()).await.unwrap().is_empty(), "batches carry no tag");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_results_on_the_same_origin_are_read() {
    let state: State = Arc::default();
    // The handler needs its own origin for the results link: bind first.
    let origin = Arc::new(Mutex::new(String::new()));
    let o2 = origin.clone();
    let st = state.clone();
    let server = Server::handler(move |r| anthropic_server(st.clone(), o2.lock().unwrap().clone())(r)).await;
    *origin.lock().unwrap() = server.url();
    let p = provider("anthropic", &server.url(), "claude-opus-4-8");
    let api = cutline::llm::batch::api(p.as_ref(), Window::Day).unwrap();
    let b = api.submit(items(4), "t".into()).await.unwrap();
    let states = until_ended(api.as_ref(), &b).await;
    assert_eq!(states, ["in_progress", "in_progress", "ended"]);
    let r = by_id(api.results(b).await.unwrap());
    assert_eq!(text(&r["c2"]), ("{\"name\": \"fig\"}".into(), Some(FinishReason::Stop)));
    if let Outcome::Succeeded(t) = &r["c2"] {
        assert_eq!(
            (t.usage.prompt_tokens, t.usage.cached_tokens, t.usage.reasoning_tokens),
            (Some(10), Some(3), Some(2))
        );
    }
    assert!(matches!(&r["c0"], Outcome::Errored(e) if e.message.contains("max_tokens: too large")));
    assert_eq!(r["c1"], Outcome::Cancelled);
    assert_eq!(r["c3"], Outcome::Expired);
}

fn gemini_response(text: &str, finish: &str) -> Value {
    json!({"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 6, "cachedContentTokenCount": 2}})
}

fn gemini_server(state: State) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let mut s = state.lock().unwrap();
        let polls = s.get("polls").and_then(Value::as_u64).unwrap_or(0);
        match (r.method.as_str(), r.path.as_str()) {
            ("POST", "/upload/v1beta/files") => {
                s.insert("upload_start".into(), r.json());
                Reply::status(200, "{}").header("x-goog-upload-url", &format!("http://{}/upload/session-1", r.header("host").unwrap()))
            }
            ("POST", "/upload/session-1") => {
                s.insert("upload".into(), json!(String::from_utf8_lossy(&r.body)));
                Reply::status(200, r#"{"file": {"name": "files/in-1"}}"#)
            }
            ("POST", "/v1beta/models/gemini-3-flash-preview:batchGenerateContent") => {
                s.insert("create".into(), r.json());
                Reply::status(200, r#"{"name": "batches/7", "metadata": {"name": "batches/7", "state": "BATCH_STATE_PENDING"}}"#)
            }
            ("GET", "/v1beta/batches/7") => {
                s.insert("polls".into(), json!(polls + 1));
                let state = ["BATCH_STATE_PENDING", "BATCH_STATE_RUNNING", "BATCH_STATE_SUCCEEDED"][polls.min(2) as usize];
                let file_mode = s["create"].pointer("/batch/inputConfig/fileName").is_some();
                let output = if file_mode {
                    json!({"responsesFile": "files/out-1"})
                } else {
                    json!({"inlinedResponses": {"inlinedResponses": [
                        {"response": gemini_response("{\"name\": \"kiwi\"}", "STOP"), "metadata": {"key": "c1"}},
                        {"error": {"code": 400, "message": "Request contains an invalid argument.", "status": "INVALID_ARGUMENT"}, "metadata": {"key": "c0"}}
                    ]}})
                };
                let b = json!({"name": "batches/7", "metadata": {"name": "batches/7", "displayName": "sess-g", "state": state,
                    "batchStats": {"requestCount": "2", "successfulRequestCount": "1", "failedRequestCount": "1"}, "output": output}});
                Reply::status(200, &b.to_string())
            }
            ("GET", "/download/v1beta/files/out-1:download?alt=media") => {
                let lines = [
                    json!({"key": "c1", "response": gemini_response("{\"name\": \"lime\"}", "MAX_TOKENS")}),
                    json!({"key": "c0", "response": gemini_response("{\"name\": \"plum\"}", "STOP")}),
                ];
                Reply::status(200, &lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"))
            }
            ("GET", "/v1beta/batches?pageSize=100") => Reply::status(
                200,
                &json!({"operations": [{"name": "batches/7", "metadata": {"displayName": "sess-g", "state": "BATCH_STATE_RUNNING"}}]}).to_string(),
            ),
            _ => Reply::status(404, &format!(r#"{{"error": {{"code": 404, "message": "{}", "status": "NOT_FOUND"}}}}"#, r.path)),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_batches_inline_and_by_file_match_results_by_key() {
    let state: State = Arc::default();
    let server = Server::handler(gemini_server(state.clone())).await;
    let gemini = cutline::llm::gemini::Gemini::new(
        config::endpoint(&cfg("gemini", &server.url(), "gemini-3-flash-preview"), &|n: &str| {
            (n == ENV).then(|| KEY.to_owned())
        })
        .unwrap(),
    );
    let api = cutline::llm::batch::gemini::GeminiBatch {
        provider: gemini.clone(),
        inline_bytes: cutline::llm::batch::gemini::INLINE_BYTES,
    };
    let b = api.submit(items(2), "sess-g".into()).await.unwrap();
    assert_eq!(b.id, "batches/7");
    let create = state.lock().unwrap()["create"].clone();
    assert_eq!(create["batch"]["displayName"], "sess-g");
    let first = &create["batch"]["inputConfig"]["requests"]["requests"][0];
    assert_eq!(first["metadata"], json!({"key": "c0"}));
    assert_eq!(
        first["request"]["contents"],
        json!([{"role": "user", "parts": [{"text": "text 0"}]}])
    );
    assert_eq!(
        until_ended(&api, &b).await,
        ["BATCH_STATE_PENDING", "BATCH_STATE_RUNNING", "BATCH_STATE_SUCCEEDED"]
    );
    let r = by_id(api.results(b).await.unwrap());
    assert_eq!(
        text(&r["c1"]),
        ("{\"name\": \"kiwi\"}".into(), Some(FinishReason::Stop))
    );
    assert!(matches!(&r["c0"], Outcome::Errored(e) if e.message.contains("invalid argument")));
    assert_eq!(api.find("sess-g".into()).await.unwrap(), ["batches/7"]);

    // Over the inline size: a JSONL file by the resumable upload.
    let state: State = Arc::default();
    let server = Server::handler(gemini_server(state.clone())).await;
    let api = cutline::llm::batch::gemini::GeminiBatch {
        provider: cutline::llm::gemini::Gemini::new(
            config::endpoint(&cfg("gemini", &server.url(), "gemini-3-flash-preview"), &|n: &str| {
                (n == ENV).then(|| KEY.to_owned())
            })
            .unwrap(),
        ),
        inline_bytes: 10,
    };
    let b = api.submit(items(2), "sess-g".into()).await.unwrap();
    let s = state.lock().unwrap().clone();
    assert_eq!(s["create"]["batch"]["inputConfig"], json!({"fileName": "files/in-1"}));
    let upload = s["upload"].as_str().unwrap();
    let first: Value = serde_json::from_str(upload.lines().next().unwrap()).unwrap();
    assert_eq!(first["key"], "c0");
    assert_eq!(first["request"]["generationConfig"]["maxOutputTokens"], 64);
    until_ended(&api, &b).await;
    let r = by_id(api.results(b).await.unwrap());
    assert_eq!(
        text(&r["c0"]),
        ("{\"name\": \"plum\"}".into(), Some(FinishReason::Stop))
    );
    assert_eq!(
        text(&r["c1"]),
        ("{\"name\": \"lime\"}".into(), Some(FinishReason::Length))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_background_mode_polls_each_response_and_collects_it() {
    let state: State = Arc::default();
    let st = state.clone();
    let server = Server::handler(move |r: &Recorded| {
        let mut s = st.lock().unwrap();
        match (r.method.as_str(), r.path.as_str()) {
            ("POST", "/v1/responses") => {
                let b = r.json();
                let n = s.len();
                s.insert(format!("post{n}"), b.clone());
                Reply::status(200, &json!({"id": format!("resp_{n}"), "object": "response", "status": "queued"}).to_string())
            }
            ("GET", p) if p.starts_with("/v1/responses/resp_") => {
                let k = format!("polls{p}");
                let polls = s.get(&k).and_then(Value::as_u64).unwrap_or(0);
                s.insert(k, json!(polls + 1));
                let status = ["queued", "in_progress", "completed"][polls.min(2) as usize];
                let mut v = json!({"id": &p[14..], "object": "response", "status": status, "output": []});
                if status == "completed" {
                    v["output"] = json!([{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "{\"name\": \"date\"}", "annotations": []}]}]);
                    v["usage"] = json!({"input_tokens": 3, "output_tokens": 4, "output_tokens_details": {"reasoning_tokens": 1}, "input_tokens_details": {"cached_tokens": 0}});
                }
                Reply::status(200, &v.to_string())
            }
            _ => Reply::status(404, "{}"),
        }
    })
    .await;
    let p = provider("openai", &format!("{}/v1", server.url()), "gpt-5.5");
    let api = cutline::llm::batch::api(p.as_ref(), Window::Hours2).expect("background mode");
    let b = api.submit(items(2), "sess-bg".into()).await.unwrap();
    assert_eq!(b.parts.len(), 2);
    let post = state.lock().unwrap()["post0"].clone();
    assert_eq!(post["background"], true);
    assert_eq!(post["store"], true);
    assert_eq!(post["stream"], false);
    assert_eq!(post["background_options"], json!({"completion_window": "2h"}));
    assert_eq!(post["metadata"]["cutline_session"], "sess-bg");
    until_ended(api.as_ref(), &b).await;
    let r = by_id(api.results(b).await.unwrap());
    assert_eq!(
        text(&r["c0"]),
        ("{\"name\": \"date\"}".into(), Some(FinishReason::Stop))
    );
    let compatible = provider("openai-compatible", &server.url(), "m");
    assert!(cutline::llm::batch::api(compatible.as_ref(), Window::Day).is_none());
    let anthropic = provider("anthropic", &server.url(), "m");
    assert!(cutline::llm::batch::api(anthropic.as_ref(), Window::Hours2).is_none());
    let _ = Duration::ZERO;
}

/// One create call of a background group is refused while the others
/// pass: the created responses are kept (they are paid for), and the
/// refused request comes back errored with the provider's words, counted
/// in the group's status, not as an answer that never arrived.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_background_create_comes_back_errored_with_its_cause() {
    let server = Server::handler(|r: &Recorded| match (r.method.as_str(), r.path.as_str()) {
        ("POST", "/v1/responses") => {
            let custom = r.json()["metadata"]["custom_id"].as_str().unwrap_or_default().to_owned();
            if custom == "c1" {
                return Reply::status(
                    400,
                    r#"{"error": {"message": "Invalid 'input': string too long.", "type": "invalid_request_error", "param": "input", "code": "string_above_max_length"}}"#,
                );
            }
            Reply::status(200, &json!({"id": format!("resp_{custom}"), "object": "response", "status": "queued"}).to_string())
        }
        ("GET", p) if p.starts_with("/v1/responses/resp_") => Reply::status(
            200,
            &json!({"id": &p[14..], "object": "response", "status": "completed", "output": [
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "{\"name\": \"fig\"}", "annotations": []}]}],
                "usage": {"input_tokens": 3, "output_tokens": 4}})
            .to_string(),
        ),
        _ => Reply::status(404, r#"{"error": {"message": "no such route"}}"#),
    })
    .await;
    let p = provider("openai", &format!("{}/v1", server.url()), "gpt-5.5");
    let api = cutline::llm::batch::api(p.as_ref(), Window::Hours8).expect("background mode");
    let b = api
        .submit(items(3), "sess-bg".into())
        .await
        .expect("two of three created");
    let mut parts = b.parts.clone();
    parts.sort();
    assert_eq!(
        parts,
        [
            ("c0".to_owned(), "resp_c0".to_owned()),
            ("c2".to_owned(), "resp_c2".to_owned())
        ]
    );
    assert_eq!(b.refused.len(), 1);
    // The manifest keeps the refusal across a restart.
    let kept: Submitted = serde_json::from_value(serde_json::to_value(&b).unwrap()).unwrap();
    assert_eq!(kept, b);
    let status = api.status(b.clone()).await.expect("status");
    assert_eq!(
        (status.phase, status.done, status.failed, status.total),
        (Phase::Ended, 3, 1, 3)
    );
    let r = by_id(api.results(b).await.expect("results"));
    assert_eq!(text(&r["c0"]).0, "{\"name\": \"fig\"}");
    assert_eq!(text(&r["c2"]).0, "{\"name\": \"fig\"}");
    match &r["c1"] {
        Outcome::Errored(e) => {
            assert_eq!(e.kind, cutline::llm::ErrorKind::BadRequest);
            assert_eq!(e.status, Some(400));
            assert!(e.message.contains("Invalid 'input': string too long."), "{e}");
        }
        other => panic!("not errored: {other:?}"),
    }
}

/// A model that echoes the key in a batch answer: the results file is
/// scrubbed whole before anything is kept of it, as a stream's text is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_echoed_in_a_batch_answer_is_never_kept() {
    let server = Server::handler(|r: &Recorded| match r.path.as_str() {
        "/v1/batches/batch_1" => Reply::status(
            200,
            &json!({"id": "batch_1", "status": "completed", "output_file_id": "file-out"}).to_string(),
        ),
        "/v1/files/file-out/content" => Reply::status(
            200,
            &json!({"id": "r", "custom_id": "c0", "response": {"status_code": 200, "request_id": "q", "body": {
                "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("the key is {KEY}")}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 6}}}, "error": null})
            .to_string(),
        ),
        _ => Reply::status(404, r#"{"error": {"message": "no such route"}}"#),
    })
    .await;
    let gpt = provider("openai", &format!("{}/v1", server.url()), "gpt-4.1-mini");
    let api = cutline::llm::batch::api(gpt.as_ref(), Window::Day).unwrap();
    let b = Submitted::whole("batch_1");
    let r = by_id(api.results(b).await.expect("results"));
    let (text, finish) = text(&r["c0"]);
    assert_eq!(finish, Some(FinishReason::Stop));
    assert!(text.starts_with("the key is ") && !text.contains(KEY), "{text}");
}

/// A batch whose input does not validate ends `failed` with only its
/// `errors`: its status carries the provider's words (each request is
/// then failed with them) and it has no results, instead of an error that
/// stopped every later collection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_batch_that_failed_as_a_whole_says_why() {
    let server = Server::handler(|r: &Recorded| match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/v1/batches/batch_7") => Reply::status(
            200,
            &json!({"id": "batch_7", "object": "batch", "status": "failed", "output_file_id": null, "error_file_id": null,
                "errors": {"object": "list", "data": [
                    {"code": "invalid_json_line", "message": "This line is not parseable as valid JSON.", "param": null, "line": 2},
                    {"code": "model_not_found", "message": "The model does not exist.", "param": "body.model", "line": null}]},
                "request_counts": {"completed": 0, "failed": 0, "total": 0}})
            .to_string(),
        ),
        _ => Reply::status(404, r#"{"error": {"message": "no such route"}}"#),
    })
    .await;
    let gpt = provider("openai", &format!("{}/v1", server.url()), "gpt-4.1-mini");
    let api = cutline::llm::batch::api(gpt.as_ref(), Window::Day).expect("openai has batches");
    let b = cutline::llm::batch::Submitted::whole("batch_7");
    let status = api.status(b.clone()).await.expect("status");
    assert_eq!(status.phase, cutline::llm::batch::Phase::Ended);
    assert_eq!(
        status.failure.as_deref(),
        Some(
            "line 2: This line is not parseable as valid JSON. (invalid_json_line); The model does not exist. (model_not_found)"
        )
    );
    assert_eq!(api.results(b).await.expect("no results, no error"), []);
}

/// Issue 32, case 15: an Anthropic batch `ended` whose `results_url` is
/// null gave the same provider error (exit 5) on every rerun. It has no
/// results: none are handed back, so the executor counts each request
/// expired and sends it again in the next round.
#[tokio::test]
async fn an_ended_anthropic_batch_without_a_results_url_has_no_results() {
    let server = Server::handler(|r: &Recorded| match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/v1/messages/batches/msgbatch_1") => Reply::status(
            200,
            &json!({"id": "msgbatch_1", "type": "message_batch", "processing_status": "ended", "results_url": null,
                "request_counts": {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 4}})
            .to_string(),
        ),
        _ => Reply::status(404, "{}"),
    })
    .await;
    let p = provider("anthropic", &server.url(), "claude-opus-4-8");
    let api = cutline::llm::batch::api(p.as_ref(), Window::Day).expect("anthropic has batches");
    let results = api
        .results(Submitted::whole("msgbatch_1"))
        .await
        .expect("no results, no error");
    assert_eq!(results, Vec::new());
}

/// Issue 32, case 6: one background response answering 404 (deleted, or
/// past its retention) failed every poll of the group, so every eval of
/// the session stopped and the group's other answers were never recorded.
/// That one part ends in error (its run goes again); the others are
/// collected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_response_that_is_gone_costs_the_group_nothing() {
    let server = Server::handler(|r: &Recorded| match (r.method.as_str(), r.path.as_str()) {
        ("POST", "/v1/responses") => {
            let n = u8::from(r.json()["metadata"]["custom_id"] != "c0");
            Reply::status(200, &json!({"id": format!("resp_{n}"), "object": "response", "status": "queued"}).to_string())
        }
        ("GET", "/v1/responses/resp_0") => {
            let v = json!({"id": "resp_0", "object": "response", "status": "completed",
                "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "kept", "annotations": []}]}],
                "usage": {"input_tokens": 3, "output_tokens": 1}});
            Reply::status(200, &v.to_string())
        }
        _ => Reply::status(404, "{\"error\": {\"message\": \"No response found with id 'resp_1'.\", \"type\": \"invalid_request_error\", \"param\": null, \"code\": null}}"),
    })
    .await;
    let p = provider("openai", &format!("{}/v1", server.url()), "gpt-5.5");
    let api = cutline::llm::batch::api(p.as_ref(), Window::Hours2).expect("background mode");
    let b = api.submit(items(2), "sess-gone".into()).await.unwrap();
    assert_eq!(until_ended(api.as_ref(), &b).await, ["ended"]);
    let r = by_id(api.results(b).await.unwrap());
    assert_eq!(text(&r["c0"]), ("kept".into(), Some(FinishReason::Stop)));
    match &r["c1"] {
        Outcome::Errored(e) => assert!(
            e.message
                .ends_with("response resp_1 is not found (404): it is gone, so its run goes again"),
            "{e:?}"
        ),
        other => panic!("{other:?}"),
    }
}
