//! The first-hour task on a fresh clone, offline (issue 35, item 2):
//! migrate one bundled prompt, run the original and the migration at three
//! limits on `replay`, write the report to share; `migrate --check
//! --provider replay` decides from recordings. The migrations of the bundled
//! prompts, as `cutline migrate` writes them by default, were recorded on
//! Gemma 3 270M into `sessions/migrations.jsonl`; a test here fails when
//! `migrate` would render one differently, since its recordings would then
//! answer another request.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

const JSON_PROMPTS: [&str; 6] = [
    "agent-kg-extract",
    "extract-definitions",
    "extract-relationships",
    "extract-rows",
    "extract-topics",
    "extract-with-ontologies",
];

/// Every sample input of every bundled JSON prompt's default migration is
/// answered by a bundled recording of the migration itself.
#[test]
fn every_bundled_migration_replays_from_its_own_recordings() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for id in JSON_PROMPTS {
        let src = cutline::store::resolve(id, &repo.join("prompts")).unwrap();
        let m = cutline::prompt::migrate(&src, Some(&format!("{id}-jsonl-2"))).unwrap();
        for input in &m.config.inputs {
            let spec = cutline::run::Spec::new(m.config.clone(), input.vars.clone());
            let target = cutline::run::target::replay_for(&spec, &repo.join("sessions"))
                .unwrap_or_else(|e| panic!("{id} on {}: {e}", input.name));
            let from = target.provider.info().base_url.unwrap_or_default();
            assert!(from.starts_with("migrations#"), "{id} on {}: {from}", input.name);
        }
    }
}

/// A copy of the repository's prompts and sessions: a fresh clone's.
fn clone() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    for sub in ["prompts", "prompts/gold", "sessions"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for e in std::fs::read_dir(repo.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), dir.path().join(sub).join(e.file_name())).unwrap();
            }
        }
    }
    dir
}

fn cutline(dir: &Path, args: &[&str]) -> (Value, i32) {
    let out = Command::cargo_bin("cutline")
        .unwrap()
        .env("CUTLINE_LEARNED_FILE", "")
        .env_remove("CUTLINE_PROMPTS")
        .env_remove("CUTLINE_SESSIONS")
        .env("CUTLINE_CONFIG", dir.join("none.toml"))
        .current_dir(dir)
        .args(["--output", "json"])
        .args(args)
        .output()
        .unwrap();
    let env = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
    (env, out.status.code().unwrap())
}

#[test]
fn migrate_run_both_at_three_limits_and_share_a_report_offline() {
    let dir = clone();
    let d = dir.path();
    let (env, code) = cutline(
        d,
        &[
            "migrate",
            "extract-definitions",
            "--write",
            "prompts/extract-definitions-jsonl-2.toml",
        ],
    );
    assert_eq!(code, 0, "{env:#}");
    assert_eq!(env["data"]["id"], "extract-definitions-jsonl-2");
    assert_eq!(env["data"]["replaced"], Value::Null);

    let (env, code) = cutline(
        d,
        &[
            "eval",
            "--prompt",
            "extract-definitions-jsonl-2",
            "--provider",
            "replay",
            "--max-tokens",
            "64,128,256",
        ],
    );
    assert_eq!(code, 0, "{env:#}");
    let rows = env["data"]["summary"].as_array().unwrap();
    let mut cells: Vec<(String, u64, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["prompt"].as_str().unwrap().to_owned(),
                r["max_tokens"].as_u64().unwrap(),
                r["runs"].as_u64().unwrap(),
            )
        })
        .collect();
    cells.sort();
    let want: Vec<(String, u64, u64)> = ["extract-definitions", "extract-definitions-jsonl-2"]
        .iter()
        .flat_map(|p| [64, 128, 256].map(|l| ((*p).to_owned(), l, 3)))
        .collect();
    assert_eq!(cells, want, "both prompts, three limits, every sample input");
    assert_eq!(env["data"]["totals"]["failed"], 0, "{env:#}");

    let session = env["data"]["session"]["id"].as_str().unwrap().to_owned();
    let (env, code) = cutline(d, &["report", &session, "--out", "report.html"]);
    assert_eq!(code, 0, "{env:#}");
    let page = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert!(page.contains("extract-definitions-jsonl-2"));
}

#[test]
fn migrate_check_on_replay_decides_from_the_recordings() {
    let dir = clone();
    let (env, code) = cutline(
        dir.path(),
        &[
            "migrate",
            "extract-definitions",
            "--check",
            "--provider",
            "replay",
            "--input",
            "photosynthesis",
        ],
    );
    assert_ne!(code, 5, "{env:#}");
    let check = if code == 0 {
        &env["data"]["check"]
    } else {
        &env["error"]["detail"]["check"]
    };
    let input = &check["inputs"][0];
    assert_eq!(input["finish"], serde_json::json!(["stop", "stop"]), "{input:#}");
    assert_eq!(input["verdict"], if code == 0 { "same" } else { "different" });
}
