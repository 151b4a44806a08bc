//! A local server that speaks OpenAI's streamed chat completions and its
//! Batch API (files, batches, output and error files) with the same
//! answers, for `eval --batch` through the real binary.
#![allow(dead_code)]

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
    let cut = body["max_completion_tokens"].as_u64().is_some_and(|m| m < 100);
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

#[derive(Default)]
pub struct World {
    /// file id → uploaded lines.
    pub files: HashMap<String, Vec<Value>>,
    /// batch id → (input file, polls, metadata tag).
    pub batches: Vec<(String, String, u32, String)>,
    /// custom ids that expire the first time they are sent.
    pub expire_once: Vec<String>,
    /// Times each custom id was sent.
    pub sent: HashMap<String, u32>,
    /// Hold each create call this long (a process can be killed meanwhile).
    pub hold_create: Duration,
    /// Batches created.
    pub creates: u32,
    /// Batches numbered above this stay `in_progress` (a command's wait
    /// runs out between rounds).
    pub hold_after: Option<usize>,
}

/// The OpenAI emulator: streams, files, batches, output files.
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
            s.batches
                .push((id.clone(), b["input_file_id"].as_str().unwrap().to_owned(), 0, tag));
            let hold = s.hold_create;
            drop(s);
            std::thread::sleep(hold);
            return Reply::status(
                200,
                &json!({"id": id, "object": "batch", "status": "validating"}).to_string(),
            );
        }
        if r.method == "GET" && path.starts_with("/batches?") {
            let data: Vec<Value> = s
                .batches
                .iter()
                .map(|(id, _, _, tag)| json!({"id": id, "metadata": {"cutline_session": tag}}))
                .collect();
            return Reply::status(
                200,
                &json!({"object": "list", "data": data, "has_more": false}).to_string(),
            );
        }
        if r.method == "GET" && path.starts_with("/batches/") {
            let id = path.trim_start_matches("/batches/");
            let Some(b) = s.batches.iter_mut().find(|b| b.0 == id) else {
                return Reply::status(404, "{}");
            };
            b.2 += 1;
            let number: usize = id.trim_start_matches("batch_").parse().unwrap_or(0);
            let held = s.hold_after.is_some_and(|n| number > n);
            let Some(b) = s.batches.iter_mut().find(|b| b.0 == id) else {
                return Reply::status(404, "{}");
            };
            let polls = if held { 2 } else { b.2 };
            let status = ["validating", "in_progress", "finalizing", "completed"][(polls as usize - 1).min(3)];
            let (input, polls) = (b.1.clone(), b.2);
            return Reply::status(
                200,
                &json!({"id": id, "status": status, "output_file_id": format!("out-{input}"), "error_file_id": format!("err-{input}"),
                    "request_counts": {"completed": 0, "failed": 0, "total": polls}}).to_string(),
            );
        }
        if r.method == "GET" && path.starts_with("/files/") {
            let name = path.trim_start_matches("/files/").trim_end_matches("/content");
            let (kind, input) = name.split_once('-').unwrap();
            let lines = s.files.get(input).cloned().unwrap_or_default();
            let mut out = Vec::new();
            for l in lines.iter().rev() {
                let id = l["custom_id"].as_str().unwrap().to_owned();
                let expire = s.expire_once.contains(&id) && s.sent[&id] == 1;
                match (kind, expire) {
                    ("out", false) => out.push(json!({"id": "r", "custom_id": id, "response": {"status_code": 200, "request_id": "q", "body": completion(&l["body"])}, "error": null})),
                    ("err", true) => out.push(json!({"id": "r", "custom_id": id, "response": null, "error": {"code": "batch_expired", "message": "expired"}})),
                    _ => {}
                }
            }
            return Reply::status(200, &out.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"));
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

pub fn inputs(dir: &Path, n: usize) -> std::path::PathBuf {
    let path = dir.join("inputs.jsonl");
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{}\n",
                json!({"id": format!("doc{i}"), "text": format!("Document {i}: {}", "word ".repeat(i % 13))})
            )
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}
