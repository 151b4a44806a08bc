//! Provider keys never leave the process's memory: with fake keys set in the
//! environment, the `cutline` binary runs against a local scripted server
//! (configured through a temp `cutline.toml` named by `CUTLINE_CONFIG`) —
//! a good run, a 401 that echoes the key, a 400 and a 500 that echo it, and
//! an error event mid-stream that echoes it — in every output format; then
//! stdout, stderr, every session file and every other file the run left
//! (logs and caches go to a temp `HOME`/`XDG_*`) are searched for the key
//! and for fragments of it.

mod support;

use std::path::Path;
use std::process::Command;

use support::{Reply, Server};

const OPENAI_KEY: &str = "sk-test-SECRET123openaiQwErTy9876";
const ANTHROPIC_KEY: &str = "sk-ant-test-SECRET123anthropicAsDf5432";
const GEMINI_KEY: &str = "AIzaTest-SECRET123geminiZxCv1098";
const COMPAT_KEY: &str = "sk-test-SECRET123compatPoIu7654";

/// Every key, and fragments long enough to identify one.
const NEEDLES: &[&str] = &[
    OPENAI_KEY,
    ANTHROPIC_KEY,
    GEMINI_KEY,
    COMPAT_KEY,
    "SECRET123",
    "QwErTy9876",
    "AsDf5432",
    "ZxCv1098",
    "PoIu7654",
];

const PROMPT: &str = r#"
id = "secrets"
response-type = "jsonl"
prompt = "List fruit, one JSON object per line."
schema = '{"type": "object", "required": ["name"]}'
"#;

fn ok_stream() -> Reply {
    Reply::data(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"{\"name\": \"apple\"}\n"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ])
}

fn echo(status: u16, key: &str) -> Reply {
    Reply::status(
        status,
        &format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {key}. Masked: {}****{}","type":"invalid_request_error"}}}}"#,
            &key[..8],
            &key[key.len() - 4..]
        ),
    )
}

/// An OpenAI stream that sends text, then an error event echoing the key.
fn error_event(key: &str) -> Reply {
    Reply::data(&[
        r#"{"choices":[{"index":0,"delta":{"content":"{\"name\": \"pear\"}\n"},"finish_reason":null}]}"#,
        &format!(r#"{{"error":{{"message":"upstream rejected key {key}","type":"server_error"}}}}"#),
    ])
}

/// A 400 whose echo of the key straddles the 500-character cut of error
/// bodies.
fn echo_at_the_cut(key: &str) -> Reply {
    let pad = "x".repeat(490 - r#"{"error":{"message":""#.len());
    Reply::status(400, &format!(r#"{{"error":{{"message":"{pad}{key} is not valid"}}}}"#))
}

/// A 401 that echoes the key JSON-escaped, URL-encoded and in base64.
fn echo_encoded(key: &str) -> Reply {
    use base64::Engine as _;
    let escaped = key.replace('-', "\\u002d");
    let url = key.replace('-', "%2D");
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("user:{key}"));
    Reply::status(
        401,
        &format!(r#"{{"error":{{"message":"bad key {escaped}; sent as {url}; basic {b64}"}}}}"#),
    )
}

/// A model that echoes the key in its answer, split across two chunks.
fn model_echo(key: &str) -> Reply {
    let (a, b) = key.split_at(11);
    Reply::data(&[
        &format!(r#"{{"choices":[{{"index":0,"delta":{{"content":"{{\"name\": \"{a}"}},"finish_reason":null}}]}}"#),
        &format!(r#"{{"choices":[{{"index":0,"delta":{{"content":"{b}\"}}\n"}},"finish_reason":null}}]}}"#),
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ])
}

struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new(url: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("prompts")).unwrap();
        std::fs::create_dir_all(p.join("sessions")).unwrap();
        std::fs::create_dir_all(p.join("home")).unwrap();
        std::fs::write(p.join("prompts/secrets.toml"), PROMPT).unwrap();
        let cfg = format!(
            "[[provider]]\nname = \"oa\"\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\n\
             api_key_env = \"OPENAI_API_KEY\"\nmax_retries = 2\nretry_base_secs = 0.001\n\n\
             [[provider]]\nname = \"compat\"\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\n\
             api_key_env = \"COMPAT_KEY\"\nmax_retries = 2\nretry_base_secs = 0.001\n\n\
             [[provider]]\nname = \"ant\"\nkind = \"anthropic\"\nbase_url = \"{url}\"\nmodel = \"m\"\n\
             api_key_env = \"ANTHROPIC_API_KEY\"\nmax_retries = 2\nretry_base_secs = 0.001\n\n\
             [[provider]]\nname = \"gem\"\nkind = \"gemini\"\nbase_url = \"{url}\"\nmodel = \"m\"\n\
             api_key_env = \"GEMINI_API_KEY\"\nmax_retries = 2\nretry_base_secs = 0.001\n"
        );
        std::fs::write(p.join("cutline.toml"), cfg).unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Run the binary with the keys set; returns (exit code, stdout, stderr).
    fn cutline(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let p = self.path();
        let out = Command::new(env!("CARGO_BIN_EXE_cutline"))
            .args(args)
            .current_dir(p)
            .env("CUTLINE_CONFIG", p.join("cutline.toml"))
            .env("CUTLINE_PROMPTS", p.join("prompts"))
            .env("CUTLINE_SESSIONS", p.join("sessions"))
            .env("HOME", p.join("home"))
            .env("XDG_CACHE_HOME", p.join("home/.cache"))
            .env("XDG_CONFIG_HOME", p.join("home/.config"))
            .env("XDG_DATA_HOME", p.join("home/.local/share"))
            .env("OPENAI_API_KEY", OPENAI_KEY)
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            .env("GEMINI_API_KEY", GEMINI_KEY)
            .env("COMPAT_KEY", COMPAT_KEY)
            .env("RUST_BACKTRACE", "1")
            // Every diagnostic the run path has, on the stderr checked.
            .env("CUTLINE_LOG", "trace")
            .output()
            .expect("run cutline");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn assert_clean(what: &str, text: &str) {
    for n in NEEDLES {
        assert!(!text.contains(n), "{what} contains {n:?}:\n{text}");
    }
}

/// Every file under `dir`, recursively.
fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().map_while(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The whole temp tree except the config (which names the variables only)
/// is free of keys.
fn assert_tree_clean(w: &World) {
    let mut all = Vec::new();
    files(w.path(), &mut all);
    for f in all {
        let bytes = std::fs::read(&f).unwrap();
        assert_clean(&f.display().to_string(), &String::from_utf8_lossy(&bytes));
    }
}

async fn cutline_async(w: std::sync::Arc<World>, args: Vec<String>) -> (Option<i32>, String, String) {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        w.cutline(&refs)
    })
    .await
    .unwrap()
}

/// A run that failed at the provider, as each output format says it: one
/// envelope with `ok: false`, or a last `error` record and an `error:` line
/// on stderr, or the `error:` line alone; the category `provider_error`
/// and a message that says something.
fn assert_provider_error(what: &str, format: &str, stdout: &str, stderr: &str) {
    let error = match format {
        "json" => {
            let env: serde_json::Value =
                serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{what}: {e}\n{stdout}"));
            assert_eq!(env["ok"], false, "{what}");
            env["error"].clone()
        }
        "jsonl" => {
            let last = stdout.lines().last().unwrap_or_default();
            let rec: serde_json::Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{what}: {e}\n{stdout}"));
            assert_eq!(rec["type"], "error", "{what}\n{stdout}");
            rec
        }
        _ => serde_json::json!({"category": "provider_error", "message": stderr}),
    };
    assert_eq!(error["category"], "provider_error", "{what}\n{stdout}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.len() > 20, "{what}: message {message:?}");
    if format != "json" {
        assert!(
            stderr.lines().any(|l| l.starts_with("error: ") && l.len() > 20),
            "{what}: no error line on stderr\n{stderr}"
        );
    }
}

fn args(provider: &str, format: &str) -> Vec<String> {
    [
        "run",
        "secrets",
        "--provider",
        provider,
        "--max-tokens",
        "20",
        "--output",
        format,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_appear_in_no_output_session_or_log() {
    let mut replies = Vec::new();
    let mut plan: Vec<(&str, &str, bool)> = Vec::new(); // provider, format, ok?
    for format in ["jsonl", "json", "pretty"] {
        // Each OpenAI run asks the Models API about its model first.
        replies.push(echo(404, OPENAI_KEY));
        replies.push(ok_stream());
        plan.push(("oa", format, true));
        replies.push(echo(404, OPENAI_KEY));
        replies.push(echo(401, OPENAI_KEY));
        plan.push(("oa", format, false));
        replies.push(echo(401, COMPAT_KEY));
        plan.push(("compat", format, false));
        replies.push(echo(404, OPENAI_KEY));
        replies.push(echo(400, OPENAI_KEY));
        plan.push(("oa", format, false));
        // A 500 is retried (3 attempts in all) before it fails.
        replies.push(echo(404, OPENAI_KEY));
        for _ in 0..3 {
            replies.push(echo(500, OPENAI_KEY));
        }
        plan.push(("oa", format, false));
        replies.push(echo(404, OPENAI_KEY));
        replies.push(error_event(OPENAI_KEY));
        plan.push(("oa", format, false));
        // Each Anthropic run asks the Models API about its model first.
        replies.push(echo(404, ANTHROPIC_KEY));
        replies.push(echo(401, ANTHROPIC_KEY));
        plan.push(("ant", format, false));
        // So does each run of a Gemini model no table row knows.
        replies.push(echo(404, GEMINI_KEY));
        replies.push(echo(401, GEMINI_KEY));
        plan.push(("gem", format, false));
        replies.push(echo(404, OPENAI_KEY));
        replies.push(echo_at_the_cut(OPENAI_KEY));
        plan.push(("oa", format, false));
        replies.push(echo_encoded(ANTHROPIC_KEY));
        replies.push(echo_encoded(ANTHROPIC_KEY));
        plan.push(("ant", format, false));
        replies.push(echo(404, OPENAI_KEY));
        replies.push(model_echo(OPENAI_KEY));
        plan.push(("oa", format, true));
    }
    let server = Server::start(replies).await;
    let w = std::sync::Arc::new(World::new(&server.url()));
    for (provider, format, ok) in plan {
        let (code, stdout, stderr) = cutline_async(w.clone(), args(provider, format)).await;
        let what = format!("{provider} --output {format}");
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        assert!(code.is_some(), "{what}: killed by a signal\n{stderr}");
        if ok {
            assert_eq!(code, Some(0), "{what}\n{stdout}\n{stderr}");
        } else {
            // A provider error reached the user, in the format's own way …
            assert_eq!(code, Some(5), "{what}\n{stdout}\n{stderr}");
            assert_provider_error(&what, format, &stdout, &stderr);
        }
        // … and no key did.
        assert_clean(&format!("{what} stdout"), &stdout);
        assert_clean(&format!("{what} stderr"), &stderr);
    }
    // Every request carried its key (so the keys were really in play).
    let reqs = server.requests();
    assert!(
        reqs.iter()
            .any(|r| r.header("authorization") == Some(&format!("Bearer {OPENAI_KEY}")))
    );
    assert!(reqs.iter().any(|r| r.header("x-api-key") == Some(ANTHROPIC_KEY)));
    assert!(reqs.iter().any(|r| r.header("x-goog-api-key") == Some(GEMINI_KEY)));
    // Sessions were recorded (runs that failed are recorded too) …
    let sessions = cutline::session::list(&w.path().join("sessions"));
    assert!(!sessions.is_empty(), "no session recorded");
    let runs: usize = sessions
        .iter()
        .map(|s| cutline::session::load(s).unwrap().runs.len())
        .sum();
    assert!(runs >= 3, "only {runs} runs recorded");
    // … and nothing anywhere in the tree holds a key.
    assert_tree_clean(&w);
}

#[test]
fn listings_manifest_and_help_show_no_keys() {
    let w = World::new("http://127.0.0.1:9");
    for a in [
        &["--manifest"][..],
        &["prompts"],
        &["sessions", "--output", "json"],
        &["run", "--help"],
        &["--help"],
    ] {
        let (_, stdout, stderr) = w.cutline(a);
        assert!(!stderr.contains("panicked"), "{a:?}: {stderr}");
        assert_clean(&format!("{a:?} stdout"), &stdout);
        assert_clean(&format!("{a:?} stderr"), &stderr);
    }
    assert_tree_clean(&w);
}

/// A redirect to another origin is not followed, so no key header reaches
/// the other host; one within the same origin is followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_carries_no_key() {
    let other = Server::start(vec![ok_stream(), ok_stream(), ok_stream()]).await;
    let location = format!("{}/v1/chat/completions", other.url());
    let to_other = || Reply::status(307, "").header("location", &location);
    // `oa` and `ant` ask the Models API first: those redirects are not
    // followed either.
    let server = Server::start(vec![
        to_other(),
        to_other(),
        to_other(),
        to_other(),
        Reply::status(404, "{}"),
        Reply::status(307, "").header("location", "/v1/chat/completions"),
        ok_stream(),
    ])
    .await;
    let w = std::sync::Arc::new(World::new(&server.url()));
    for provider in ["oa", "ant"] {
        let (code, stdout, stderr) = cutline_async(w.clone(), args(provider, "json")).await;
        assert_eq!(code, Some(5), "{provider}: {stdout}\n{stderr}");
        assert!(stdout.contains("redirected to another origin"), "{stdout}");
        assert_clean("stdout", &stdout);
    }
    assert!(other.requests().is_empty(), "the other host was reached");
    // The same origin: followed, with the key.
    let (code, stdout, stderr) = cutline_async(w.clone(), args("oa", "json")).await;
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 7);
    assert_eq!(reqs[0].path, "/v1/models/m");
    assert_eq!(reqs[2].path, "/v1/models/m");
    assert_eq!(
        reqs[6].header("authorization"),
        Some(format!("Bearer {OPENAI_KEY}").as_str())
    );
    assert_tree_clean(&w);
}
