#![allow(
    clippy::format_collect,
    reason = "test fixtures: clarity over one allocation per line"
)]
//! `cutline eval --batch` through the real binary against a local server
//! that speaks OpenAI's streamed chat completions and its Batch API with the
//! same answers: a batch eval of two prompts × 200 inputs × 2 limits records
//! 800 runs, each once, with the analyses the streamed eval gives; a process
//! killed while its batch is being created leaves no second batch and loses
//! no run; the OpenAI batch file round-trips through `--batch-file` and
//! `--batch-results`; `cutline batches` lists the manifest.

#[path = "batch_support/openai.rs"]
mod openai_batch;
mod support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use support::Server;

use openai_batch::{Fate, KEY_ENV, World, completion, config, cutline, inputs, openai, records};

fn eval(dir: &Path, session: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    eval_at(dir, session, "64,none", extra)
}

/// `eval` at the limits `limits`.
fn eval_at(dir: &Path, session: &str, limits: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    let out = cutline(dir)
        .args([
            "eval",
            "--prompt",
            "extract-definitions",
            "--provider",
            "gpt",
            "--max-tokens",
            limits,
            "--inputs",
        ])
        .arg(dir.join("inputs.jsonl"))
        .args(["--session", session, "--concurrency", "16", "--no-progress"])
        .args(extra)
        .output()
        .unwrap();
    records(&out)
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

#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_eval_records_every_run_once_as_the_streamed_eval_does() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 200);
    let (code, recs) = eval(dir.path(), "streamed", &[]);
    assert_eq!(code, 0, "{recs:?}");
    let streamed = analyses(dir.path(), "streamed");
    assert_eq!(streamed.len(), 800);
    // The lifecycle: polls rate limited past the HTTP layer's retries,
    // results shuffled, two runs expired and two failed by the server in
    // batch 1, which is then cancelled halfway (what it answered is kept);
    // batch 2, the resent runs, fails as a whole; batch 3 answers the rest.
    let keys: Vec<String> = streamed.keys().take(4).cloned().collect();
    let ids: Vec<String> = keys.iter().map(|k| cutline::llm::batch::custom_id(k)).collect();
    {
        let mut w = state.lock().unwrap();
        w.expire_once = ids[..2].to_vec();
        w.error_once = ids[2..].to_vec();
        // Five: one more than the HTTP layer's four attempts.
        w.limited_polls = 5;
        w.fates = [(1, Fate::Cancelled), (2, Fate::Failed)].into();
    }
    let (code, recs) = eval(dir.path(), "batched", &["--batch", "--poll", "10ms"]);
    assert_eq!(
        code,
        0,
        "{:?}",
        recs.iter().filter(|r| r["type"] != "run").collect::<Vec<_>>()
    );
    let session = cutline::session::load(&dir.path().join("sessions/batched.jsonl")).unwrap();
    assert_eq!(session.runs.len(), 800, "each run recorded exactly once");
    let batched = analyses(dir.path(), "batched");
    assert_eq!(batched.len(), 800, "every run key recorded");
    assert_eq!(batched, streamed, "the same analyses as streamed");
    let events: Vec<&str> = recs
        .iter()
        .filter(|r| r["type"] == "batch")
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    assert_eq!(events.iter().filter(|e| **e == "submitted").count(), 3, "{events:?}");
    assert!(
        events.contains(&"poll_failed"),
        "a poll rate limited for good is tried again: {events:?}"
    );
    let collected: Vec<&Value> = recs.iter().filter(|r| r["event"] == "collected").collect();
    let n = |v: &Value| v.as_u64().unwrap();
    let (answered, resent) = (n(&collected[0]["answered"]), n(&collected[0]["resent"]));
    assert_eq!(answered + resent, 800);
    assert!(
        (396..=400).contains(&answered),
        "batch 1 answered every second run but the 4: {answered}"
    );
    assert_eq!(collected[1]["answered"], 0, "batch 2 failed as a whole");
    assert_eq!(collected[1]["failed"], 0, "its runs go again, not recorded as failed");
    assert_eq!(n(&collected[1]["resent"]), resent);
    assert_eq!(n(&collected[2]["answered"]), resent, "batch 3 answered the rest");
    let s = cutline::session::load(&dir.path().join("sessions/batched.jsonl")).unwrap();
    let r = &s.runs[0];
    let b = r.batch.as_ref().expect("a batch run says which batch");
    assert!(b.id.starts_with("batch_"));
    assert_eq!(
        b.custom_id,
        cutline::llm::batch::custom_id(&cutline::eval::record_key(r))
    );
    let st = state.lock().unwrap();
    assert_eq!(st.limited, 5);
    let thrice = st.sent.values().filter(|n| **n == 3).count() as u64;
    assert_eq!(thrice, resent, "what batch 1 did not answer went in all three batches");
    assert_eq!(
        st.sent.values().filter(|n| **n == 1).count() as u64,
        answered,
        "the rest once"
    );
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

#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_process_killed_while_creating_its_batch_leaves_no_second_batch() {
    // Batches of other checkouts of the same eval carry the same session
    // id (one from before per-entry tags, one with this entry's name): a
    // resume must not take them for its own.
    let state = Arc::new(Mutex::new(World {
        hold_create: Duration::from_secs(3),
        strangers: vec![
            ("batch_98".into(), "k".into()),
            ("batch_99".into(), "k.b1.0000000000000000".into()),
        ],
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
    assert!(
        s.runs.iter().all(|r| r.batch.as_ref().unwrap().id == "batch_1"),
        "its own batch"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"event\":\"adopted\",\"local\":\"b1\",\"id\":\"batch_1\""));
    let tag = &st.batches[0].tag;
    assert!(tag.starts_with("k.b1.") && tag.len() == "k.b1.".len() + 16, "{tag}");
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

/// `batches --cancel` stops a batch without losing what it answered: the
/// entry stays `cancelling`, the next eval collects the answered half and
/// sends only the rest again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_batch_keeps_what_it_answered() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 10);
    let (code, recs) = eval(dir.path(), "c", &["--batch", "--wait", "0"]);
    assert_eq!(code, 10, "{recs:?}");
    let out = cutline(dir.path())
        .args(["batches", "c", "--cancel", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(state.lock().unwrap().cancels, 1);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("sessions/c.batches.json")).unwrap()).unwrap();
    assert_eq!(manifest["batches"][0]["state"], "cancelling");
    let (code, recs) = eval(dir.path(), "c", &["--batch", "--poll", "10ms"]);
    assert_eq!(code, 0, "{recs:?}");
    let s = cutline::session::load(&dir.path().join("sessions/c.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 40, "10 inputs × 2 prompts × 2 limits, each once");
    let st = state.lock().unwrap();
    assert_eq!(st.creates, 2, "the cancelled half went in one more batch");
    assert_eq!(
        st.sent.values().filter(|n| **n == 1).count(),
        20,
        "the answered half is never sent again"
    );
    assert_eq!(
        s.runs
            .iter()
            .filter(|r| r.batch.as_ref().unwrap().id == "batch_1")
            .count(),
        20
    );
}

/// An output file line that is not JSON, or not a batch result, is an
/// error naming the file and the line; nothing is recorded.
#[test]
fn a_bad_batch_results_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config("http://127.0.0.1:9")).unwrap();
    inputs(dir.path(), 2);
    let results = dir.path().join("out.jsonl");
    std::fs::write(
        &results,
        "{\"custom_id\": \"c1\", \"response\": null, \"error\": {\"code\": \"batch_expired\"}}\n\n{\"id\": 3}\n",
    )
    .unwrap();
    let (code, recs) = eval(dir.path(), "bad", &["--batch-results", results.to_str().unwrap()]);
    assert_eq!(code, 4, "{recs:?}");
    let err = recs.iter().find(|r| r["type"] == "error").unwrap();
    assert_eq!(
        err["message"],
        format!("{}:3: not a batch output line (no custom_id)", results.display())
    );
    std::fs::write(&results, "{\"custom_id\": \n").unwrap();
    let (code, recs) = eval(dir.path(), "bad", &["--batch-results", results.to_str().unwrap()]);
    assert_eq!(code, 4, "{recs:?}");
    let err = recs.iter().find(|r| r["type"] == "error").unwrap();
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{}:1: not JSON: ", results.display())),
        "{err}"
    );
    assert!(
        !dir.path().join("sessions/bad.jsonl").exists()
            || cutline::session::load(&dir.path().join("sessions/bad.jsonl"))
                .unwrap()
                .runs
                .is_empty()
    );
}

/// The batch flags mean nothing without `--batch`: a usage error, not a
/// flag silently ignored.
#[test]
fn batch_flags_without_batch_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config("http://127.0.0.1:9")).unwrap();
    inputs(dir.path(), 1);
    for flag in [
        ["--batch-window", "2h"],
        ["--wait", "5m"],
        ["--poll", "1s"],
        ["--rounds", "2"],
    ] {
        let (code, recs) = eval(dir.path(), "flags", &flag);
        assert_eq!(code, 2, "{flag:?}: {recs:?}");
        let err = recs.iter().find(|r| r["type"] == "error").unwrap();
        assert!(err["message"].as_str().unwrap().contains("--batch"), "{err}");
    }
}

/// Issue 32, case 2: an eval with fewer limits on the same session
/// collects a batch an earlier eval sent for more. The answers to the runs
/// it does not ask for were paid for: they are kept, and the eval that
/// asks them records them without sending anything again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eval_with_fewer_limits_keeps_the_answers_of_the_others() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 3);
    let (code, recs) = eval_at(dir.path(), "fewer", "64,none", &["--batch", "--wait", "0"]);
    assert_eq!(code, 10, "{recs:?}");
    let (code, recs) = eval_at(dir.path(), "fewer", "64", &["--batch", "--poll", "10ms"]);
    assert_eq!(code, 0, "{recs:?}");
    let s = cutline::session::load(&dir.path().join("sessions/fewer.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 6, "3 inputs × 2 prompts at 64");
    let (code, recs) = eval_at(dir.path(), "fewer", "64,none", &["--batch", "--poll", "10ms"]);
    assert_eq!(code, 0, "{recs:?}");
    let ran: Vec<&Value> = recs
        .iter()
        .filter(|r| r["type"] == "run" && r["skipped"] == false)
        .collect();
    assert_eq!(ran.len(), 6, "the 6 runs without a limit, recorded now: {recs:?}");
    assert!(ran.iter().all(|r| r["max_tokens"].is_null()), "{ran:?}");
    let s = cutline::session::load(&dir.path().join("sessions/fewer.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 12, "every run once");
    assert!(
        s.runs.iter().all(|r| r.batch.as_ref().unwrap().id == "batch_1"),
        "all answered by the one batch"
    );
    let st = state.lock().unwrap();
    assert_eq!(st.creates, 1, "nothing paid for twice");
    assert_eq!(st.sent.len(), 12);
    assert!(st.sent.values().all(|n| *n == 1), "{:?}", st.sent);
}

/// Issue 32, case 3: `batches --cancel` while an eval holds the session
/// would write back a copy of the manifest read before that eval's
/// submit, and the eval's batch would vanish. The manifest changes only
/// under the session's lock: the cancel fails at once, naming why, and
/// nothing is cancelled or written; a plain listing never writes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_cancel_waits_for_no_one_and_writes_nothing_while_an_eval_holds_the_session() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 2);
    let (code, recs) = eval(dir.path(), "held", &["--batch", "--wait", "0"]);
    assert_eq!(code, 10, "{recs:?}");
    let manifest = dir.path().join("sessions/held.batches.json");
    let before = std::fs::read(&manifest).unwrap();
    // An eval recording into the session holds its lock.
    let session = dir.path().join("sessions/held.jsonl");
    let held = std::fs::OpenOptions::new().read(true).open(&session).unwrap();
    held.try_lock().unwrap();
    let out = cutline(dir.path())
        .args(["batches", "held", "--cancel", "--output", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stdout));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        env["error"]["message"],
        format!(
            "{}: an eval is recording into this session now; nothing was cancelled (stop that eval, or cancel once \
             it has returned)",
            std::path::Path::new("sessions/held.jsonl").display()
        )
    );
    assert_eq!(state.lock().unwrap().cancels, 0);
    assert_eq!(std::fs::read(&manifest).unwrap(), before);
    // Listing polls live and writes nothing.
    let out = cutline(dir.path())
        .args(["batches", "held", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["data"]["batches"][0]["status"]["state"], "validating");
    assert_eq!(
        std::fs::read(&manifest).unwrap(),
        before,
        "a reader writes nothing back"
    );
    drop(held);
    let out = cutline(dir.path())
        .args(["batches", "held", "--cancel", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(state.lock().unwrap().cancels, 1);
}

/// Issue 32, case 4: a plain streamed eval on a session whose runs are
/// still in provider batches sent them all again, with no warning. A run
/// in flight in a batch is never sent again by any path: the streamed
/// eval (and `--batch-file`) leaves them out, says so and exits 10; the
/// batch eval then collects them, each sent once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_eval_never_sends_runs_that_are_in_batches() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 2);
    let (code, recs) = eval_at(dir.path(), "flying", "64", &["--batch", "--wait", "0"]);
    assert_eq!(code, 10, "{recs:?}");
    let streamed_before = server.requests().len();
    let (code, recs) = eval(dir.path(), "flying", &[]);
    assert_eq!(code, 10, "{recs:?}");
    let plan = recs.iter().find(|r| r["type"] == "plan").unwrap();
    assert_eq!(plan["pending"], 4, "only the runs without a limit: {plan}");
    let chats = server.requests()[streamed_before..]
        .iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .count();
    assert_eq!(chats, 4, "the 4 runs at 64 are in the batch, never streamed");
    let warn = recs.iter().find(|r| r["type"] == "warning").unwrap();
    assert_eq!(
        warn["message"],
        "4 runs are still in provider batches of this session: not sent again; `eval --batch` on it collects them"
    );
    let err = recs.iter().find(|r| r["type"] == "error").unwrap();
    assert_eq!(
        err["message"],
        "4 runs are still in provider batches; run it with --batch to collect them (`cutline batches` lists them)"
    );
    let file = dir.path().join("in.jsonl");
    let (code, _) = eval(dir.path(), "flying", &["--batch-file", file.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "",
        "nothing in flight is written to be sent"
    );
    let (code, recs) = eval(dir.path(), "flying", &["--batch", "--poll", "10ms"]);
    assert_eq!(code, 0, "{recs:?}");
    let s = cutline::session::load(&dir.path().join("sessions/flying.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 8, "every run once");
    let st = state.lock().unwrap();
    assert_eq!(st.creates, 1);
    assert!(st.sent.values().all(|n| *n == 1));
}

/// Issue 32, case 10: `--batch-results` with a custom id repeated (the
/// same answer twice, or an answer then an error) recorded it as two
/// runs. One custom id is one run, recorded with its answer.
#[test]
fn a_repeated_custom_id_in_batch_results_is_one_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config("http://127.0.0.1:9")).unwrap();
    inputs(dir.path(), 1);
    let file = dir.path().join("in.jsonl");
    let (code, recs) = eval(dir.path(), "twice", &["--batch-file", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{recs:?}");
    let lines: Vec<Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    let mut output = String::new();
    for (i, l) in lines.iter().enumerate() {
        let ok = json!({"id": "r", "custom_id": l["custom_id"], "response": {"status_code": 200, "request_id": "q", "body": completion(&l["body"])}, "error": null});
        let failed = json!({"id": "r", "custom_id": l["custom_id"], "response": {"status_code": 500, "request_id": "q", "body": {"error": {"message": "boom", "type": "server_error"}}}, "error": null});
        // An answer twice, an answer then an error, an error then an answer.
        let pair = match i % 3 {
            0 => [&ok, &ok],
            1 => [&ok, &failed],
            _ => [&failed, &ok],
        };
        for v in pair {
            output.push_str(&v.to_string());
            output.push('\n');
        }
    }
    let results = dir.path().join("out.jsonl");
    std::fs::write(&results, output).unwrap();
    let (code, recs) = eval(dir.path(), "twice", &["--batch-results", results.to_str().unwrap()]);
    assert_eq!(code, 0, "{recs:?}");
    let s = cutline::session::load(&dir.path().join("sessions/twice.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 4, "one run per custom id");
    assert!(s.runs.iter().all(|r| r.error.is_none()), "each with its answer");
    let keys: std::collections::HashSet<String> = s.runs.iter().map(cutline::eval::record_key).collect();
    assert_eq!(keys.len(), 4);
}

/// Issue 32, case 16: a manifest written for another provider was polled
/// on this one's endpoint (a 404) on every rerun. Its recorded provider,
/// model and API are checked: an eval on another is refused at once,
/// naming both, and nothing is polled or sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_of_another_provider_is_refused_naming_both() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    let both = format!(
        "{}{}",
        config(&server.url()),
        config(&server.url())
            .replace("\"gpt\"", "\"other\"")
            .replace("gpt-4.1-mini", "gpt-4.1")
    );
    std::fs::write(dir.path().join("cutline.toml"), both).unwrap();
    inputs(dir.path(), 1);
    let (code, recs) = eval(dir.path(), "mixed", &["--batch", "--wait", "0"]);
    assert_eq!(code, 10, "{recs:?}");
    let requests = server.requests().len();
    let out = cutline(dir.path())
        .args([
            "eval",
            "--prompt",
            "extract-definitions",
            "--provider",
            "other",
            "--max-tokens",
            "64,none",
            "--inputs",
        ])
        .arg(dir.path().join("inputs.jsonl"))
        .args(["--session", "mixed", "--batch", "--no-progress"])
        .output()
        .unwrap();
    let (code, recs) = records(&out);
    assert_eq!(code, 4, "{recs:?}");
    let err = recs.iter().find(|r| r["type"] == "error").unwrap();
    assert_eq!(
        err["message"],
        format!(
            "{}: its batches were sent to gpt (gpt-4.1-mini, openai batches); this eval is on other (gpt-4.1, openai \
             batches): run it on gpt (gpt-4.1-mini, openai batches) to collect them, or use another --session",
            std::path::Path::new("sessions/mixed.batches.json").display()
        )
    );
    assert_eq!(server.requests().len(), requests, "nothing polled or sent");
}

/// Issue 32, case 17: one batch answer whose record is over the session's
/// line cap ended the eval with exit 10 and none of the batch's other
/// answers recorded. The others are recorded; the eval ends with exit 4
/// naming the cap; the batch stays uncollected, so the same command with
/// the cap raised records the refused runs from it, sending nothing again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_line_cap_costs_no_other_answer() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    let mut text = String::new();
    for i in 0..3 {
        // Input 0's record (its text is in the rendered prompt and the
        // variables) is over 2 MiB; its line in the inputs file is not.
        let body = if i == 0 {
            "word ".repeat(300_000)
        } else {
            format!("Document {i}")
        };
        text.push_str(&json!({"id": format!("doc{i}"), "text": body}).to_string());
        text.push('\n');
    }
    std::fs::write(dir.path().join("inputs.jsonl"), text).unwrap();
    let run = |mib: &str| {
        let out = cutline(dir.path())
            .env("CUTLINE_MAX_FILE_MIB", mib)
            .args([
                "eval",
                "--prompt",
                "extract-definitions",
                "--provider",
                "gpt",
                "--max-tokens",
                "64,none",
            ])
            .args(["--inputs", "inputs.jsonl", "--session", "capped", "--no-progress"])
            .args(["--batch", "--poll", "10ms"])
            .output()
            .unwrap();
        records(&out)
    };
    let (code, recs) = run("2");
    assert_eq!(
        code,
        4,
        "{:?}",
        recs.iter().filter(|r| r["type"] != "run").collect::<Vec<_>>()
    );
    let err = recs.iter().find(|r| r["type"] == "error").unwrap();
    let message = err["message"].as_str().unwrap();
    assert!(
        message.ends_with(
            "the eval stopped after 12 runs (4 not recorded); its batch is left uncollected: the same command with \
             the limit raised records it from there, sending nothing again"
        ),
        "{message}"
    );
    let s = cutline::session::load(&dir.path().join("sessions/capped.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 8, "every answer but input 0's four");
    assert!(
        s.runs
            .iter()
            .all(|r| r.variables["text"] != json!("word ".repeat(300_000)))
    );
    let (code, recs) = run("8");
    assert_eq!(
        code,
        0,
        "{:?}",
        recs.iter().filter(|r| r["type"] != "run").collect::<Vec<_>>()
    );
    let s = cutline::session::load(&dir.path().join("sessions/capped.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 12, "every run once");
    let st = state.lock().unwrap();
    assert_eq!(st.creates, 1, "nothing sent again");
    assert!(st.sent.values().all(|n| *n == 1));
}

/// Issue 32, case 26: a `--batch-results` file that answers none of the
/// pending runs exited 0 and recorded nothing, silently. It is an
/// `input_error` naming the file; a file that answers some runs records
/// them and warns about the lines left alone.
#[test]
fn batch_results_that_answer_no_pending_run_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config("http://127.0.0.1:9")).unwrap();
    inputs(dir.path(), 1);
    let stranger = json!({"id": "r", "custom_id": "c0000000000000000", "response": {"status_code": 200, "request_id": "q", "body": completion(&json!({"messages": [{"role": "user", "content": "x"}]}))}, "error": null});
    let results = dir.path().join("out.jsonl");
    std::fs::write(&results, format!("{stranger}\n")).unwrap();
    let (code, recs) = eval(dir.path(), "none", &["--batch-results", results.to_str().unwrap()]);
    assert_eq!(code, 4, "{recs:?}");
    let err = recs.iter().find(|r| r["type"] == "error").unwrap();
    assert_eq!(
        err["message"],
        format!(
            "{}: none of its 1 results answers one of the 4 runs this eval still needs (another session's, prompts' \
             or limits' output?); nothing was recorded",
            results.display()
        )
    );
    let file = dir.path().join("in.jsonl");
    let (code, _) = eval(dir.path(), "none", &["--batch-file", file.to_str().unwrap()]);
    assert_eq!(code, 0);
    let first: Value = serde_json::from_str(std::fs::read_to_string(&file).unwrap().lines().next().unwrap()).unwrap();
    let answer = json!({"id": "r", "custom_id": first["custom_id"], "response": {"status_code": 200, "request_id": "q", "body": completion(&first["body"])}, "error": null});
    std::fs::write(&results, format!("{stranger}\n{answer}\n")).unwrap();
    let (code, recs) = eval(dir.path(), "none", &["--batch-results", results.to_str().unwrap()]);
    assert_eq!(code, 0, "{recs:?}");
    let warn = recs.iter().find(|r| r["type"] == "warning").unwrap();
    assert_eq!(
        warn["message"],
        format!(
            "{}: 1 of its 2 results answer no run this eval still needs (recorded already, or another eval's): left \
             alone",
            results.display()
        )
    );
    let s = cutline::session::load(&dir.path().join("sessions/none.jsonl")).unwrap();
    assert_eq!(s.runs.len(), 1);
}

/// Issue 32, case 30: `--poll 5124095576030431h` panicked (exit 101, no
/// envelope) when the poll interval grew past what a duration holds. A
/// duration over a year is a usage error naming it, on the contract.
#[test]
fn a_duration_past_a_year_is_a_usage_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config("http://127.0.0.1:9")).unwrap();
    inputs(dir.path(), 1);
    for (flag, value) in [
        ("--poll", "5124095576030431h"),
        ("--wait", "367d"),
        ("--wait", "99999999999999999999s"),
    ] {
        let (code, recs) = eval(dir.path(), "long", &["--batch", flag, value]);
        assert_eq!(code, 2, "{flag} {value}: {recs:?}");
        let err = recs.iter().find(|r| r["type"] == "error").unwrap();
        let message = err["message"].as_str().unwrap();
        let why = if value.len() > 18 {
            format!("{value:?} is not a duration like 90s, 20m, 24h or 1h30m")
        } else {
            format!("{value:?} is longer than a year, the longest cutline waits or polls")
        };
        assert!(message.contains(&why), "{message}");
    }
}
