//! `--structured native` on a JSONL prompt: llama-server gets a GBNF grammar
//! built from the per-line schema (the exact body checked), a wire without
//! grammars and a schema outside the subset run unconstrained and say why.

mod support;

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use support::{Reply, Server};

/// A `/completion` stream: one token event per piece, then the final event.
fn completion(pieces: &[&str]) -> Reply {
    let mut events: Vec<String> = pieces
        .iter()
        .map(|p| json!({"content": p, "stop": false, "tokens": [1]}).to_string())
        .collect();
    events.push(
        json!({"content": "", "stop": true, "stop_type": "eos", "tokens_predicted": pieces.len(), "tokens_evaluated": 9})
            .to_string(),
    );
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    Reply::data(&refs)
}

fn cutline(dir: &Path, config: &str, prompts: &Path) -> Command {
    std::fs::write(dir.join("cutline.toml"), config).unwrap();
    let mut c = Command::cargo_bin("cutline").unwrap();
    c.current_dir(dir)
        .env("CUTLINE_LEARNED_FILE", "")
        .env("CUTLINE_CONFIG", dir.join("cutline.toml"))
        .arg("--prompts")
        .arg(prompts)
        .args(["--sessions", "sessions"])
        .timeout(Duration::from_secs(60));
    c
}

fn bundled() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/prompts"))
}

fn run(dir: &Path, config: &str, prompts: &Path, prompt: &str) -> Value {
    let out = cutline(dir, config, prompts)
        .args([
            "run",
            prompt,
            "--provider",
            "srv",
            "--structured",
            "native",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_server_gets_the_grammar_of_the_line_schema() {
    let server = Server::start(vec![completion(&[
        "{\"entity\": \"leaf\", \"definition\": \"a green part\"}",
        "\n",
    ])])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[[provider]]\nname = \"srv\"\nkind = \"llama-server\"\nbase_url = \"{}\"\n",
        server.url()
    );
    let env = run(dir.path(), &config, bundled(), "extract-definitions-jsonl");
    let body = server.only_request().json();
    let cfg = cutline::store::resolve("extract-definitions-jsonl", bundled()).unwrap();
    let expected = cutline::llm::grammar::jsonl(cfg.schema.as_ref().unwrap(), &cfg.stop).unwrap();
    assert_eq!(body["grammar"], json!(expected));
    assert!(body.get("json_schema").is_none(), "{body}");
    let grammar = body["grammar"].as_str().unwrap();
    assert!(
        grammar.starts_with("root ::= (line \"\\n\")* (\"###\" | \"\\n\")?\n"),
        "{grammar}"
    );
    assert!(
        grammar.contains(r#"line ::= "{" ws "\"entity\"" ws ":" ws "\"" char+ "\"" "," ws "\"definition\"""#),
        "{grammar}"
    );
    let data = &env["data"];
    assert_eq!(data["structured_path"], "grammar");
    assert_eq!(
        data["analysis"]["items"],
        json!([{"entity": "leaf", "definition": "a green part"}])
    );
    assert_eq!(data["adjustments"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wire_without_grammars_runs_unconstrained_and_says_so() {
    let server = Server::start(vec![Reply::data(&[
        r#"{"choices":[{"index":0,"delta":{"content":"{\"entity\":\"a\",\"definition\":\"b\"}\n"},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ])])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[[provider]]\nname = \"srv\"\nkind = \"openai-compatible\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n",
        server.url()
    );
    let env = run(dir.path(), &config, bundled(), "extract-definitions-jsonl");
    let body = server.only_request().json();
    assert!(
        body.get("grammar").is_none() && body.get("response_format").is_none(),
        "{body}"
    );
    let data = &env["data"];
    assert_eq!(data["structured_path"], "none");
    assert_eq!(
        data["adjustments"],
        json!([{"kind": "unconstrained", "reason": "default models take no grammar"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_outside_the_subset_runs_unconstrained_naming_the_keyword() {
    let server = Server::start(vec![completion(&["{\"code\": \"AB\"}", "\n"])]).await;
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    std::fs::write(
        prompts.join("codes.toml"),
        "id = \"codes\"\nresponse-type = \"jsonl\"\nprompt = \"List codes.\"\nschema = '''\n{\"type\": \"object\", \"properties\": {\"code\": {\"type\": \"string\", \"pattern\": \"^[A-Z]+$\"}}, \"required\": [\"code\"]}\n'''\n",
    )
    .unwrap();
    let config = format!(
        "[[provider]]\nname = \"srv\"\nkind = \"llama-server\"\nbase_url = \"{}\"\n",
        server.url()
    );
    let env = run(dir.path(), &config, &prompts, "codes");
    assert!(server.only_request().json().get("grammar").is_none());
    assert_eq!(
        env["data"]["adjustments"],
        json!([{"kind": "unconstrained", "reason": "`pattern` at #/properties/code is outside the grammar subset"}])
    );
    assert_eq!(env["data"]["analysis"]["items"], json!([{"code": "AB"}]));
}
