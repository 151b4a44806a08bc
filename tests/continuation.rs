//! Continuing a JSONL answer the limit cut, offline on the shipped Gemma
//! recordings (a replay continues from any prefix of its own text, as the
//! greedy model would) and live on the local model: the continued run keeps
//! exactly the items of the uncut run, without duplicates.

use assert_cmd::Command;
use serde_json::Value;

fn run_json(args: &[&str]) -> Value {
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .args(["--sessions", "sessions"])
        .args(args)
        .args(["--output", "json"])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["data"].clone()
}

fn entities(data: &Value) -> Vec<String> {
    data["analysis"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["entity"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_cut_replay_continued_keeps_the_uncut_items_once_each() {
    let uncut = run_json(&["replay", "demo#3"]);
    assert_eq!(uncut["finish_reason"], "stop");
    for limit in ["20", "40", "64"] {
        let d = run_json(&[
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "replay",
            "--max-tokens",
            limit,
            "--continue",
            "8",
            "--no-record",
        ]);
        assert_eq!(d["analysis"]["items"], uncut["analysis"]["items"], "at {limit}");
        let calls = d["continuation"]["calls"].as_array().unwrap();
        assert!(calls.len() >= 2, "at {limit}: {calls:?}");
        assert_eq!(calls[0]["how"], "first");
        assert!(
            calls[1..]
                .iter()
                .all(|c| c["how"] == "prefill" && c["duplicates_dropped"] == 0)
        );
        assert_eq!(d["continuation"]["ended"], "finished");
        let added: u64 = calls.iter().map(|c| c["items_added"].as_u64().unwrap()).sum();
        assert_eq!(usize::try_from(added).unwrap(), entities(&uncut).len());
    }
}

#[test]
fn continuation_stops_when_the_calls_run_out_and_keeps_what_it_has() {
    let d = run_json(&[
        "run",
        "extract-definitions-jsonl",
        "--provider",
        "replay",
        "--max-tokens",
        "20",
        "--continue",
        "1",
        "--no-record",
    ]);
    assert_eq!(d["continuation"]["ended"], "out_of_calls");
    assert_eq!(d["continuation"]["calls"].as_array().unwrap().len(), 2);
    // A JSON-array prompt is not continued line by line.
    let d = run_json(&[
        "run",
        "extract-definitions",
        "--provider",
        "replay",
        "--max-tokens",
        "40",
        "--continue",
        "3",
        "--no-record",
    ]);
    assert_eq!(d["continuation"]["ended"], "not_jsonl");
}
