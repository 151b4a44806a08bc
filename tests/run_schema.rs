//! A TrustGraph prompt whose schema does not compile runs as TrustGraph
//! runs it: the request goes out, every value is rejected, and the run says
//! why instead of refusing to start.

mod support;

use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use support::{Reply, Server};

/// `cutline run p --provider srv --output json` with prompt file `p.json`
/// holding `prompt`, against a llama-server-shaped test server that streams
/// `content` and stops: the envelope.
async fn run_prompt(prompt: &str, content: &str) -> Value {
    let server = Server::start(vec![Reply::data(&[
        &json!({"content": content, "stop": false}).to_string(),
        &json!({"content": "", "stop": true, "stop_type": "eos"}).to_string(),
    ])])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    std::fs::write(prompts.join("p.json"), prompt).unwrap();
    std::fs::write(
        dir.path().join("cutline.toml"),
        format!(
            "[[provider]]\nname = \"srv\"\nkind = \"llama-server\"\nbase_url = \"{}\"\n",
            server.url()
        ),
    )
    .unwrap();
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .env("CUTLINE_LEARNED_FILE", "")
        .current_dir(dir.path())
        .env("CUTLINE_CONFIG", dir.path().join("cutline.toml"))
        .arg("--prompts")
        .arg(&prompts)
        .args([
            "--sessions",
            "sessions",
            "run",
            "p",
            "--provider",
            "srv",
            "--output",
            "json",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_that_does_not_compile_rejects_every_line_of_a_run() {
    let env = run_prompt(
        "{\"prompt\": \"x\",\n\"response-type\": \"jsonl\",\n\"schema\": {\"type\": \"strin\"}}",
        "{\"a\": 1}\n\"s\"\n",
    )
    .await;
    assert_eq!(env["data"]["analysis"]["items"], json!([]));
    assert_eq!(env["data"]["analysis"]["counts"]["schema_invalid"], 2);
    let w = env["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.starts_with("prompt \"p\": schema does not compile at /type: ")
                && w.ends_with("; every value is rejected, as TrustGraph rejects them at run time")
        }),
        "{w:?}"
    );
}

/// A line nested past Python's recursion limit (9994 containers on the 3.13
/// TrustGraph's service runs on) fails the whole response in TrustGraph:
/// `run` says so on the run, beside the lines that parse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_past_pythons_nesting_limit_fails_the_whole_run() {
    let deep = format!("{{\"x\": {}{}}}", "[".repeat(10000), "]".repeat(10000));
    let env = run_prompt(
        "{\"prompt\": \"x\",\n\"response-type\": \"jsonl\"}",
        &format!("{{\"a\": 1}}\n{deep}\n{{\"a\": 2}}\n"),
    )
    .await;
    let a = &env["data"]["analysis"];
    assert_eq!(a["items"], json!([{"a": 1}, {"a": 2}]));
    assert_eq!(a["lines"][1]["status"], "too_deep");
    assert_eq!(a["raises"], json!({"line": 2, "kind": "recursion", "depth": 9995}));
    assert_eq!(
        env["warnings"],
        json!([
            "the service fails this whole response: RecursionError at line 2 (json.loads nests 9995 deep), so \
             TrustGraph gets 0 items; the lines alone keep 2"
        ])
    );
}
