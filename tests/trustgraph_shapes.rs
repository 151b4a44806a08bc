//! TrustGraph's prompt configurations as TrustGraph users hold them: every
//! shape loads through `cutline prompts`, exports keep the source's shape.

mod tg_support;

use std::fs;

use assert_cmd::Command;
use serde_json::Value;

fn cutline() -> Command {
    let mut c = Command::cargo_bin("cutline").expect("binary");
    c.env_remove("CUTLINE_PROMPTS").env_remove("CUTLINE_SESSIONS");
    c
}

fn envelope(args: &[&str]) -> (Value, i32) {
    let out = cutline().args(args).arg("--output").arg("json").output().expect("run");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not one JSON envelope: {text:?}: {e}"));
    (v, out.status.code().unwrap_or(-1))
}

fn ids() -> Vec<String> {
    tg_support::templates().into_iter().map(|(k, _)| k).collect()
}

#[test]
fn prompts_lists_all_24_in_every_shape() {
    let cases = [
        (
            "configurator-2.7",
            serde_json::to_string_pretty(&tg_support::configurator(true)).unwrap(),
            "configurator",
        ),
        (
            "configurator-2.8",
            serde_json::to_string_pretty(&tg_support::configurator(false)).unwrap(),
            "configurator/no-index",
        ),
        ("store-2.7", tg_support::show_config_text(true), "config-store"),
        (
            "store-2.8",
            tg_support::show_config_text(false),
            "config-store/no-index",
        ),
    ];
    for (name, text, shape) in cases {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("config.json"), &text).unwrap();
        let (v, code) = envelope(&["prompts", "--dir", dir.path().to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {v}");
        assert_eq!(v["data"]["errors"], Value::Array(vec![]), "{name}");
        let prompts = v["data"]["prompts"].as_array().unwrap();
        let got: Vec<&str> = prompts.iter().map(|p| p["id"].as_str().unwrap()).collect();
        assert_eq!(got, ids(), "{name}");
        assert!(prompts.iter().all(|p| p["shape"] == shape), "{name}: {prompts:?}");
        let types: Vec<&str> = prompts.iter().map(|p| p["response_type"].as_str().unwrap()).collect();
        assert_eq!(types.iter().filter(|t| **t == "jsonl").count(), 6, "{name}");
        assert_eq!(types.iter().filter(|t| **t == "json").count(), 9, "{name}");
    }
}

#[test]
fn single_prompt_shape_is_named() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("ask.json"),
        r#"{"prompt": "{{question}}", "response-type": "text"}"#,
    )
    .unwrap();
    let (v, code) = envelope(&["prompts", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(v["data"]["prompts"][0]["id"], "ask");
    assert_eq!(v["data"]["prompts"][0]["shape"], "trustgraph-prompt");
}
