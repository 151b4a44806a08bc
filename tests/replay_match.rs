//! Replay plays a recording only for the request it answered (issue 35,
//! item 1): after the template of a bundled prompt is changed to "ANSWER
//! ONLY WITH THE WORD BANANA", `run`, `eval --provider replay` and
//! `migrate --check --provider replay` refuse, naming the nearest
//! recording, what differs and the ways out, and write no session; the
//! unedited prompt still replays. Through the real binary, on a copy of the
//! bundled prompts and recordings.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// A copy of `prompts/` and `sessions/demo.jsonl` in a temporary directory.
fn copy() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("prompts")).unwrap();
    std::fs::create_dir(dir.path().join("sessions")).unwrap();
    for e in std::fs::read_dir(repo.join("prompts")).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dir.path().join("prompts").join(e.file_name())).unwrap();
        }
    }
    std::fs::copy(repo.join("sessions/demo.jsonl"), dir.path().join("sessions/demo.jsonl")).unwrap();
    dir
}

/// Replace the template (`prompt = """…"""`) of `id` with `template`.
fn set_template(dir: &Path, id: &str, template: &str) {
    let path = dir.join("prompts").join(format!("{id}.toml"));
    let s = std::fs::read_to_string(&path).unwrap();
    let start = s.find("prompt = \"\"\"").unwrap();
    let end = s[start + 12..].find("\"\"\"").unwrap() + start + 15;
    let edited = format!("{}prompt = \"\"\"\n{template}\"\"\"{}", &s[..start], &s[end..]);
    std::fs::write(path, edited).unwrap();
}

fn cutline(dir: &Path, args: &[&str]) -> (Value, i32) {
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .env("CUTLINE_LEARNED_FILE", "")
        .env_remove("CUTLINE_PROMPTS")
        .env_remove("CUTLINE_SESSIONS")
        .env("CUTLINE_CONFIG", dir.join("none.toml"))
        .current_dir(dir)
        .args(["--prompts", "prompts", "--sessions", "sessions", "--output", "json"])
        .args(args)
        .output()
        .unwrap();
    let env =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (env, out.status.code().unwrap())
}

fn sessions(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const WAY_OUT: &str = "run it on the local model (`cutline setup local` installs it, then `--provider local`), or play \
                       a recording on purpose with `cutline replay SESSION#N`";

/// The refusal every command gives for the BANANA template on the first
/// sample input.
fn banana_refusal() -> String {
    format!(
        "replay: no recording in sessions answers this request of prompt \"extract-definitions\": the nearest, demo#4 \
         (prompt \"extract-definitions\", same input), its user message differs at line 1, column 1: the recording \
         has \"Find every term that the text defines or…\", this request \"ANSWER ONLY WITH THE WORD BANANA\\n\"; \
         {WAY_OUT}"
    )
}

fn assert_refused(env: &Value, code: i32, message: &str) {
    assert_eq!(code, 5, "{env:#}");
    assert_eq!(env["ok"], false);
    assert_eq!(env["error"]["category"], "provider_error");
    assert_eq!(env["error"]["message"], message);
}

#[test]
fn banana_run_is_refused_and_the_unedited_prompt_replays() {
    let dir = copy();
    let (env, code) = cutline(
        dir.path(),
        &[
            "run",
            "extract-definitions",
            "--provider",
            "replay",
            "--max-tokens",
            "64",
            "--no-record",
        ],
    );
    assert_eq!(code, 0, "{env:#}");
    assert_eq!(env["data"]["finish_reason"], "length");
    set_template(dir.path(), "extract-definitions", "ANSWER ONLY WITH THE WORD BANANA\n");
    let before = sessions(dir.path());
    let (env, code) = cutline(dir.path(), &["run", "extract-definitions", "--provider", "replay"]);
    assert_refused(&env, code, &banana_refusal());
    assert_eq!(
        env["error"]["detail"]["replay"],
        serde_json::json!({
            "prompt_id": "extract-definitions",
            "nearest": "demo#4",
            "nearest_prompt": "extract-definitions",
            "same_input": true,
            "differs": "its user message differs at line 1, column 1: the recording has \"Find every term that the text defines or…\", this request \"ANSWER ONLY WITH THE WORD BANANA\\n\"",
        })
    );
    assert_eq!(sessions(dir.path()), before, "a refused replay records nothing");
}

#[test]
fn banana_eval_on_replay_is_refused_before_any_run() {
    let dir = copy();
    set_template(dir.path(), "extract-definitions", "ANSWER ONLY WITH THE WORD BANANA\n");
    let before = sessions(dir.path());
    let (env, code) = cutline(
        dir.path(),
        &[
            "eval",
            "--prompt",
            "extract-definitions",
            "--provider",
            "replay",
            "--max-tokens",
            "64,128,256",
        ],
    );
    assert_refused(&env, code, &format!("input \"photosynthesis\": {}", banana_refusal()));
    assert_eq!(sessions(dir.path()), before);
}

#[test]
fn banana_migrate_check_on_replay_is_refused_before_any_run() {
    let dir = copy();
    set_template(dir.path(), "extract-definitions", "ANSWER ONLY WITH THE WORD BANANA\n");
    let before = sessions(dir.path());
    let (env, code) = cutline(
        dir.path(),
        &["migrate", "extract-definitions", "--check", "--provider", "replay"],
    );
    assert_refused(&env, code, &banana_refusal());
    assert_eq!(env["error"]["detail"]["check"]["replay"]["nearest"], "demo#4");
    assert_eq!(sessions(dir.path()), before);
}

#[test]
fn another_system_message_or_temperature_is_named() {
    let dir = copy();
    let path = dir.path().join("prompts/agent-kg-extract-jsonl.toml");
    let s = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, s.replacen("You read a text", "You skim a text", 1)).unwrap();
    let (env, code) = cutline(dir.path(), &["run", "agent-kg-extract-jsonl", "--provider", "replay"]);
    assert_eq!(code, 5, "{env:#}");
    assert_eq!(
        env["error"]["detail"]["replay"]["differs"],
        "its system message differs at line 1, column 44: the recording has \"read a text and write down the things \
         it…\", this request \"skim a text and write down the things it…\""
    );
    let (env, code) = cutline(
        dir.path(),
        &[
            "run",
            "extract-definitions",
            "--provider",
            "replay",
            "--temperature",
            "0.5",
        ],
    );
    assert_eq!(code, 5, "{env:#}");
    assert_eq!(
        env["error"]["detail"]["replay"]["differs"],
        "its temperature differs: the recording had 0, this request 0.5"
    );
}

#[test]
fn a_prompt_never_recorded_says_so() {
    let dir = copy();
    let (env, code) = cutline(
        dir.path(),
        &[
            "run",
            "extract-definitions",
            "--provider",
            "replay",
            "--var",
            "text=A quark is a particle.",
        ],
    );
    assert_eq!(code, 5, "{env:#}");
    assert_eq!(env["error"]["detail"]["replay"]["same_input"], false);
    let empty = tempfile::tempdir().unwrap();
    std::fs::create_dir(empty.path().join("sessions")).unwrap();
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .env("CUTLINE_LEARNED_FILE", "")
        .env("CUTLINE_CONFIG", empty.path().join("none.toml"))
        .current_dir(empty.path())
        .args(["--sessions", "sessions", "--output", "json", "--prompts"])
        .arg(dir.path().join("prompts"))
        .args(["run", "extract-topics", "--provider", "replay"])
        .output()
        .unwrap();
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(
        env["error"]["message"],
        format!(
            "replay: no recording in sessions answers this request: there is no recording of prompt \
             \"extract-topics\" nor of any prompt with these variables; {WAY_OUT}"
        )
    );
}

#[test]
fn an_input_never_recorded_names_the_input_and_the_nearest_recording() {
    let dir = copy();
    std::fs::write(
        dir.path().join("fresh.jsonl"),
        "{\"id\": \"fresh\", \"text\": \"A quark is an elementary particle.\"}\n",
    )
    .unwrap();
    let (env, code) = cutline(
        dir.path(),
        &[
            "eval",
            "--prompt",
            "extract-definitions",
            "--provider",
            "replay",
            "--max-tokens",
            "64",
            "--inputs",
            "fresh.jsonl",
        ],
    );
    assert_eq!(code, 5, "{env:#}");
    let msg = env["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "input \"fresh\": replay: no recording in sessions answers this request of prompt \"extract-definitions\": \
             the nearest, demo#14 (prompt \"extract-definitions\", another input), its user message differs at line "
        ),
        "{msg}"
    );
    assert!(msg.ends_with(WAY_OUT), "{msg}");
    assert_eq!(env["error"]["detail"]["replay"]["same_input"], false);
}
