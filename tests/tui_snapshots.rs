//! Every pane in its states, drawn on ratatui's TestBackend and compared
//! with the committed snapshots in tests/snapshots/. States are built from
//! fixed text, never from a model.

mod tui_support;

use cutline::eval::strategy::Strategy;
use cutline::llm::FinishReason;
use cutline::tui::event::{Effect, Event, RunMsg};
use cutline::tui::run::Shown;
use cutline::tui::state::Tab;
use cutline::tui::sweep::compute_sweep;
use cutline::tui::theme::Theme;
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use tui_support::*;

#[test]
fn prompts_list() {
    let mut s = state();
    assert_snapshot!("prompts_list", screen(&s, 100, 24));
    send(&mut s, [ch('/'), ch('g'), ch('r'), ch('a')]);
    assert_snapshot!("prompts_filtered", screen(&s, 100, 24));
}

#[test]
fn prompts_empty() {
    let mut s = state();
    send(
        &mut s,
        [Event::PromptsLoaded {
            prompts: vec![],
            errors: vec!["prompts/broken.toml:3:7: expected `=`".into()],
            warnings: vec![],
        }],
    );
    assert_snapshot!("prompts_empty", screen(&s, 100, 20));
}

#[test]
fn editor_states() {
    let mut s = state();
    send(&mut s, [key(KeyCode::Enter)]);
    assert_snapshot!("edit_template", screen(&s, 100, 24));
    send(&mut s, [ch('v')]);
    assert_snapshot!("edit_rendered", screen(&s, 100, 24));
    send(
        &mut s,
        [
            ch('v'),
            key(KeyCode::Right),
            key(KeyCode::Right),
            key(KeyCode::Down),
            key(KeyCode::Down),
        ],
    );
    send(&mut s, [ch('e'), ch('}')]);
    assert_snapshot!("edit_schema_error", screen(&s, 100, 24));
}

#[test]
fn run_empty() {
    let mut s = state();
    s.tab = Tab::Run;
    assert_snapshot!("run_empty", screen(&s, 100, 24));
}

#[test]
fn run_streaming() {
    let mut s = state();
    send(&mut s, [ch('m'), ch('6'), ch('4'), key(KeyCode::Enter)]);
    let fx = send(&mut s, [ch('r')]);
    let id = match fx.as_slice() {
        [cutline::tui::Effect::Start(j)] => j.id,
        other => panic!("{other:?}"),
    };
    send(
        &mut s,
        [
            Event::Tick(1000),
            Event::Run {
                id,
                msg: RunMsg::Started {
                    provider: "replay".into(),
                    note: Some("replay of demo#1".into()),
                    at_ms: 1000,
                },
            },
        ],
    );
    let (msgs, _) = stream(&json_prompt(), TRUNCATED_ARRAY, 4, FinishReason::Length);
    send(&mut s, msgs.into_iter().take(40).map(|msg| Event::Run { id, msg }));
    send(&mut s, [Event::Tick(2300)]);
    assert_snapshot!("run_streaming", screen(&s, 100, 30));
}

#[test]
fn run_truncated_array() {
    let mut s = state();
    show(
        &mut s,
        finished(1, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length),
    );
    assert_snapshot!("run_truncated_array", screen(&s, 110, 30));
}

#[test]
fn run_jsonl_with_schema_errors() {
    let mut s = state();
    show(
        &mut s,
        finished(1, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length),
    );
    assert_snapshot!("run_jsonl_schema_errors", screen(&s, 110, 30));
}

#[test]
fn run_union_branch_errors() {
    let mut s = state();
    let text = "{\"type\": \"definition\", \"entity\": \"leaf\", \"definition\": \"green\"}\n{\"type\": \"relationship\", \"subject\": \"leaf\", \"predicate\": \"has\"}\n{\"type\": \"definition\", \"entity\": 5, \"definition\": \"x\"}\n";
    show(&mut s, finished(1, &union_prompt(), text, FinishReason::Stop));
    assert_snapshot!("run_union_errors", screen(&s, 120, 24));
}

/// A model dropped one `{`: strict parsing fails, salvage skips the broken
/// element and keeps the two after it; the pane says which lines it skipped.
#[test]
fn run_broken_array_resumes() {
    let mut s = state();
    let text = "[\n  {\"entity\": \"leaf\", \"definition\": \"green\"},\n  \"entity\": \"root\", \"definition\": \"below\"},\n  {\"entity\": \"stem\", \"definition\": \"holds\"},\n  {\"entity\": \"bud\", \"definition\": \"grows\"}\n]";
    show(&mut s, finished(1, &json_prompt(), text, FinishReason::Stop));
    assert_snapshot!("run_broken_array_resumes", screen(&s, 120, 24));
}

#[test]
fn run_all_valid() {
    let mut s = state();
    show(&mut s, finished(1, &json_prompt(), VALID_ARRAY, FinishReason::Stop));
    assert_snapshot!("run_all_valid", screen(&s, 110, 26));
}

fn twins_state() -> cutline::tui::State {
    let mut s = state();
    s.max_tokens = Some(60);
    let a = finished(1, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length);
    let b = finished(2, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length);
    s.shown = Some(Shown::Twins {
        json: Box::new(a),
        jsonl: Box::new(b),
    });
    s.tab = Tab::Run;
    s
}

#[test]
fn twins_pair() {
    let s = twins_state();
    assert_snapshot!("run_twins", screen(&s, 120, 30));
}

#[test]
fn sweep_chart_and_cut() {
    let mut s = twins_state();
    let fx = send(&mut s, [ch('s')]);
    let job = match fx.as_slice() {
        [cutline::tui::Effect::Sweep(j)] => j.clone(),
        other => panic!("{other:?}"),
    };
    send(&mut s, [Event::SweepReady(Box::new(compute_sweep(&job)))]);
    for _ in 0..10 {
        send(&mut s, [key(KeyCode::Left)]);
    }
    assert_snapshot!("sweep", screen(&s, 120, 36));
}

#[test]
fn sweep_empty() {
    let mut s = state();
    send(&mut s, [ch('4')]);
    assert_snapshot!("sweep_empty", screen(&s, 100, 12));
}

#[test]
fn sessions_list() {
    let mut s = state();
    let mut sess = tui_reducer_session();
    let mut second = sess.runs[0].clone();
    second.run_id = "demo#2".into();
    sess.runs.push(second);
    send(&mut s, [Event::SessionsLoaded(vec![sess]), ch('5'), key(KeyCode::Down)]);
    assert_snapshot!("sessions", screen(&s, 120, 20));
}

fn tui_reducer_session() -> cutline::session::Session {
    let line = format!(
        "{{\"type\":\"session\",\"version\":1,\"id\":\"demo\",\"created_ms\":0}}\n{}\n",
        serde_json::json!({
            "type": "run", "run_id": "demo#1", "started_ms": 1, "prompt_id": "extract-definitions-jsonl",
            "response_type": "jsonl", "prompt": {}, "system": "", "rendered": "x", "variables": {},
            "provider": {"name": "local", "kind": "llama-server", "model": "gemma-3-270m"},
            "params": {"max_tokens": 64, "stop": []}, "text": VALID_JSONL,
            "pieces": [{"text": VALID_JSONL, "ms": 3}], "finish": "stop",
            "usage": {"completion_tokens": 31}, "total_ms": 812, "structured_path": "none",
            "analysis": {"items": 2}
        })
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("demo.jsonl");
    std::fs::write(&p, line).unwrap();
    let mut s = cutline::session::load(&p).unwrap();
    s.path = "sessions/demo.jsonl".into();
    s
}

#[test]
fn help_lists_every_key() {
    let mut s = state();
    send(&mut s, [ch('?')]);
    let out = screen(&s, 120, 40);
    for (a, _, _) in cutline::tui::Action::ALL {
        assert!(out.contains(a.describe()), "help lacks {a:?}");
    }
    assert_snapshot!("help", out);
}

/// A JSON prompt whose template needs a hand check (a union: object of two
/// arrays; the word "arrays" cannot be rewritten with confidence).
fn union_json_prompt() -> cutline::prompt::PromptConfig {
    let mut p = json_prompt();
    p.id = "extract-things".into();
    p.twin = None;
    p.schema = Some(serde_json::json!({"type": "object", "properties": {
        "entities": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        "relationships": {"type": "array", "items": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}}, "required": ["from", "to"]}}
    }}));
    p.template = "Answer with one JSON object with the arrays \"entities\" and \"relationships\".\nOutput:\n{\n  \"entities\": [{\"name\": \"A\"}],\n  \"relationships\": [{\"from\": \"A\", \"to\": \"B\"}]\n}\n###\n{{text}}\n".into();
    p.origin.file = "prompts/extract-things.toml".into();
    p
}

fn with_prompt(p: cutline::prompt::PromptConfig) -> cutline::tui::State {
    let mut s = state();
    send(
        &mut s,
        [Event::PromptsLoaded {
            prompts: vec![p],
            errors: vec![],
            warnings: vec![],
        }],
    );
    s
}

#[test]
fn migrate_states() {
    // Nothing selected to migrate yet: the tab says how.
    let mut s = with_prompt(jsonl_prompt());
    send(&mut s, [ch('6')]);
    assert_snapshot!("migrate_not_json", screen(&s, 100, 12));
    // A clean migration: the item schema moves to the line.
    let mut s = state();
    send(&mut s, [ch('M')]);
    assert_snapshot!("migrate_clean", screen(&s, 110, 40));
    // A union with a flag at its template line.
    let mut s = with_prompt(union_json_prompt());
    send(&mut s, [ch('M')]);
    assert_snapshot!("migrate_flags", screen(&s, 110, 40));
    // A schema part with no per-line form.
    let mut p = json_prompt();
    p.schema = Some(serde_json::json!({"type": "array", "minItems": 1, "items": item_schema()}));
    let mut s = with_prompt(p);
    send(&mut s, [ch('M')]);
    assert_snapshot!("migrate_unconvertible", screen(&s, 110, 24));
    // The file exists: a second press confirms.
    send(
        &mut s,
        [Event::MigrateWritten(cutline::tui::event::WriteOutcome::Exists(
            "prompts/extract-definitions-jsonl.toml".into(),
        ))],
    );
    assert_snapshot!("migrate_confirm_overwrite", screen(&s, 110, 8));
}

#[test]
fn compare_states() {
    let mut s = state();
    send(&mut s, [ch('7')]);
    assert_snapshot!("compare_needs_a_pair", screen(&s, 100, 10));
    let mut s = twins_state();
    send(&mut s, [ch('7')]);
    assert_snapshot!("compare_twins_truncated", screen(&s, 110, 30));
    let gold = vec![
        serde_json::json!({"entity": "photosynthesis", "definition": "how plants make sugar from light"}),
        serde_json::json!({"entity": "stomata", "definition": "pores"}),
    ];
    send(
        &mut s,
        [Event::GoldLoaded {
            ids: vec!["extract-definitions".into(), "extract-definitions-jsonl".into()],
            result: Ok(Some(("prompts/gold/extract-definitions.jsonl".into(), gold))),
        }],
    );
    assert_snapshot!("compare_with_gold", screen(&s, 110, 30));
    // `S`: the strategies run, then their table. The pair needs to know
    // how it was run.
    if let Some(cutline::tui::run::Shown::Twins { json, jsonl }) = &mut s.shown {
        for (v, p) in [(json, json_prompt()), (jsonl, jsonl_prompt())] {
            v.origin = Some(std::sync::Arc::new(cutline::tui::event::Origin {
                provider: cutline::tui::event::ProviderChoice::Replay,
                source: cutline::tui::event::Source::Prompt(Box::new(cutline::run::Spec::new(
                    p,
                    serde_json::Map::new(),
                ))),
            }));
        }
    }
    let fx = send(&mut s, [ch('S')]);
    assert!(matches!(fx.as_slice(), [Effect::Costs(_)]));
    assert!(matches!(s.costs, cutline::tui::costs::Costs::Running(_)));
    s.compare.top = 12;
    assert_snapshot!("compare_costs_running", screen(&s, 110, 16));
    s.costs = cutline::tui::costs::Costs::Ready {
        ids: (1, 2),
        rows: vec![
            cost_row("extract-definitions", "json", Strategy::Single, (0, 1, 880, 2_400, 0.0, false)),
            cost_row("extract-definitions", "json", Strategy::RetryDouble, (4, 3, 3_310, 9_100, 1.0, true)),
            cost_row("extract-definitions-jsonl", "jsonl", Strategy::Single, (2, 1, 905, 2_500, 0.5, false)),
            cost_row("extract-definitions-jsonl", "jsonl", Strategy::Continue, (4, 2, 1_870, 5_200, 1.0, true)),
        ],
        headline: Some("JSONL + continue: 4 items, 2 calls, 1870 tokens; JSON + retry-double: 4 items, 3 calls, 3310 tokens (1.8x)".into()),
    };
    assert_snapshot!("compare_costs_ready", screen(&s, 110, 20));
}

/// One strategy row: (items, calls, tokens billed, ms, recall, finished).
fn cost_row(
    prompt: &str,
    response_type: &str,
    strategy: Strategy,
    (items, calls, tokens_billed, wall_ms, recall, finished): (usize, usize, u64, u64, f64, bool),
) -> cutline::eval::strategy::StrategyRow {
    cutline::eval::strategy::StrategyRow {
        prompt: prompt.into(),
        response_type: cutline::prompt::ResponseType::parse(response_type).expect("a response type"),
        twin: None,
        max_tokens: Some(64),
        strategy,
        runs: 1,
        finished: usize::from(finished),
        items,
        calls,
        tokens_billed,
        usage_complete: true,
        wall_ms,
        loss: None,
        recall: Some(recall),
    }
}

#[test]
fn provider_picker() {
    use cutline::llm::config::{Kind, ProviderConfig};
    use cutline::tui::event::ProviderEntry;
    let mut s = state();
    send(&mut s, [ch('p')]);
    let mut openai = ProviderConfig::new("openai", Kind::Openai);
    openai.model = Some("gpt-4o-mini".into());
    let mut claude = ProviderConfig::new("claude", Kind::Anthropic);
    claude.model = Some("claude-3-5-haiku-latest".into());
    claude.api_key_env = Some("MY_ANTHROPIC_KEY".into());
    send(
        &mut s,
        [Event::ProvidersLoaded(Ok(vec![
            ProviderEntry {
                config: openai,
                key_set: true,
            },
            ProviderEntry {
                config: claude,
                key_set: false,
            },
        ]))],
    );
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Down), key(KeyCode::Down)]);
    assert_snapshot!("provider_picker", screen(&s, 110, 20));
    send(&mut s, [key(KeyCode::Enter)]);
    assert_snapshot!("provider_chosen_key_missing", screen(&s, 110, 6));
    let mut s = state();
    send(
        &mut s,
        [
            ch('p'),
            Event::ProvidersLoaded(Err(cutline::llm::config::ProvidersFileError {
                path: "./cutline.toml".into(),
                at: Some((3, 9)),
                message: "expected `=`".into(),
                source: None,
            })),
        ],
    );
    assert_snapshot!("provider_config_error", screen(&s, 110, 16));
}

#[test]
fn editor_wraps_long_lines() {
    let mut p = json_prompt();
    p.template = format!(
        "{}\n{}\n{{{{ text }}}}",
        "Extract every definition of a term from the text below, keeping the author's wording where possible. "
            .repeat(2),
        "日本語の長い説明文です。".repeat(8)
    );
    let mut s = with_prompt(p);
    send(&mut s, [key(KeyCode::Enter)]);
    let out = screen(&s, 80, 16);
    assert!(out.contains("wording"), "{out}");
    assert_snapshot!("edit_wrapped", out);
}

#[test]
fn status_bar_modes() {
    let mut s = state();
    send(&mut s, [ch('m'), ch('1'), ch('2')]);
    assert_snapshot!("status_limit_input", screen(&s, 100, 8));
    send(
        &mut s,
        [key(KeyCode::Esc), ch('p'), key(KeyCode::Down), key(KeyCode::Enter)],
    );
    assert_snapshot!("status_local_missing", screen(&s, 140, 8));
}

#[test]
fn no_color_draws_without_colours() {
    use ratatui::style::Color;
    let colours = |theme: Theme| {
        let mut s = twins_state();
        s.theme = theme;
        let mut t = Terminal::new(TestBackend::new(100, 30)).unwrap();
        t.draw(|f| cutline::tui::draw(f, &s)).unwrap();
        t.backend()
            .buffer()
            .content()
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count()
    };
    assert_eq!(colours(Theme { color: false }), 0);
    assert!(colours(Theme { color: true }) > 0);
}

#[test]
fn wide_characters_take_two_columns() {
    let mut s = state();
    let text = "{\"entity\": \"光合作用\", \"definition\": \"😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀\"}\n";
    show(&mut s, finished(1, &jsonl_prompt(), text, FinishReason::Stop));
    let mut t = Terminal::new(TestBackend::new(80, 16)).unwrap();
    t.draw(|f| cutline::tui::draw(f, &s)).unwrap();
    let buf = t.backend().buffer().clone();
    // Every row still ends in its border: nothing spilled past the edge.
    for y in 2..12 {
        let sym = buf[(79, y)].symbol();
        assert!(sym == "│" || sym == "┐" || sym == "┘" || sym == "─", "row {y}: {sym:?}");
    }
    assert_snapshot!("wide_characters", t.backend().to_string());
}

#[test]
fn run_failed_to_start() {
    let mut s = state();
    let fx = send(&mut s, [ch('r')]);
    let id = match fx.as_slice() {
        [cutline::tui::Effect::Start(j)] => j.id,
        other => panic!("{other:?}"),
    };
    send(
        &mut s,
        [Event::Run {
            id,
            msg: RunMsg::Failed(cutline::tui::run::RunError::NoRecording(cutline::llm::LlmError::new(
                cutline::llm::ErrorKind::BadRequest,
                "no recorded run of prompt \"extract-definitions\" in sessions to replay",
            ))),
        }],
    );
    assert_snapshot!("run_failed", screen(&s, 100, 16));
}

/// A `type` union: the JSON object of arrays against its JSONL twin, per type.
#[test]
fn compare_union_per_type() {
    let mut graph = json_prompt();
    graph.id = "extract-graph".into();
    graph.schema = Some(serde_json::json!({"type": "object", "properties": {
        "definitions": {"type": "array", "items": {"type": "object", "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["entity", "definition"]}},
        "relationships": {"type": "array", "items": {"type": "object", "properties": {"subject": {"type": "string"}, "predicate": {"type": "string"}, "object": {"type": "string"}}, "required": ["subject", "predicate", "object"]}}
    }}));
    let array_answer = "{\"definitions\": [{\"entity\": \"leaf\", \"definition\": \"a plant organ\"}], \"relationships\": [{\"subject\": \"leaf\", \"predicate\": \"has\", \"object\": \"stomata\"}, {\"subject\": \"leaf\", \"predicate\": \"is\", \"object\": \"green\"}]}";
    let lines_answer = "{\"type\": \"definition\", \"entity\": \"Leaf\", \"definition\": \"a  plant organ\"}\n{\"type\": \"relationship\", \"subject\": \"leaf\", \"predicate\": \"has\", \"object\": \"stomata\"}\n{\"type\": \"relationship\", \"subject\": \"leaf\"}\n{\"type\": \"definition\", \"entity\": \"stomata\", \"definition\": \"pores\"}\n";
    let mut s = state();
    s.shown = Some(Shown::Twins {
        json: Box::new(finished(1, &graph, array_answer, FinishReason::Stop)),
        jsonl: Box::new(finished(2, &union_prompt(), lines_answer, FinishReason::Stop)),
    });
    send(&mut s, [ch('7')]);
    assert_snapshot!("compare_union_per_type", screen(&s, 110, 24));
}

/// With no local model the first screen says what to do in one line, until
/// the first key.
#[test]
fn first_screen_without_a_model() {
    use cutline::tui::state::FirstScreen;
    let mut s = state();
    let _ = cutline::tui::update(&mut s, Event::SessionsLoaded(Vec::new()));
    assert_eq!(s.first_screen, None, "sessions load once: no guide on a reload");
    s.sessions.loaded = false;
    let _ = cutline::tui::update(&mut s, Event::SessionsLoaded(vec![tui_reducer_session()]));
    assert_eq!(s.first_screen, Some(FirstScreen::Replay));
    assert_snapshot!("first_screen_replay", screen(&s, 100, 12));
    send(&mut s, [key(KeyCode::Down)]);
    assert_eq!(s.first_screen, None);
    s.sessions.loaded = false;
    let _ = cutline::tui::update(&mut s, Event::SessionsLoaded(Vec::new()));
    assert_eq!(s.first_screen, Some(FirstScreen::Install));
    let text = screen(&s, 120, 12);
    assert!(
        text.contains("no local model and no recorded runs: `cutline setup local` installs the model"),
        "{text}"
    );
}

/// A JSONL answer the limit cut while it repeated one line: the response
/// pane marks the line the loop starts on and its title says what it
/// wasted (issue 12).
#[test]
fn run_cut_in_a_runaway_loop() {
    let mut s = state();
    let mut text = String::from("{\"entity\": \"leaf\", \"definition\": \"a green part\"}\n");
    for _ in 0..6 {
        text.push_str("{\"entity\": \"root\", \"definition\": \"the part below\"}\n");
    }
    text.push_str("{\"entity\": \"ro");
    show(&mut s, finished(1, &jsonl_prompt(), &text, FinishReason::Length));
    let out = screen(&s, 110, 24);
    assert!(out.contains("↻ loop from line 2: 6 repeats"), "{out}");
    assert_snapshot!("run_runaway_loop", out);
}

/// A line nested past Python's limit: the JSONL pane says TrustGraph's
/// consumer fails the whole response there (issue 11).
#[test]
fn run_jsonl_past_pythons_nesting_limit() {
    let mut s = state();
    let text = format!(
        "{{\"entity\": \"leaf\", \"definition\": \"a green part\"}}\n{{\"x\": {}{}}}\n",
        "[".repeat(9996),
        "]".repeat(9996)
    );
    show(&mut s, finished(1, &jsonl_prompt(), &text, FinishReason::Stop));
    let out = screen(&s, 110, 24);
    assert!(out.contains("TrustGraph raises at line 2: 0 items"), "{out}");
    assert_snapshot!("run_jsonl_too_deep", out);
}

/// A prompt with an `object-schema` (which TrustGraph ignores): the JSONL
/// pane keeps every parsed line and marks the ones it would reject (issue 11).
#[test]
fn run_jsonl_marks_what_the_ignored_object_schema_would_reject() {
    let mut s = state();
    let mut p = jsonl_prompt();
    p.schema = None;
    p.object_schema = Some(serde_json::json!({
        "type": "object", "required": ["entity", "definition"]
    }));
    let text = "{\"entity\": \"a\"}\n{\"entity\": \"b\", \"definition\": \"c\"}\n";
    show(&mut s, finished(1, &p, text, FinishReason::Stop));
    let out = screen(&s, 160, 24);
    assert!(out.contains("✓ 2 kept"), "{out}");
    assert!(
        out.contains("object-schema (ignored by TrustGraph) would reject"),
        "{out}"
    );
    assert_eq!(out.matches("would reject").count(), 1, "{out}");
    assert_snapshot!("run_jsonl_ignored_object_schema", out);
}

/// The workbench reopened on the Edit tab it was left on, with the prompt
/// that was open (issue 25, item 6).
#[test]
fn edit_restored() {
    let mut s = state();
    send(
        &mut s,
        [Event::Remembered(cutline::tui::event::Remembered {
            tab: Some(Tab::Edit),
            prompt: Some("extract-definitions-jsonl".into()),
            ..Default::default()
        })],
    );
    assert_snapshot!("edit_restored", screen(&s, 100, 24));
}

/// A JSON answer with an integer past Python's 4300 digits: TrustGraph's
/// `json.loads` raises `ValueError` and the service fails the whole
/// response; the JSON pane says so above cutline's own reading.
#[test]
fn run_json_the_service_fails() {
    let mut s = state();
    let text = format!(
        "[{{\"entity\": \"leaf\", \"definition\": \"a green part\", \"n\": {}}}]",
        "7".repeat(4301)
    );
    show(&mut s, finished(1, &json_prompt(), &text, FinishReason::Stop));
    let out = screen(&s, 110, 24);
    assert!(out.contains("✗ TrustGraph raises ValueError: 0 items"), "{out}");
    assert_snapshot!("run_json_service_fails", out);
}

/// The eval view of the JSON prompt and its twin, started and planned at
/// 64 and no limit over two inputs (the first already recorded).
fn eval_running() -> (cutline::tui::state::State, u64) {
    use cutline::tui::event::EvalMsg;
    let mut s = state();
    send(&mut s, [ch('E'), ch('m')]);
    for _ in 0..15 {
        send(&mut s, [key(KeyCode::Backspace)]);
    }
    send(&mut s, "64,none".chars().map(ch).chain([key(KeyCode::Enter)]));
    let fx = send(&mut s, [ch('r')]);
    let [Effect::Eval(job)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    let id = job.id;
    let (j, l) = (json_prompt(), jsonl_prompt());
    let mut skipped = vec![
        eval_summary(&j, "a", None, (3, 3), false, None),
        eval_summary(&l, "a", None, (3, 3), false, None),
    ];
    for x in &mut skipped {
        x.skipped = true;
    }
    s.clock_ms = 10_000;
    let mut plan = eval_plan(2, 2, skipped);
    plan.warnings
        .push("prompt \"extract-definitions\": input \"b\" is identical to input \"a\"; run once".into());
    let ev = |msg| Event::Eval { id, msg };
    send(
        &mut s,
        [
            ev(EvalMsg::Planned(Box::new(plan))),
            ev(EvalMsg::InFlight(2)),
            ev(EvalMsg::Finished(Box::new(eval_summary(
                &j,
                "a",
                Some(64),
                (0, 2),
                true,
                None,
            )))),
            ev(EvalMsg::Finished(Box::new(eval_summary(
                &l,
                "a",
                Some(64),
                (2, 3),
                true,
                None,
            )))),
        ],
    );
    s.clock_ms = 14_000;
    s.message = None;
    (s, id)
}

#[test]
fn eval_view_before_a_run() {
    let mut s = state();
    send(&mut s, [ch('E')]);
    assert_snapshot!("eval_idle", screen(&s, 110, 16));
}

#[test]
fn eval_view_while_it_runs() {
    let (s, _) = eval_running();
    assert_snapshot!("eval_running", screen(&s, 110, 24));
}

#[test]
fn eval_view_done_with_twins_and_loss() {
    use cutline::compare::loss::{Counts, Loss};
    use cutline::tui::event::{EvalEnd, EvalMsg};
    let (mut s, id) = eval_running();
    let (j, l) = (json_prompt(), jsonl_prompt());
    let mut cut = eval_summary(&j, "b", Some(64), (1, 2), true, None);
    cut.loss = Some(Loss {
        total: Counts {
            gold: 4,
            found: 1,
            cut_by_limit: 2,
            schema_rejected: 0,
            never_produced: 1,
            invented: 0,
        },
        ..Loss::default()
    });
    let ev = |msg| Event::Eval { id, msg };
    send(
        &mut s,
        [
            ev(EvalMsg::Finished(Box::new(cut))),
            ev(EvalMsg::Finished(Box::new(eval_summary(
                &j,
                "b",
                None,
                (3, 3),
                false,
                None,
            )))),
            ev(EvalMsg::Finished(Box::new(eval_summary(
                &l,
                "b",
                Some(64),
                (1, 2),
                true,
                None,
            )))),
            ev(EvalMsg::Finished(Box::new(eval_summary(
                &l,
                "b",
                None,
                (0, 0),
                false,
                Some("HTTP 400: the model \u{1b}[2Jgemma-9 does not exist"),
            )))),
            ev(EvalMsg::Done(EvalEnd::default())),
        ],
    );
    s.clock_ms = 20_000;
    assert_snapshot!("eval_done", screen(&s, 110, 30));
}

#[test]
fn eval_view_when_the_eval_cannot_start() {
    use cutline::tui::event::EvalMsg;
    let mut s = state();
    s.provider = cutline::tui::event::ProviderChoice::Local;
    s.local_installed = Some(true);
    let fx = send(&mut s, [ch('E'), ch('r')]);
    let [Effect::Eval(job)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    let id = job.id;
    send(
        &mut s,
        [Event::Eval {
            id,
            msg: EvalMsg::Failed(cutline::tui::eval::EvalError::NothingToRun(Some(
                "the local model is not installed: run `cutline setup`".into(),
            ))),
        }],
    );
    assert_snapshot!("eval_failed", screen(&s, 110, 14));
}

/// The TrustGraph push: the status line names the deployment pulled from;
/// `T`'s question shows every key's change word by word; a refusal its
/// reasons (80×24).
#[test]
fn trustgraph_push_states() {
    use cutline::tui::trustgraph::state::{KeyChange, Pulled, Ready, Stage, TgState};
    // A template over several lines: the unchanged ones away from the
    // change fold into `…`.
    let old = r#"{"prompt": "Find every term.\nReturn a JSON array of definitions.\n\nText:\n{{ text }}\nEnd.", "response-type": "json", "schema": {"type": "array", "items": {"type": "object"}}}"#;
    let new = r#"{"prompt": "Find every term.\nReturn one JSON object per line.\n\nText:\n{{ text }}\nEnd.", "response-type": "jsonl", "schema": {"type": "object"}}"#;
    let key = "template.extract-definitions";
    let ready = Ready {
        id: "extract-definitions".into(),
        keys: vec![KeyChange {
            key: key.into(),
            action: "replace",
            parts: cutline::tg::diff::review(key, Some(old), Some(new)),
        }],
        changes: Vec::new(),
        version: 7,
        write: Some(cutline::tui::trustgraph::state::LocalWrite {
            path: "tg/default/default.json".into(),
            before: Vec::new(),
            after: Vec::new(),
        }),
        warnings: Vec::new(),
        unsaved: false,
        top: 0,
    };
    let mut s = state();
    *s.parts.get_mut::<TgState>() = TgState {
        pulled: Some(Pulled {
            url: "http://127.0.0.1:8888/".into(),
            workspace: "default".into(),
            version: 7,
        }),
        stage: Stage::Idle,
    };
    assert_snapshot!("trustgraph_status", screen(&s, 80, 24));
    s.parts.get_mut::<TgState>().stage = Stage::Ask(Box::new(ready));
    s.mode = cutline::tui::state::Mode::Own(cutline::tui::trustgraph::ID);
    assert_snapshot!("trustgraph_ask", screen(&s, 80, 24));
    s.parts.get_mut::<TgState>().stage = Stage::Refused {
        id: "zz-summary".into(),
        lines: vec![
            "TrustGraph's prompt service would not load the workspace this push leaves; nothing was written:".into(),
            "template.zz-summary: ibis refuses the template (line 1: unexpected '+'): extract-definitions would serve, zz-summary would fail".into(),
        ],
    };
    assert_snapshot!("trustgraph_refused", screen(&s, 80, 24));
}

/// A JSON side cut before its first element closed: the Compare line says
/// the cut took everything, never "0 lost to the cut".
#[test]
fn compare_json_side_cut_before_any_item() {
    let mut s = state();
    s.max_tokens = Some(8);
    let a = finished(1, &json_prompt(), "[\n  {\"entity\": \"photosyn", FinishReason::Length);
    let b = finished(2, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length);
    s.shown = Some(Shown::Twins {
        json: Box::new(a),
        jsonl: Box::new(b),
    });
    send(&mut s, [ch('7')]);
    let shown = screen(&s, 110, 12);
    assert!(shown.contains("truncated, all lost to the cut"), "{shown}");
    assert_snapshot!("compare_json_cut_before_any_item", shown);
}

/// At 80×24 the help is longer than the screen: its title says which keys
/// are on show, the arrows and pages scroll it, End reaches the last key,
/// and any other key closes it.
#[test]
fn help_scrolls_at_80_by_24() {
    let mut s = state();
    s.size = (80, 24);
    send(&mut s, [ch('?')]);
    let first = screen(&s, 80, 24);
    assert!(first.contains("Keys 1–19 of 61"), "{first}");
    assert_snapshot!("help_80x24_top", first);
    send(&mut s, [key(KeyCode::End)]);
    let last = screen(&s, 80, 24);
    assert!(
        last.contains("close this help"),
        "the help's last line is reachable:\n{last}"
    );
    assert_snapshot!("help_80x24_end", last);
    send(&mut s, [key(KeyCode::PageUp), key(KeyCode::Down)]);
    assert_eq!(s.mode, cutline::tui::state::Mode::Help, "scrolling keeps it open");
    send(&mut s, [ch('x')]);
    assert_eq!(s.mode, cutline::tui::state::Mode::Normal, "any other key closes it");
}

/// At 80 columns a changed template line wraps instead of being cut before
/// its edit, and the words the migration changed are in reverse video
/// (issue 35, item 6): the bundled `extract-definitions`.
#[test]
fn migrate_wraps_long_lines_and_marks_changed_words_at_80() {
    let p = cutline::store::resolve("extract-definitions", std::path::Path::new("prompts")).unwrap();
    let mut s = with_prompt(p);
    s.size = (80, 24);
    send(&mut s, [ch('M')]);
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| cutline::tui::draw(f, &s)).unwrap();
    let shown = t.backend().to_string();
    assert!(shown.contains("JSONL: one"), "the edit is on screen:\n{shown}");
    let buf = t.backend().buffer();
    let reversed: String = buf
        .content()
        .iter()
        .filter(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED))
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(reversed.contains("JSONL:"), "changed words marked: {reversed:?}");
    assert_snapshot!("migrate_wrapped_80x24", shown);
}

/// Twins on the local model: the side the one llama-server slot has not
/// started yet says it is queued behind the other, and that Esc stops both.
#[test]
fn twins_on_the_local_model_show_the_queue() {
    let mut s = state();
    let mut a = finished(1, &json_prompt(), "[\n  {\"entity\": \"photo", FinishReason::Length);
    a.phase = cutline::tui::run::Phase::Streaming;
    a.provider = "local".into();
    let mut b = finished(2, &jsonl_prompt(), "", FinishReason::Length);
    b.phase = cutline::tui::run::Phase::Starting;
    b.provider = "local".into();
    s.shown = Some(Shown::Twins {
        json: Box::new(a),
        jsonl: Box::new(b),
    });
    s.tab = Tab::Run;
    let shown = screen(&s, 100, 24);
    assert!(shown.contains("queued behind extract-definitions"), "{shown}");
    assert_snapshot!("run_twins_local_queue", shown);
    let fx = send(&mut s, [key(KeyCode::Esc)]);
    assert_eq!(fx.len(), 2, "Esc stops both sides: {fx:?}");
}

/// A template from the deployment carrying a terminal escape (an OSC 52
/// clipboard write) is drawn through the sanitiser in the push question:
/// the escape shows as U+FFFD and never reaches the terminal.
#[test]
fn trustgraph_push_question_sanitises_the_deployments_text() {
    use cutline::tui::trustgraph::state::{KeyChange, Ready, Stage, TgState};
    let old = r#"{"prompt": "Return a JSON array.", "response-type": "json"}"#;
    let new = "{\"prompt\": \"Return JSONL.\\u001b]52;c;aGk=\\u0007\", \"response-type\": \"jsonl\"}";
    let key = "template.x";
    let mut s = state();
    s.parts.get_mut::<TgState>().stage = Stage::Ask(Box::new(Ready {
        id: "x".into(),
        keys: vec![KeyChange {
            key: key.into(),
            action: "replace",
            parts: cutline::tg::diff::review(key, Some(old), Some(new)),
        }],
        changes: Vec::new(),
        version: 1,
        write: None,
        warnings: vec!["template.x: \u{1b}[2J".into()],
        unsaved: false,
        top: 0,
    }));
    s.mode = cutline::tui::state::Mode::Own(cutline::tui::trustgraph::ID);
    let shown = screen(&s, 80, 24);
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown:?}");
    assert!(shown.contains("{+JSONL.\u{FFFD}]52;c;aGk=\u{FFFD}+}"), "{shown}");
}
