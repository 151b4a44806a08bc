//! Crash safety of session recording.
//!
//! The test re-runs itself as a child (`CUTLINE_CRASH_CHILD` set, the
//! same test alone) that records runs in a loop through `session::Recorder`, printing
//! `acked N` after each `record` returns. The parent kills it with SIGKILL
//! after a random number of acknowledged records plus a random short delay,
//! several rounds on the same file (each round reopens it with
//! `Recorder::open`, as the workbench does), and loads the file after each
//! kill: it always loads, every acknowledged record is there, at most the
//! one being written is lost, and any warning names the torn line.
//!
//! A deterministic companion cuts a recorded file at every byte of its last
//! line.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use cutline::llm::{FinishReason, Piece, ProviderInfo, Usage};
use cutline::session::{self, Params, Recorder, RunRecord};
use serde_json::{Map, Value, json};

const CHILD_ENV: &str = "CUTLINE_CRASH_CHILD";
const ROUNDS: usize = 6;
/// The child stops by itself after this many records (the parent kills it
/// long before); keeps a stray child from running forever.
const CHILD_MAX_RECORDS: usize = 5_000;

fn record(i: usize) -> RunRecord {
    // Records of varied size, some large enough to need several writes.
    let text: String = "{\"name\": \"apple\", \"note\": \"é\"}\n".repeat(1 + (i * 37) % 400);
    RunRecord {
        kind: cutline::session::RecordKind::Run,
        run_id: format!("crash#{i}"),
        started_ms: session::now_ms(),
        prompt_id: "crash".into(),
        response_type: cutline::prompt::ResponseType::Jsonl,
        prompt: json!({"prompt": "List fruit.", "response-type": "jsonl"}),
        system: String::new(),
        rendered: "List fruit.".into(),
        variables: Map::new(),
        provider: ProviderInfo {
            name: "t".into(),
            kind: "replay".into(),
            model: "m".into(),
            base_url: None,
        },
        params: Params {
            max_tokens: Some(100),
            temperature: None,
            stop: vec!["\n\n".into()],
            ..Params::default()
        },
        pieces: text
            .split_inclusive('\n')
            .map(|p| Piece {
                text: p.to_owned(),
                ms: 1,
                delta: false,
            })
            .collect(),
        text,
        finish: FinishReason::Length,
        raw_reason: None,
        usage: Usage::default(),
        error: None,
        first_token_ms: Some(1),
        total_ms: 2,
        structured_path: cutline::llm::structured::Path::None,
        adjustments: Vec::new(),
        checks: Vec::new(),
        prefill: String::new(),
        token_ids: Vec::new(),
        continues: None,
        continuation_token: None,
        batch: None,
        thinking: String::new(),
        analysis: json!({"response_type": "jsonl", "items": i}),
    }
}

/// The child: record into the session file `path` until killed (or the
/// bound).
fn child_records_sessions_until_killed(path: &std::ffi::OsStr) {
    let path = PathBuf::from(path);
    let mut rec = if path.exists() {
        Recorder::open(&path).expect("reopen")
    } else {
        let dir = path.parent().unwrap();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let r = Recorder::create(dir, &stem).expect("create");
        assert_eq!(r.path(), path, "the session file is the one asked for");
        r
    };
    for i in 0..CHILD_MAX_RECORDS {
        rec.record(&record(i)).expect("record");
        println!("acked {}", i + 1);
    }
}

/// Run one child on `path`, kill it after `after` acknowledgements and a
/// delay of `delay_us`; returns how many records it acknowledged.
fn run_child_and_kill(path: &Path, after: usize, delay_us: u64) -> usize {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "kill_9_while_recording_loses_at_most_the_last_record",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the child");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked = 0;
    // Bounded: the child prints at most CHILD_MAX_RECORDS lines, then exits.
    while acked < after {
        match lines.next() {
            Some(Ok(l)) => {
                if let Some(n) = l.strip_prefix("acked ") {
                    acked = n.trim().parse().unwrap();
                }
            }
            _ => break,
        }
    }
    std::thread::sleep(Duration::from_micros(delay_us));
    child.kill().expect("kill -9"); // SIGKILL on Unix
    // Whatever it acknowledged before dying is still in the pipe.
    for l in lines.map_while(Result::ok) {
        if let Some(n) = l.strip_prefix("acked ") {
            acked = n.trim().parse().unwrap();
        }
    }
    child.wait().unwrap();
    acked
}

/// Every warning is about a torn or unreadable line and names it.
fn assert_warnings_name_lines(s: &session::Session) {
    let label = s.path.display().to_string();
    for w in &s.warnings {
        assert!(w.starts_with(&format!("{label}:")), "{w}");
        assert!(
            w.contains("torn last line") || w.contains("unreadable line"),
            "unexpected warning: {w}"
        );
    }
}

/// In the child (`CUTLINE_CRASH_CHILD` set, this test alone), the recorder
/// being killed; in the test run, the parent killing it.
#[test]
fn kill_9_while_recording_loses_at_most_the_last_record() {
    match std::env::var_os(CHILD_ENV) {
        Some(path) => child_records_sessions_until_killed(&path),
        None => kill_rounds(),
    }
}

fn kill_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.jsonl");
    let mut loaded_before = 0;
    let mut rng = fastrand::Rng::with_seed(0x6c75_7463);
    for round in 0..ROUNDS {
        let after = rng.usize(1..40);
        let delay = rng.u64(0..20_000);
        let acked = run_child_and_kill(&path, after, delay);
        assert!(
            acked >= after.min(CHILD_MAX_RECORDS),
            "round {round}: the child died early"
        );
        let s = session::load(&path).unwrap_or_else(|e| panic!("round {round}: does not load: {e}"));
        assert_eq!(s.header.kind, cutline::session::HeaderKind::Session);
        let new = s.runs.len() - loaded_before;
        // Every acknowledged record is there; at most the one in flight
        // (written but not yet acknowledged) is extra.
        assert!(
            new == acked || new == acked + 1,
            "round {round}: {acked} acknowledged, {new} loaded"
        );
        assert!(s.warnings.len() <= round + 1, "round {round}: {:?}", s.warnings);
        assert_warnings_name_lines(&s);
        for (i, r) in s.runs[loaded_before..].iter().enumerate() {
            assert_eq!(r.run_id, format!("crash#{i}"), "round {round}");
        }
        loaded_before = s.runs.len();
    }
}

#[test]
fn a_file_cut_at_any_byte_of_its_last_line_loses_only_that_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recorder::create(dir.path(), "cut").unwrap();
    for i in 0..3 {
        rec.record(&record(i)).unwrap();
    }
    let bytes = std::fs::read(rec.path()).unwrap();
    let body = &bytes[..bytes.len() - 1];
    let last_start = body.iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let cut_path = dir.path().join("cut-copy.jsonl");
    // Every cut inside the last line (step keeps the test quick on a long
    // line, but includes both ends and the bytes inside the `é`).
    let len = bytes.len();
    let mut cuts: Vec<usize> = (last_start + 1..len - 1).step_by(97).collect();
    cuts.extend([last_start + 1, len - 2]);
    cuts.extend(
        bytes[last_start..]
            .windows(2)
            .position(|w| w == [0xC3, 0xA9])
            .map(|p| last_start + p + 1),
    );
    for cut in cuts {
        std::fs::write(&cut_path, &bytes[..cut]).unwrap();
        let s = session::load(&cut_path).unwrap();
        assert_eq!(s.runs.len(), 2, "cut at {cut}");
        assert_eq!(s.warnings.len(), 1, "cut at {cut}: {:?}", s.warnings);
        let label = cut_path.display();
        assert!(
            // The header, the prompt snapshot (written once), then runs.
            s.warnings[0].starts_with(&format!("{label}:5: torn last line")),
            "cut at {cut}: {}",
            s.warnings[0]
        );
        // Reopening to append repairs the line end: the next record is kept.
        let mut again = Recorder::open(&cut_path).unwrap();
        again.record(&record(9)).unwrap();
        let s = session::load(&cut_path).unwrap();
        assert_eq!(s.runs.len(), 3, "cut at {cut}");
        assert_eq!(s.runs[2].run_id, "crash#9");
        let v: Value = serde_json::to_value(&s.runs[1]).unwrap();
        assert_eq!(v["run_id"], "crash#1");
    }
}

/// A session `stem` in `dir` with runs `stem#1` to `stem#3`; its file.
fn three_numbered_runs(dir: &Path, stem: &str) -> PathBuf {
    let mut rec = Recorder::create(dir, stem).unwrap();
    for i in 0..3 {
        let mut r = record(i);
        r.run_id = rec.next_run_id();
        rec.record(&r).unwrap();
    }
    rec.path().to_owned()
}

/// A torn line in the middle of a session (a crash, then a reopen that
/// appended more) shifts nothing: `session#N` names the run recorded as
/// `#N`, and the next run is numbered after the highest id on disk.
#[test]
fn a_torn_line_mid_session_shifts_no_reference() {
    let dir = tempfile::tempdir().unwrap();
    let path = three_numbered_runs(dir.path(), "torn");
    // Tear run #2's line in the middle (after the header and the prompt
    // snapshot: lines 3, 4, 5 are runs #1 to #3).
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let torn = format!(
        "{}\n{}\n{}\n{}\n{}\n",
        lines[0],
        lines[1],
        lines[2],
        &lines[3][..lines[3].len() / 2],
        lines[4]
    );
    std::fs::write(&path, torn).unwrap();
    let mut rec = Recorder::open(&path).unwrap();
    let mut r = record(3);
    r.run_id = rec.next_run_id();
    assert_eq!(r.run_id, "torn#4", "numbered after the highest id on disk");
    rec.record(&r).unwrap();
    drop(rec);
    let (s, i) = session::resolve("torn#3", dir.path()).unwrap();
    assert_eq!(s.runs[i].run_id, "torn#3");
    assert_eq!(s.reference(i), "torn#3");
    let (s, i) = session::resolve("torn#4", dir.path()).unwrap();
    assert_eq!(s.runs[i].run_id, "torn#4");
    let err = session::resolve("torn#2", dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: no run #2 in the session (recorded: #1, #3, #4)", path.display())
    );
}

/// A run torn while it was written keeps its number: the next run does not
/// reuse it (a `session#N` printed for the torn run never names another).
#[test]
fn a_torn_last_run_keeps_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = three_numbered_runs(dir.path(), "cut");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 40]).unwrap();
    let mut rec = Recorder::open(&path).unwrap();
    assert_eq!(rec.next_run_id(), "cut#4");
}
