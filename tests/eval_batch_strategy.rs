#![allow(
    clippy::format_collect,
    reason = "test fixtures: clarity over one allocation per line"
)]
//! `cutline eval --batch --strategy` through the real binary against the
//! local OpenAI emulator: the strategies' calls go as successive batch
//! rounds and give the strategy rows the streamed strategies give on the
//! same answers; a command whose wait runs out between rounds is resumed
//! by the same command, which sends no call twice and records no run twice.

#[path = "batch_support/openai.rs"]
mod openai_batch;
mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::Server;

use openai_batch::{World, config, cutline, inputs, openai, records};

fn strategies(dir: &Path, session: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    let out = cutline(dir)
        .args(["eval", "--prompt", "extract-definitions", "--provider", "gpt"])
        .args(["--max-tokens", "64,none", "--inputs", "inputs.jsonl"])
        .args(["--strategy", "single,retry-double,continue", "--continue", "2"])
        .args(["--session", session, "--no-progress"])
        .args(extra)
        .output()
        .unwrap();
    records(&out)
}

/// Each strategy run as the table counts it, without its timing and run
/// ids, sorted.
fn runs(recs: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = recs
        .iter()
        .filter(|r| r["type"] == "strategy_run")
        .map(|r| {
            let calls: Vec<Value> = r["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    json!([
                        c["how"],
                        c["max_tokens"],
                        c["items_added"],
                        c["finish_reason"],
                        c["completion_tokens"]
                    ])
                })
                .collect();
            json!({"prompt": r["prompt"], "input": r["input"], "max_tokens": r["max_tokens"], "strategy": r["strategy"],
                "items": r["items"], "ended": r["ended"], "tokens_billed": r["tokens_billed"], "calls": calls})
        })
        .collect();
    out.sort_by_key(Value::to_string);
    out
}

fn session_runs(dir: &Path, session: &str) -> Vec<cutline::session::RunRecord> {
    cutline::session::load(&dir.join(format!("sessions/{session}.jsonl")))
        .unwrap()
        .runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn strategies_run_as_batch_rounds_with_the_streamed_results() {
    let state = Arc::new(Mutex::new(World::default()));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 4);
    let (code, streamed) = strategies(dir.path(), "streamed", &[]);
    assert_eq!(code, 0, "{streamed:?}");
    assert!(state.lock().unwrap().creates == 0);
    let (code, batched) = strategies(dir.path(), "batched", &["--batch", "--poll", "10ms"]);
    assert_eq!(code, 0, "{batched:?}");
    assert_eq!(runs(&batched), runs(&streamed), "the same strategy runs, by batches");
    assert_eq!(
        runs(&streamed).len(),
        4 * 2 * 2 * 3 - 4 * 2,
        "continue runs on the JSONL twin only"
    );

    let st = state.lock().unwrap();
    // The first calls, then the doubled retries, then two continuations.
    assert_eq!(st.creates, 4, "one batch per round");
    assert!(st.sent.values().all(|n| *n == 1), "no call sent twice: {:?}", st.sent);
    let calls = session_runs(dir.path(), "batched");
    assert_eq!(calls.len(), session_runs(dir.path(), "streamed").len());
    assert_eq!(calls.len(), st.sent.len(), "every call recorded once");
    let b = calls[0].batch.as_ref().expect("a batched call says which batch");
    assert!(b.id.starts_with("batch_") && st.sent.contains_key(&b.custom_id));
    let totals = batched.iter().find(|r| r["type"] == "totals").unwrap();
    assert_eq!(totals["batch_price_factor"], 0.5);
    assert!(
        batched
            .iter()
            .any(|r| r["type"] == "batch" && r["event"] == "collected")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wait_that_runs_out_between_rounds_is_resumed_by_the_same_command() {
    let state = Arc::new(Mutex::new(World {
        hold_after: Some(1),
        ..World::default()
    }));
    let server = Server::handler(openai(state.clone())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config(&server.url())).unwrap();
    inputs(dir.path(), 3);
    let (code, first) = strategies(dir.path(), "r", &["--batch", "--poll", "10ms", "--wait", "2s"]);
    assert_eq!(code, 10, "batches pending: {first:?}");
    let finished_first = session_runs(dir.path(), "r").len();
    assert!(
        finished_first > 0,
        "the cells that ended in round 1 (no limit) are recorded"
    );
    assert_eq!(state.lock().unwrap().creates, 2, "round 2 was sent and is still out");

    state.lock().unwrap().hold_after = None;
    let (code, second) = strategies(dir.path(), "r", &["--batch", "--poll", "10ms"]);
    assert_eq!(code, 0, "{second:?}");
    let (code, streamed) = strategies(dir.path(), "streamed", &[]);
    assert_eq!(code, 0);
    assert_eq!(
        runs(&second),
        runs(&streamed),
        "the resumed rounds give the streamed runs"
    );
    let st = state.lock().unwrap();
    assert!(st.sent.values().all(|n| *n == 1), "no call sent twice: {:?}", st.sent);
    assert_eq!(st.creates, 4, "round 2 collected, not sent again");
    let recorded = session_runs(dir.path(), "r");
    assert_eq!(recorded.len(), st.sent.len(), "no call recorded twice");
    let mut ids: Vec<&str> = recorded
        .iter()
        .map(|r| r.batch.as_ref().unwrap().custom_id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), recorded.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_batch_files_are_refused_with_strategies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config("http://127.0.0.1:9")).unwrap();
    inputs(dir.path(), 1);
    let (code, recs) = strategies(dir.path(), "x", &["--batch-file", "f.jsonl", "--output", "json"]);
    assert_eq!(code, 2);
    let msg = recs[0]["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("a strategy's calls depend on each other's answers: use --batch"),
        "{msg}"
    );
    assert!(!dir.path().join("f.jsonl").exists());
}
