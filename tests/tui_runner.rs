//! The effects runner with the reducer, no terminal: a replay run streamed
//! through the real provider and analysers, a sweep, loading and saving
//! prompts on disk.

mod tui_support;

use std::path::Path;
use std::time::{Duration, Instant};

use cutline::llm::FinishReason;
use cutline::store::Workspace;
use cutline::tui::event::{Effect, Event};
use cutline::tui::run::Phase;
use cutline::tui::runner::Runner;
use cutline::tui::state::{State, Tab};
use ratatui::crossterm::event::KeyCode;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tui_support::*;

/// Apply effects, then feed events back until `done(state)` holds.
async fn drive(
    s: &mut State,
    runner: &mut Runner,
    rx: &mut UnboundedReceiver<Event>,
    effects: Vec<Effect>,
    done: impl Fn(&State) -> bool,
) {
    for e in effects {
        runner.apply(e);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done(s) {
        let left = deadline.saturating_duration_since(Instant::now());
        let ev = tokio::time::timeout(left, rx.recv())
            .await
            .expect("timed out waiting for the runner")
            .expect("channel open");
        for e in cutline::tui::update(s, ev) {
            runner.apply(e);
        }
    }
}

fn record_session(dir: &std::path::Path) {
    let p = jsonl_prompt();
    let mut rec = cutline::session::Recorder::create(dir, "demo").unwrap();
    let text = JSONL_WITH_ERRORS;
    let run = cutline::session::RunRecord {
        kind: cutline::session::RecordKind::Run,
        run_id: String::new(),
        started_ms: 1,
        prompt_id: p.id.clone(),
        response_type: cutline::prompt::ResponseType::Jsonl,
        prompt: serde_json::json!({}),
        system: String::new(),
        rendered: "x".into(),
        variables: p.inputs[0].vars.clone(),
        provider: cutline::llm::ProviderInfo {
            name: "local".into(),
            kind: "llama-server".into(),
            model: "gemma-3-270m".into(),
            base_url: None,
        },
        params: cutline::session::Params::default(),
        text: text.into(),
        pieces: pieces(text, 5)
            .into_iter()
            .map(|t| cutline::llm::Piece {
                text: t,
                ms: 0,
                delta: false,
            })
            .collect(),
        finish: FinishReason::Stop,
        raw_reason: None,
        usage: cutline::llm::Usage::default(),
        error: None,
        first_token_ms: None,
        total_ms: 10,
        structured_path: cutline::llm::structured::Path::None,
        adjustments: Vec::new(),
        checks: Vec::new(),
        prefill: String::new(),
        token_ids: Vec::new(),
        continues: None,
        continuation_token: None,
        batch: None,
        thinking: String::new(),
        analysis: serde_json::json!({}),
    };
    let mut run = run;
    run.run_id = rec.next_run_id();
    rec.record(&run).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_streams_through_the_runner_and_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    record_session(dir.path());
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(
        tx,
        Workspace::at(&dir.path().join("prompts")),
        dir.path().to_owned(),
        Instant::now(),
    );
    let mut s = state();
    s.sessions_dir = dir.path().to_owned();
    // An `object-schema` (TrustGraph ignores it) that wants a confidence.
    s.prompts.prompts[1].object_schema = Some(serde_json::json!({"type": "object", "required": ["confidence"]}));
    // The JSONL prompt at 30 tokens (pieces of 5 characters).
    let fx = send(
        &mut s,
        [
            key(KeyCode::Down),
            ch('m'),
            ch('3'),
            ch('0'),
            key(KeyCode::Enter),
            ch('r'),
        ],
    );
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.shown.as_ref().is_some_and(|x| !x.live())
    })
    .await;
    let r = s.shown.as_ref().unwrap().jsonl_side();
    assert_eq!(r.phase, Phase::Done, "{:?}", s.message);
    assert_eq!(r.finish, Some(FinishReason::Length));
    let want: String = pieces(JSONL_WITH_ERRORS, 5).into_iter().take(30).collect();
    assert_eq!(r.text, want);
    assert_eq!(r.boundaries.len(), 31);
    assert_eq!(r.note.as_deref(), Some("replay of demo#1"));
    assert_eq!(r.jsonl.counts.ok, 1);
    assert_eq!(r.jsonl.counts.schema_invalid, 1);
    assert_eq!(r.jsonl.counts.invalid_json, 1);
    assert_eq!(r.jsonl.counts.truncated, 1);
    // The status says what that schema would reject, and that it is ignored.
    let msg = &s.message.as_ref().unwrap().text;
    assert!(msg.contains("`object-schema` would reject line(s) 1"), "{msg}");
    // `c` continues it: the replay goes on from the cut text under the same
    // limit, and the view shows the whole answer so far.
    let fx = send(&mut s, [ch('c')]);
    assert!(
        matches!(fx.as_slice(), [Effect::Start(j)] if j.prefill.text == want && j.prefill.token_ids.is_none()),
        "{fx:?}"
    );
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.shown.as_ref().is_some_and(|x| !x.live())
    })
    .await;
    let c = s.shown.as_ref().unwrap().jsonl_side();
    let whole: String = pieces(JSONL_WITH_ERRORS, 5).into_iter().take(60).collect();
    assert_eq!(c.text, whole, "{:?}", s.message);
    assert!(c.text.len() > want.len() && c.text.starts_with(&want));
    // Back to the cut run for the sweep below.
    let fx = send(&mut s, [ch('r')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.shown.as_ref().is_some_and(|x| !x.live())
    })
    .await;
    // The sweep of that run.
    let fx = send(&mut s, [ch('s')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| s.sweep.ready().is_some()).await;
    let sw = s.sweep.ready().unwrap();
    assert_eq!(sw.max_tokens(), 30);
    assert_eq!(sw.cursor, 30);
    assert_eq!(sw.at(30).2, 1);
    // Sessions load from disk.
    drive(&mut s, &mut runner, &mut rx, vec![Effect::LoadSessions], |s| {
        s.sessions.sessions.len() == 1
    })
    .await;
    assert_eq!(s.sessions.sessions[0].runs.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_recording_fails_the_run_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(tx, Workspace::at(dir.path()), dir.path().to_owned(), Instant::now());
    let mut s = state();
    s.sessions_dir = dir.path().to_owned();
    let fx = send(&mut s, [ch('r')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.shown.as_ref().is_some_and(|x| !x.live())
    })
    .await;
    let r = s.shown.as_ref().unwrap().json_side();
    assert!(
        matches!(&r.phase, Phase::Failed(m) if m.contains("no recorded run")),
        "{:?}",
        r.phase
    );
    assert!(s.message.as_ref().unwrap().error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_are_saved_to_the_prompt_file() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    let file = prompts.join("extract-definitions.toml");
    std::fs::write(
        &file,
        "id = \"extract-definitions\"\nresponse-type = \"json\"\nprompt = \"\"\"\nDefine:\n{{text}}\n\"\"\"\n\n[[input]]\nname = \"a\"\ntext = \"Leaves are green.\"\n",
    )
    .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(tx, Workspace::at(&prompts), dir.path().to_owned(), Instant::now());
    let mut s = state();
    s.prompts_dir = prompts;
    drive(&mut s, &mut runner, &mut rx, vec![Effect::LoadPrompts], |s| {
        s.prompts.prompts.len() == 1
    })
    .await;
    let fx = send(
        &mut s,
        [
            key(KeyCode::Enter),
            ch('e'),
            ch('N'),
            ch('B'),
            ch(' '),
            cutline::tui::Event::Key(ratatui::crossterm::event::KeyEvent::new(
                KeyCode::Char('s'),
                ratatui::crossterm::event::KeyModifiers::CONTROL,
            )),
        ],
    );
    assert_eq!(s.tab, Tab::Edit);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.message
            .as_ref()
            .is_some_and(|m| m.text.starts_with("saved") || m.text.starts_with("not saved"))
    })
    .await;
    let m = s.message.clone().unwrap();
    assert!(!m.error, "{m:?}");
    let back = std::fs::read_to_string(&file).unwrap();
    assert!(back.contains("NB Define:"), "{back}");
    assert!(!s.editor.as_ref().unwrap().dirty);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_is_written_next_to_its_source_and_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("people.toml"),
        r#"id = "people"
response-type = "json"
prompt = """
List the people as a JSON array.
{{text}}
"""
schema = '{"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}'

[[input]]
name = "a"
text = "Ada met Alan."
"#,
    )
    .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(tx, Workspace::at(&prompts), dir.path().to_owned(), Instant::now());
    let mut s = state();
    s.prompts_dir = prompts.clone();
    drive(&mut s, &mut runner, &mut rx, vec![Effect::LoadPrompts], |s| {
        s.prompts.prompts.len() == 1
    })
    .await;
    let fx = send(&mut s, [ch('M'), ch('W')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| s.prompts.prompts.len() == 2).await;
    let file = prompts.join("people-jsonl.toml");
    assert_eq!(
        s.migrate.as_ref().unwrap().written.as_deref(),
        Some(file.display().to_string().as_str())
    );
    let new = s.prompts.by_id("people-jsonl").unwrap();
    assert_eq!(new.response_type, cutline::prompt::ResponseType::Jsonl);
    assert_eq!(new.twin.as_deref(), Some("people"));
    assert_eq!(
        new.schema,
        Some(serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
    );
    // Again: the file exists, nothing is written until confirmed.
    std::fs::write(&file, "# hand edits\n").unwrap();
    let fx = send(&mut s, [ch('W')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.migrate.as_ref().unwrap().confirm_overwrite
    })
    .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "# hand edits\n");
    let fx = send(&mut s, [ch('W')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        !s.migrate.as_ref().unwrap().confirm_overwrite
            && s.message.as_ref().is_some_and(|m| m.text.starts_with("wrote"))
    })
    .await;
    assert!(std::fs::read_to_string(&file).unwrap().contains("people-jsonl"));
    // No temp files left beside it.
    let names: Vec<String> = std::fs::read_dir(&prompts)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gold_set_of_the_pair_is_found_and_scored() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    let gold = prompts.join("gold");
    std::fs::create_dir_all(&gold).unwrap();
    // Only the JSON prompt has a gold set: its twin uses it.
    std::fs::write(
        gold.join("extract-definitions.jsonl"),
        "{\"entity\": \"Photosynthesis\", \"definition\": \"how plants make sugar from light\"}\n\n{\"entity\": \"stomata\", \"definition\": \"pores\"}\n",
    )
    .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(tx, Workspace::at(&prompts), dir.path().to_owned(), Instant::now());
    let mut s = state();
    s.shown = Some(cutline::tui::run::Shown::Twins {
        json: Box::new(finished(1, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length)),
        jsonl: Box::new(finished(2, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length)),
    });
    let fx = send(&mut s, [ch('7')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.compare.gold.is_some() || s.compare.gold_error.is_some()
    })
    .await;
    let r = s.compare.report.as_ref().unwrap().as_ref().unwrap();
    let [a, b] = r.total.gold.clone().unwrap();
    assert_eq!((a.gold, a.true_positives), (2, 0));
    // Keys are normalised: "Photosynthesis" matches "photosynthesis".
    assert_eq!((b.gold, b.true_positives, b.predicted), (2, 1, 2));
    // A malformed gold file names its file and line; none is no error.
    std::fs::write(gold.join("bad.jsonl"), "{\"a\": 1}\nnot json\n").unwrap();
    let err = cutline::tui::compare::load_gold(&gold, &["bad".into()]).unwrap_err();
    assert!(err.contains("bad.jsonl:2:"), "{err}");
    assert_eq!(cutline::tui::compare::load_gold(&gold, &["none".into()]), Ok(None));
}

/// A prompt whose id is `../../escape-target`: the loader refuses it,
/// naming the file and why, so nothing of it reaches the Migrate tab.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_like_prompt_id_is_refused_where_it_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("a").join("b").join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("people.toml"),
        r#"id = "../../escape-target"
response-type = "json"
prompt = """
List the people as a JSON array.
{{text}}
"""
schema = '{"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}'
"#,
    )
    .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(tx, Workspace::at(&prompts), dir.path().to_owned(), Instant::now());
    let mut s = state();
    s.prompts_dir = prompts.clone();
    drive(&mut s, &mut runner, &mut rx, vec![Effect::LoadPrompts], |s| {
        s.prompts.prompts.len() == 1 || !s.prompts.errors.is_empty()
    })
    .await;
    assert!(s.prompts.prompts.is_empty(), "the id was loaded");
    let err = &s.prompts.errors[0];
    assert!(err.contains("people.toml"), "{err}");
    assert!(
        err.contains("\"../../escape-target\" is not a prompt id: ") && err.contains("(an id is a name, never a path)"),
        "{err}"
    );
    let fx = send(&mut s, [ch('M'), ch('W')]);
    assert!(fx.is_empty(), "{fx:?}");
    assert!(!dir.path().join("a").join("escape-target-jsonl.toml").exists());
}

/// The guard every workbench save goes through (`store::save_in`, by way of
/// `check_inside`), tested directly, since the loader keeps path-like ids
/// from ever reaching it: only a plain name directly inside the prompts
/// directory is written; `..`, a subdirectory, a link out of the directory
/// and a name that is `..` are refused with the file and the directory named.
#[test]
fn the_store_writes_only_directly_inside_its_directory() {
    use cutline::store::check_inside;
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(prompts.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, prompts.join("link")).unwrap();
    assert_eq!(check_inside(&prompts.join("x.toml"), &prompts), Ok(()));
    assert_eq!(check_inside(&prompts.join("sub/../x.toml"), &prompts), Ok(()));
    for file in [
        prompts.join("../x.toml"),
        prompts.join("sub/x.toml"),
        prompts.join("link/x.toml"),
        prompts.join("sub/.."),
        outside.join("x.toml"),
    ] {
        let err = check_inside(&file, &prompts).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: the file is not inside {} (a prompt id is a name, never a path)",
                file.display(),
                prompts.display()
            )
        );
    }
    // save_in refuses before anything is written.
    let (mut loaded, _) = cutline::prompt::load_bytes(
        "people.toml",
        br#"id = "people"
response-type = "json"
prompt = "List the people. {{text}}"
"#,
    )
    .unwrap();
    let mut p = loaded.pop().unwrap();
    let target = prompts.join("link/people.toml");
    p.origin.file = target.display().to_string();
    assert!(cutline::store::save_in(&p, &prompts).is_err());
    assert!(!outside.join("people.toml").exists());
    p.origin.file = prompts.join("people.toml").display().to_string();
    cutline::store::save_in(&p, &prompts).unwrap();
    assert!(prompts.join("people.toml").exists());
}

/// `S` in the Compare tab runs each strategy on the pair on show through
/// the cells `eval --strategy` runs: on a replay of the demo recordings, the
/// table's items, calls and tokens billed equal the command's for the same
/// prompts, input and limit, and the headline compares the twins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compare_tab_runs_each_strategy_as_eval_does() {
    use cutline::tui::costs::Costs;
    use cutline::tui::event::{Origin, ProviderChoice, Source};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("sessions/demo.jsonl", dir.path().join("demo.jsonl")).unwrap();
    let (tx, mut rx) = unbounded_channel();
    let ws = Workspace::at(Path::new("prompts"));
    let mut runner = Runner::new(tx, ws, dir.path().to_owned(), Instant::now());
    let mut s = state();
    s.sessions_dir = dir.path().to_owned();
    let first = cutline::store::resolve("extract-definitions", std::path::Path::new("prompts"))
        .unwrap()
        .inputs[0]
        .clone();
    let side = |id: u64, name: &str| {
        let p = cutline::store::resolve(name, std::path::Path::new("prompts")).unwrap();
        let mut v = finished(id, &p, "[", FinishReason::Length);
        v.max_tokens = Some(64);
        let spec = cutline::run::Spec::new(p, first.vars.clone()).limit(Some(64));
        v.origin = Some(Arc::new(Origin {
            provider: ProviderChoice::Replay,
            source: Source::Prompt(Box::new(spec)),
        }));
        v
    };
    s.shown = Some(cutline::tui::run::Shown::Twins {
        json: Box::new(side(1, "extract-definitions")),
        jsonl: Box::new(side(2, "extract-definitions-jsonl")),
    });
    // The gold set first, so the table has recall.
    let fx = send(&mut s, [ch('7')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.compare.gold.is_some() || s.compare.gold_error.is_some()
    })
    .await;
    let fx = send(&mut s, [ch('S')]);
    assert!(
        matches!(s.compare.costs, Costs::Running((1, 2))),
        "{:?}",
        s.compare.costs
    );
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        matches!(s.compare.costs, Costs::Ready { .. } | Costs::Failed { .. })
    })
    .await;
    let Costs::Ready { rows, headline, .. } = &s.compare.costs else {
        panic!("{:?}", s.compare.costs);
    };
    // The command on the same input.
    let inputs = dir.path().join("inputs.jsonl");
    let mut line = first.vars.clone();
    line.insert("id".into(), first.name.clone().into());
    std::fs::write(&inputs, serde_json::to_string(&line).unwrap() + "\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .args(["--sessions", dir.path().to_str().unwrap()])
        .args([
            "eval",
            "--prompt",
            "extract-definitions",
            "--strategy",
            "single,retry-double,continue",
        ])
        .args([
            "--max-tokens",
            "64",
            "--provider",
            "replay",
            "--output",
            "json",
            "--inputs",
        ])
        .arg(&inputs)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["data"]["runs"].as_array().unwrap_or_else(|| panic!("{v}"));
    let words: Vec<(&str, &str)> = rows.iter().map(|r| (r.prompt.as_str(), r.strategy.word())).collect();
    assert_eq!(
        words,
        [
            ("extract-definitions", "single"),
            ("extract-definitions", "retry-double"),
            ("extract-definitions-jsonl", "single"),
            ("extract-definitions-jsonl", "continue"),
        ]
    );
    for r in rows {
        let e = runs
            .iter()
            .find(|e| e["prompt"] == r.prompt.as_str() && e["strategy"] == r.strategy.word())
            .unwrap_or_else(|| panic!("no eval run for {} {}", r.prompt, r.strategy.word()));
        assert_eq!(r.items as u64, e["items"].as_u64().unwrap(), "{e}");
        assert_eq!(r.calls, e["calls"].as_array().unwrap().len(), "{e}");
        assert_eq!(r.tokens_billed, e["tokens_billed"].as_u64().unwrap(), "{e}");
        assert!(r.recall.is_some(), "the gold set gives recall: {r:?}");
    }
    // Doubling and continuing both took more than the one call here.
    assert!(rows[1].calls > 1 && rows[3].calls > 1, "{rows:?}");
    let h = headline.as_deref().unwrap();
    assert!(h.contains("JSONL + continue: "), "{h}");
}
