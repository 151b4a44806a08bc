//! The headless CLI on its output contract: JSONL by default with a preamble,
//! `--output json` envelopes, error categories and exit codes.

use assert_cmd::Command;
use serde_json::{Value, json};

const FIX: &str = "tests/fixtures/cli";

fn cutline() -> Command {
    let mut c = Command::cargo_bin("cutline").expect("binary");
    c.env_remove("CUTLINE_PROMPTS").env_remove("CUTLINE_SESSIONS");
    c
}

fn jsonl(out: &[u8]) -> Vec<Value> {
    std::str::from_utf8(out)
        .expect("utf-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

fn envelope(args: &[&str]) -> (Value, i32) {
    let out = cutline().args(args).arg("--output").arg("json").output().expect("run");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not one JSON envelope: {text:?}: {e}"));
    (v, out.status.code().unwrap_or(-1))
}

#[test]
fn manifest_lists_every_command_streaming_by_default() {
    let out = cutline().arg("--manifest").output().expect("run");
    assert!(out.status.success());
    let m: Value = serde_json::from_slice(&out.stdout).expect("manifest is JSON");
    assert_eq!(m["default_output"], "jsonl");
    let names: Vec<&str> = m["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "prompts", "render", "parse", "sweep", "run", "replay", "sessions", "setup", "compare", "migrate", "eval",
            "budget", "report", "probe", "models", "tg", "batches"
        ]
    );
    for c in m["commands"].as_array().expect("commands") {
        assert_eq!(c["streaming_default"], true);
        assert_eq!(
            c["output_schema"],
            format!("cutline.{}/1", c["name"].as_str().expect("name"))
        );
    }
}

#[test]
fn help_says_jsonl_is_the_default() {
    let out = cutline().arg("--help").output().expect("run");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("JSONL by default"), "{text}");
    assert!(text.contains("--output json"), "{text}");
}

#[test]
fn parse_jsonl_streams_a_preamble_then_one_record_per_line() {
    let out = cutline()
        .args(["parse", &format!("{FIX}/defs.jsonl"), "--as", "jsonl", "--schema"])
        .arg(format!("{FIX}/def-item.schema.json"))
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recs = jsonl(&out.stdout);
    assert_eq!(
        recs[0],
        json!({"_format": "jsonl", "_schema": "cutline.parse/1", "_version": 1})
    );
    let statuses: Vec<(u64, &str)> = recs[1..recs.len() - 1]
        .iter()
        .map(|r| {
            assert_eq!(r["type"], "line");
            (r["line"].as_u64().expect("line"), r["status"].as_str().expect("status"))
        })
        .collect();
    assert_eq!(
        statuses,
        [
            // ```jsonl: TrustGraph removes ```json and logs the `l` as invalid JSON.
            (1, "invalid_json"),
            (2, "ok"),
            (3, "empty"),
            (4, "schema_invalid"),
            (5, "ok"),
            (6, "invalid_json"),
            (7, "fence")
        ]
    );
    assert_eq!(recs[2]["item"]["entity"], "photosynthesis");
    assert_eq!(recs[5]["item"]["definition"], "A pore in a leaf, {not} a [bracket].");
    let summary = recs.last().expect("summary");
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["items"], 2);
}

#[test]
fn parse_jsonl_envelope_keeps_exactly_the_valid_objects() {
    let schema = format!("{FIX}/def-item.schema.json");
    let (env, code) = envelope(&[
        "parse",
        &format!("{FIX}/defs.jsonl"),
        "--as",
        "jsonl",
        "--schema",
        &schema,
    ]);
    assert_eq!(code, 0);
    assert_eq!(env["ok"], true);
    assert_eq!(env["error"], Value::Null);
    assert_eq!(env["meta"]["schema"], "cutline.parse/1");
    let entities: Vec<&str> = env["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["entity"].as_str().expect("entity"))
        .collect();
    assert_eq!(entities, ["photosynthesis", "stoma"]);
    let line4 = &env["data"]["lines"][3];
    assert_eq!(line4["status"], "schema_invalid");
    assert_eq!(line4["errors"][0]["pointer"], "/definition");
    let line6 = &env["data"]["lines"][5];
    assert_eq!(line6["status"], "invalid_json");
    assert_eq!(line6["column"], 2);
}

#[test]
fn no_stream_is_an_alias_of_output_json() {
    let schema = format!("{FIX}/def-item.schema.json");
    let file = format!("{FIX}/defs.jsonl");
    let a = cutline()
        .args(["parse", &file, "--as", "jsonl", "--schema", &schema, "--no-stream"])
        .output()
        .expect("run");
    let (b, _) = envelope(&["parse", &file, "--as", "jsonl", "--schema", &schema]);
    let mut a: Value = serde_json::from_slice(&a.stdout).expect("envelope");
    a["meta"]["duration_ms"] = Value::Null;
    let mut b = b;
    b["meta"]["duration_ms"] = Value::Null;
    assert_eq!(a, b);
}

#[test]
fn truncated_jsonl_keeps_complete_lines_and_marks_the_cut_one() {
    let schema = format!("{FIX}/def-item.schema.json");
    let (env, _) = envelope(&[
        "parse",
        &format!("{FIX}/defs-cut.jsonl"),
        "--as",
        "jsonl",
        "--schema",
        &schema,
    ]);
    assert_eq!(env["data"]["items"].as_array().expect("items").len(), 1);
    assert_eq!(env["data"]["lines"][1]["status"], "truncated");
}

#[test]
fn truncated_json_array_fails_strictly_and_salvages_only_complete_elements() {
    let schema = format!("{FIX}/def-item.schema.json");
    let whole = tempfile::NamedTempFile::new().expect("tmp");
    std::fs::write(
        whole.path(),
        serde_json::to_vec(&json!({"type": "array", "items": serde_json::from_str::<Value>(&std::fs::read_to_string(&schema).expect("schema")).expect("json")}))
            .expect("ser"),
    )
    .expect("write");
    let (env, code) = envelope(&[
        "parse",
        &format!("{FIX}/defs-cut.json"),
        "--as",
        "json",
        "--schema",
        whole.path().to_str().expect("path"),
    ]);
    assert_eq!(code, 0, "{env}");
    let d = &env["data"];
    assert_eq!(d["status"], "invalid_json");
    assert_eq!(d["error"]["truncated"], true);
    assert_eq!(d["error"]["line"], 4);
    assert_eq!(d["items"], json!([]));
    assert_eq!(
        d["salvaged"],
        json!([
            {"entity": "photosynthesis", "definition": "How plants turn light into sugar."},
            {"entity": "stoma", "definition": "A pore with \"quotes\" and ] inside."}
        ])
    );
}

#[test]
fn sweep_reports_every_cut_from_zero_to_the_full_response() {
    let schema = format!("{FIX}/def-item.schema.json");
    let (env, code) = envelope(&["sweep", &format!("{FIX}/defs.jsonl"), "--schema", &schema]);
    assert_eq!(code, 0, "{env}");
    let points = env["data"]["points"].as_array().expect("points");
    assert_eq!(
        points[0],
        json!({"tokens": 0, "bytes": 0, "json_items": 0, "salvaged_items": 0, "jsonl_items": 0})
    );
    let last = points.last().expect("last");
    assert_eq!(
        last["bytes"],
        std::fs::metadata(format!("{FIX}/defs.jsonl")).expect("meta").len()
    );
    assert_eq!(last["jsonl_items"], 2);
    assert_eq!(last["json_items"], 0);
    for (k, p) in points.iter().enumerate() {
        assert_eq!(p["tokens"], k);
    }
    // Items only ever grow as the limit rises.
    let jsonl: Vec<u64> = points.iter().map(|p| p["jsonl_items"].as_u64().expect("n")).collect();
    assert!(jsonl.windows(2).all(|w| w[0] <= w[1]), "{jsonl:?}");
}

#[test]
fn a_missing_file_is_an_input_error_naming_it() {
    let (env, code) = envelope(&["parse", "no/such/file.txt", "--as", "jsonl"]);
    assert_eq!(code, 4);
    assert_eq!(env["ok"], false);
    assert_eq!(env["error"]["category"], "input_error");
    let msg = env["error"]["message"].as_str().expect("message");
    assert!(msg.starts_with("no/such/file.txt: "), "{msg}");
}

#[test]
fn a_schema_with_a_syntax_error_names_file_line_and_column() {
    let schema = format!("{FIX}/broken.schema.json");
    let (env, code) = envelope(&[
        "parse",
        &format!("{FIX}/defs.jsonl"),
        "--as",
        "jsonl",
        "--schema",
        &schema,
    ]);
    assert_eq!(code, 3);
    assert_eq!(env["error"]["category"], "config_invalid");
    let msg = env["error"]["message"].as_str().expect("message");
    assert!(msg.starts_with(&format!("{schema}:2:21: ")), "{msg}");
}

#[test]
fn a_remote_ref_is_rejected_not_fetched() {
    let schema = format!("{FIX}/remote.schema.json");
    let (env, code) = envelope(&[
        "parse",
        &format!("{FIX}/defs.jsonl"),
        "--as",
        "jsonl",
        "--schema",
        &schema,
    ]);
    assert_eq!(code, 3, "{env}");
    let msg = env["error"]["message"].as_str().expect("message");
    assert!(
        msg.starts_with(&format!("{schema}: schema does not compile at ")),
        "{msg}"
    );
}

#[test]
fn jsonl_error_is_a_record_and_a_stderr_line() {
    let out = cutline()
        .args(["parse", "missing.txt", "--as", "json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4));
    let recs = jsonl(&out.stdout);
    assert_eq!(recs[0]["_schema"], "cutline.parse/1");
    assert_eq!(recs[1]["type"], "error");
    assert_eq!(recs[1]["category"], "input_error");
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: missing.txt: "));
}

#[test]
fn invalid_utf8_in_a_response_is_judged_per_line_not_a_crash() {
    let (env, code) = envelope(&["parse", &format!("{FIX}/latin1.jsonl"), "--as", "jsonl"]);
    assert_eq!(code, 0, "{env}");
    // Read as TrustGraph receives it: the byte is U+FFFD, the line is kept.
    assert_eq!(env["data"]["lines"][0]["status"], "ok");
    assert_eq!(env["data"]["lines"][0]["invalid_utf8"], 16);
    assert_eq!(env["data"]["items"][0]["entity"], "caf\u{fffd}");
    assert_eq!(
        env["warnings"][0],
        format!("{FIX}/latin1.jsonl:1:16: invalid UTF-8; replaced with U+FFFD for the JSON parse")
    );
}

#[test]
fn usage_errors_exit_2() {
    let out = cutline().args(["parse", "x"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = cutline().args(["no-such-command"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn stdin_is_read_with_dash() {
    let out = cutline()
        .args(["parse", "-", "--as", "jsonl", "--output", "json"])
        .write_stdin("{\"a\": 1}\n{\"a\": 12345678901234567890123456789}\n")
        .output()
        .expect("run");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    // Numbers keep their exact value.
    assert!(text.contains("12345678901234567890123456789"), "{text}");
}

/// The issue's proof on a real Gemma 3 270M answer cut at 64 tokens (kept in
/// tests/fixtures/output): the JSON array is lost to a strict consumer, the
/// JSONL twin keeps the lines it finished, and salvage recovers only the
/// complete elements.
#[test]
fn real_truncated_model_output_json_lost_jsonl_kept() {
    let out = "tests/fixtures/output";
    let (json, code) = envelope(&[
        "parse",
        &format!("{out}/extract-definitions-64.txt"),
        "--prompt",
        "extract-definitions",
        "--prompts",
        "prompts",
    ]);
    assert_eq!(code, 0, "{json}");
    let d = &json["data"];
    assert_eq!(d["status"], "invalid_json");
    assert_eq!(d["error"]["truncated"], true);
    assert_eq!(d["items"], json!([]));
    let salvaged: Vec<&str> = d["salvaged"]
        .as_array()
        .expect("salvaged")
        .iter()
        .map(|e| e["entity"].as_str().expect("entity"))
        .collect();
    assert_eq!(salvaged, ["photosynthesis", "sugar"]);

    let (jsonl, _) = envelope(&[
        "parse",
        &format!("{out}/extract-definitions-jsonl-64.txt"),
        "--prompt",
        "extract-definitions-jsonl",
        "--prompts",
        "prompts",
    ]);
    let kept: Vec<&str> = jsonl["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|e| e["entity"].as_str().expect("entity"))
        .collect();
    assert_eq!(kept, ["photosynthesis", "sugar"]);
    assert_eq!(jsonl["data"]["lines"][2]["status"], "truncated");
}

/// The sweep of the full real answer: strict JSON recovers nothing until the
/// closing bracket, while JSONL counts each line as it completes.
#[test]
fn real_model_sweep_json_all_or_nothing_jsonl_incremental() {
    let out = "tests/fixtures/output";
    let (json, code) = envelope(&[
        "sweep",
        &format!("{out}/extract-definitions-512.txt"),
        "--prompt",
        "extract-definitions",
        "--prompts",
        "prompts",
    ]);
    assert_eq!(code, 0, "{json}");
    let pts = json["data"]["points"].as_array().expect("points");
    let last = pts.last().expect("last");
    let total = last["json_items"].as_u64().expect("n");
    assert!(total >= 3, "{last}");
    // Before the last token strict JSON has nothing; salvage grows element by element.
    let before = &pts[pts.len() - 2];
    assert_eq!(before["json_items"], 0, "{before}");
    assert_eq!(before["salvaged_items"], total);
    let half = &pts[pts.len() / 2];
    assert_eq!(half["json_items"], 0);
    assert!(half["salvaged_items"].as_u64().expect("n") >= 1, "{half}");
    // The JSONL twin's answer counts lines as they complete.
    let (jl, _) = envelope(&[
        "sweep",
        &format!("{out}/extract-definitions-jsonl-512.txt"),
        "--prompt",
        "extract-definitions-jsonl",
        "--prompts",
        "prompts",
    ]);
    let p = jl["data"]["points"].as_array().expect("points");
    let n = p.last().expect("last")["jsonl_items"].as_u64().expect("n");
    assert!(n >= 3);
    let mid = p[p.len() / 2]["jsonl_items"].as_u64().expect("n");
    assert!(mid >= 1 && mid < n, "{mid} of {n}");
}

/// A recorded run's own token pieces are the cuts: the sweep of a shipped
/// demo session covers exactly its recorded tokens.
#[test]
fn sweep_of_a_recorded_run_cuts_at_its_own_tokens() {
    let (env, code) = envelope(&[
        "sweep",
        "--session",
        "demo#3",
        "--sessions",
        "sessions",
        "--prompts",
        "prompts",
    ]);
    assert_eq!(code, 0, "{env}");
    let d = &env["data"];
    assert_eq!(d["cuts_from"], "recorded pieces");
    let s = cutline::session::load(std::path::Path::new("sessions/demo.jsonl")).expect("demo session");
    let run = &s.runs[2];
    assert_eq!(run.prompt_id, "extract-definitions-jsonl");
    let points = d["points"].as_array().expect("points");
    assert_eq!(points.len(), run.pieces.len() + 1);
    assert_eq!(points.last().expect("last")["bytes"], run.text.len());
    assert_eq!(
        points.last().expect("last")["jsonl_items"],
        run.analysis["items"],
        "the sweep's full-length count equals the recorded analysis"
    );
}

/// A temporary directory with `sessions/` holding a copy of the demo
/// session; the directory and the sessions path.
fn demo_sessions() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sessions = tmp.path().join("sessions");
    std::fs::create_dir(&sessions).expect("mkdir");
    std::fs::copy("sessions/demo.jsonl", sessions.join("demo.jsonl")).expect("copy demo");
    (tmp, sessions)
}

/// A temporary sessions directory holding a copy of the demo session, and
/// `run --provider replay` on it with `--session ID`.
fn replay_run(sessions: &std::path::Path, session_id: &str) -> (Value, i32) {
    envelope(&[
        "run",
        "extract-definitions-jsonl",
        "--provider",
        "replay",
        "--max-tokens",
        "64",
        "--session",
        session_id,
        "--sessions",
        sessions.to_str().expect("utf-8 path"),
        "--prompts",
        "prompts",
    ])
}

/// Issue 32, case 11: `--session 实验一` and `--session 实验二` both
/// became `sessions/---.jsonl`, and the second silently resumed the first.
/// Distinct ids are distinct files: letters of any script are kept, and an
/// id the rule had to change gets a hash of itself (`a b` and `a.b`).
#[test]
fn distinct_session_ids_never_share_a_file() {
    let (_tmp, sessions) = demo_sessions();
    let mut paths = Vec::new();
    for id in ["实验一", "实验二", "a b", "a.b", "实验一"] {
        let (env, code) = replay_run(&sessions, id);
        assert_eq!(code, 0, "{env}");
        paths.push(env["data"]["session"]["path"].as_str().expect("path").to_owned());
    }
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            std::path::Path::new(p)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "实验一.jsonl",
            "实验二.jsonl",
            "a-b-10a3f9f2.jsonl",
            "a-b-108bf50c.jsonl",
            "实验一.jsonl"
        ]
    );
    let first = cutline::session::load(std::path::Path::new(&paths[0])).expect("load");
    assert_eq!(first.runs.len(), 2, "the same id again resumes its own session");
    let second = cutline::session::load(std::path::Path::new(&paths[1])).expect("load");
    assert_eq!(second.runs.len(), 1);
}

/// Issue 32, case 21: a session whose header says a newer format was
/// resumed and this cutline's older records appended to it, silently. It
/// is refused, naming the file and both formats; the file is unchanged.
#[test]
fn a_session_a_newer_cutline_wrote_is_never_appended_to() {
    let (_tmp, sessions) = demo_sessions();
    let file = sessions.join("newer.jsonl");
    let header = "{\"type\":\"session\",\"version\":3,\"id\":\"newer\",\"created_ms\":0}\n";
    std::fs::write(&file, header).expect("session");
    let (env, code) = replay_run(&sessions, "newer");
    assert_eq!(code, 4, "{env}");
    assert_eq!(
        env["error"]["message"],
        format!(
            "{}: {}: written by a newer cutline (session format 3; this one writes 2): nothing is appended to it; \
             upgrade cutline or use another session id",
            sessions.display(),
            file.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&file).expect("session"), header);
}

/// `--session ../x` or an absolute path never appends to a `.jsonl`
/// outside the sessions directory: a session id is a name, made safe by
/// the same rule `eval` uses.
#[test]
fn run_session_id_is_a_name_never_a_path() {
    let (tmp, sessions) = demo_sessions();
    let victim = tmp.path().join("victim.jsonl");
    let abs_victim = tmp.path().join("abs.jsonl");
    let header = "{\"type\":\"session\",\"version\":1,\"id\":\"victim\",\"created_ms\":0}\n";
    std::fs::write(&victim, header).expect("victim");
    std::fs::write(&abs_victim, header).expect("victim");
    let (env, code) = replay_run(&sessions, "../victim");
    assert_eq!(code, 0, "{env}");
    assert_eq!(
        env["data"]["session"]["path"],
        sessions.join("---victim-e55cbc3e.jsonl").display().to_string()
    );
    let abs = tmp.path().join("abs").display().to_string();
    let (env, code) = replay_run(&sessions, &abs);
    assert_eq!(code, 0, "{env}");
    let path = env["data"]["session"]["path"].as_str().expect("path");
    assert_eq!(std::path::Path::new(path).parent(), Some(sessions.as_path()), "{path}");
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), header);
    assert_eq!(std::fs::read_to_string(&abs_victim).expect("victim"), header);
}

/// A symlink in the sessions directory is never appended through.
#[cfg(unix)]
#[test]
fn run_does_not_append_through_a_symlinked_session() {
    let (tmp, sessions) = demo_sessions();
    let victim = tmp.path().join("gold.jsonl");
    let header = "{\"type\":\"session\",\"version\":1,\"id\":\"gold\",\"created_ms\":0}\n";
    std::fs::write(&victim, header).expect("victim");
    std::os::unix::fs::symlink(&victim, sessions.join("gold.jsonl")).expect("symlink");
    let (env, code) = replay_run(&sessions, "gold");
    assert_eq!(code, 4, "{env}");
    let link = sessions.join("gold.jsonl");
    assert_eq!(
        env["error"]["message"],
        format!(
            "{}: {}: not a regular file (a link is never appended through)",
            sessions.display(),
            link.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), header);
}

/// Files over the read cap are an error naming their size; a stray
/// non-session `.jsonl` in `sessions/` is one warning, not one per line.
#[test]
fn reads_are_bounded_and_a_stray_jsonl_is_one_warning() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let prompts = tmp.path().join("prompts");
    let sessions = tmp.path().join("sessions");
    std::fs::create_dir(&prompts).expect("mkdir");
    std::fs::create_dir(&sessions).expect("mkdir");
    let big = "x".repeat((2 << 20) + 1);
    std::fs::write(prompts.join("big.toml"), &big).expect("write");
    std::fs::write(sessions.join("big.jsonl"), &big).expect("write");
    std::fs::write(sessions.join("stray.jsonl"), "{\"a\":1}\n".repeat(5000)).expect("write");
    let out = cutline()
        .env("CUTLINE_MAX_FILE_MIB", "1")
        .args(["prompts", "--dir", prompts.to_str().expect("utf-8")])
        .output()
        .expect("run");
    let recs = jsonl(&out.stdout);
    let errors: Vec<&Value> = recs.iter().filter(|r| r["type"] == "error").collect();
    assert_eq!(errors.len(), 1, "{recs:?}");
    assert_eq!(
        errors[0]["message"],
        format!(
            "{}: cannot read: 2097153 bytes, over the 1 MiB limit for one file (set CUTLINE_MAX_FILE_MIB to raise it)",
            prompts.join("big.toml").display()
        )
    );
    let out = cutline()
        .env("CUTLINE_MAX_FILE_MIB", "1")
        .args(["sessions", "--sessions", sessions.to_str().expect("utf-8")])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let warnings: Vec<String> = jsonl(&out.stdout)
        .iter()
        .filter(|r| r["type"] == "warning")
        .map(|r| r["message"].as_str().expect("message").to_owned())
        .collect();
    assert_eq!(
        warnings,
        [
            // A session is read line by line: each line is bounded, not the file.
            format!(
                "{}: a line of 2097153 bytes, over the 1 MiB a line may take (set CUTLINE_MAX_FILE_MIB to raise it)",
                sessions.join("big.jsonl").display()
            ),
            format!(
                "{}: not a session file (its first line is not a session header); skipped",
                sessions.join("stray.jsonl").display()
            ),
        ]
    );
}

/// A prompt file linked to `/proc/self/pagemap` (which reports no size and
/// never ends) is read only up to the cap.
#[cfg(target_os = "linux")]
#[test]
fn a_prompt_linked_to_proc_pagemap_stops_at_the_cap() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink("/proc/self/pagemap", tmp.path().join("p.json")).expect("symlink");
    let out = cutline()
        .env("CUTLINE_MAX_FILE_MIB", "1")
        .args(["prompts", "--dir", tmp.path().to_str().expect("utf-8")])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run");
    let recs = jsonl(&out.stdout);
    let errors: Vec<&Value> = recs.iter().filter(|r| r["type"] == "error").collect();
    assert_eq!(
        errors[0]["message"],
        format!(
            "{}: cannot read: more bytes than its size says, over the 1 MiB limit for one file (set CUTLINE_MAX_FILE_MIB to raise it)",
            tmp.path().join("p.json").display()
        )
    );
}

/// `prompts --dir` on a directory that does not exist is an input error
/// (exit 4) naming it, not an empty list.
#[test]
fn prompts_on_a_missing_directory_exits_4() {
    let (env, code) = envelope(&["prompts", "--dir", "/nonexistent"]);
    assert_eq!(code, 4, "{env}");
    assert_eq!(env["error"]["category"], "input_error");
    assert_eq!(
        env["error"]["message"],
        "/nonexistent: cannot read prompts directory: No such file or directory (os error 2)"
    );
}

/// A write error on stdout (here a full disk, `/dev/full`) says what failed
/// on stderr and exits 1, in every output format.
#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_says_so_and_exits_non_zero_in_every_format() {
    for format in ["jsonl", "json", "pretty"] {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("cutline"))
            .args(["prompts", "--prompts", "prompts", "--output", format])
            .env_remove("CUTLINE_PROMPTS")
            .stdout(std::fs::File::create("/dev/full").expect("/dev/full"))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "error: writing output: No space left on device (os error 28)\n",
            "{format}"
        );
    }
}

/// A closed pipe on stdout is said on stderr and exits 1 as well.
#[test]
fn a_closed_stdout_pipe_says_so_and_exits_non_zero() {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cutline"))
        .args(["prompts", "--prompts", "prompts", "--output", "json"])
        .env_remove("CUTLINE_PROMPTS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: writing output: Broken pipe (os error 32)\n"
    );
}

/// `eval` whose session writes fail (here a file-size limit, as on a full
/// disk) exits non-zero and says how many runs went unrecorded.
#[cfg(target_os = "linux")]
#[test]
fn eval_with_unrecorded_runs_exits_non_zero_and_counts_them() {
    let (_tmp, sessions) = demo_sessions();
    let bin = assert_cmd::cargo::cargo_bin("cutline");
    // SIGXFSZ ignored, so a write past the limit fails with EFBIG.
    let script = format!(
        "trap '' XFSZ; ulimit -f 100; exec '{}' eval --prompt extract-definitions --provider replay --max-tokens 32,64,96,128,none --prompts prompts --sessions '{}' --output json",
        bin.display(),
        sessions.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .env_remove("CUTLINE_PROMPTS")
        .env_remove("CUTLINE_SESSIONS")
        .env_remove("CUTLINE_CONFIG")
        .output()
        .expect("run");
    let env: Value = serde_json::from_slice(&out.stdout).expect("one envelope");
    assert_eq!(out.status.code(), Some(4), "{env}");
    assert_eq!(env["error"]["category"], "input_error");
    let msg = env["error"]["message"].as_str().expect("message");
    let session = sessions.join("eval-77240638f661.jsonl");
    let recorded = cutline::session::load(&session).expect("loads").runs.len();
    assert!(recorded < 30, "{recorded}");
    assert_eq!(
        msg,
        format!(
            "{} of 30 runs were not recorded in {} (first: File too large (os error 27)); a rerun will run them again",
            30 - recorded,
            session.display()
        )
    );
}

/// True while process `pid` runs (a zombie has ended).
#[cfg(target_os = "linux")]
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// A `kill -9` of cutline while it holds a local server does not leave the
/// server running: its watchdog stops it. The server is a fake (a script
/// set through `CUTLINE_LLAMA_SERVER` that only sleeps), so no model is
/// needed.
#[cfg(target_os = "linux")]
#[test]
fn the_local_server_never_outlives_a_kill_9_of_cutline() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let pidfile = tmp.path().join("server.pid");
    let server = tmp.path().join("fake-llama-server");
    std::fs::write(
        &server,
        format!(
            "#!/bin/sh\necho $$ > '{}.tmp'\nmv '{0}.tmp' '{0}'\nexec sleep 300\n",
            pidfile.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let model = tmp.path().join("model.gguf");
    std::fs::write(&model, "not a model").expect("model");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cutline"))
        .args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "local",
            "--no-record",
            "--prompts",
            "prompts",
        ])
        .env("CUTLINE_LLAMA_SERVER", &server)
        .env("CUTLINE_MODEL", &model)
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env_remove("CUTLINE_PROMPTS")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn cutline");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let pid = loop {
        if let Ok(p) = std::fs::read_to_string(&pidfile) {
            break p.trim().to_owned();
        }
        assert!(std::time::Instant::now() < deadline, "the fake server never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(alive(&pid), "the fake server runs");
    child.kill().expect("kill -9 cutline");
    child.wait().expect("reap cutline");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive(&pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let survived = alive(&pid);
    if survived {
        let _ = std::process::Command::new("kill").args(["-9", &pid]).status();
    }
    assert!(!survived, "the local server outlived cutline");
    // The server was stopped, not failed: its log goes with it.
    let logs = tmp.path().join("cache/cutline/logs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let left = || std::fs::read_dir(&logs).map_or(0, Iterator::count);
    while left() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(left(), 0, "the stopped server's log was left in {}", logs.display());
}

/// A local server that crashes while loading (as a build with a broken
/// kernel does) is an error naming how it ended and the log it wrote, and
/// that log is still there to read when cutline has exited.
#[cfg(target_os = "linux")]
#[test]
fn a_local_server_that_crashes_while_starting_keeps_its_log() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let server = tmp.path().join("fake-llama-server");
    std::fs::write(
        &server,
        "#!/bin/sh\necho 'load_model: loading model' >&2\nkill -SEGV $$\n",
    )
    .expect("script");
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let model = tmp.path().join("model.gguf");
    std::fs::write(&model, "not a model").expect("model");
    let out = cutline()
        .args(["run", "extract-definitions-jsonl", "--provider", "local", "--no-record"])
        .args(["--prompts", "prompts", "--output", "json"])
        .env("CUTLINE_LLAMA_SERVER", &server)
        .env("CUTLINE_MODEL", &model)
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .output()
        .expect("run");
    let env: Value = serde_json::from_slice(&out.stdout).expect("the envelope");
    let message = env["error"]["message"].as_str().expect("an error message");
    let log = message
        .rsplit_once("see ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no log named in {message}"));
    assert!(
        message.contains("llama-server exited while starting (signal: 11 (SIGSEGV)"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(log).expect("the log named is kept"),
        "load_model: loading model\n"
    );
    assert_ne!(out.status.code(), Some(0));
}

/// The run path logs through `tracing` to stderr: nothing by default (a
/// script reading stderr sees only what went wrong), each request and its
/// finish at `CUTLINE_LOG=debug`, and never on stdout.
#[test]
fn the_run_path_logs_its_requests_at_debug_on_stderr_only() {
    let (_tmp, sessions) = demo_sessions();
    let run = |log: Option<&str>| {
        let mut c = cutline();
        c.args([
            "run",
            "extract-definitions-jsonl",
            "--provider",
            "replay",
            "--max-tokens",
            "64",
        ])
        .args([
            "--sessions",
            sessions.to_str().expect("utf-8 path"),
            "--prompts",
            "prompts",
        ])
        .args(["--output", "json"])
        .env_remove("CUTLINE_LOG");
        if let Some(l) = log {
            c.env("CUTLINE_LOG", l);
        }
        let out = c.output().expect("run");
        assert_eq!(out.status.code(), Some(0));
        let env: Value = serde_json::from_slice(&out.stdout).expect("stdout is the envelope alone");
        assert_eq!(env["ok"], json!(true));
        String::from_utf8(out.stderr).expect("utf-8")
    };
    assert_eq!(run(None), "");
    let debug = run(Some("debug"));
    let lines: Vec<&str> = debug.lines().collect();
    let request = lines
        .iter()
        .find(|l| l.contains("request"))
        .unwrap_or_else(|| panic!("{debug}"));
    assert!(request.starts_with("DEBUG"), "{request}");
    assert!(
        request.contains("provider=replay") && request.contains("max_tokens=Some(64)"),
        "{request}"
    );
    let response = lines
        .iter()
        .find(|l| l.contains("response"))
        .unwrap_or_else(|| panic!("{debug}"));
    assert!(response.contains("finish=Some(Length)"), "{response}");
    // A filter that names another module shows nothing of the run path.
    assert_eq!(run(Some("cutline::tui=debug")), "");
}
