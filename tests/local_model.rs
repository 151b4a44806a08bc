//! The real local model: llama-server with Gemma 3 270M, installed by the
//! README's test command. These tests show the claim cutline exists for —
//! a JSON array cut by the token limit loses everything, its JSONL twin keeps
//! the lines it finished — on a real model, plus structured output through
//! llama-server and replay fidelity.
//!
//! Skipped (with the reason printed) when the model is not installed, unless
//! `CUTLINE_REQUIRE_LOCAL` is set, as `scripts/test.sh` does.

use std::path::Path;

use assert_cmd::Command;
use serde_json::{Map, Value, json};

use cutline::llm::FinishReason;
use cutline::llm::params::Structured;
use cutline::llm::registry::{Choice, Registry, Target};
use cutline::run::{Analysis, Spec};

/// The model, one test at a time: on 2 cores, servers started side by side
/// take turns on the CPU mid-token and a call then outlasts its timeouts
/// (three at once took 5½ minutes where one takes 7 s). `None` (with the
/// reason printed) when the model is not installed, unless
/// `CUTLINE_REQUIRE_LOCAL` is set.
fn model_or_skip() -> Option<std::sync::MutexGuard<'static, ()>> {
    static MODEL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    match cutline::llm::local::installed() {
        Ok(_) => Some(MODEL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)),
        Err(e) => {
            assert!(
                std::env::var_os("CUTLINE_REQUIRE_LOCAL").is_none(),
                "CUTLINE_REQUIRE_LOCAL is set but {e}"
            );
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// An async test body run while the caller holds the model (a sync test, so
/// the guard is never held across an await).
fn block_on<F: std::future::Future>(body: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(body)
}

fn run_json(args: &[&str], sessions: &Path) -> Value {
    let out = Command::cargo_bin("cutline")
        .expect("binary")
        .args(args)
        .arg("--sessions")
        .arg(sessions)
        .args(["--output", "json"])
        .output()
        .expect("run");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let env: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(
        env["ok"],
        true,
        "{env}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    env["data"].clone()
}

/// The headline: at 64 tokens the JSON array fails strict parsing (salvage
/// still finds its complete elements), the JSONL twin keeps its lines; both
/// runs are recorded and replay from the session.
#[test]
fn json_array_lost_jsonl_kept_at_64_tokens() {
    let Some(_model) = model_or_skip() else {
        return; // skip: the local model is not installed (model_or_skip said so)
    };
    let dir = tempfile::tempdir().expect("tmp");
    let json = run_json(
        &["run", "extract-definitions", "--max-tokens", "64", "--session", "s"],
        dir.path(),
    );
    assert_eq!(json["finish_reason"], "length", "{json}");
    assert_eq!(json["usage"]["completion_tokens"], 64);
    let a = &json["analysis"];
    assert_eq!(a["status"], "invalid_json", "{a}");
    assert_eq!(a["error"]["truncated"], true, "{a}");
    assert_eq!(a["items"], json!([]));
    let salvaged = a["salvaged"].as_array().expect("salvaged");

    let jsonl = run_json(
        &[
            "run",
            "extract-definitions-jsonl",
            "--max-tokens",
            "64",
            "--session",
            "s",
        ],
        dir.path(),
    );
    assert_eq!(jsonl["finish_reason"], "length", "{jsonl}");
    let items = jsonl["analysis"]["items"].as_array().expect("items");
    assert!(items.len() >= 2, "the JSONL twin kept {} items: {jsonl}", items.len());
    // Every kept line is a schema-valid object with both fields.
    for i in items {
        assert!(i["entity"].is_string() && i["definition"].is_string(), "{i}");
    }
    // The same complete items a salvage finds are what JSONL keeps natively.
    assert!(salvaged.len() <= items.len() + 1, "salvaged {salvaged:?} vs {items:?}");

    // Both runs are in one session, and replay cuts them further for free.
    let sessions = run_json(&["sessions"], dir.path());
    let runs = sessions["sessions"][0]["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let replayed = run_json(&["replay", "s#2", "--max-tokens", "20"], dir.path());
    assert_eq!(replayed["finish_reason"], "length");
    assert_eq!(replayed["usage"]["completion_tokens"], 20);
    let full_text = jsonl["text"].as_str().expect("text");
    let cut_text = replayed["text"].as_str().expect("text");
    assert!(full_text.starts_with(cut_text) && cut_text.len() < full_text.len());
}

fn spec(id: &str, max_tokens: Option<u32>) -> Spec {
    let p = cutline::store::resolve(id, Path::new("prompts")).expect("bundled prompt loads");
    let vars = cutline::prompt::input_vars(&p, None).expect("sample input");
    Spec::new(p, vars).limit(max_tokens)
}

/// The local model's target, as every caller resolves it.
fn local() -> Target {
    Registry::default().target(&Choice::Local, None).expect("local target")
}

/// Stops this process's llama-server when the test ends, pass or fail.
struct StopLocal;

impl Drop for StopLocal {
    fn drop(&mut self) {
        cutline::llm::local::shutdown();
    }
}

/// One server for the library-level checks, run in sequence: two tests
/// sharing the process-wide server would stop it under each other.
#[test]
fn local_provider_replay_fidelity_and_structured_output() {
    let Some(_model) = model_or_skip() else {
        return; // skip: the local model is not installed (model_or_skip said so)
    };
    let _stop = StopLocal;
    block_on(async {
        replay_at_n_equals_a_live_run_at_n().await;
        structured_output_through_llama_server_returns_parsed().await;
    });
}

/// Greedy decoding: a run at N tokens is exactly the first N tokens of the
/// unlimited run, which is what the replay provider serves.
async fn replay_at_n_equals_a_live_run_at_n() {
    let local = local();
    let full = cutline::run::execute(&local, &spec("extract-topics-jsonl", Some(200)), None, |_, _| {})
        .await
        .expect("run");
    let t = full.record.transcript();
    assert!(t.has_token_pieces(), "llama-server streams one token per event");
    let replay = Target::replay(cutline::llm::replay::Replay {
        source: "test".into(),
        transcript: t,
        original: local.provider.info(),
        // The transcript is this test's own run: no recorded request to check.
        asked: None,
    });
    for n in [8, 33] {
        let live = cutline::run::execute(&local, &spec("extract-topics-jsonl", Some(n)), None, |_, _| {})
            .await
            .expect("live");
        let played = cutline::run::execute(&replay, &spec("extract-topics-jsonl", Some(n)), None, |_, _| {})
            .await
            .expect("replay");
        assert_eq!(live.record.finish, FinishReason::Length);
        assert_eq!(played.record.finish, FinishReason::Length);
        assert_eq!(played.record.text, live.record.text, "at {n} tokens");
        assert_eq!(played.analysis, live.analysis, "at {n} tokens");
    }
}

/// Structured output through llama-server: the schema goes on the wire
/// (grammar-constrained decoding) and the result carries `parsed`.
async fn structured_output_through_llama_server_returns_parsed() {
    let text = r#"
id = "capital"
response-type = "json"
prompt = """Question: What is the capital of France?
Answer as JSON.
"""
schema = '''{"type": "object", "properties": {"city": {"type": "string", "maxLength": 24}}, "required": ["city"], "additionalProperties": false}'''
"#;
    let (p, _) = cutline::prompt::load_toml("capital.toml", text).expect("loads");
    let local = local();
    let mut s = Spec::new(p, Map::new()).limit(Some(48));
    s.cli.structured = Some(Structured::Native);
    let out = cutline::run::execute(&local, &s, None, |_, _| {}).await.expect("run");
    assert_eq!(out.record.structured_path.as_str(), "native");
    assert!(
        out.structured_error.is_none(),
        "{:?}\n{}",
        out.structured_error,
        out.record.text
    );
    let parsed = out.parsed.expect("parsed");
    assert!(parsed["city"].is_string(), "{parsed}");
    assert!(matches!(out.analysis, Analysis::Json(_)));
}

/// `migrate --check` on the real model: the original prompt and its
/// migration run on the same sample input and limit, both recorded, and the
/// verdict agrees with the item comparison it reports.
#[test]
fn migrate_check_runs_both_prompts_on_the_real_model() {
    let Some(_model) = model_or_skip() else {
        return; // skip: the local model is not installed (model_or_skip said so)
    };
    let sessions = tempfile::tempdir().expect("tempdir");
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let out = Command::cargo_bin("cutline")
        .expect("binary")
        .arg("--prompts")
        .arg(&prompts)
        .arg("--sessions")
        .arg(sessions.path())
        .args(["--output", "json", "migrate", "extract-definitions", "--check"])
        .args([
            "--input",
            "photosynthesis",
            "--max-tokens",
            "512",
            "--provider",
            "local",
        ])
        .output()
        .expect("run");
    let env: Value = serde_json::from_slice(&out.stdout).expect("envelope");
    let check = if env["ok"] == true {
        env["data"]["check"].clone()
    } else {
        assert_eq!(env["error"]["category"], "check_failed", "{env}");
        assert_eq!(out.status.code(), Some(8));
        env["error"]["detail"]["check"].clone()
    };
    let input = &check["inputs"][0];
    let total = &input["report"]["total"];
    let same = total["only_a"] == 0 && total["only_b"] == 0;
    // The photosynthesis input finishes well inside 512 tokens in both forms.
    assert_eq!(input["finish"], json!(["stop", "stop"]), "{input}");
    assert_eq!(input["verdict"], if same { "same" } else { "different" });
    assert_eq!(out.status.code(), Some(if same { 0 } else { 8 }));
    let session = cutline::session::load(Path::new(check["session"].as_str().expect("session"))).expect("load");
    let ids: Vec<&str> = session.runs.iter().map(|r| r.prompt_id.as_str()).collect();
    // The migration's default id does not take the bundled twin's.
    assert_eq!(ids, ["extract-definitions", "extract-definitions-jsonl-2"]);
    // Each side's kept count is what its own recorded text yields.
    for (run, side) in session.runs.iter().zip(["a", "b"]) {
        let kind = run.response_type;
        let a = Analysis::of(
            kind,
            run.prompt.get("schema"),
            &run.text,
            cutline::output::tg::TgPython::default(),
        );
        assert_eq!(input["report"][side]["kept"], a.items().len(), "{side}");
    }
}

/// On the local model (greedy), a JSONL answer cut at several limits and
/// continued by exact prefill: every call's prompt is the previous one plus
/// every token generated (ids, never re-tokenised text), the answer goes on
/// from the cut text, nothing is repeated, and what the first call kept is
/// what the uncut run says first, and the continued run keeps exactly the
/// uncut run's items (the issue's done-when). The continuation reuses the
/// cut call's state in llama-server's slot (`cache_prompt`): evaluating the
/// generated tokens again as one batch took another branch at 40 tokens.
#[test]
fn a_continued_run_goes_on_from_the_exact_tokens() {
    let Some(_model) = model_or_skip() else {
        return; // skip: the local model is not installed (model_or_skip said so)
    };
    let run = |extra: &[&str]| -> Value {
        let out = Command::cargo_bin("cutline")
            .unwrap()
            .args([
                "run",
                "extract-definitions-jsonl",
                "--provider",
                "local",
                "--no-record",
                "--output",
                "json",
            ])
            .args(extra)
            .timeout(std::time::Duration::from_secs(900))
            .output()
            .unwrap();
        // With `--output json` an error is the envelope on stdout.
        assert!(
            out.status.success(),
            "exit {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["data"].clone()
    };
    let uncut = run(&[]);
    assert_eq!(uncut["finish_reason"], "stop");
    let uncut_items = uncut["analysis"]["items"].as_array().unwrap().clone();
    for limit in ["40", "64"] {
        let n: u64 = limit.parse().unwrap();
        let d = run(&["--max-tokens", limit, "--continue", "6"]);
        let calls = d["continuation"]["calls"].as_array().unwrap();
        assert!(calls.len() >= 2, "at {limit}");
        assert_eq!(calls[0]["how"], "first");
        assert_eq!(calls[0]["finish_reason"], "length", "at {limit}");
        for pair in calls.windows(2) {
            let (before, call) = (&pair[0], &pair[1]);
            assert_eq!(call["how"], "prefill", "at {limit}: {calls:?}");
            // The whole answer so far goes back as the model's own tokens.
            assert_eq!(
                call["prompt_tokens"].as_u64().unwrap(),
                before["prompt_tokens"].as_u64().unwrap() + before["completion_tokens"].as_u64().unwrap(),
                "at {limit}: {calls:?}"
            );
            assert!(call["completion_tokens"].as_u64().unwrap() <= n);
        }
        assert!(
            calls.iter().all(|c| c["duplicates_dropped"] == 0),
            "at {limit}: {calls:?}"
        );
        let last = calls.last().unwrap();
        assert_eq!(last["finish_reason"], "stop", "at {limit}: {calls:?}");
        // The first call is the uncut run's first `limit` tokens: what it
        // kept is the uncut run's first items, in order.
        let items = d["analysis"]["items"].as_array().unwrap();
        let first = usize::try_from(calls[0]["items_added"].as_u64().unwrap()).unwrap();
        assert_eq!(items[..first], uncut_items[..first], "at {limit}");
        assert_eq!(*items, uncut_items, "at {limit}: {calls:?}");
    }
}

/// The workbench's `c` on the real model goes on from the model's own
/// tokens, as `run --continue` does: pressing it at 40 tokens until the
/// answer ends on its own gives, byte for byte, the uncut run's text.
#[test]
fn the_workbench_continues_from_the_exact_tokens() {
    let Some(_model) = model_or_skip() else {
        return; // skip: the local model is not installed (model_or_skip said so)
    };
    block_on(workbench_continues());
}

#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
async fn workbench_continues() {
    use cutline::tui::event::{Effect, Event, ProviderChoice};
    use cutline::tui::runner::Runner;
    use cutline::tui::state::State;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    let sessions = tempfile::tempdir().unwrap();
    let uncut = run_json(
        &["run", "extract-definitions-jsonl", "--provider", "local"],
        sessions.path(),
    );
    assert_eq!(uncut["finish_reason"], "stop");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut runner = Runner::new(
        tx,
        cutline::store::Workspace::at(std::path::Path::new("prompts")),
        sessions.path().to_owned(),
        std::time::Instant::now(),
    );
    let mut s = State::new(
        "prompts".into(),
        sessions.path().to_owned(),
        cutline::tui::keymap::Keymap::defaults(),
        cutline::tui::theme::Theme { color: false },
    );
    s.size = (100, 30);
    s.local_installed = Some(true);
    s.provider = ProviderChoice::Local;
    // Apply effects, then fold events back in until `done` holds.
    let mut drive = async |s: &mut State, effects: Vec<Effect>, done: &dyn Fn(&State) -> bool| {
        for e in effects {
            runner.apply(e);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
        while !done(s) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let ev = tokio::time::timeout(left, rx.recv())
                .await
                .expect("timed out")
                .expect("open");
            for e in cutline::tui::update(s, ev) {
                runner.apply(e);
            }
        }
    };
    drive(&mut s, vec![Effect::LoadPrompts], &|s: &State| {
        !s.prompts.prompts.is_empty()
    })
    .await;
    let at = s
        .prompts
        .filtered()
        .iter()
        .position(|&i| s.prompts.prompts[i].id == "extract-definitions-jsonl");
    s.prompts.selected = at.expect("the bundled prompt");
    let key = |c: KeyCode| Event::Key(KeyEvent::new(c, KeyModifiers::NONE));
    let press = |s: &mut State, keys: &[KeyCode]| -> Vec<Effect> {
        keys.iter().flat_map(|&k| cutline::tui::update(s, key(k))).collect()
    };
    let ended = |s: &State| s.shown.as_ref().is_some_and(|x| !x.live());
    let fx = press(
        &mut s,
        &[
            KeyCode::Char('m'),
            KeyCode::Char('4'),
            KeyCode::Char('0'),
            KeyCode::Enter,
            KeyCode::Char('r'),
        ],
    );
    drive(&mut s, fx, &ended).await;
    let mut calls = 1;
    while s.shown.as_ref().unwrap().jsonl_side().finish == Some(FinishReason::Length) && calls < 12 {
        let view = s.shown.as_ref().unwrap().jsonl_side();
        assert!(view.token_ids.is_some(), "call {calls}: no token ids on show");
        let fx = press(&mut s, &[KeyCode::Char('c')]);
        drive(&mut s, fx, &ended).await;
        calls += 1;
    }
    let view = s.shown.as_ref().unwrap().jsonl_side();
    assert_eq!(view.finish, Some(FinishReason::Stop), "{:?}", s.message);
    assert!(calls >= 2);
    assert_eq!(view.text, uncut["text"].as_str().unwrap(), "after {calls} calls");
}

/// Grammar-constrained JSONL on the real llama-server: the grammars of a
/// plain and a `type`-union line schema compile there, every complete line
/// is schema-valid, and the limit still cuts at most the last line.
#[test]
fn grammar_constrained_jsonl_lines_are_all_valid() {
    let Some(_model) = model_or_skip() else {
        return; // skip: the local model is not installed (model_or_skip said so)
    };
    let dir = tempfile::tempdir().expect("tempdir");
    for (prompt, limit) in [("extract-definitions-jsonl", "60"), ("agent-kg-extract-jsonl", "120")] {
        let d = run_json(
            &[
                "run",
                prompt,
                "--provider",
                "local",
                "--structured",
                "native",
                "--max-tokens",
                limit,
            ],
            dir.path(),
        );
        assert_eq!(d["structured_path"], "grammar", "{prompt}: {d}");
        assert_eq!(d["adjustments"], serde_json::json!([]), "{prompt}");
        let counts = &d["analysis"]["counts"];
        assert_eq!(counts["invalid_json"], 0, "{prompt}: {d}");
        assert_eq!(counts["schema_invalid"], 0, "{prompt}: {d}");
        assert!(counts["truncated"].as_u64().unwrap() <= 1, "{prompt}: {d}");
        assert!(counts["ok"].as_u64().unwrap() >= 1, "{prompt}: {d}");
    }
}
