//! Local servers that speak Anthropic's Message Batches and Gemini's Batch
//! Mode through their whole lifecycle, for `eval --batch` through the real
//! binary: states that advance per poll, polls rate limited past the HTTP
//! layer's retries (Anthropic's `retry-after`, Gemini's `RetryInfo`),
//! results in a shuffled order, lines that fail, expire or are cancelled
//! the first time they are sent, and (Gemini) a batch that fails as a
//! whole. The answers are the OpenAI emulator's, by the same user text.
#![allow(dead_code, reason = "shared by several test binaries; each uses a part")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::openai_batch::answer_text;
use crate::support::{Recorded, Reply};

/// What a line does the first time it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Once {
    /// The provider fails it (a server error).
    Errored,
    /// The window ran out before it ran.
    Expired,
    /// Its batch was cancelled before it ran (Anthropic).
    Canceled,
}

/// One created batch: its requests (custom id, body) and polls so far.
#[derive(Debug, Clone, Default)]
pub struct Created {
    pub requests: Vec<(String, Value)>,
    pub polls: u32,
}

#[derive(Default)]
pub struct World {
    /// Batches created, in order (numbered from 1).
    pub batches: Vec<Created>,
    /// Times each custom id was sent.
    pub sent: HashMap<String, u32>,
    /// custom id → what happens the first time it is sent.
    pub once: HashMap<String, Once>,
    /// Polls answered 429 before any is answered (more than the HTTP
    /// layer's attempts, so a whole poll fails).
    pub limited_polls: u32,
    /// 429s served so far.
    pub limited: u32,
    /// Gemini: batch numbers that fail as a whole.
    pub failing: Vec<usize>,
    /// Every request path seen, for a test that must see none.
    pub paths: Vec<String>,
}

/// A fixed shuffle by a hash of the custom id: never the order sent.
fn shuffled(requests: &[(String, Value)]) -> Vec<(String, Value)> {
    let mut v = requests.to_vec();
    v.sort_by_key(|(id, _)| {
        id.bytes().fold(0x9e37_79b9_7f4a_7c15_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    });
    v
}

/// What happens to `id` now: its first-time fate, or an answer.
fn fate(w: &World, id: &str) -> Option<Once> {
    (w.sent.get(id) == Some(&1)).then(|| w.once.get(id).copied()).flatten()
}

fn limited(w: &mut World) -> bool {
    if w.limited < w.limited_polls {
        w.limited += 1;
        true
    } else {
        false
    }
}

// --- Anthropic -----------------------------------------------------------

fn anthropic_user(params: &Value) -> String {
    let content = &params["messages"].as_array().unwrap().last().unwrap()["content"];
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The Messages answer to `params`: the emulator's text, cut under a
/// limit below 100.
pub fn anthropic_message(params: &Value) -> Value {
    let cut = params["max_tokens"].as_u64().is_some_and(|m| m < 100);
    let (text, finish, out) = answer_text(&anthropic_user(params), cut);
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": params["model"],
        "content": [{"type": "text", "text": text}],
        "stop_reason": if finish == "length" { "max_tokens" } else { "end_turn" }, "stop_sequence": null,
        "usage": {"input_tokens": 300, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}})
}

fn anthropic_batch(base: &str, n: usize, b: &Created) -> Value {
    let ended = b.polls >= 3;
    let total = b.requests.len() as u64;
    json!({"id": format!("msgbatch_{n}"), "type": "message_batch",
        "processing_status": if ended { "ended" } else { "in_progress" },
        "request_counts": if ended {
            json!({"processing": 0, "succeeded": total, "errored": 0, "canceled": 0, "expired": 0})
        } else {
            json!({"processing": total, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0})
        },
        "results_url": if ended { json!(format!("{base}/v1/messages/batches/msgbatch_{n}/results")) } else { Value::Null },
        "created_at": "2026-11-29T00:00:00Z", "expires_at": "2026-11-30T00:00:00Z", "ended_at": null,
        "archived_at": null, "cancel_initiated_at": null})
}

fn anthropic_results(w: &World, b: &Created) -> String {
    shuffled(&b.requests)
        .iter()
        .map(|(id, params)| {
            let result = match fate(w, id) {
                Some(Once::Errored) => json!({"type": "errored", "error": {"type": "error",
                    "error": {"type": "api_error", "message": "Internal server error"}, "request_id": "req_1"}}),
                Some(Once::Expired) => json!({"type": "expired"}),
                Some(Once::Canceled) => json!({"type": "canceled"}),
                None => json!({"type": "succeeded", "message": anthropic_message(params)}),
            };
            json!({"custom_id": id, "result": result}).to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn batch_index(rest: &str, prefix: &str) -> Option<usize> {
    rest.strip_prefix(prefix)?.parse::<usize>().ok()?.checked_sub(1)
}

/// The Anthropic emulator: Message Batches, their results, nothing else.
pub fn anthropic(state: Arc<Mutex<World>>) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let mut w = state.lock().unwrap();
        w.paths.push(r.path.clone());
        let base = format!("http://{}", r.header("host").unwrap_or("127.0.0.1"));
        let path = r.path.as_str();
        if r.method == "POST" && path == "/v1/messages/batches" {
            let body = r.json();
            let requests: Vec<(String, Value)> = body["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| (q["custom_id"].as_str().unwrap().to_owned(), q["params"].clone()))
                .collect();
            for (id, _) in &requests {
                *w.sent.entry(id.clone()).or_insert(0) += 1;
            }
            w.batches.push(Created { requests, polls: 0 });
            let n = w.batches.len();
            return Reply::status(200, &anthropic_batch(&base, n, &w.batches[n - 1]).to_string());
        }
        if let Some(rest) = path.strip_prefix("/v1/messages/batches/") {
            if let Some(i) = rest
                .strip_suffix("/results")
                .and_then(|id| batch_index(id, "msgbatch_"))
            {
                let b = w.batches[i].clone();
                return Reply::status(200, &anthropic_results(&w, &b));
            }
            if limited(&mut w) {
                return Reply::status(
                    429,
                    r#"{"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}"#,
                )
                .header("retry-after", "0");
            }
            if let Some(i) = batch_index(rest, "msgbatch_") {
                w.batches[i].polls += 1;
                return Reply::status(200, &anthropic_batch(&base, i + 1, &w.batches[i]).to_string());
            }
        }
        Reply::status(
            404,
            r#"{"type": "error", "error": {"type": "not_found_error", "message": "Not found"}}"#,
        )
    }
}

// --- Gemini --------------------------------------------------------------

fn gemini_user(request: &Value) -> String {
    request["contents"].as_array().unwrap().last().unwrap()["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

/// The `generateContent` answer to `request`.
pub fn gemini_response(request: &Value) -> Value {
    let cut = request
        .pointer("/generationConfig/maxOutputTokens")
        .and_then(Value::as_u64)
        .is_some_and(|m| m < 100);
    let (text, finish, out) = answer_text(&gemini_user(request), cut);
    json!({"candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
        "finishReason": if finish == "length" { "MAX_TOKENS" } else { "STOP" }, "index": 0}],
        "usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": out, "totalTokenCount": 300 + out},
        "modelVersion": "gemini-3-flash-preview"})
}

fn gemini_batch(w: &World, n: usize) -> Value {
    let b = &w.batches[n - 1];
    let name = format!("batches/{n}");
    let failing = w.failing.contains(&n);
    let state = match (b.polls, failing) {
        (0 | 1, _) => "BATCH_STATE_PENDING",
        (2, _) => "BATCH_STATE_RUNNING",
        (_, true) => "BATCH_STATE_FAILED",
        (_, false) => "BATCH_STATE_SUCCEEDED",
    };
    let total = b.requests.len().to_string();
    let mut meta = json!({"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
        "name": name, "model": "models/gemini-3-flash-preview", "displayName": "", "state": state,
        "batchStats": {"requestCount": total, "pendingRequestCount": total}});
    let mut op = json!({"name": name, "done": state.ends_with("SUCCEEDED") || state.ends_with("FAILED")});
    if state.ends_with("SUCCEEDED") {
        let responses: Vec<Value> = shuffled(&b.requests)
            .iter()
            .map(|(id, request)| match fate(w, id) {
                Some(_) => json!({"error": {"code": 500, "message": "An internal error has occurred.", "status": "INTERNAL"}, "metadata": {"key": id}}),
                None => json!({"response": gemini_response(request), "metadata": {"key": id}}),
            })
            .collect();
        meta["output"] = json!({"inlinedResponses": {"inlinedResponses": responses}});
    }
    if state.ends_with("FAILED") {
        op["error"] = json!({"code": 400, "message": "Batch input could not be read.", "status": "INVALID_ARGUMENT"});
    }
    op["metadata"] = meta;
    op
}

/// The Gemini emulator: batchGenerateContent with inline requests, the
/// batch's operation, nothing else.
pub fn gemini(state: Arc<Mutex<World>>) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let mut w = state.lock().unwrap();
        w.paths.push(r.path.clone());
        let path = r.path.as_str();
        if r.method == "POST" && path.ends_with(":batchGenerateContent") {
            let body = r.json();
            let requests: Vec<(String, Value)> = body["batch"]["inputConfig"]["requests"]["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| (q["metadata"]["key"].as_str().unwrap().to_owned(), q["request"].clone()))
                .collect();
            for (id, _) in &requests {
                *w.sent.entry(id.clone()).or_insert(0) += 1;
            }
            w.batches.push(Created { requests, polls: 0 });
            let n = w.batches.len();
            return Reply::status(200, &gemini_batch(&w, n).to_string());
        }
        if let Some(i) = path
            .strip_prefix("/v1beta/")
            .and_then(|rest| batch_index(rest, "batches/"))
        {
            if limited(&mut w) {
                return Reply::status(
                    429,
                    r#"{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED",
                        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0s"}]}}"#,
                );
            }
            w.batches[i].polls += 1;
            return Reply::status(200, &gemini_batch(&w, i + 1).to_string());
        }
        Reply::status(
            404,
            &format!(r#"{{"error": {{"code": 404, "message": "{path} not found", "status": "NOT_FOUND"}}}}"#),
        )
    }
}
