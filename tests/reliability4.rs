//! Reliability round 4 (issue 32): nothing lost, nothing paid for twice.
//! The rules behind each case, on the library's own writers and readers.

use std::path::{Path, PathBuf};

use cutline::eval::batch::{Answers, Manifest};
use cutline::llm::Transcript;
use cutline::llm::batch::Window;

/// A temp dir with an outside file holding `text` and a link to it at
/// `name`; returns the dir, the link and the outside file.
fn linked(name: &str, text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, text).unwrap();
    let link = dir.path().join(name);
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    (dir, link, outside)
}

fn refusal(link: &Path, to: &Path) -> String {
    format!(
        "{}: a symbolic link to {to}: cutline writes only regular files, never through a link nor over one \
         (edit {to} itself, or replace the link with a file)",
        link.display(),
        to = to.display()
    )
}

fn still_linked(link: &Path, outside: &Path, text: &str) {
    assert!(std::fs::symlink_metadata(link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(outside).unwrap(), text);
}

/// Case 1: an answers file that is a link to an outside file whose last
/// line has no newline (so reads as "torn") is refused before it is read:
/// the outside file keeps its last line and gets no answer appended.
#[test]
fn a_linked_answers_file_is_refused_and_the_file_it_points_to_is_untouched() {
    let text = "precious line one\nprecious last line without newline";
    let (_dir, link, outside) = linked("s.answers.jsonl", text);
    let e = Answers::open(&link).unwrap_err();
    assert_eq!(e.to_string(), refusal(&link, &outside));
    still_linked(&link, &outside, text);
    // A link put there after the file was opened is refused at the append.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.answers.jsonl");
    let mut answers = Answers::open(&path).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let e = answers.keep("k", Transcript::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        refusal(&path, &outside).split_once(": ").unwrap().1,
        "the io error says why; the caller names the file"
    );
    still_linked(&path, &outside, text);
}

/// Case 1's rule on every other writer: the manifest, a replaced file
/// (prompts, reports, `--batch-file`, the workbench's memory), a session
/// opened to append.
#[test]
fn no_writer_writes_through_or_over_a_link() {
    let text = "{\"not\": \"yours\"}\n";
    let (_d1, link, outside) = linked("s.batches.json", text);
    let e = Manifest::new("s", "p", "m", "api", Window::Day)
        .save(&link)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: cannot write the batch manifest: {}",
            link.display(),
            refusal(&link, &outside).split_once(": ").unwrap().1
        )
    );
    still_linked(&link, &outside, text);

    let (d2, link, outside) = linked("report.html", text);
    let e = cutline::store::write_atomic(&link, b"<html>").unwrap_err();
    assert_eq!(e.to_string(), refusal(&link, &outside).split_once(": ").unwrap().1);
    still_linked(&link, &outside, text);
    assert_eq!(std::fs::read_dir(d2.path()).unwrap().count(), 2, "no temp file left");

    let (_d3, link, outside) = linked("s.jsonl", text);
    let e = cutline::session::Recorder::open(&link).unwrap_err();
    assert_eq!(e.to_string(), refusal(&link, &outside).split_once(": ").unwrap().1);
    still_linked(&link, &outside, text);
}

/// Case 9: a manifest edited so that two requests' run keys are swapped
/// would record each answer under the other run. Each custom id is a hash
/// of its run key, so the mismatch is caught when the manifest loads, and
/// nothing is recorded from it.
#[test]
fn a_manifest_whose_run_keys_were_swapped_is_refused() {
    use cutline::eval::batch::{Entry, EntryState};
    use cutline::llm::batch::custom_id;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.batches.json");
    let mut m = Manifest::new("s", "p", "m", "api", Window::Day);
    m.batches.push(Entry {
        local: "b1".into(),
        round: 0,
        state: EntryState::Submitted,
        created_ms: 1,
        tag: String::new(),
        batch: Some(cutline::llm::batch::Submitted::whole("batch_1")),
        requests: vec![(custom_id("k1"), "k1".into()), (custom_id("k2"), "k2".into())],
        status: None,
    });
    m.save(&path).unwrap();
    assert!(Manifest::load(&path).unwrap().is_some(), "as written, it loads");
    m.batches[0].requests = vec![(custom_id("k1"), "k2".into()), (custom_id("k2"), "k1".into())];
    m.save(&path).unwrap();
    let e = Manifest::load(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: batch b1: custom id {} is not the one of run key \"k2\" (the manifest was edited): nothing is \
             recorded from it; put the manifest back as cutline wrote it",
            path.display(),
            custom_id("k1")
        )
    );
}

/// The child side of the learned-file tests: with [`LEARN_CHILD`] set to
/// `FILE|PREFIX|N`, learn N facts (models `PREFIX-0`…) into FILE, as a
/// process of its own would.
const LEARN_CHILD: &str = "CUTLINE_TEST_LEARN_CHILD";

fn learn_as_child() -> bool {
    let Ok(spec) = std::env::var(LEARN_CHILD) else {
        return false;
    };
    let mut parts = spec.split('|');
    let (file, prefix, n) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    cutline::llm::learned::persist_to(PathBuf::from(file));
    for j in 0..n.parse::<usize>().unwrap() {
        let delta = cutline::llm::profile::Overrides {
            temperature: Some(false),
            ..Default::default()
        };
        let evidence = cutline::llm::learned::Evidence {
            fact: "temperature: not accepted".into(),
            source: cutline::llm::learned::Source::Refusal,
            status: Some(400),
            message: "no".into(),
            at_ms: 1,
        };
        cutline::llm::learned::learn("http://h/v1", &format!("{prefix}-{j}"), &delta, evidence);
    }
    true
}

fn spawn_learner(test: &str, file: &Path, prefix: &str, n: usize) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1"])
        .env(LEARN_CHILD, format!("{}|{prefix}|{n}", file.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn learned_models(file: &Path) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let mut m: Vec<String> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["model"].as_str().unwrap().to_owned())
        .collect();
    m.sort();
    m
}

/// Case 19: 16 processes learning at once left 13–15 of 16 entries: each
/// replaced the file with its own merge. The merge and replace happen
/// under a lock file, so every process's lessons are kept.
#[test]
fn processes_learning_at_once_lose_no_lesson() {
    // The child learns (see `learn_as_child`); the parent checks.
    if !learn_as_child() {
        processes_learning_at_once_lose_no_lesson_parent();
    }
}

fn processes_learning_at_once_lose_no_lesson_parent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("models.json");
    let children: Vec<_> = (0..16)
        .map(|i| {
            spawn_learner(
                "processes_learning_at_once_lose_no_lesson",
                &file,
                &format!("m{i:02}"),
                4,
            )
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let mut want: Vec<String> = (0..16)
        .flat_map(|i| (0..4).map(move |j| format!("m{i:02}-{j}")))
        .collect();
    want.sort();
    assert_eq!(learned_models(&file), want);
}

/// Case 20: a learned file a newer cutline wrote (format 2) was replaced
/// by this one's format 1, dropping what the newer one knew. It is never
/// written over: learning leaves it byte for byte, and `models --forget`
/// fails naming it (exit 4) while `models` warns.
#[test]
fn a_learned_file_of_a_newer_cutline_is_never_written_over() {
    // The child learns (see `learn_as_child`); the parent checks.
    if !learn_as_child() {
        a_learned_file_of_a_newer_cutline_is_never_written_over_parent();
    }
}

fn a_learned_file_of_a_newer_cutline_is_never_written_over_parent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("models.json");
    let newer = "{\"version\": 2, \"models\": [{\"base_url\": \"http://h/v1\", \"model\": \"x\", \"shiny\": true}]}\n";
    std::fs::write(&file, newer).unwrap();
    let mut child = spawn_learner("a_learned_file_of_a_newer_cutline_is_never_written_over", &file, "m", 2);
    assert!(child.wait().unwrap().success());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), newer);
    let words = format!(
        "{}: written by a newer cutline (format 2; this one reads 1): not read, and never written over; upgrade \
         cutline or set CUTLINE_LEARNED_FILE to another file",
        file.display()
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cutline"))
        .args(["models", "--forget", "x", "--output", "json"])
        .env("CUTLINE_LEARNED_FILE", &file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let env: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["error"]["message"], words.as_str());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), newer);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cutline"))
        .args(["models", "--output", "json"])
        .env("CUTLINE_LEARNED_FILE", &file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let env: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["warnings"], serde_json::json!([words]));
}

/// Case 29: `models --forget URL/` (a trailing slash) forgot nothing and
/// reported success. A base URL matches with or without its trailing
/// slash; a name that matches nothing is said to.
#[test]
fn forget_matches_a_base_url_with_its_trailing_slash() {
    // The child learns (see `learn_as_child`); the parent checks.
    if !learn_as_child() {
        forget_matches_a_base_url_with_its_trailing_slash_parent();
    }
}

fn forget_matches_a_base_url_with_its_trailing_slash_parent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("models.json");
    let mut child = spawn_learner("forget_matches_a_base_url_with_its_trailing_slash", &file, "m", 2);
    assert!(child.wait().unwrap().success());
    assert_eq!(learned_models(&file), ["m-0", "m-1"]);
    let forget = |what: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cutline"))
            .args(["models", "--forget", what, "--output", "json"])
            .env("CUTLINE_LEARNED_FILE", &file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let env = forget("http://nowhere/v1");
    assert_eq!(env["data"]["forgot"], 0);
    assert_eq!(
        env["warnings"],
        serde_json::json!([
            "nothing learned is of model or base URL \"http://nowhere/v1\": nothing forgotten (`cutline models` lists what is known)"
        ])
    );
    let env = forget("http://h/v1/");
    assert_eq!(env["data"]["forgot"], 2);
    assert_eq!(learned_models(&file), Vec::<String>::new());
}

/// Case 28: a gold file that is a FIFO was skipped without a word, so the
/// eval scored nothing against it. A gold path that exists but is not a
/// regular file is an `input_error` naming it (at once, never a hang).
#[test]
fn a_fifo_gold_file_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let gold = tmp.path().join("gold");
    std::fs::create_dir(&gold).unwrap();
    let fifo = gold.join("extract-definitions.jsonl");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cutline"))
        .args([
            "eval",
            "--prompt",
            "extract-definitions",
            "--provider",
            "replay",
            "--output",
            "json",
        ])
        .args(["--prompts", "prompts", "--sessions"])
        .arg(tmp.path().join("sessions"))
        .arg("--gold")
        .arg(&gold)
        .env("CUTLINE_CONFIG", "/nonexistent/cutline.toml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stdout));
    let env: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        env["error"]["message"],
        format!(
            "{}: not a regular file (a device, pipe or directory is never read)",
            fifo.display()
        )
    );
}

/// Case 18: a manifest past the file read cap (about 600,000 runs at the
/// default 64 MiB) was written, then refused on every later command, so
/// its batches were never collected. What cutline writes it reads back:
/// here under a 1 MiB cap, in a process of its own.
#[test]
fn a_manifest_past_the_read_cap_is_read_back() {
    use cutline::eval::batch::{Entry, EntryState};
    use cutline::llm::batch::custom_id;
    const CHILD: &str = "CUTLINE_TEST_BIG_MANIFEST";
    // The child (under a 1 MiB cap) writes and reads; the parent checks it ran.
    match std::env::var(CHILD) {
        Ok(dir) => {
            let path = Path::new(&dir).join("s.batches.json");
            let mut m = Manifest::new("s", "p", "m", "api", Window::Day);
            let requests: Vec<(String, String)> = (0..20_000)
                .map(|i| {
                    let key = format!("prompt@0123456789abcdef|input-{i}|none|p/m|None");
                    (custom_id(&key), key)
                })
                .collect();
            m.batches.push(Entry {
                local: "b1".into(),
                round: 0,
                state: EntryState::Submitted,
                created_ms: 1,
                tag: String::new(),
                batch: Some(cutline::llm::batch::Submitted::whole("batch_1")),
                requests,
                status: None,
            });
            m.save(&path).unwrap();
            assert!(std::fs::metadata(&path).unwrap().len() > 1 << 20, "past the cap");
            assert_eq!(Manifest::load(&path).unwrap(), Some(m));
        }
        Err(_) => {
            let dir = tempfile::tempdir().unwrap();
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "a_manifest_past_the_read_cap_is_read_back",
                    "--exact",
                    "--test-threads=1",
                ])
                .env(CHILD, dir.path())
                .env("CUTLINE_MAX_FILE_MIB", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
            assert!(dir.path().join("s.batches.json").is_file(), "the child ran");
        }
    }
}

/// Case 20's rule for the manifest: one a newer cutline wrote is refused,
/// naming it, never read or saved over.
#[test]
fn a_manifest_of_a_newer_cutline_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.batches.json");
    let mut m = Manifest::new("s", "p", "m", "api", Window::Day);
    m.version = 2;
    m.save(&path).unwrap();
    assert_eq!(
        Manifest::load(&path).unwrap_err().to_string(),
        format!(
            "{}: written by a newer cutline (manifest format 2; this one reads 1): not read, and never written \
             over; upgrade cutline or use another --session",
            path.display()
        )
    );
}

/// Case 12: Anthropic's `temperature: range: 0..1` (a value out of range)
/// was learned as "temperature: not accepted", so the model never got a
/// temperature again. A bound refuses the value, not the field: nothing
/// is learned. The field's own refusal is still learned.
#[test]
fn a_value_out_of_range_is_not_a_refused_field() {
    use cutline::llm::adapt::lesson;
    use cutline::llm::kind::Kind;
    use cutline::llm::profile::lookup;
    let p = lookup(Kind::Anthropic, "claude-x");
    let body = serde_json::json!({"model": "claude-x", "temperature": 1.5, "max_tokens": 64, "messages": []});
    let url = "http://h/v1/messages";
    for bound in [
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"temperature: range: 0..1"}}"#,
        "temperature must be between 0 and 1",
        "'temperature' must be <= 1",
        "temperature: Input should be in [0, 1]",
    ] {
        assert_eq!(lesson(Some(400), bound, &body, url, &p), None, "{bound}");
    }
    let refused = "`temperature` is deprecated for this model.";
    let l = lesson(Some(400), refused, &body, url, &p).expect("a field refused");
    assert_eq!(l.fact, "temperature: not accepted");
    let only_default = "Unsupported value: 'temperature' does not support 1.5 with this model. Only the default (1) value is supported.";
    assert_eq!(
        lesson(Some(400), only_default, &body, url, &p).map(|l| l.fact),
        Some("temperature: not accepted".to_owned())
    );
}

/// Case 13: one prompt's schema refused by OpenAI (a keyword it does not
/// take) taught "no native schema" for the whole model, and every other
/// prompt lost structured output. A refusal that names a key inside the
/// schema sent is this schema's: nothing is learned of the model. One
/// that refuses `response_format` itself still is.
#[test]
fn a_refused_schema_teaches_nothing_of_the_model() {
    use cutline::llm::adapt::lesson;
    use cutline::llm::kind::Kind;
    use cutline::llm::profile::lookup;
    let p = lookup(Kind::Openai, "gpt-4.1-mini");
    let url = "http://h/v1/chat/completions";
    let body = serde_json::json!({"model": "gpt-4.1-mini", "messages": [], "response_format": {"type": "json_schema",
        "json_schema": {"name": "Fruit_list", "strict": true, "schema": {"type": "object",
            "properties": {"fruit": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
            "required": ["fruit"], "additionalProperties": false}}}});
    let this_schema = r#"{"error": {"message": "Invalid schema for response_format 'Fruit_list': In context=('properties', 'fruit'), 'minItems' is not permitted.", "type": "invalid_request_error", "param": "response_format", "code": null}}"#;
    assert_eq!(lesson(Some(400), this_schema, &body, url, &p), None);
    let the_model = r#"{"error": {"message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", "type": "invalid_request_error", "param": "response_format", "code": null}}"#;
    assert_eq!(
        lesson(Some(400), the_model, &body, url, &p).map(|l| l.fact),
        Some("structured output: no native schema".to_owned())
    );
}
