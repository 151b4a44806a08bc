//! What an agent reads (issue 35, item 8): an unknown provider is a usage
//! error (exit 2), not a provider that failed; a provider's failure is said
//! in its own words, without cutline's internal kind label; `budget` never
//! recommends a limit of 0 and gives the same answer after other runs of
//! the prompt were recorded.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn cutline(dir: &Path, args: &[&str]) -> (Value, i32) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .env("CUTLINE_LEARNED_FILE", "")
        .env_remove("CUTLINE_SESSIONS")
        .env("CUTLINE_CONFIG", dir.join("cutline.toml"))
        .current_dir(dir)
        .arg("--prompts")
        .arg(repo.join("prompts"))
        .args(["--sessions", "sessions", "--output", "json"])
        .args(args)
        .output()
        .unwrap();
    let env = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
    (env, out.status.code().unwrap())
}

fn with_demo() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sessions")).unwrap();
    std::fs::copy(repo.join("sessions/demo.jsonl"), dir.path().join("sessions/demo.jsonl")).unwrap();
    std::fs::write(dir.path().join("cutline.toml"), "").unwrap();
    dir
}

#[test]
fn an_unknown_provider_is_a_usage_error() {
    let dir = with_demo();
    let want =
        "unknown provider \"nosuch\": use `local`, `replay` or one configured in cutline.toml (configured: none)";
    for args in [
        &["run", "extract-definitions", "--provider", "nosuch"][..],
        &[
            "eval",
            "--prompt",
            "extract-definitions",
            "--provider",
            "nosuch",
            "--max-tokens",
            "64",
        ],
        &["probe", "nosuch"],
    ] {
        let (env, code) = cutline(dir.path(), args);
        assert_eq!(code, 2, "{args:?}: {env:#}");
        assert_eq!(env["error"]["category"], "usage");
        assert_eq!(env["error"]["message"], want);
    }
}

#[test]
fn a_provider_failure_is_said_without_an_internal_label() {
    let dir = with_demo();
    std::fs::write(
        dir.path().join("cutline.toml"),
        "[[provider]]\nname = \"down\"\nkind = \"openai-compatible\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:9\"\n\
         connect_timeout_secs = 2\n",
    )
    .unwrap();
    let (env, code) = cutline(
        dir.path(),
        &["run", "extract-definitions", "--provider", "down", "--no-record"],
    );
    assert_eq!(code, 5, "{env:#}");
    assert_eq!(env["error"]["category"], "provider_error");
    let msg = env["error"]["message"].as_str().unwrap();
    assert!(!msg.starts_with("Connect"), "{msg}");
    assert!(!msg.contains("BadRequest") && !msg.contains("Connect:"), "{msg}");
}

#[test]
fn budget_never_recommends_zero_and_ignores_other_recordings() {
    let dir = with_demo();
    // Every extract-topics answer loops as an array strict JSON never
    // closes: no limit keeps a share of nothing, so nothing is recommended.
    let (env, code) = cutline(dir.path(), &["budget", "extract-topics", "--provider", "replay"]);
    assert_eq!(code, 4, "{env:#}");
    assert_eq!(
        env["error"]["message"],
        "no input has an uncut answer to budget from (see the warnings)"
    );
    assert!(
        env["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().ends_with(
                "gives the consumer no items (strict JSON keeps nothing), so no limit keeps a share of them"
            )),
        "{env:#}"
    );
    let (first, code) = cutline(dir.path(), &["budget", "extract-definitions", "--provider", "replay"]);
    assert_eq!(code, 0, "{first:#}");
    assert!(first["data"]["recommended_max_tokens"].as_u64().unwrap() > 0);
    // Replays cut at 64 tokens recorded into the sessions: the budget still
    // reads the longest recordings.
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
        ],
    );
    assert_eq!(code, 0, "{env:#}");
    let (again, code) = cutline(dir.path(), &["budget", "extract-definitions", "--provider", "replay"]);
    assert_eq!(code, 0, "{again:#}");
    assert_eq!(again["data"], first["data"]);
}
