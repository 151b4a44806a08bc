//! Reliability round 3 (issue 24) on the real binary: parallel processes,
//! special files, usage errors on the output contract, hostile text for
//! people, signals and the session size cap.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

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
