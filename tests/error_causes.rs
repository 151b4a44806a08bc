//! Errors keep their cause: a typed error built from another error keeps
//! that error as its `std::error::Error::source` (the original type, found
//! by downcasting), while the message a person reads stays word for word
//! what it was, and says the cause once.

use std::error::Error as _;
use std::path::Path;
use std::time::Duration;

use cutline::llm::http::key::ApiKey;
use cutline::llm::{self, ErrorKind, LlmError, config};

/// The text of `e` and of every error under it.
fn chain(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut next = e.source();
    while let Some(s) = next {
        out.push(s.to_string());
        next = s.source();
    }
    out
}

#[test]
fn a_batch_line_that_is_not_json_keeps_serde_json_error() {
    let Some(Err(e)) = llm::batch::jsonl(b"{oops\n").next() else {
        panic!("a line that is not JSON is an error");
    };
    let want = serde_json::from_slice::<serde_json::Value>(b"{oops").unwrap_err();
    assert_eq!(e.message, format!("a batch result line is not JSON: {want}"));
    assert_eq!(
        e.to_string(),
        format!("Stream: a batch result line is not JSON: {want}")
    );
    let source = e.source().expect("a source");
    let typed = source
        .downcast_ref::<serde_json::Error>()
        .expect("serde_json's own error");
    assert_eq!(typed.to_string(), want.to_string());
    // A clone shares the cause; equality is what the error says.
    let copy = e.clone();
    assert!(copy.source().is_some());
    assert_eq!(copy, LlmError::new(ErrorKind::Stream, e.message.clone()));
}

#[tokio::test]
async fn nothing_listening_keeps_reqwest_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let text = format!(
        "[[provider]]\nname = \"o\"\nkind = \"ollama\"\nbase_url = \"http://127.0.0.1:{port}\"\nmodel = \"m\"\n"
    );
    let c = config::parse(&text, Path::new("x.toml")).unwrap().remove(0);
    let p = config::build_with_env(&c, &|_| None).unwrap();
    let req = llm::Request {
        prompt: "x".into(),
        ..llm::Request::default()
    };
    let t = tokio::time::timeout(Duration::from_secs(20), llm::collect(p.stream(req), |_, _| {}))
        .await
        .expect("the stream ended");
    let e = t.error.expect("an error");
    assert_eq!(e.kind, ErrorKind::Connect);
    let source = e.source().expect("a source");
    let typed = source.downcast_ref::<reqwest::Error>().expect("reqwest's own error");
    assert!(typed.is_connect(), "{typed:?}");
    // The message already holds the whole chain, once.
    assert!(e.message.starts_with(&typed.to_string()), "{}", e.message);
    let url = format!("127.0.0.1:{port}");
    assert_eq!(e.message.matches(&url).count(), 1, "{}", e.message);
}

#[test]
fn scrubbing_a_key_drops_a_cause_that_shows_it() {
    let key = ApiKey::new("TEST_KEY", "sk-test-0123456789abcdef".into());
    let shows = LlmError::caused(
        ErrorKind::Connect,
        "GET https://h/?key=sk-test-0123456789abcdef failed",
        std::io::Error::other("GET https://h/?key=sk-test-0123456789abcdef failed"),
    );
    let scrubbed = key.scrub_error(shows);
    assert!(
        !scrubbed.message.contains("sk-test-0123456789abcdef"),
        "{}",
        scrubbed.message
    );
    assert!(scrubbed.source().is_none(), "a cause that shows the key is dropped");

    let clean = LlmError::caused(
        ErrorKind::Connect,
        "connection refused",
        std::io::Error::other("connection refused"),
    );
    let kept = key.scrub_error(clean);
    assert_eq!(kept.message, "connection refused");
    let source = kept.source().expect("a cause without the key is kept");
    assert!(source.downcast_ref::<std::io::Error>().is_some());
}

#[test]
fn a_prompt_file_that_does_not_read_keeps_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.toml");
    let e = cutline::store::load_file(&path).unwrap_err();
    let io = std::fs::read(&path).unwrap_err();
    assert_eq!(e.to_string(), format!("{}: cannot read: {io}", path.display()));
    let typed = e
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("io's own error");
    assert_eq!(typed.kind(), std::io::ErrorKind::NotFound);

    // At the edge: the CLI's error prints the message alone (which says
    // the cause), and the chain under it is the typed errors, in order.
    let cli = cutline::cli::out::CliError::from(e.clone());
    assert_eq!(cli.to_string(), e.to_string());
    let links = chain(&cli);
    assert_eq!(links.len(), 3, "{links:?}");
    assert_eq!(links[1], e.to_string());
    assert_eq!(links[2], io.to_string());
    let under = cli.source().expect("the prompt error");
    assert!(under.downcast_ref::<cutline::prompt::ConfigError>().is_some());
}

#[test]
fn an_output_write_that_fails_keeps_io_error() {
    let e = cutline::cli::io_err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "pipe closed"));
    assert_eq!(e.message, "writing output: pipe closed");
    assert_eq!(e.to_string(), "writing output: pipe closed");
    let typed = e
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("io's own error");
    assert_eq!(typed.kind(), std::io::ErrorKind::BrokenPipe);
}

#[test]
fn an_inputs_line_that_is_not_json_keeps_serde_json_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inputs.jsonl");
    std::fs::write(&path, "{\"text\": \"a\"}\n{oops\n").unwrap();
    let e = cutline::eval::inputs::load(&path).unwrap_err();
    let want = serde_json::from_str::<serde_json::Value>("{oops").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2:{}: bad JSON: {}",
            path.display(),
            want.column(),
            cutline::output::json::strip_position(&want.to_string())
        )
    );
    let typed = e
        .source()
        .and_then(|s| s.downcast_ref::<serde_json::Error>())
        .expect("serde_json's own error");
    assert_eq!(typed.to_string(), want.to_string());

    let missing = cutline::eval::inputs::load(&dir.path().join("none.jsonl")).unwrap_err();
    let io = missing
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("io's own error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn a_providers_file_that_does_not_read_keeps_io_error_and_a_parse_error_keeps_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cutline.toml");
    std::fs::write(&path, b"name = \"\xff\"\n").unwrap();
    let e = config::Config::load_from(std::slice::from_ref(&path)).unwrap_err();
    let io = e
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("io's own error");
    assert_eq!(io.kind(), std::io::ErrorKind::InvalidData);
    assert_eq!(e.to_string(), format!("{}: {io}", path.display()));

    // toml's own error quotes the line (which could hold a key): only its
    // message and position are kept, no source.
    std::fs::write(&path, "[[provider]]\nname = \"o\"\napi_key \"sk-inline\"\n").unwrap();
    let e = config::Config::load_from(std::slice::from_ref(&path)).unwrap_err();
    assert!(e.source().is_none());
    assert!(!e.to_string().contains("sk-inline"), "{e}");
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// What asking the TrustGraph gateway at `url` (nothing listening) with
/// `token` fails with.
async fn unreachable(url: &str, token: &str) -> cutline::tg::TgError {
    let key = ApiKey::new("TRUSTGRAPH_TOKEN", token.into());
    let dep = cutline::tg::Deployment::new(url, "default", Some(key), Duration::from_secs(20)).unwrap();
    cutline::tg::ConfigClient::new(dep).prompts().await.unwrap_err()
}

#[tokio::test]
async fn an_unreachable_trustgraph_gateway_keeps_reqwest_error_unless_it_shows_the_token() {
    let token = "tg-secret-0123456789abcdef";
    let url = format!("http://127.0.0.1:{}/", closed_port());
    let e = unreachable(&url, token).await;
    let cutline::tg::TgError::Unreachable { message, .. } = &e else {
        panic!("nothing listening is unreachable: {e:?}");
    };
    let typed = e
        .source()
        .and_then(|s| s.downcast_ref::<reqwest::Error>())
        .expect("reqwest's own error");
    assert!(typed.is_connect(), "{typed:?}");
    // The message already says the whole chain, once.
    assert_eq!(*message, llm::chain_text(typed));
    assert!(e.to_string().ends_with(&format!("cannot be reached: {message}")), "{e}");

    // The token in the URL reqwest names: the text is scrubbed and the
    // error that shows it is dropped.
    let url = format!("http://127.0.0.1:{}/{token}/", closed_port());
    let e = unreachable(&url, token).await;
    let cutline::tg::TgError::Unreachable { message, .. } = &e else {
        panic!("nothing listening is unreachable: {e:?}");
    };
    assert!(!message.contains(token), "{message}");
    assert!(!e.to_string().contains(token), "{e}");
    assert!(message.contains("<redacted>"), "{message}");
    assert!(e.source().is_none(), "a cause that shows the token is dropped");
}

#[test]
fn a_batch_manifest_that_is_not_json_keeps_serde_json_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.batches.json");
    std::fs::write(&path, "{oops").unwrap();
    let e = cutline::eval::batch::manifest::Manifest::load(&path).unwrap_err();
    let want = serde_json::from_str::<serde_json::Value>("{oops").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:{}:{}: not a batch manifest: {want}",
            path.display(),
            want.line(),
            want.column()
        )
    );
    let typed = e
        .source()
        .and_then(|s| s.downcast_ref::<serde_json::Error>())
        .expect("serde_json's own error");
    assert_eq!(typed.to_string(), want.to_string());
}

#[test]
fn a_kept_batch_answer_that_is_not_json_keeps_serde_json_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.answers.jsonl");
    std::fs::write(&path, "{oops\n\n").unwrap();
    let e = cutline::eval::batch::answers::Answers::open(&path).unwrap_err();
    let want = serde_json::from_str::<serde_json::Value>("{oops").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}:1: not a kept batch answer: {want}", path.display())
    );
    let typed = e
        .source()
        .and_then(|s| s.downcast_ref::<serde_json::Error>())
        .expect("serde_json's own error");
    assert_eq!(typed.to_string(), want.to_string());
}

#[test]
fn a_prompt_schema_that_does_not_compile_keeps_the_compile_error() {
    let text = "prompt = \"x\"\n\nschema = '{\"properties\": {\"a\": {\"type\": \"strin\"}}}'\n";
    let e = cutline::prompt::load_bytes("a.toml", text.as_bytes()).unwrap_err();
    let typed = e
        .source()
        .and_then(|s| s.downcast_ref::<cutline::output::schema::SchemaCompileError>())
        .expect("the compile error itself");
    assert_eq!(typed.pointer, "/properties/a/type");
    assert_eq!(e.to_string(), format!("a.toml:3:1: {typed}"));
}
