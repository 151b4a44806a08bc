//! A local server that speaks OpenAI's streamed chat completions and its
//! Batch API (files, batches, output and error files) with the same
//! answers, for `eval --batch` through the real binary.
#![allow(dead_code, reason = "shared by several test binaries; each uses a part")]

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};

use crate::support::{Recorded, Reply};

pub const KEY_ENV: &str = "CUTLINE_BATCH_CLI_KEY";

/// The answer to a request body, the same streamed or batched: the items
/// depend on the input text; a limit under 100 cuts the answer.
pub fn answer(body: &Value) -> (String, &'static str, u32) {
    let user = body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    answer_text(&user, body["max_completion_tokens"].as_u64().is_some_and(|m| m < 100))
}

/// The answer to the user text `user` (the same for every provider): its
/// text, finish (`length` when `cut`) and output tokens.
pub fn answer_text(user: &str, cut: bool) -> (String, &'static str, u32) {
    let n = user.len() % 4 + 2;
    let json = user.contains("JSON array") || user.contains("as a JSON array");
    let items: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "{{\"entity\": \"term{i}-{}\", \"definition\": \"meaning {i}\"}}",
                user.len()
            )
        })
        .collect();
    let mut text = if json {
        format!("[{}]", items.join(", "))
    } else {
        items.join("\n")
    };
    if cut {
        text.truncate(text.len() * 2 / 3);
    }
    (text, if cut { "length" } else { "stop" }, if cut { 64 } else { 90 })
}

pub fn completion(body: &Value) -> Value {
    let (text, finish, out) = answer(body);
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 300, "completion_tokens": out}})
}

pub fn stream(body: &Value) -> Reply {
    let (text, finish, out) = answer(body);
    let parts = [
        json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}).to_string(),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}).to_string(),
        json!({"choices": [], "usage": {"prompt_tokens": 300, "completion_tokens": out}}).to_string(),
        "[DONE]".to_owned(),
    ];
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    Reply::data(&refs)
}

/// How a batch ends when it does not simply complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Cancelled partway: every second request answered, the rest
    /// `batch_cancelled` in the error file.
    Cancelled,
    /// Failed as a whole (its input did not validate): no files, only the
    /// batch's `errors`.
    Failed,
}

/// One created batch.
#[derive(Debug, Clone)]
pub struct Created {
    pub id: String,
    pub input: String,
    pub polls: u32,
    pub tag: String,
}

#[derive(Default)]
pub struct World {
    /// file id → uploaded lines.
    pub files: HashMap<String, Vec<Value>>,
    /// Every batch created, in order (`batch_1`, `batch_2`, …).
    pub batches: Vec<Created>,
    /// custom ids that expire the first time they are sent.
    pub expire_once: Vec<String>,
    /// custom ids the provider fails (a 500 in the error file) the first
    /// time they are sent.
    pub error_once: Vec<String>,
    /// Times each custom id was sent.
    pub sent: HashMap<String, u32>,
    /// Hold each create call this long (a process can be killed meanwhile).
    pub hold_create: Duration,
    /// Batches created.
    pub creates: u32,
    /// Batches numbered above this stay `in_progress` (a command's wait
    /// runs out between rounds).
    pub hold_after: Option<usize>,
    /// Polls of a batch answered 429 (with `retry-after: 0`) before any is
    /// answered: more than the HTTP layer retries, so a whole poll fails.
    pub limited_polls: u32,
    /// 429s served so far.
    pub limited: u32,
    /// Batch number → how it ends.
    pub fates: HashMap<usize, Fate>,
    /// Cancel calls received (each makes its batch end `cancelled`).
    pub cancels: u32,
    /// Batches created by someone else with the same session in their
    /// tag (another checkout, an older run), listed by the batches list.
    pub strangers: Vec<(String, String)>,
}

/// A fixed shuffle of a batch's lines (by a hash of the custom id), so
/// results never come back in the order sent.
fn shuffled(lines: &[Value]) -> Vec<Value> {
    let mut v = lines.to_vec();
    v.sort_by_key(|l| {
        let id = l["custom_id"].as_str().unwrap_or("");
        id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    });
    v
}

fn batch_number(id: &str) -> usize {
    id.trim_start_matches("batch_").parse().unwrap_or(0)
}

/// The batch object at this poll.
fn batch_object(s: &World, b: &Created) -> Value {
    let held = s.hold_after.is_some_and(|n| batch_number(&b.id) > n);
    let polls = if held { 2 } else { b.polls };
    let fate = s.fates.get(&batch_number(&b.id)).copied();
    let status = match (polls, fate) {
        (0..=3, _) => ["validating", "validating", "in_progress", "finalizing"][polls as usize],
        (_, Some(Fate::Cancelled)) => "cancelled",
        (_, Some(Fate::Failed)) => "failed",
        (_, None) => "completed",
    };
    let mut v = json!({"id": b.id, "object": "batch", "status": status, "endpoint": "/v1/chat/completions",
        "input_file_id": b.input, "metadata": {"cutline_session": b.tag},
        "request_counts": {"completed": 0, "failed": 0, "total": polls}});
    if fate == Some(Fate::Failed) {
        v["errors"] = json!({"object": "list", "data": [{"code": "invalid_request", "message": "model not available for batch", "param": "body.model", "line": 1}]});
    } else {
        v["output_file_id"] = json!(format!("out-{}", b.input));
        v["error_file_id"] = json!(format!("err-{}", b.input));
    }
    v
}

/// The output (`out`) or error (`err`) file of the batch over `input`.
fn result_file(s: &World, kind: &str, input: &str) -> String {
    let lines = s.files.get(input).cloned().unwrap_or_default();
    let number = s
        .batches
        .iter()
        .find(|b| b.input == input)
        .map_or(0, |b| batch_number(&b.id));
    let cancelled = s.fates.get(&number) == Some(&Fate::Cancelled);
    let mut out = Vec::new();
    for (i, l) in shuffled(&lines).iter().enumerate() {
        let id = l["custom_id"].as_str().unwrap().to_owned();
        let first = s.sent[&id] == 1;
        let error = if cancelled && i % 2 == 1 {
            Some(
                json!({"id": "r", "custom_id": id, "response": null, "error": {"code": "batch_cancelled", "message": "cancelled"}}),
            )
        } else if first && s.expire_once.contains(&id) {
            Some(
                json!({"id": "r", "custom_id": id, "response": null, "error": {"code": "batch_expired", "message": "expired"}}),
            )
        } else if first && s.error_once.contains(&id) {
            Some(
                json!({"id": "r", "custom_id": id, "response": {"status_code": 500, "request_id": "q",
                "body": {"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}}, "error": null}),
            )
        } else {
            None
        };
        match (kind, error) {
            ("out", None) => out.push(json!({"id": "r", "custom_id": id, "response": {"status_code": 200, "request_id": "q", "body": completion(&l["body"])}, "error": null})),
            ("err", Some(e)) => out.push(e),
            _ => {}
        }
    }
    out.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

/// The OpenAI emulator: streams, files, batches, output files.
#[allow(
    clippy::too_many_lines,
    reason = "one route table for the emulated API, in the order the SDK calls it"
)]
pub fn openai(state: Arc<Mutex<World>>) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let path = r.path.trim_start_matches("/v1");
        if r.method == "POST" && path == "/chat/completions" {
            return stream(&r.json());
        }
        let mut s = state.lock().unwrap();
        if r.method == "POST" && path == "/files" {
            let text = String::from_utf8_lossy(&r.body).into_owned();
            let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
            let id = format!("file-{}", s.files.len() + 1);
            for l in &lines {
                *s.sent.entry(l["custom_id"].as_str().unwrap().to_owned()).or_insert(0) += 1;
            }
            s.files.insert(id.clone(), lines);
            return Reply::status(
                200,
                &json!({"id": id, "object": "file", "purpose": "batch"}).to_string(),
            );
        }
        if r.method == "POST" && path == "/batches" {
            let b = r.json();
            s.creates += 1;
            let id = format!("batch_{}", s.batches.len() + 1);
            let tag = b["metadata"]["cutline_session"].as_str().unwrap_or("").to_owned();
            let input = b["input_file_id"].as_str().unwrap().to_owned();
            s.batches.push(Created {
                id: id.clone(),
                input,
                polls: 0,
                tag,
            });
            let hold = s.hold_create;
            drop(s);
            std::thread::sleep(hold);
            return Reply::status(
                200,
                &json!({"id": id, "object": "batch", "status": "validating"}).to_string(),
            );
        }
        if r.method == "GET" && path.starts_with("/batches?") {
            // Newest first, as the API lists them: the strangers came later.
            let strangers = s.strangers.iter().map(|(id, tag)| (id.as_str(), tag.as_str()));
            let ours = s.batches.iter().rev().map(|b| (b.id.as_str(), b.tag.as_str()));
            let data: Vec<Value> = strangers
                .chain(ours)
                .map(|(id, tag)| json!({"id": id, "metadata": {"cutline_session": tag}}))
                .collect();
            return Reply::status(
                200,
                &json!({"object": "list", "data": data, "has_more": false}).to_string(),
            );
        }
        if r.method == "POST" && path.starts_with("/batches/") && path.ends_with("/cancel") {
            let id = path.trim_start_matches("/batches/").trim_end_matches("/cancel");
            s.fates.insert(batch_number(id), Fate::Cancelled);
            s.cancels += 1;
            return Reply::status(
                200,
                &json!({"id": id, "object": "batch", "status": "cancelling"}).to_string(),
            );
        }
        if r.method == "GET" && path.starts_with("/batches/") {
            if s.limited < s.limited_polls {
                s.limited += 1;
                return Reply::status(
                    429,
                    r#"{"error": {"message": "Rate limit reached for batch polls", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}"#,
                )
                .header("retry-after", "0");
            }
            let id = path.trim_start_matches("/batches/");
            let Some(i) = s.batches.iter().position(|b| b.id == id) else {
                return Reply::status(404, "{}");
            };
            s.batches[i].polls += 1;
            let v = batch_object(&s, &s.batches[i]);
            return Reply::status(200, &v.to_string());
        }
        if r.method == "GET" && path.starts_with("/files/") {
            let name = path.trim_start_matches("/files/").trim_end_matches("/content");
            let (kind, input) = name.split_once('-').unwrap();
            return Reply::status(200, &result_file(&s, kind, input));
        }
        Reply::status(404, r#"{"error": {"message": "no such route"}}"#)
    }
}

pub fn config(url: &str) -> String {
    format!(
        "[[provider]]\nname = \"gpt\"\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"gpt-4.1-mini\"\napi_key_env = \"{KEY_ENV}\"\n"
    )
}

pub fn cutline(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("cutline").unwrap();
    c.current_dir(dir)
        .env("CUTLINE_CONFIG", dir.join("cutline.toml"))
        .env("CUTLINE_LEARNED_FILE", "")
        .env(KEY_ENV, "sk-batch-cli-0000")
        .args(["--prompts"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts"))
        .args(["--sessions", "sessions"])
        .timeout(Duration::from_secs(300));
    c
}

/// A finished command's exit code and the JSON records of its stdout.
pub fn records(out: &std::process::Output) -> (i32, Vec<Value>) {
    let recs = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out.status.code().unwrap_or(-1), recs)
}

pub fn inputs(dir: &Path, n: usize) -> std::path::PathBuf {
    let path = dir.join("inputs.jsonl");
    let mut text = String::new();
    for i in 0..n {
        let line = json!({"id": format!("doc{i}"), "text": format!("Document {i}: {}", "word ".repeat(i % 13))});
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}
