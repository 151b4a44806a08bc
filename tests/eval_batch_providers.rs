//! `cutline eval --batch` through the real binary on Anthropic's Message
//! Batches and Gemini's Batch Mode, each emulated through its lifecycle
//! (`batch_support/providers.rs`): every run is recorded exactly once, with
//! the text, finish and usage its answer carries and the analysis a
//! streamed run of that text gets, however its first try ended (errored,
//! expired or cancelled lines, a Gemini batch that failed as a whole, polls
//! rate limited past the HTTP retries).

#[path = "batch_support/openai.rs"]
mod openai_batch;
#[path = "batch_support/providers.rs"]
mod providers_batch;
mod support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use support::Server;

use cutline::llm::FinishReason;
use openai_batch::{KEY_ENV, answer_text, cutline, inputs, records};
use providers_batch::{Once, World};

fn config(kind: &str, url: &str, model: &str) -> String {
    format!(
        "[[provider]]\nname = \"b\"\nkind = \"{kind}\"\nbase_url = \"{url}\"\nmodel = \"{model}\"\napi_key_env = \"{KEY_ENV}\"\nretry_base_secs = 0.001\n"
    )
}

/// A work folder with provider `b` of `kind` at `url` and 20 inputs.
fn workdir(kind: &str, url: &str, model: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(kind, url, model)).unwrap();
    inputs(dir.path(), 20);
    dir
}

/// `cutline eval` of the bundled pair on provider `b` over `dir`'s inputs
/// at 64 tokens and none, its session `session`.
fn eval_cmd(dir: &Path, session: &str) -> assert_cmd::Command {
    let mut c = cutline(dir);
    c.args(["eval", "--prompt", "extract-definitions"])
        .args(["--provider", "b", "--max-tokens", "64,none", "--inputs", "inputs.jsonl"])
        .args(["--session", session]);
    c
}

/// `eval --batch` into session `s`, which ends with every run recorded
/// (exit 0): its records.
fn eval(dir: &Path) -> Vec<Value> {
    let (code, recs) = records(
        &eval_cmd(dir, "s")
            .args(["--batch", "--poll", "10ms", "--no-progress"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        code,
        0,
        "{:?}",
        recs.iter().filter(|r| r["type"] != "run").collect::<Vec<_>>()
    );
    recs
}

/// Every run of the session once, each as its answer says.
fn check_session(dir: &Path, runs: usize) {
    let s = cutline::session::load(&dir.join("sessions/s.jsonl")).unwrap();
    assert_eq!(s.runs.len(), runs, "each run recorded exactly once");
    let keys: std::collections::HashSet<String> = s.runs.iter().map(cutline::eval::record_key).collect();
    assert_eq!(keys.len(), runs, "no run key twice");
    for r in &s.runs {
        let cut = r.params.max_tokens.is_some_and(|m| m < 100);
        let (text, finish, out) = answer_text(&r.rendered, cut);
        assert_eq!(r.text, text, "{}", r.run_id);
        let want = if finish == "length" {
            FinishReason::Length
        } else {
            FinishReason::Stop
        };
        assert_eq!(r.finish, want, "{}", r.run_id);
        assert_eq!(r.usage.completion_tokens, Some(out));
        assert!(r.error.is_none(), "{:?}", r.error);
        let a = cutline::run::Analysis::of(
            r.response_type,
            r.prompt.get("schema"),
            &r.text,
            cutline::output::tg::TgPython::default(),
        );
        assert_eq!(
            r.analysis,
            a.summary(),
            "{}: the analysis a streamed run gets",
            r.run_id
        );
        assert!(r.batch.is_some(), "a batch run says which batch");
    }
}

/// The first custom ids sent, for first-time fates.
fn first_ids(dir: &Path, n: usize) -> Vec<String> {
    // The run keys do not depend on the provider's answers: plan them with
    // `--batch-file`, which sends nothing and names every custom id.
    let file = dir.join("plan.jsonl");
    let out = eval_cmd(dir, "plan").arg("--batch-file").arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .take(n)
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["custom_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn events(recs: &[Value]) -> Vec<String> {
    recs.iter()
        .filter(|r| r["type"] == "batch")
        .map(|r| r["event"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_message_batches_through_their_lifecycle() {
    let state = Arc::new(Mutex::new(World {
        limited_polls: 5,
        ..World::default()
    }));
    let server = Server::handler(providers_batch::anthropic(state.clone())).await;
    let dir = workdir("anthropic", &server.url(), "claude-sonnet-4-5");
    let ids = first_ids(dir.path(), 3);
    state.lock().unwrap().once = HashMap::from([
        (ids[0].clone(), Once::Errored),
        (ids[1].clone(), Once::Expired),
        (ids[2].clone(), Once::Canceled),
    ]);
    let recs = eval(dir.path());
    check_session(dir.path(), 80);
    let ev = events(&recs);
    assert_eq!(ev.iter().filter(|e| *e == "submitted").count(), 2, "{ev:?}");
    assert!(ev.contains(&"poll_failed".to_owned()), "{ev:?}");
    let w = state.lock().unwrap();
    assert_eq!(w.batches[1].requests.len(), 3, "only the three went again");
    assert!(ids.iter().all(|id| w.sent[id] == 2));
    assert_eq!(w.sent.values().filter(|n| **n == 1).count(), 77);
    assert_eq!(w.limited, 5);
    // The requests as the Messages API takes them, not streamed.
    let (_, params) = &w.batches[0].requests[0];
    assert_eq!(params["model"], "claude-sonnet-4-5");
    assert!(params.get("stream").is_none() && params["max_tokens"].as_u64().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_batch_mode_through_its_lifecycle() {
    let state = Arc::new(Mutex::new(World {
        limited_polls: 5,
        failing: vec![2],
        ..World::default()
    }));
    let server = Server::handler(providers_batch::gemini(state.clone())).await;
    let dir = workdir("gemini", &server.url(), "gemini-3-flash-preview");
    let ids = first_ids(dir.path(), 2);
    state.lock().unwrap().once = ids.iter().map(|id| (id.clone(), Once::Errored)).collect();
    let recs = eval(dir.path());
    check_session(dir.path(), 80);
    let ev = events(&recs);
    assert_eq!(
        ev.iter().filter(|e| *e == "submitted").count(),
        3,
        "the two errored lines went again, their batch failed as a whole, and again: {ev:?}"
    );
    assert!(ev.contains(&"poll_failed".to_owned()), "{ev:?}");
    let w = state.lock().unwrap();
    assert!(ids.iter().all(|id| w.sent[id] == 3));
    assert_eq!(w.batches[2].requests.len(), 2);
    let failed = recs
        .iter()
        .find(|r| r["event"] == "polled" && r["status"]["state"] == "BATCH_STATE_FAILED")
        .expect("the failed batch was seen");
    assert_eq!(failed["status"]["failure"], "Batch input could not be read.");
}
