//! `cutline budget` on the shipped Gemma recordings, checked against
//! `cutline replay` at the recommended limit and one token under it: at the
//! limit the replayed answer keeps the target share of the uncut items,
//! one token less it does not.

use assert_cmd::Command;
use serde_json::Value;

fn cutline(args: &[&str]) -> (bool, Value) {
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .args(["--sessions", "sessions"])
        .args(args)
        .args(["--output", "json"])
        .output()
        .unwrap();
    (out.status.success(), serde_json::from_slice(&out.stdout).unwrap())
}

fn items_at(reference: &str, limit: usize) -> usize {
    let (ok, v) = cutline(&["replay", reference, "--max-tokens", &limit.to_string()]);
    assert!(ok, "{v}");
    v["data"]["analysis"]["items"].as_array().unwrap().len()
}

#[test]
fn the_recommended_limit_is_the_smallest_that_keeps_the_target() {
    let (ok, v) = cutline(&[
        "budget",
        "extract-topics-jsonl",
        "--provider",
        "replay",
        "--target",
        "0.95",
    ]);
    assert!(ok, "{v}");
    let data = &v["data"];
    // One input's only recording loops until the limit: budgeted on its
    // answer up to the end of the loop's first repeat, and said.
    let warning = v["warnings"][0].as_str().unwrap_or_default();
    assert!(
        warning.starts_with("input \"climate-summit\" loops until the limit (26 repeats of 27 tokens from token 52)"),
        "{warning}"
    );
    let inputs = data["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 3);
    let looped = inputs.iter().find(|b| b["input"] == "climate-summit").unwrap();
    assert_eq!(
        (looped["tokens_uncut"].as_u64(), looped["items_uncut"].as_u64()),
        (Some(79), Some(4))
    );
    let prompt = cutline::store::resolve("extract-topics-jsonl", std::path::Path::new("prompts")).unwrap();
    let mut max = 0;
    for b in inputs {
        let name = b["input"].as_str().unwrap();
        let vars = &prompt.inputs.iter().find(|i| i.name == name).unwrap().vars;
        let (_, reference) =
            cutline::session::find_recording(std::path::Path::new("sessions"), &prompt.id, Some(vars)).unwrap();
        let limit = usize::try_from(b["limit"].as_u64().unwrap()).unwrap();
        let needed = usize::try_from(b["items_needed"].as_u64().unwrap()).unwrap();
        assert!(items_at(&reference, limit) >= needed, "{name} at {limit}");
        assert!(items_at(&reference, limit - 1) < needed, "{name} at {}", limit - 1);
        max = max.max(limit);
    }
    assert_eq!(data["recommended_max_tokens"], max);
    assert!(data.get("p95_max_tokens").is_none(), "fewer than 20 inputs");
}

#[test]
fn a_strict_json_prompt_needs_the_whole_value() {
    let (ok, v) = cutline(&[
        "budget",
        "extract-definitions",
        "--input",
        "photosynthesis",
        "--target",
        "0.5",
    ]);
    assert!(ok, "{v}");
    let b = &v["data"]["inputs"][0];
    let limit = usize::try_from(b["limit"].as_u64().unwrap()).unwrap();
    let prompt = cutline::store::resolve("extract-definitions", std::path::Path::new("prompts")).unwrap();
    let (_, reference) = cutline::session::find_recording(
        std::path::Path::new("sessions"),
        &prompt.id,
        Some(&prompt.inputs[0].vars),
    )
    .unwrap();
    // All or nothing: every item at the limit, none a token before it.
    assert_eq!(
        items_at(&reference, limit),
        usize::try_from(b["items_uncut"].as_u64().unwrap()).unwrap()
    );
    assert_eq!(items_at(&reference, limit - 1), 0);
}
