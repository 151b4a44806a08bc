//! The effects runner with the reducer, no terminal: a replay run streamed
//! through the real provider and analysers, a sweep, loading and saving
//! prompts on disk.

mod support;
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
use tokio::sync::mpsc::unbounded_channel;
use tui_support::*;

fn record_session(dir: &std::path::Path) {
    let p = jsonl_prompt();
    let mut rec = cutline::session::Recorder::create(dir, "demo").unwrap();
    let text = JSONL_WITH_ERRORS;
    let rendered = cutline::prompt::render(&p, &serde_json::Map::new(), &p.inputs[0].vars).unwrap();
    let run = cutline::session::RunRecord {
        kind: cutline::session::RecordKind::Run,
        run_id: String::new(),
        started_ms: 1,
        prompt_id: p.id.clone(),
        response_type: cutline::prompt::ResponseType::Jsonl,
        prompt: serde_json::json!({}),
        // The request the workbench makes of this prompt and input: replay
        // plays a recording only for the request it answered.
        system: rendered.system.clone(),
        rendered: rendered.prompt.clone(),
        variables: p.inputs[0].vars.clone(),
        provider: cutline::llm::ProviderInfo {
            name: "local".into(),
            kind: "llama-server".into(),
            model: "gemma-3-270m".into(),
            base_url: None,
        },
        params: cutline::session::Params {
            temperature: Some(0.0),
            stop: p.stop.clone(),
            ..cutline::session::Params::default()
        },
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
        matches!(&r.phase, Phase::Failed(m) if m.contains("no recording in") && m.ends_with("switch to the local model (p)")),
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
    let err = cutline::tui::compare::load_gold(&gold, &["bad".into()])
        .unwrap_err()
        .to_string();
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
#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
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
    assert!(matches!(s.costs, Costs::Running((1, 2))), "{:?}", s.costs);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        matches!(s.costs, Costs::Ready { .. } | Costs::Failed { .. })
    })
    .await;
    let Costs::Ready { rows, headline, .. } = &s.costs else {
        panic!("{:?}", s.costs);
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

/// The real prompts loaded, `extract-definitions` open, the eval view on
/// show with limits `limits`.
fn real_eval_view(limits: &str) -> State {
    let mut s = state();
    let real = |id: &str| cutline::store::resolve(id, Path::new("prompts")).unwrap();
    s.prompts.prompts = vec![real("extract-definitions"), real("extract-definitions-jsonl")];
    s.prompts.selected = 0;
    send(&mut s, [ch('E'), ch('m')]);
    for _ in 0..20 {
        send(&mut s, [key(KeyCode::Backspace)]);
    }
    send(&mut s, limits.chars().map(ch).chain([key(KeyCode::Enter)]));
    assert_eq!(s.eval.limits.len(), limits.split(',').count(), "{:?}", s.message);
    s
}

fn eval_over(s: &State) -> bool {
    s.eval.run.live().is_none()
}

/// (prompt, input text's start, limit) of every run in a session file.
fn runs_in(path: &Path) -> Vec<(String, String, Option<u32>)> {
    let mut v = Vec::new();
    cutline::session::each_run(path, &mut |r| {
        let text = r.variables["text"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .take(12)
            .collect();
        v.push((r.prompt_id.clone(), text, r.params.max_tokens));
    })
    .unwrap();
    v.sort();
    v
}

/// `E` then `r`: the prompt on show and its twin through the eval engine
/// on replay, over their three sample inputs at two limits, recorded in
/// the session `cutline eval` uses for them; the command then finds every
/// run recorded and runs none again, and `r` again in the view neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_eval_view_records_what_cutline_eval_resumes() {
    use cutline::tui::eval::{Ending, EvalRun};
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("sessions/demo.jsonl", dir.path().join("demo.jsonl")).unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(
        tx,
        Workspace::at(Path::new("prompts")),
        dir.path().to_owned(),
        Instant::now(),
    );
    let mut s = real_eval_view("64,none");
    s.sessions_dir = dir.path().to_owned();
    let fx = send(&mut s, [ch('r')]);
    drive(&mut s, &mut runner, &mut rx, fx, eval_over).await;
    let EvalRun::Ended(p, Ending::Complete) = &s.eval.run else {
        panic!("{:?} {:?}", s.eval.run, s.message)
    };
    assert_eq!(
        (p.total, p.skipped, p.ran, p.failed),
        (12, 0, 12, 0),
        "{:?}",
        p.warnings
    );
    assert!(p.session.starts_with("eval-"), "{}", p.session);
    // The gold set of extract-definitions scores its rows and explains its losses.
    let json64 = p
        .rows
        .iter()
        .find(|r| r.prompt == "extract-definitions" && r.max_tokens == Some(64));
    assert!(
        json64.is_some_and(|r| r.gold.is_some() && r.loss.is_some()),
        "{:?}",
        p.rows
    );
    assert_eq!(p.twins.len(), 2);
    // Exactly the matrix, once each.
    let session = dir.path().join(format!("{}.jsonl", p.session));
    let recorded = runs_in(&session);
    let mut want = Vec::new();
    for prompt in ["extract-definitions", "extract-definitions-jsonl"] {
        let cfg = cutline::store::resolve(prompt, Path::new("prompts")).unwrap();
        for input in &cfg.inputs {
            let text: String = input.vars["text"].as_str().unwrap().chars().take(12).collect();
            for limit in [Some(64), None] {
                want.push((prompt.to_owned(), text.clone(), limit));
            }
        }
    }
    want.sort();
    assert_eq!(recorded, want);
    // `cutline eval` on the same prompts and provider: the same session,
    // every run already recorded.
    let out = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .args(["--sessions", dir.path().to_str().unwrap()])
        .args(["eval", "--prompt", "extract-definitions", "--provider", "replay"])
        .args(["--max-tokens", "64,none", "--output", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["data"]["session"]["id"], p.session.as_str(), "{v}");
    assert_eq!(v["data"]["totals"]["skipped"], 12, "{v}");
    assert_eq!(v["data"]["totals"]["ran"], 0, "{v}");
    assert_eq!(runs_in(&session).len(), 12);
    // The view resumes too: nothing left to run.
    let fx = send(&mut s, [ch('r')]);
    drive(&mut s, &mut runner, &mut rx, fx, eval_over).await;
    let EvalRun::Ended(p, Ending::Complete) = &s.eval.run else {
        panic!("{:?}", s.eval.run)
    };
    assert_eq!((p.skipped, p.ran), (12, 0));
    assert_eq!(runs_in(&session).len(), 12);
}

/// A registry with one OpenAI provider `mock` at `url`; its key is read
/// from a variable cargo sets (its value must never show).
fn mock_registry(url: &str) -> cutline::llm::registry::Registry {
    let text = format!(
        "[[provider]]\nname = \"mock\"\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"gpt-mock\"\napi_key_env = \"CARGO_MANIFEST_DIR\"\n"
    );
    let providers = cutline::llm::config::parse(&text, Path::new("t.toml")).unwrap();
    cutline::llm::registry::Registry::new(cutline::llm::config::Config { providers })
}

/// One streamed OpenAI answer: two valid JSONL lines.
fn mock_answer() -> support::Reply {
    let chunk = |c: &str| {
        serde_json::json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": c}, "finish_reason": null}]}).to_string()
    };
    let parts = [
        chunk(VALID_JSONL),
        serde_json::json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string(),
        "[DONE]".to_owned(),
    ];
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    support::Reply::data(&refs)
}

/// A provider's 400 fails each run, recorded as a failed run: the view
/// counts them, shows the first (its control characters made harmless),
/// and never the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_error_fails_the_runs_in_the_view_without_showing_the_key() {
    use cutline::tui::eval::{Ending, EvalRun};
    let server = support::Server::handler(|_| {
        let body = serde_json::json!({"error": {"message": "the model gpt-mock\u{1b}[2J does not exist", "type": "invalid_request_error", "code": "model_not_found"}});
        support::Reply::status(404, &body.to_string())
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(
        tx,
        Workspace::at(Path::new("prompts")),
        dir.path().to_owned(),
        Instant::now(),
    )
    .with_registry(mock_registry(&server.url()));
    let mut s = real_eval_view("64");
    s.sessions_dir = dir.path().to_owned();
    s.provider = cutline::tui::event::ProviderChoice::Configured {
        name: "mock".into(),
        model: None,
    };
    let fx = send(&mut s, [ch('r')]);
    drive(&mut s, &mut runner, &mut rx, fx, eval_over).await;
    let EvalRun::Ended(p, Ending::Complete) = &s.eval.run else {
        panic!("{:?} {:?}", s.eval.run, s.message)
    };
    assert_eq!((p.total, p.ran, p.failed), (6, 6, 6));
    assert_eq!(p.provider, "mock gpt-mock");
    let first = p.first_failure().unwrap();
    assert!(first.contains("does not exist"), "{first}");
    assert!(
        s.message.as_ref().is_some_and(|m| m.error && m.text.contains("6 of 6")),
        "{:?}",
        s.message
    );
    let screen = screen(&s, 140, 30);
    assert!(
        screen.contains("does not exist") && !screen.contains('\u{1b}'),
        "{screen}"
    );
    assert!(!screen.contains(env!("CARGO_MANIFEST_DIR")), "{screen}");
    // Failed runs are recorded (and run again by the next eval).
    let session = dir.path().join(format!("{}.jsonl", p.session));
    assert_eq!(runs_in(&session).len(), 6);
}

/// Esc stops an eval in flight: the runs recorded stay, the ones in flight
/// are dropped with the eval's runtime and never recorded, no run starts
/// after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_stops_the_eval_and_keeps_the_runs_recorded() {
    use cutline::tui::eval::{Ending, EvalRun};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    let server = support::Server::handler(move |r| {
        // OpenAI's Models API (asked first) does not know the model.
        if r.method == "GET" {
            return support::Reply::status(404, "{}");
        }
        // The first two answer at once, the rest after three seconds.
        let n = count.fetch_add(1, Ordering::SeqCst);
        let r = mock_answer();
        if n < 2 { r } else { r.delay_before(0, 3000) }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(
        tx,
        Workspace::at(Path::new("prompts")),
        dir.path().to_owned(),
        Instant::now(),
    )
    .with_registry(mock_registry(&server.url()));
    let mut s = real_eval_view("64,128");
    s.sessions_dir = dir.path().to_owned();
    s.provider = cutline::tui::event::ProviderChoice::Configured {
        name: "mock".into(),
        model: None,
    };
    let fx = send(&mut s, [ch('r')]);
    drive(
        &mut s,
        &mut runner,
        &mut rx,
        fx,
        |s| matches!(&s.eval.run, EvalRun::Running(p) if p.ran == 2),
    )
    .await;
    let fx = send(&mut s, [key(KeyCode::Esc)]);
    assert!(matches!(fx.as_slice(), [Effect::Cancel(_)]), "{fx:?}");
    for e in fx {
        runner.apply(e);
    }
    let EvalRun::Ended(p, Ending::Cancelled) = &s.eval.run else {
        panic!("{:?}", s.eval.run)
    };
    assert_eq!((p.total, p.ran), (12, 2));
    let session = dir.path().join(format!("{}.jsonl", p.session));
    // Requests sent before the cancel may still be on their way to the
    // server: count once they have landed.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = server.requests().len();
    // Past the slow answers: nothing more was recorded or asked.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert_eq!(runs_in(&session).len(), 2);
    assert_eq!(server.requests().len(), asked);
    assert!(asked < 12, "{asked}");
    // The session is not held: the next eval opens it and skips those two.
    let fx = send(&mut s, [ch('r')]);
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        matches!(&s.eval.run, EvalRun::Running(_) | EvalRun::Failed { .. })
    })
    .await;
    assert!(
        matches!(&s.eval.run, EvalRun::Running(p) if p.skipped == 2),
        "{:?}",
        s.eval.run
    );
    let fx = send(&mut s, [key(KeyCode::Esc)]);
    for e in fx {
        runner.apply(e);
    }
}

/// Issue 32, case 22: Ctrl-S on a prompt file that is a symbolic link
/// would have replaced the link with a regular file, so the file it points
/// to never got the edit. The save is refused, naming the link, and both
/// the link and its target are left as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_s_on_a_linked_prompt_file_is_refused_naming_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    let real = dir.path().join("real.toml");
    let text = "id = \"extract-definitions\"\nresponse-type = \"json\"\nprompt = \"\"\"\nDefine:\n{{text}}\n\"\"\"\n\n[[input]]\nname = \"a\"\ntext = \"Leaves are green.\"\n";
    std::fs::write(&real, text).unwrap();
    let file = prompts.join("extract-definitions.toml");
    std::os::unix::fs::symlink(&real, &file).unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(tx, Workspace::at(&prompts), dir.path().to_owned(), Instant::now());
    let mut s = state();
    s.prompts_dir = prompts;
    drive(&mut s, &mut runner, &mut rx, vec![Effect::LoadPrompts], |s| {
        s.prompts.prompts.len() == 1
    })
    .await;
    let ctrl_s = cutline::tui::Event::Key(ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Char('s'),
        ratatui::crossterm::event::KeyModifiers::CONTROL,
    ));
    let fx = send(
        &mut s,
        [key(KeyCode::Enter), ch('e'), ch('N'), ch('B'), ch(' '), ctrl_s],
    );
    drive(&mut s, &mut runner, &mut rx, fx, |s| {
        s.message
            .as_ref()
            .is_some_and(|m| m.text.starts_with("saved") || m.text.starts_with("not saved"))
    })
    .await;
    let m = s.message.clone().unwrap();
    assert!(m.error, "{m:?}");
    assert!(
        m.text.contains(&format!("a symbolic link to {}", real.display())),
        "{m:?}"
    );
    assert!(std::fs::symlink_metadata(&file).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), text);
    assert!(
        s.editor.as_ref().unwrap().dirty,
        "the edit is still there to save elsewhere"
    );
}

/// Issue 32, case 22: `w` in the provider picker on a `cutline.toml` that
/// is a link is refused naming the link; the linked file keeps its bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w_on_a_linked_config_is_refused_naming_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("dotfiles.toml");
    let text = "[[provider]]\nname = \"openai\"\nkind = \"openai\"\nmodel = \"gpt-4.1-mini\"\n";
    std::fs::write(&real, text).unwrap();
    let link = dir.path().join("cutline.toml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(tx, Workspace::at(dir.path()), dir.path().to_owned(), Instant::now());
    runner.apply(Effect::SaveModel(cutline::tui::event::SaveModel {
        provider: "openai".into(),
        model: "gpt-5-mini".into(),
        file: link.clone(),
    }));
    let ev = tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .unwrap()
        .unwrap();
    let Event::ModelSaved(Err(e)) = ev else {
        panic!("{ev:?}")
    };
    assert_eq!(
        e.to_string(),
        format!(
            "{}: a symbolic link to {r}: cutline writes only regular files, never through a link nor over one \
             (edit {r} itself, or replace the link with a file)",
            link.display(),
            r = real.display()
        )
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), text);
}

/// A configured provider `slow` on `url` whose answer stalls after its
/// first line, and a runner on it; the runner records into `sessions`.
fn stalling_runner(
    url: &str,
    sessions: &Path,
) -> (
    Runner,
    tokio::sync::mpsc::UnboundedReceiver<Event>,
    cutline::prompt::PromptConfig,
) {
    let text = format!(
        "[[provider]]\nname = \"slow\"\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\nmax_retries = 0\n"
    );
    let config = cutline::llm::config::parse(&text, Path::new("t.toml")).unwrap();
    let registry = cutline::llm::registry::Registry::new(cutline::llm::config::Config { providers: config });
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let prompt = cutline::store::resolve("extract-definitions-jsonl", &prompts).unwrap();
    let (tx, rx) = unbounded_channel();
    let runner = Runner::new(tx, Workspace::at(&prompts), sessions.to_owned(), Instant::now()).with_registry(registry);
    (runner, rx, prompt)
}

fn slow_job(id: u64, prompt: &cutline::prompt::PromptConfig, sessions: &Path) -> Effect {
    use cutline::tui::event::{Prefill, ProviderChoice, RunJob, Source};
    let spec = cutline::run::Spec::new(prompt.clone(), prompt.inputs[0].vars.clone());
    Effect::Start(Box::new(RunJob {
        prefill: Prefill::default(),
        id,
        provider: ProviderChoice::Configured {
            name: "slow".into(),
            model: None,
        },
        source: Source::Prompt(Box::new(spec)),
        schemas: std::sync::Arc::new(cutline::tui::run::schemas_for(prompt)),
        max_tokens: None,
        tg_python: cutline::output::tg::TgPython::default(),
        sessions_dir: sessions.to_owned(),
    }))
}

async fn first_delta(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) {
    use cutline::tui::event::RunMsg;
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::Run {
            msg: RunMsg::Delta { .. },
            ..
        } = ev
        {
            return;
        }
    }
}

/// Issue 32, case 8: Esc (or `q`, or SIGINT, SIGTERM, SIGHUP, which quit)
/// during a streaming run in the workbench dropped the run with nothing
/// recorded. Its stream ends instead, and what arrived is recorded as cut
/// by the user, on Esc and on quitting alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_or_quitting_during_a_run_records_what_arrived() {
    use cutline::tui::event::RunMsg;
    let first = serde_json::json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n"}, "finish_reason": null}]}).to_string();
    let never = serde_json::json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "never"}, "finish_reason": "stop"}]}).to_string();
    let server =
        support::Server::handler(move |_| support::Reply::data(&[&first, &never]).delay_before(1, 60_000)).await;
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let (mut runner, mut rx, prompt) = stalling_runner(&server.url(), &sessions);
    // Esc: the run's Cancel.
    runner.apply(slow_job(1, &prompt, &sessions));
    first_delta(&mut rx).await;
    runner.apply(Effect::Cancel(1));
    let end = loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::Run {
            msg: RunMsg::Done(end), ..
        } = ev
        {
            break end;
        }
    };
    let e = end.error.expect("cut");
    assert_eq!(e.kind, cutline::llm::ErrorKind::Cancelled);
    assert_eq!(e.message, "cut by the user (stopped in the workbench)");
    assert!(end.recorded.is_some(), "recorded");
    // Quitting (as `q` and the signals do).
    runner.apply(slow_job(2, &prompt, &sessions));
    first_delta(&mut rx).await;
    let more = tokio::task::block_in_place(|| runner.apply(Effect::Quit));
    assert!(!more);
    let file = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    let s = cutline::session::load(&file).unwrap();
    assert_eq!(s.runs.len(), 2, "both runs recorded");
    for r in &s.runs {
        assert_eq!(
            r.text,
            "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n"
        );
        assert_eq!(
            r.error.as_ref().map(|e| e.kind),
            Some(cutline::llm::ErrorKind::Cancelled)
        );
    }
}

/// One streamed Gemini `GenerateContentResponse`: `text`, with a finish
/// reason and a `continuationToken` on the candidate when given.
fn gemini_chunk(text: &str, finish: Option<&str>, token: Option<&str>) -> String {
    let mut c = serde_json::json!({"content": {"parts": [{"text": text}], "role": "model"}, "index": 0});
    if let Some(f) = finish {
        c["finishReason"] = serde_json::json!(f);
    }
    if let Some(t) = token {
        c["continuationToken"] = serde_json::json!(t);
    }
    serde_json::json!({"candidates": [c], "modelVersion": "gemini-3-flash-preview"}).to_string()
}

/// The token Gemini leaves on the first answer.
const GEMINI_TOKEN: &str = "Q0hFQ0tQT0lOVC0x";

/// Answers as Gemini 3 does: the first request stops at `CONTINUATION`
/// with a token mid-item; the same request with that token gets the rest;
/// any other token is a 400.
fn gemini_continues(r: &support::Recorded) -> support::Reply {
    let b = r.json();
    let chunks = match b.get("continuationToken").and_then(serde_json::Value::as_str) {
        Some(GEMINI_TOKEN) => vec![
            gemini_chunk("mata\", \"definition\": \"pores in a leaf\"}\n", None, None),
            gemini_chunk(
                "{\"entity\": \"xylem\", \"definition\": \"tissue that carries water\"}\n",
                Some("STOP"),
                None,
            ),
        ],
        Some(_) => {
            return support::Reply::status(
                400,
                r#"{"error":{"code":400,"message":"invalid continuation token","status":"INVALID_ARGUMENT"}}"#,
            );
        }
        None => vec![
            gemini_chunk(
                "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar\"}\n",
                None,
                None,
            ),
            gemini_chunk(
                "{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}\n{\"entity\": \"sto",
                Some("CONTINUATION"),
                Some(GEMINI_TOKEN),
            ),
        ],
    };
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    support::Reply::data(&refs)
}

/// `c` on a Gemini answer left incomplete (`CONTINUATION`) resends the same
/// request with the token from that answer's record, as `run --continue`
/// does; the view shows the whole answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_on_a_gemini_answer_left_incomplete_resends_its_continuation_token() {
    let server = support::Server::handler(gemini_continues).await;
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[[provider]]\nname = \"gem\"\nkind = \"gemini\"\nbase_url = \"{}\"\nmodel = \"gemini-3-flash-preview\"\napi_key_env = \"CARGO_MANIFEST_DIR\"\n",
        server.url()
    );
    let providers = cutline::llm::config::parse(&text, Path::new("t.toml")).unwrap();
    let registry = cutline::llm::registry::Registry::new(cutline::llm::config::Config { providers });
    let (tx, mut rx) = unbounded_channel();
    let mut runner = Runner::new(
        tx,
        Workspace::at(&dir.path().join("prompts")),
        dir.path().to_owned(),
        Instant::now(),
    )
    .with_registry(registry);
    let mut s = state();
    s.sessions_dir = dir.path().to_owned();
    s.provider = cutline::tui::event::ProviderChoice::Configured {
        name: "gem".into(),
        model: None,
    };
    let ended = |s: &State| s.shown.as_ref().is_some_and(|x| !x.live());
    // The JSONL prompt, run: Gemini stops it mid-item with a token.
    let fx = send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter), ch('r')]);
    drive(&mut s, &mut runner, &mut rx, fx, ended).await;
    let r = s.shown.as_ref().unwrap().jsonl_side();
    assert_eq!(r.finish, Some(FinishReason::Incomplete), "{:?}", s.message);
    assert_eq!(r.continuation_token.as_deref(), Some(GEMINI_TOKEN));
    let cut = r.text.clone();
    // `c`: the job carries the token, and the request is the first again
    // with it.
    let fx = send(&mut s, [ch('c')]);
    assert!(
        matches!(fx.as_slice(), [Effect::Start(j)]
            if j.prefill.text == cut && j.prefill.continuation_token.as_deref() == Some(GEMINI_TOKEN)),
        "{fx:?}"
    );
    drive(&mut s, &mut runner, &mut rx, fx, ended).await;
    let posts: Vec<serde_json::Value> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(support::Recorded::json)
        .collect();
    assert_eq!(posts.len(), 2, "{posts:?}");
    let (first, second) = (&posts[0], &posts[1]);
    let prompt = serde_json::json!([{"role": "user", "parts": [{"text": "Extract definitions from:\nPlants turn light into sugar.\nJSONL:"}]}]);
    assert_eq!(first, &serde_json::json!({"contents": prompt}));
    assert_eq!(
        second,
        &serde_json::json!({"contents": prompt, "continuationToken": GEMINI_TOKEN})
    );
    // The view shows the stitched answer: four items, the cut one whole.
    let c = s.shown.as_ref().unwrap().jsonl_side();
    assert_eq!(c.finish, Some(FinishReason::Stop), "{:?}", s.message);
    assert_eq!(c.continuation_token, None);
    assert_eq!(
        c.text,
        format!(
            "{cut}mata\", \"definition\": \"pores in a leaf\"}}\n{{\"entity\": \"xylem\", \"definition\": \"tissue that carries water\"}}\n"
        )
    );
    assert_eq!(c.jsonl.counts.ok, 4, "{:?}", c.jsonl.counts);
}
