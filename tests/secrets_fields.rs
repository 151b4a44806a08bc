//! A key echoed in any field cutline keeps from a response, in any
//! encoding that decodes to it, never reaches stdout, stderr, a session or
//! the learned-capabilities file; and an error body a server compressed, or
//! sent as binary, reaches people decoded or escaped, never raw.

mod support;

use std::io::Write as _;
use std::path::Path;

use serde_json::json;
use support::{Reply, Server};

/// A key with characters JSON may escape (`/`) or must (`"`, `\`).
const KEY: &str = "sk-ant/api03+SECRET123fields\"Quote\\Slash0987";

/// Fragments long enough to identify the key, in each encoding tried.
fn needles() -> Vec<String> {
    let hex = cutline::llm::redact::hex(KEY.as_bytes(), false);
    vec![
        "SECRET123fields".into(),
        "api03+SECRET".into(),
        hex[..24].to_owned(),
        hex[..24].to_uppercase(),
        "\\u0053\\u0045\\u0043".into(),
    ]
}

fn config(url: &str, kind: &str) -> String {
    let base = if kind == "openai" {
        format!("{url}/v1")
    } else {
        url.to_owned()
    };
    format!(
        "[[provider]]\nname = \"p\"\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"m\"\napi_key_env = \"FIELD_KEY\"\nmax_retries = 1\n"
    )
}

const PROMPT: &str = "id = \"f\"\nresponse-type = \"jsonl\"\nprompt = \"List fruit.\"\n";

struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new(config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("prompts")).unwrap();
        std::fs::write(p.join("prompts/f.toml"), PROMPT).unwrap();
        std::fs::write(p.join("cutline.toml"), config).unwrap();
        Self { dir }
    }

    fn cutline(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let p = self.dir.path();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cutline"))
            .args(args)
            .current_dir(p)
            .env("CUTLINE_CONFIG", p.join("cutline.toml"))
            .env("CUTLINE_PROMPTS", p.join("prompts"))
            .env("CUTLINE_SESSIONS", p.join("sessions"))
            .env("CUTLINE_LEARNED_FILE", p.join("models.json"))
            .env("FIELD_KEY", KEY)
            .env("CUTLINE_LOG", "trace")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Run `f` in every output format and check that nothing anywhere holds
    /// the key.
    fn everywhere_clean(&self) -> Vec<(Option<i32>, String, String)> {
        let mut outs = Vec::new();
        for format in ["jsonl", "json", "pretty"] {
            let out = self.cutline(&["run", "f", "--provider", "p", "--output", format]);
            clean(&format!("{format} stdout"), &out.1);
            clean(&format!("{format} stderr"), &out.2);
            outs.push(out);
        }
        let mut files = Vec::new();
        walk(self.dir.path(), &mut files);
        for f in files.iter().filter(|f| !f.ends_with("cutline.toml")) {
            clean(
                &f.display().to_string(),
                &String::from_utf8_lossy(&std::fs::read(f).unwrap()),
            );
        }
        outs
    }
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().map_while(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn clean(what: &str, text: &str) {
    for n in needles() {
        assert!(!text.contains(&n), "{what} holds {n:?}:\n{text}");
    }
}

/// The key as a JSON string's content, `/` escaped too.
fn json_escaped() -> String {
    KEY.replace('\\', "\\\\").replace('"', "\\\"").replace('/', "\\/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_finish_reason_is_scrubbed_in_every_format_and_the_session() {
    let finish = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": KEY}]}).to_string();
    let stream = || {
        Reply::data(&[
            r#"{"choices":[{"index":0,"delta":{"content":"{\"name\": \"apple\"}\n"},"finish_reason":null}]}"#,
            &finish,
            "[DONE]",
        ])
    };
    let server = posts_only(vec![stream(), stream(), stream()]).await;
    let run = Run::new(&config(&server.url(), "openai"));
    for (code, stdout, _) in run.everywhere_clean() {
        assert_eq!(code, Some(0), "{stdout}");
        assert!(stdout.contains("<redacted>") || stdout.contains("apple"), "{stdout}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_a_continuation_token_or_the_models_api_is_scrubbed() {
    let chunk = json!({"candidates": [{"content": {"parts": [{"text": "{\"name\": \"pear\"}\n"}], "role": "model"}, "finishReason": "CONTINUATION", "continuationToken": KEY, "index": 0}]}).to_string();
    let server = Server::handler(move |_| Reply::data(&[&chunk])).await;
    let run = Run::new(&config(&server.url(), "gemini"));
    run.everywhere_clean();

    // A Models API that echoes the key, JSON-escaped, into what is kept.
    let info = format!(
        r#"{{"id": "m", "type": "model", "lifecycle": "deprecated", "retires_at": "{}", "capabilities": null}}"#,
        json_escaped()
    );
    let server = Server::handler(move |r| {
        if r.method == "GET" {
            Reply::status(200, &info)
        } else {
            Reply::sse(&[
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"{\\\"name\\\": \\\"fig\\\"}\"}}",
                "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}",
                "event: message_stop\ndata: {\"type\":\"message_stop\"}",
            ])
        }
    })
    .await;
    let run = Run::new(&config(&server.url(), "anthropic"));
    run.everywhere_clean();
    let (_, stdout, stderr) = run.cutline(&["models", "--output", "pretty"]);
    clean("models", &stdout);
    clean("models stderr", &stderr);
    assert!(stdout.contains("<redacted>"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escaped_and_hex_echoes_in_an_error_body_are_scrubbed() {
    let hex = cutline::llm::redact::hex(KEY.as_bytes(), false);
    let all_u: String = KEY
        .chars()
        .flat_map(|c| format!("\\u{:04x}", u32::from(c)).into_bytes())
        .map(char::from)
        .collect();
    for echo in [json_escaped(), hex, all_u] {
        let body = format!(r#"{{"error": {{"message": "bad key {echo}", "type": "invalid_request_error"}}}}"#);
        let server = Server::start(vec![Reply::status(400, &body); 3]).await;
        let run = Run::new(&config(&server.url(), "openai"));
        for (code, stdout, _) in run.everywhere_clean() {
            assert_eq!(code, Some(5), "{stdout}");
        }
    }
}

/// A server that answers POSTs with `replies` in order and a GET (the
/// Models API OpenAI runs ask first) with a 404: the model is unknown there.
async fn posts_only(replies: Vec<Reply>) -> Server {
    let queue = std::sync::Mutex::new(std::collections::VecDeque::from(replies));
    Server::handler(move |r| {
        if r.method == "GET" {
            return Reply::status(404, "{}");
        }
        queue
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Reply::status(500, "{}"))
    })
    .await
}

fn gzip(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

fn raw(status: u16, headers: &[(&str, &str)], body: Vec<u8>) -> Reply {
    Reply {
        status,
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        chunks: vec![(std::time::Duration::ZERO, body)],
        cut: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_or_binary_error_body_is_decoded_or_shown_escaped() {
    let json = r#"{"error": {"message": "the model is overloaded today", "type": "invalid_request_error"}}"#;
    let zipped = raw(
        400,
        &[("content-type", "application/json"), ("content-encoding", "gzip")],
        gzip(json),
    );
    let binary = raw(
        400,
        &[("content-type", "application/octet-stream")],
        b"\x00\x1b]52;c;aGk=\x07oops\xff".to_vec(),
    );
    let server = posts_only(vec![zipped, binary]).await;
    let run = Run::new(&config(&server.url(), "openai"));
    let (code, stdout, _) = run.cutline(&["run", "f", "--provider", "p", "--output", "json"]);
    assert_eq!(code, Some(5));
    let env: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let msg = env["error"]["message"].as_str().unwrap();
    assert!(msg.contains("the model is overloaded today"), "{msg}");
    let (code, stdout, _) = run.cutline(&["run", "f", "--provider", "p", "--output", "json"]);
    assert_eq!(code, Some(5));
    let env: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let msg = env["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("(18 bytes that are not text, shown escaped) \\x00\\x1b]52;c;aGk=\\x07oops\\xff"),
        "{msg}"
    );
    assert!(!msg.contains('\u{1b}') && !msg.contains('\0'), "{msg:?}");
}
