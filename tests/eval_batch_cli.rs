#![allow(clippy::format_collect)]
//! `cutline eval --batch` through the real binary against a local server
//! that speaks OpenAI's streamed chat completions and its Batch API with the
//! same answers: a batch eval of two prompts × 200 inputs × 2 limits records
//! 800 runs, each once, with the analyses the streamed eval gives; a process
//! killed while its batch is being created leaves no second batch and loses
//! no run; the OpenAI batch file round-trips through `--batch-file` and
//! `--batch-results`; `cutline batches` lists the manifest.

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use support::{Recorded, Reply, Server};

const KEY_ENV: &str = "CUTLINE_BATCH_CLI_KEY";

/// The answer to a request body, the same streamed or batched: the items
/// depend on the input text; a limit under 100 cuts the answer.
fn answer(body: &Value) -> (String, &'static str, u32) {
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

fn completion(body: &Value) -> Value {
    let (text, finish, out) = answer(body);
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 300, "completion_tokens": out}})
}

fn stream(body: &Value) -> Reply {
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
struct World {
    /// file id → uploaded lines.
    files: HashMap<String, Vec<Value>>,
    /// batch id → (input file, polls, metadata tag).
    batches: Vec<(String, String, u32, String)>,
    /// custom ids that expire the first time they are sent.
    expire_once: Vec<String>,
    /// Times each custom id was sent.
    sent: HashMap<String, u32>,
    /// Hold each create call this long (a process can be killed meanwhile).
    hold_create: Duration,
    creates: u32,
}

/// The OpenAI emulator: streams, files, batches, output files.
fn openai(state: Arc<Mutex<World>>) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
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
            let status = ["validating", "in_progress", "finalizing", "completed"][(b.2 as usize - 1).min(3)];
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

fn config(url: &str) -> String {
    format!(
        "[[provider]]\nname = \"gpt\"\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"gpt-4.1-mini\"\napi_key_env = \"{KEY_ENV}\"\n"
    )
}

fn cutline(dir: &Path) -> Command {
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

fn inputs(dir: &Path, n: usize) -> std::path::PathBuf {
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

fn eval(dir: &Path, session: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    let out = cutline(dir)
        .args([
            "eval",
            "--prompt",
            "extract-definitions",
            "--provider",
            "gpt",
            "--max-tokens",
            "64,none",
            "--inputs",
        ])
        .arg(dir.join("inputs.jsonl"))
        .args(["--session", session, "--concurrency", "16", "--no-progress"])
        .args(extra)
        .output()
        .unwrap();
    let recs = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out.status.code().unwrap_or(-1), recs)
}

/// Items of every recorded run of a session, by run key.
fn analyses(dir: &Path, session: &str) -> HashMap<String, Value> {
    let s = cutline::session::load(&dir.join(format!("sessions/{session}.jsonl"))).unwrap();
    s.runs
        .iter()
        .map(|r| {
            (
                cutline::eval::record_key(r),
                json!({"analysis": r.analysis, "finish": r.finish, "text": r.text}),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_eval_records_every_run_once_as_the_streamed_eval_does() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 200);
    // Two runs expire in the first batch and are answered in the second round.
    let (code, recs) = eval(dir.path(), "streamed", &[]);
    assert_eq!(code, 0, "{recs:?}");
    let streamed = analyses(dir.path(), "streamed");
    assert_eq!(streamed.len(), 800);
    let keys: Vec<String> = streamed.keys().take(2).cloned().collect();
    state.lock().unwrap().expire_once = keys.iter().map(|k| cutline::llm::batch::custom_id(k)).collect();
    let (code, recs) = eval(dir.path(), "batched", &["--batch", "--poll", "10ms"]);
    assert_eq!(
        code,
        0,
        "{:?}",
        recs.iter().filter(|r| r["type"] != "run").collect::<Vec<_>>()
    );
    let batched = analyses(dir.path(), "batched");
    assert_eq!(batched.len(), 800, "each run recorded once");
    assert_eq!(batched, streamed, "the same analyses as streamed");
    let s = cutline::session::load(&dir.path().join("sessions/batched.jsonl")).unwrap();
    let r = &s.runs[0];
    let b = r.batch.as_ref().expect("a batch run says which batch");
    assert!(b.id.starts_with("batch_"));
    assert_eq!(
        b.custom_id,
        cutline::llm::batch::custom_id(&cutline::eval::record_key(r))
    );
    let st = state.lock().unwrap();
    for k in &keys {
        assert_eq!(
            st.sent[&cutline::llm::batch::custom_id(k)],
            2,
            "expired once, sent again"
        );
    }
    let totals = recs.iter().find(|r| r["type"] == "totals").unwrap();
    assert_eq!(totals["batch_price_factor"], 0.5);
    assert!(recs.iter().any(|r| r["type"] == "batch" && r["event"] == "submitted"));
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("sessions/batched.batches.json")).unwrap()).unwrap();
    assert!(
        manifest["batches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["state"] == "collected")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_process_killed_while_creating_its_batch_leaves_no_second_batch() {
    let state = Arc::new(Mutex::new(World {
        hold_create: Duration::from_secs(3),
        ..World::default()
    }));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 5);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cutline"))
        .current_dir(dir.path())
        .env("CUTLINE_CONFIG", dir.path().join("cutline.toml"))
        .env("CUTLINE_LEARNED_FILE", "")
        .env(KEY_ENV, "sk-batch-cli-0000")
        .args(["--prompts"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts"))
        .args([
            "--sessions",
            "sessions",
            "eval",
            "--prompt",
            "extract-definitions",
            "--no-twins",
            "--provider",
            "gpt",
        ])
        .args([
            "--max-tokens",
            "64",
            "--inputs",
            "inputs.jsonl",
            "--session",
            "k",
            "--batch",
            "--poll",
            "10ms",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the create call to arrive, then kill cutline while it waits
    // for the answer: the manifest says `creating`.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while state.lock().unwrap().creates == 0 {
        assert!(std::time::Instant::now() < deadline, "the batch was never created");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    state.lock().unwrap().hold_create = Duration::ZERO;
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("sessions/k.batches.json")).unwrap()).unwrap();
    assert_eq!(manifest["batches"][0]["state"], "creating");
    let out = cutline(dir.path())
        .args([
            "eval",
            "--prompt",
            "extract-definitions",
            "--no-twins",
            "--provider",
            "gpt",
            "--max-tokens",
            "64",
        ])
        .args([
            "--inputs",
            "inputs.jsonl",
            "--session",
            "k",
            "--batch",
            "--poll",
            "10ms",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let st = state.lock().unwrap();
    assert_eq!(
        st.creates, 1,
        "the crashed batch was adopted by its tag, not created again"
    );
    let s = cutline::session::load(&dir.path().join("sessions/k.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 5, "no run lost");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"event\":\"adopted\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_openai_batch_file_round_trips_and_batches_lists_the_manifest() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 6);
    let file = dir.path().join("batch-in.jsonl");
    let (code, recs) = eval(dir.path(), "offline", &["--batch-file", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{recs:?}");
    let lines: Vec<Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 24, "6 inputs × 2 prompts × 2 limits");
    assert!(
        lines
            .iter()
            .all(|l| l["method"] == "POST" && l["url"] == "/v1/chat/completions" && l["body"].get("stream").is_none())
    );
    assert!(state.lock().unwrap().files.is_empty(), "nothing was sent");
    // Elsewhere (vLLM's run-batch, say) the lines are answered.
    let output: String = lines
        .iter()
        .rev()
        .map(|l| {
            format!(
                "{}\n",
                json!({"id": "r", "custom_id": l["custom_id"], "response": {"status_code": 200, "request_id": "q", "body": completion(&l["body"])}, "error": null})
            )
        })
        .collect();
    let results = dir.path().join("batch-out.jsonl");
    std::fs::write(&results, output).unwrap();
    let (code, recs) = eval(dir.path(), "offline", &["--batch-results", results.to_str().unwrap()]);
    assert_eq!(code, 0, "{recs:?}");
    let (code, _) = eval(dir.path(), "streamed", &[]);
    assert_eq!(code, 0);
    assert_eq!(analyses(dir.path(), "offline"), analyses(dir.path(), "streamed"));

    // `cutline batches` on a batch eval's session.
    let (code, _) = eval(dir.path(), "listed", &["--batch", "--poll", "10ms"]);
    assert_eq!(code, 0);
    let out = cutline(dir.path())
        .args(["batches", "listed", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    let batches = env["data"]["batches"].as_array().unwrap();
    assert!(!batches.is_empty());
    assert!(
        batches
            .iter()
            .all(|b| b["state"] == "collected" && b["requests"].as_u64().unwrap() > 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_zero_returns_pending_and_a_provider_without_batches_is_named() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 3);
    let (code, recs) = eval(dir.path(), "later", &["--batch", "--wait", "0"]);
    assert_eq!(code, 10, "{recs:?}");
    let (code, recs) = eval(dir.path(), "later", &["--batch", "--poll", "10ms"]);
    assert_eq!(code, 0, "{recs:?}");
    assert_eq!(
        state.lock().unwrap().creates,
        1,
        "the second command collected, it did not submit again"
    );
    let out = cutline(dir.path())
        .args([
            "eval",
            "--prompt",
            "extract-definitions",
            "--provider",
            "replay",
            "--batch",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        env["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nothing was submitted"),
        "{env}"
    );
}
