//! Reliability round 3 (issue 24) on the real binary: parallel processes,
//! special files, usage errors on the output contract, hostile text for
//! people, signals and the session size cap.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::{Reply, Server};

fn cutline() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cutline"));
    c.env_remove("CUTLINE_PROMPTS")
        .env_remove("CUTLINE_SESSIONS")
        .env_remove("CUTLINE_MAX_FILE_MIB")
        .env("CUTLINE_CONFIG", "/nonexistent/cutline.toml");
    c
}

/// A temporary directory with `sessions/` holding a copy of the demo
/// session; returns it and the sessions directory.
fn demo_sessions() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sessions = tmp.path().join("sessions");
    std::fs::create_dir(&sessions).expect("mkdir");
    std::fs::copy("sessions/demo.jsonl", sessions.join("demo.jsonl")).expect("copy demo");
    (tmp, sessions)
}

fn envelope_of(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not one JSON envelope: {text:?}: {e}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn session_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read sessions")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// 40 `cutline run` processes at once, none given `--session`: each
/// records into a session of its own (before, two started in the same
/// millisecond shared the default id and one failed with exit 4).
#[test]
fn parallel_runs_without_a_session_id_each_get_their_own_session() {
    let (_tmp, sessions) = demo_sessions();
    let children: Vec<_> = (0..40)
        .map(|_| {
            cutline()
                .args([
                    "run",
                    "extract-definitions-jsonl",
                    "--provider",
                    "replay",
                    "--max-tokens",
                    "16",
                ])
                .arg("--sessions")
                .arg(&sessions)
                .args(["--output", "json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let mut paths = Vec::new();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        let env = envelope_of(&out);
        assert_eq!(out.status.code(), Some(0), "{env}");
        paths.push(
            env["data"]["session"]["path"]
                .as_str()
                .expect("session path")
                .to_owned(),
        );
    }
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), 40, "one session per process: {paths:?}");
    // The demo session and the 40 new ones, each with its header and one run.
    let files = session_files(&sessions);
    assert_eq!(files.len(), 41, "{files:?}");
    for p in &paths {
        let s = cutline::session::load(Path::new(p)).expect("loads");
        assert_eq!(s.runs.len(), 1, "{p}");
        assert!(s.warnings.is_empty(), "{p}: {:?}", s.warnings);
    }
}

/// A default session id never lands in a file that is already there: with
/// a session file under every id the next ten seconds could give, the run
/// still records into a new session of its own (before, it appended to the
/// one it found, or failed when that one was locked or not a session).
#[test]
fn a_default_session_id_never_reuses_an_existing_file() {
    let (_tmp, sessions) = demo_sessions();
    let now = cutline::session::now_ms();
    for ms in now..now + 10_000 {
        std::fs::write(
            sessions.join(format!("extract-definitions-jsonl-{ms}.jsonl")),
            "taken\n",
        )
        .expect("write");
    }
    let out = cutline()
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "replay",
            "--max-tokens",
            "16",
        ])
        .arg("--sessions")
        .arg(&sessions)
        .args(["--output", "json"])
        .output()
        .expect("run");
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(0), "{env}");
    let path = env["data"]["session"]["path"].as_str().expect("session path");
    let s = cutline::session::load(Path::new(path)).expect("a session of its own");
    assert_eq!(s.runs.len(), 1);
    assert_eq!(session_files(&sessions).len(), 10_002);
}

/// Run `cmd` to its end, or kill it after a minute (a hang is the bug under
/// test, so the wait is bounded and a timeout fails with what it printed).
fn output_within_a_minute(cmd: &mut Command) -> Output {
    use std::io::Read as _;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Drained on threads, so a child that writes a lot never blocks on us.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if std::time::Instant::now() > deadline {
            child.kill().expect("kill");
            child.wait().expect("reap");
            panic!("still running after a minute (hung): {cmd:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out_t.join().expect("stdout thread"),
        stderr: err_t.join().expect("stderr thread"),
    }
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
}

/// A FIFO named `*.jsonl` in the sessions directory is skipped with a
/// warning naming it, never opened for a blocking read: `sessions` lists
/// the real sessions, a replay finds its recording, `run --session` on the
/// FIFO's id is refused at once.
#[test]
fn a_fifo_in_the_sessions_directory_is_never_read() {
    let (_tmp, sessions) = demo_sessions();
    let fifo = sessions.join("aaa-fifo.jsonl");
    mkfifo(&fifo);
    let with = |args: &[&str]| {
        output_within_a_minute(
            cutline()
                .args(args)
                .arg("--sessions")
                .arg(&sessions)
                .args(["--output", "json"]),
        )
    };
    let out = with(&["sessions"]);
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(0), "{env}");
    let ids: Vec<&str> = env["data"]["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["demo"]);
    assert_eq!(
        env["warnings"],
        serde_json::json!([format!(
            "{}: not a regular file (a device, pipe or directory is never read)",
            fifo.display()
        )])
    );

    let out = with(&[
        "run",
        "extract-definitions-jsonl",
        "--provider",
        "replay",
        "--max-tokens",
        "16",
        "--no-record",
    ]);
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(0), "{env}");
    assert_eq!(env["data"]["finish_reason"], "length");

    let out = with(&[
        "run",
        "extract-definitions-jsonl",
        "--provider",
        "replay",
        "--max-tokens",
        "16",
        "--session",
        "aaa-fifo",
    ]);
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(4), "{env}");
    assert_eq!(env["error"]["category"], "input_error");
    assert!(
        env["error"]["message"]
            .as_str()
            .expect("message")
            .ends_with("aaa-fifo.jsonl: not a regular file (a link is never appended through)"),
        "{env}"
    );

    let out = with(&["replay", "aaa-fifo"]);
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(4), "{env}");
    assert_eq!(
        env["error"]["message"],
        format!(
            "{}: not a regular file (a device, pipe or directory is never read)",
            fifo.display()
        )
    );
}

/// Every other file cutline reads is checked the same way before it is
/// opened: a response to parse, a schema, variables, a prompt config, an
/// eval input, the config file.
#[test]
fn a_fifo_given_as_any_input_file_is_refused_at_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let fifo = tmp.path().join("pipe.json");
    mkfifo(&fifo);
    let f = fifo.to_str().expect("utf-8 path");
    let refused = format!("{f}: not a regular file (a device, pipe or directory is never read)");
    let var = format!("text=@{f}");
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["parse", f, "--as", "jsonl"], 4),
        (vec!["parse", f, "--as", "json"], 4),
        (vec!["sweep", f, "--prompt", "extract-definitions"], 4),
        (
            vec!["parse", "tests/fixtures/cli/defs.jsonl", "--as", "jsonl", "--schema", f],
            4,
        ),
        (vec!["render", "extract-definitions", "--vars", f], 4),
        (vec!["render", "extract-definitions", "--var", &var], 4),
        (
            vec![
                "compare",
                f,
                "tests/fixtures/cli/defs.jsonl",
                "--prompt-a",
                "extract-definitions-jsonl",
                "--prompt-b",
                "extract-definitions-jsonl",
            ],
            4,
        ),
        (
            vec![
                "eval",
                "--prompt",
                "extract-definitions",
                "--inputs",
                f,
                "--max-tokens",
                "8",
                "--provider",
                "replay",
            ],
            4,
        ),
    ];
    for (args, code) in cases {
        let out = output_within_a_minute(cutline().args(&args).args(["--output", "json"]));
        let env = envelope_of(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {env}");
        let msg = env["error"]["message"].as_str().expect("message");
        assert!(msg.contains(&refused), "{args:?}: {msg}");
    }
    // A prompt file that is a FIFO: not a prompt file of its directory, and
    // refused when named.
    let prompts = tmp.path().join("prompts");
    std::fs::create_dir(&prompts).expect("mkdir");
    let stuck = prompts.join("stuck.toml");
    mkfifo(&stuck);
    let out = output_within_a_minute(
        cutline()
            .args(["prompts", "--dir"])
            .arg(&prompts)
            .args(["--output", "json"]),
    );
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(0), "{env}");
    assert_eq!(env["data"]["prompts"], serde_json::json!([]));
    let out = output_within_a_minute(cutline().arg("render").arg(&stuck).args(["--output", "json"]));
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(3), "{env}");
    let msg = env["error"]["message"].as_str().expect("message");
    assert!(msg.contains("not a regular file"), "{msg}");
    // The config file.
    let out = output_within_a_minute(cutline().env("CUTLINE_CONFIG", &fifo).args([
        "run",
        "extract-definitions",
        "--provider",
        "gpt",
        "--output",
        "json",
    ]));
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(3), "{env}");
    let msg = env["error"]["message"].as_str().expect("message");
    assert!(msg.starts_with(&format!("{f}: ")), "{msg}");
}

/// Errors the argument parser catches are failures on the output contract
/// too: with `--output json` one envelope (`usage`, exit 2) naming the
/// command; by default a preamble and an `error` record; never nothing.
#[test]
fn usage_errors_print_one_envelope_with_output_json() {
    let cases: [(&[&str], &str, &str); 6] = [
        (
            &["run", "extract-definitions", "--max-tokens", "abc"],
            "run",
            "invalid value 'abc' for '--max-tokens <MAX_TOKENS>': invalid digit found in string",
        ),
        (
            &["parse", "x.txt", "--as", "bogus"],
            "parse",
            "invalid value 'bogus' for '--as <AS>'\n  [possible values: text, json, jsonl]",
        ),
        (
            &["render"],
            "render",
            "the following required arguments were not provided:\n  <PROMPT>",
        ),
        (
            &["eval", "--prompt", "p", "--max-tokens", "8", "--concurrency", "0"],
            "eval",
            "invalid value '0' for '--concurrency <CONCURRENCY>': 0 is not in 1..=100000",
        ),
        (
            &["report", "demo", "--format", "pdf"],
            "report",
            "invalid value 'pdf' for '--format <FORMAT>'\n  [possible values: html, svg]",
        ),
        (&["frobnicate"], "cutline", "unrecognized subcommand 'frobnicate'"),
    ];
    for (args, command, message) in cases {
        for json_flag in [&["--output", "json"][..], &["--output=json"], &["--no-stream"]] {
            // The flag before the command and after it.
            for flag_first in [true, false] {
                let mut cmd = cutline();
                if flag_first {
                    cmd.args(json_flag).args(args);
                } else {
                    cmd.args(args).args(json_flag);
                }
                let out = cmd.output().expect("run");
                let env = envelope_of(&out);
                assert_eq!(out.status.code(), Some(2), "{args:?}: {env}");
                assert_eq!(env["ok"], false);
                assert_eq!(env["data"], Value::Null);
                assert_eq!(env["error"]["category"], "usage", "{args:?}");
                let got = env["error"]["message"].as_str().expect("message");
                assert!(got.starts_with(message), "{args:?}: {got:?}");
                assert!(!got.starts_with("error:"), "{got:?}");
                assert_eq!(env["meta"]["command"], command, "{args:?}");
            }
        }
        // JSONL, the default: the preamble, then the error record.
        let out = cutline().args(args).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        let recs: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
        assert_eq!(recs.len(), 2, "{text}");
        assert_eq!(recs[0]["_schema"], format!("cutline.{command}/1"));
        assert_eq!(recs[1]["type"], "error");
        assert_eq!(recs[1]["category"], "usage");
        assert!(String::from_utf8_lossy(&out.stderr).contains(message), "{args:?}");
    }
    // A language the workbench does not have is a usage error too.
    let out = cutline()
        .args(["--lang", "tlh", "prompts", "--output", "json"])
        .output()
        .expect("run");
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(2), "{env}");
    assert_eq!(env["error"]["category"], "usage");
    assert_eq!(env["meta"]["command"], "prompts");
    // Help and version are not failures.
    let out = cutline()
        .args(["run", "--help", "--output", "json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: cutline run"));
}

/// `sessions` on a directory that is not there fails like `prompts --dir`
/// does (before, it answered success with an empty list).
#[test]
fn sessions_on_a_missing_directory_fails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("nope");
    let out = cutline()
        .arg("sessions")
        .arg("--sessions")
        .arg(&missing)
        .args(["--output", "json"])
        .output()
        .expect("run");
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(4), "{env}");
    assert_eq!(env["error"]["category"], "input_error");
    assert_eq!(
        env["error"]["message"],
        format!(
            "{}: cannot read sessions directory: No such file or directory (os error 2)",
            missing.display()
        )
    );
    // An empty directory is a success with no sessions.
    std::fs::create_dir(&missing).expect("mkdir");
    let out = cutline()
        .arg("sessions")
        .arg("--sessions")
        .arg(&missing)
        .args(["--output", "json"])
        .output()
        .expect("run");
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(0), "{env}");
    assert_eq!(env["data"]["sessions"], serde_json::json!([]));
}

/// A config naming one openai-compatible provider `evil` at `url`, with no
/// retries, written into `dir`; its path.
fn evil_config(dir: &Path, url: &str) -> PathBuf {
    let path = dir.join("cutline.toml");
    std::fs::write(
        &path,
        format!(
            "[[provider]]\nname = \"evil\"\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\nmax_retries = 0\n"
        ),
    )
    .expect("write config");
    path
}

/// What a terminal would act on: ESC, BEL, CR on its own, and the C1
/// controls (U+0080 to U+009F, CSI U+009B among them).
fn terminal_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c.is_control() && c != '\n' && c != '\t')
        .collect()
}

/// An answer carrying an OSC 52 clipboard write, clear screen, an OSC 8
/// link and a C1 CSI.
const HOSTILE: &str = "{\"entity\": \"x\u{1b}]52;c;aGVsbG8=\u{7}\", \"definition\": \"y\"}\n\u{1b}[2J\u{1b}]8;;http://evil.example/\u{7}click\u{1b}]8;;\u{7}\u{9b}31m\r\n";

/// Text for people is sanitised as the workbench draws it (each control
/// character shown as U+FFFD), in `run --output pretty` and on stderr in
/// every format; JSON keeps the model's bytes, escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_escapes_from_a_model_never_reach_the_terminal() {
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": HOSTILE}, "finish_reason": "stop"}]}).to_string();
    let server = Server::handler(move |_| Reply::data(&[&chunk, "[DONE]"])).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = evil_config(tmp.path(), &server.url());
    let run = move |format: &str| {
        cutline()
            .env("CUTLINE_CONFIG", &config)
            .args([
                "run",
                "extract-definitions-jsonl",
                "--provider",
                "evil",
                "--no-record",
                "--output",
                format,
            ])
            .output()
            .expect("run")
    };
    let out = tokio::task::spawn_blocking(move || (run("pretty"), run("json")))
        .await
        .expect("join");
    let (pretty, json_out) = out;
    assert_eq!(
        pretty.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&pretty.stderr)
    );
    let stdout = String::from_utf8(pretty.stdout).expect("utf-8");
    assert_eq!(terminal_controls(&stdout), Vec::<char>::new(), "{stdout:?}");
    assert!(
        stdout.starts_with("{\"entity\": \"x\u{FFFD}]52;c;aGVsbG8=\u{FFFD}\", \"definition\": \"y\"}\n\u{FFFD}[2J\u{FFFD}]8;;http://evil.example/\u{FFFD}click\u{FFFD}]8;;\u{FFFD}\u{FFFD}31m\n"),
        "{stdout:?}"
    );
    let stderr = String::from_utf8(pretty.stderr).expect("utf-8");
    assert_eq!(terminal_controls(&stderr), Vec::<char>::new(), "{stderr:?}");
    // Machine output keeps every byte the model sent.
    let env = envelope_of(&json_out);
    assert_eq!(env["data"]["text"], HOSTILE);
}

/// Issue 32, case 27: U+202E (right-to-left override) and U+2028 (line
/// separator) in a model's answer reached the terminal in `--output
/// pretty` and the workbench: they reorder or break what a person reads
/// without being control characters. Both are shown as U+FFFD there (the
/// workbench draws with the same `term::clean`); JSON keeps them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bidi_overrides_and_line_separators_never_reach_the_terminal() {
    let answer = "{\"entity\": \"exe.\u{202E}txt\", \"definition\": \"a\u{2028}b\u{2029}c\u{2066}d\u{200F}\"}\n";
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": answer}, "finish_reason": "stop"}]}).to_string();
    let server = Server::handler(move |_| Reply::data(&[&chunk, "[DONE]"])).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = evil_config(tmp.path(), &server.url());
    let run = move |format: &str| {
        cutline()
            .env("CUTLINE_CONFIG", &config)
            .args([
                "run",
                "extract-definitions-jsonl",
                "--provider",
                "evil",
                "--no-record",
                "--output",
                format,
            ])
            .output()
            .expect("run")
    };
    let (pretty, json_out) = tokio::task::spawn_blocking(move || (run("pretty"), run("json")))
        .await
        .expect("join");
    let stdout = String::from_utf8(pretty.stdout).expect("utf-8");
    assert!(
        stdout.starts_with(
            "{\"entity\": \"exe.\u{FFFD}txt\", \"definition\": \"a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}\"}\n"
        ),
        "{stdout:?}"
    );
    assert_eq!(cutline::tui::text::clean("x\u{202E}y\u{2028}"), "x\u{FFFD}y\u{FFFD}");
    assert_eq!(envelope_of(&json_out)["data"]["text"], answer);
}

/// A provider's error body with escapes reaches stderr sanitised, in the
/// default format and pretty alike; the envelope keeps it as sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_escapes_in_an_error_body_never_reach_the_terminal() {
    let body = "{\"error\": {\"message\": \"bad \u{1b}]52;c;ZXZpbA==\u{7} request \u{1b}[2J\"}}";
    let server = Server::handler(move |_| Reply::status(400, body)).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = evil_config(tmp.path(), &server.url());
    let run = move |format: &str| {
        cutline()
            .env("CUTLINE_CONFIG", &config)
            .args([
                "run",
                "extract-definitions-jsonl",
                "--provider",
                "evil",
                "--no-record",
                "--output",
                format,
            ])
            .output()
            .expect("run")
    };
    let outs = tokio::task::spawn_blocking(move || [run("jsonl"), run("pretty"), run("json")])
        .await
        .expect("join");
    for out in &outs[..2] {
        assert_eq!(out.status.code(), Some(5));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("bad ") && stderr.contains("]52;c;ZXZpbA==") && stderr.contains(" request "),
            "{stderr:?}"
        );
        assert_eq!(terminal_controls(&stderr), Vec::<char>::new(), "{stderr:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(terminal_controls(&stdout), Vec::<char>::new(), "{stdout:?}");
    }
    let env = envelope_of(&outs[2]);
    let msg = env["error"]["message"].as_str().expect("message");
    assert!(msg.contains("]52;c;ZXZpbA=="), "{msg:?}");
}

/// Whatever a `warning:` or `error:` line carries, it reaches stderr
/// sanitised in the default and pretty formats (here a file name with an
/// OSC 52 sequence in it); the envelope keeps the bytes, JSON-escaped.
#[test]
fn an_error_line_on_stderr_never_carries_escapes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let name = tmp.path().join("x\u{1b}]52;c;ZXZpbA==\u{7}.txt");
    let name = name.to_str().expect("utf-8");
    for format in ["jsonl", "pretty"] {
        let out = cutline()
            .args(["parse", name, "--as", "jsonl", "--output", format])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(4));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(terminal_controls(&stderr), Vec::<char>::new(), "{stderr:?}");
        assert!(stderr.contains("x\u{FFFD}]52;c;ZXZpbA==\u{FFFD}.txt: "), "{stderr:?}");
    }
    let out = cutline()
        .args(["parse", name, "--as", "jsonl", "--output", "json"])
        .output()
        .expect("run");
    let env = envelope_of(&out);
    let msg = env["error"]["message"].as_str().expect("message");
    assert!(msg.starts_with(name), "{msg:?}");
}

/// One Anthropic SSE answer of `text` ending with `stop`.
fn anthropic_answer(text: &str, stop: &str) -> Reply {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 40}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let raw: Vec<String> = events.iter().map(|(e, d)| format!("event: {e}\ndata: {d}")).collect();
    let refs: Vec<&str> = raw.iter().map(String::as_str).collect();
    Reply::sse(&refs)
}

const REFUSED_PREFILL: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"This model does not support assistant message prefill. The conversation must end with a user message."}}"#;
const REFUSED_FOLLOW_UP: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;

/// A Claude endpoint that answers the first call with `cut` (stopped by
/// the limit) and refuses every continuation: a 400 to the assistant
/// prefill, and a 400 to the follow-up turn it is then sent as.
fn refusing_claude(cut: &'static str) -> impl Fn(&support::Recorded) -> Reply + Send + Sync + 'static {
    move |r| {
        if r.method == "GET" {
            return Reply::status(
                200,
                r#"{"id":"claude-sonnet-4-5","type":"model","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}"#,
            );
        }
        let body = r.json();
        let messages = body["messages"].as_array().expect("messages");
        let last = messages.last().expect("a message");
        let text = last["content"].to_string();
        if last["role"] == "assistant" {
            Reply::status(400, REFUSED_PREFILL)
        } else if text.contains("Your answer so far was cut off") {
            Reply::status(400, REFUSED_FOLLOW_UP)
        } else {
            anthropic_answer(cut, "max_tokens")
        }
    }
}

/// A continuation call the provider refuses is a failure, not a success: a
/// warning names the refused call and the server's words, the exit is 5
/// (`provider_error`), and the items of the calls before it are kept in the
/// error's detail.
#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_continuation_call_is_reported_as_a_failure() {
    const CUT: &str = "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}\n{\"entity\": \"sto";
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut outs = Vec::new();
    for format in ["json", "jsonl"] {
        let server = Server::handler(refusing_claude(CUT)).await;
        let config = tmp.path().join(format!("{format}.toml"));
        std::fs::write(
            &config,
            format!(
                "[[provider]]\nname = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-sonnet-4-5\"\napi_key_env = \"CUTLINE_RELIABILITY_KEY\"\nmax_retries = 0\n",
                server.url()
            ),
        )
        .expect("config");
        let sessions = tmp.path().join("sessions");
        let out = tokio::task::spawn_blocking(move || {
            cutline()
                .env("CUTLINE_CONFIG", &config)
                .env("CUTLINE_RELIABILITY_KEY", "sk-ant-reliability-0000")
                .env("XDG_CACHE_HOME", sessions.join("cache"))
                .args([
                    "run",
                    "extract-definitions-jsonl",
                    "--provider",
                    "claude",
                    "--max-tokens",
                    "40",
                    "--continue",
                    "3",
                ])
                .arg("--sessions")
                .arg(&sessions)
                .args(["--output", format])
                .output()
                .expect("run")
        })
        .await
        .expect("join");
        // The first call, the prefill refused, the follow-up refused.
        let lasts: Vec<String> = server
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .map(|r| r.json()["messages"].as_array().expect("messages").last().expect("last")["role"].to_string())
            .collect();
        assert_eq!(lasts, ["\"user\"", "\"assistant\"", "\"user\""]);
        outs.push(out);
    }
    let env = envelope_of(&outs[0]);
    assert_eq!(outs[0].status.code(), Some(5), "{env}");
    assert_eq!(env["ok"], false);
    assert_eq!(env["error"]["category"], "provider_error");
    let message = env["error"]["message"].as_str().expect("message");
    assert!(
        message.starts_with("continuation call 2 (follow_up) was refused: "),
        "{message}"
    );
    assert!(
        message.contains("prompt is too long: 210000 tokens > 200000 maximum"),
        "{message}"
    );
    assert!(
        message.ends_with("; the 2 items of the calls before it are kept"),
        "{message}"
    );
    assert_eq!(env["warnings"].as_array().and_then(|w| w.last()), Some(&json!(message)));
    let detail = &env["error"]["detail"];
    assert_eq!(detail["continuation"]["ended"], "failed");
    assert_eq!(detail["continuation"]["items"], 2);
    let calls = detail["continuation"]["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1]["finish_reason"], "error");
    let entities: Vec<&str> = detail["analysis"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["entity"].as_str().expect("entity"))
        .collect();
    assert_eq!(entities, ["photosynthesis", "chlorophyll"]);
    // JSONL: the warning, then the error record last; exit 5.
    assert_eq!(outs[1].status.code(), Some(5));
    let text = String::from_utf8(outs[1].stdout.clone()).expect("utf-8");
    let recs: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    let last = recs.last().expect("records");
    assert_eq!(last["type"], "error");
    assert_eq!(last["category"], "provider_error");
    assert!(
        recs.iter().any(|r| r["type"] == "warning"
            && r["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("continuation call 2 (follow_up) was refused: "))),
        "{text}"
    );
}

/// An OpenAI-compatible stream that sends two lines of an answer, then
/// stays silent (well inside the idle timeout) as a slow model does.
fn stalling_answer() -> Reply {
    let first = json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n{\"entity\": \"chlo"}, "finish_reason": null}]}).to_string();
    let never = json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "rophyll\"}"}, "finish_reason": "stop"}]}).to_string();
    Reply::data(&[&first, &never]).delay_before(1, 50_000)
}

/// SIGINT, SIGTERM or SIGHUP while `cutline run` streams ends the request, not the
/// process: what arrived is analysed and recorded as cut by the user, the
/// error is `interrupted`, and the exit code is 130 (before, the process
/// died at once and the session kept only its header).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_during_run_records_the_partial_run_as_cut_by_the_user() {
    use std::io::BufRead as _;
    // SIGHUP (issue 32, case 7: it killed cutline with nothing recorded)
    // is a terminal closing: the same as the others.
    for signal in ["INT", "TERM", "HUP"] {
        let server = Server::handler(|_| stalling_answer()).await;
        let tmp = tempfile::tempdir().expect("tempdir");
        let config = evil_config(tmp.path(), &server.url());
        let sessions = tmp.path().join("sessions");
        let (status, records) = tokio::task::spawn_blocking(move || {
            let mut child = cutline()
                .env("CUTLINE_CONFIG", &config)
                .args(["run", "extract-definitions-jsonl", "--provider", "evil"])
                .arg("--sessions")
                .arg(&sessions)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn");
            let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
            let mut records: Vec<Value> = Vec::new();
            // Wait for the first streamed chunk, then signal.
            for line in lines.by_ref() {
                let v: Value = serde_json::from_str(&line.expect("line")).expect("JSON");
                let delta = v["type"] == "delta";
                records.push(v);
                if delta {
                    break;
                }
            }
            let st = Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .status()
                .expect("kill");
            assert!(st.success());
            records.extend(lines.map(|l| serde_json::from_str::<Value>(&l.expect("line")).expect("JSON")));
            (child.wait().expect("wait"), records)
        })
        .await
        .expect("join");
        assert_eq!(status.code(), Some(130), "SIG{signal}: {records:?}");
        let last = records.last().expect("records");
        assert_eq!(last["type"], "error", "SIG{signal}");
        assert_eq!(last["category"], "interrupted");
        assert_eq!(
            last["message"],
            format!("cut by the user (SIG{signal}) (what arrived is kept and recorded)")
        );
        let detail = &last["detail"];
        assert_eq!(
            detail["text"],
            "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n{\"entity\": \"chlo"
        );
        assert_eq!(detail["finish_reason"], "error");
        assert_eq!(detail["analysis"]["items"][0]["entity"], "photosynthesis");
        // The session holds the run, cut by the user.
        let path = detail["session"]["path"].as_str().expect("session path");
        let s = cutline::session::load(Path::new(path)).expect("loads");
        assert_eq!(s.runs.len(), 1, "SIG{signal}");
        let run = &s.runs[0];
        assert_eq!(run.text, detail["text"].as_str().expect("text"));
        let error = run.error.as_ref().expect("an error");
        assert_eq!(error.kind, cutline::llm::ErrorKind::Cancelled);
        assert_eq!(error.message, format!("cut by the user (SIG{signal})"));
    }
}

/// A session is read line by line, each line bounded by
/// `CUTLINE_MAX_FILE_MIB`, not the file: an eval's session grows past the
/// cap and still lists, replays, resumes and reports (before, the eval
/// wrote past a whole-file cap and then could do none of that); a single
/// record over the cap is refused and nothing of it is written.
#[test]
fn a_session_past_the_cap_still_lists_replays_resumes_and_reports() {
    let (_tmp, sessions) = demo_sessions();
    let with_cap = |args: &[&str]| {
        cutline()
            .env("CUTLINE_MAX_FILE_MIB", "1")
            .args(args)
            .arg("--sessions")
            .arg(&sessions)
            .args(["--output", "json"])
            .output()
            .expect("run")
    };
    let eval = [
        "eval",
        "--prompt",
        "extract-definitions,extract-topics,agent-kg-extract",
        "--provider",
        "replay",
        "--max-tokens",
        "16,32,48,64,80,96,128,192,256,none",
        "--session",
        "big",
    ];
    let out = with_cap(&eval);
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(0), "{}", env["error"]);
    let path = sessions.join("big.jsonl");
    let size = std::fs::metadata(&path).expect("session").len();
    assert!(size > 1 << 20, "the session grew past the cap: {size} bytes");
    let s = cutline::session::load(&path).expect("loads");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let recorded = s.runs.len();
    assert_eq!(json!(recorded), env["data"]["totals"]["runs"]);
    let out = with_cap(&["sessions"]);
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(0), "{env}");
    let listed = env["data"]["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["id"] == "big")
        .expect("big listed")["runs"]
        .as_array()
        .expect("runs")
        .len();
    assert_eq!(listed, recorded);
    let out = with_cap(&["replay", "big#1", "--max-tokens", "16"]);
    assert_eq!(out.status.code(), Some(0), "{}", envelope_of(&out));
    let report = sessions.join("big.html");
    let out = with_cap(&["report", "big", "-o", report.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", envelope_of(&out));
    // Resuming skips everything: nothing to do.
    let out = with_cap(&eval);
    let env = envelope_of(&out);
    assert_eq!(out.status.code(), Some(0), "{}", env["error"]);
    assert_eq!(env["data"]["plan"]["skipped"], recorded);
    assert_eq!(env["data"]["plan"]["pending"], 0);
    // One record over the cap is refused whole: nothing of it is written.
    let mut rec = cutline::session::Recorder::open(&path).expect("opens");
    rec.cap_lines_at(1 << 20);
    let mut run = s.runs[0].clone();
    run.text = "x".repeat((1 << 20) + 10);
    let e = rec.record(&run).expect_err("refused");
    assert!(cutline::session::is_full(&e), "{e}");
    assert_eq!(std::fs::metadata(&path).expect("session").len(), size);
}
