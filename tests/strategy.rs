//! `cutline eval --strategy` on the shipped Gemma recordings (replay): each
//! strategy's items, calls and billing checked against what the session
//! recorded and against the uncut recordings, loss causes adding up to the
//! gold set, and the headline comparing the twins.

use std::collections::HashMap;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// A sessions directory holding a copy of the demo recordings.
fn sessions() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy("sessions/demo.jsonl", d.path().join("demo.jsonl")).unwrap();
    d
}

fn cutline(sessions: &Path, args: &[&str]) -> (bool, Value) {
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .arg("--sessions")
        .arg(sessions)
        .args(args)
        .args(["--output", "json"])
        .output()
        .unwrap();
    let v =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), v)
}

/// The records of a session file by run id.
fn records(path: &str) -> HashMap<String, Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["type"] == "run")
        .map(|r| (r["run_id"].as_str().unwrap().to_owned(), r))
        .collect()
}

/// Items the uncut recording of `prompt` on input `name` keeps.
fn uncut_items(sessions: &Path, prompt: &str, name: &str) -> usize {
    let cfg = cutline::store::resolve(prompt, Path::new("prompts")).unwrap();
    let vars = &cfg.inputs.iter().find(|i| i.name == name).unwrap().vars;
    let (_, reference) = cutline::session::find_recording(Path::new("sessions"), prompt, Some(vars)).unwrap();
    let (ok, v) = cutline(sessions, &["replay", &reference]);
    assert!(ok, "{v}");
    v["data"]["analysis"]["items"].as_array().unwrap().len()
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
fn strategies_bill_every_call_and_continuation_recovers_the_uncut_items() {
    let dir = sessions();
    let (ok, v) = cutline(
        dir.path(),
        &[
            "eval",
            "--prompt",
            "extract-definitions",
            "--strategy",
            "single,retry-double,continue",
            "--max-tokens",
            "64",
            "--provider",
            "replay",
            "--session",
            "strat",
        ],
    );
    assert!(ok, "{v}");
    let data = &v["data"];
    let recorded = records(data["session"]["path"].as_str().unwrap());
    let runs = data["runs"].as_array().unwrap();
    // 3 inputs: JSON with single and retry-double, JSONL with all three.
    assert_eq!(runs.len(), 3 * 2 + 3 * 3);
    // How often each conditional check below ran: none may be dead.
    let (mut finished_checked, mut loss_checked) = (0, 0);
    for r in runs {
        let calls = r["calls"].as_array().unwrap();
        // Billing is every call's recorded input plus output.
        let billed: u64 = calls
            .iter()
            .map(|c| {
                let rec = &recorded[c["run_id"].as_str().unwrap()];
                rec["usage"]["prompt_tokens"].as_u64().unwrap() + rec["usage"]["completion_tokens"].as_u64().unwrap()
            })
            .sum();
        assert_eq!(r["tokens_billed"], billed, "{r}");
        assert_eq!(calls[0]["how"], "first");
        assert_eq!(calls[0]["max_tokens"], 64);
        match r["strategy"].as_str().unwrap() {
            "single" => assert_eq!(calls.len(), 1),
            "retry-double" => {
                let limits: Vec<u64> = calls.iter().map(|c| c["max_tokens"].as_u64().unwrap()).collect();
                let doubling: Vec<u64> = (0..limits.len()).map(|i| 64 << i).collect();
                assert_eq!(limits, doubling, "{r}");
                assert!(calls.len() <= 4, "3 retries at most: {r}");
            }
            "continue" => {
                assert_eq!(
                    r["prompt"], "extract-definitions-jsonl",
                    "JSON arrays are not continued"
                );
                assert!(calls[1..].iter().all(|c| c["how"] == "prefill"), "{r}");
                if r["ended"] == "finished" {
                    finished_checked += 1;
                    let input = r["input"].as_str().unwrap();
                    assert_eq!(
                        r["items"],
                        uncut_items(dir.path(), "extract-definitions-jsonl", input),
                        "{r}"
                    );
                }
            }
            other => panic!("strategy {other}"),
        }
        if let Some(loss) = r.get("loss") {
            loss_checked += 1;
            let t = &loss["total"];
            let sum: u64 = ["found", "cut_by_limit", "schema_rejected", "never_produced"]
                .iter()
                .map(|k| t[k].as_u64().unwrap())
                .sum();
            assert_eq!(t["gold"], sum, "{r}");
        }
    }
    // Two of the three continued answers end on its own (one loops), and
    // the one input with a gold set is explained for all five strategy runs.
    assert_eq!(finished_checked, 2, "continued answers that finished");
    assert_eq!(loss_checked, 5, "strategy runs with a gold set");
    // At least one continued answer took more than one call.
    assert!(
        runs.iter()
            .any(|r| r["strategy"] == "continue" && r["calls"].as_array().unwrap().len() > 1)
    );
    let h = &data["headlines"][0];
    let sentence = h["sentence"].as_str().unwrap();
    assert!(
        sentence.starts_with("extract-definitions → extract-definitions-jsonl at 64: JSONL + continue: "),
        "{sentence}"
    );
    assert!(
        sentence.contains(&format!("{} tokens;", h["jsonl"]["tokens_billed"])),
        "{sentence}"
    );
    assert_eq!(data["totals"]["failed"], 0);
}

#[test]
fn a_plain_eval_on_the_same_session_skips_the_first_calls_not_the_continuations() {
    let dir = sessions();
    let strat = [
        "eval",
        "--prompt",
        "extract-definitions-jsonl",
        "--strategy",
        "single,continue",
        "--max-tokens",
        "64",
        "--provider",
        "replay",
        "--session",
        "shared",
    ];
    let (ok, s) = cutline(dir.path(), &strat);
    assert!(ok, "{s}");
    let (ok, v) = cutline(
        dir.path(),
        &[
            "eval",
            "--prompt",
            "extract-definitions-jsonl",
            "--no-twins",
            "--max-tokens",
            "64",
            "--provider",
            "replay",
            "--session",
            "shared",
        ],
    );
    assert!(ok, "{v}");
    let single: HashMap<&str, &Value> = s["data"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["strategy"] == "single" && r["prompt"] == "extract-definitions-jsonl")
        .map(|r| (r["input"].as_str().unwrap(), &r["items"]))
        .collect();
    let firsts: Vec<&Value> = s["data"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["calls"][0]["run_id"])
        .collect();
    for r in v["data"]["runs"].as_array().unwrap() {
        assert_eq!(r["skipped"], true, "{r}");
        assert_eq!(&r["items"], single[r["input"].as_str().unwrap()], "{r}");
        assert!(firsts.contains(&&r["run_id"]), "resumed from a first call: {r}");
    }
}

#[test]
fn an_unknown_strategy_is_a_usage_error() {
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .args(["eval", "--prompt", "extract-definitions", "--strategy", "single,halve"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"halve\" is not a strategy"), "{err}");
}
