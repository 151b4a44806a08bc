//! The reducer without a terminal: keys in, state changes and effects out.

mod tui_support;

use std::fmt::Write as _;

use cutline::llm::FinishReason;
use cutline::tui::component::Id;
use cutline::tui::editor::Field;
use cutline::tui::event::{Effect, Event, ProviderChoice, RunMsg, Source};
use cutline::tui::keymap::Keymap;
use cutline::tui::run::Phase;
use cutline::tui::run::Shown;
use cutline::tui::state::{Mode, OutPane, Tab};
use cutline::tui::sweep::compute_sweep;
use cutline::tui::update;
use ratatui::crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use tui_support::*;

fn start_ids(effects: &[Effect]) -> Vec<u64> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Start(j) => Some(j.id),
            _ => None,
        })
        .collect()
}

#[test]
fn filter_narrows_and_esc_clears() {
    let mut s = state();
    send(&mut s, [ch('/'), ch('j'), ch('s'), ch('o'), ch('n'), ch('l')]);
    assert_eq!(s.mode, Mode::Filter);
    assert_eq!(s.prompts.filtered().len(), 2);
    send(&mut s, [key(KeyCode::Enter)]);
    assert_eq!(s.mode, Mode::Normal);
    assert_eq!(s.prompts.filter, "jsonl");
    send(&mut s, [ch('/'), key(KeyCode::Esc)]);
    assert!(s.prompts.filter.is_empty());
    assert_eq!(s.prompts.filtered().len(), 3);
}

#[test]
fn open_edit_and_save() {
    let mut s = state();
    send(&mut s, [key(KeyCode::Enter)]);
    assert_eq!(s.tab, Tab::Edit);
    assert_eq!(s.editor.as_ref().unwrap().base.id, "extract-definitions");
    send(&mut s, [ch('e'), ch('X')]);
    assert_eq!(s.mode, Mode::Insert);
    assert!(s.editor.as_ref().unwrap().dirty);
    // In insert mode letters are text, not actions.
    send(&mut s, [ch('r'), ch('q')]);
    assert!(!s.quit);
    assert_eq!(
        s.editor.as_ref().unwrap().text(Field::Template),
        "XrqExtract definitions from:\n{{ text }}\nJSON:"
    );
    let fx = send(&mut s, [ctrl('s')]);
    match fx.as_slice() {
        [Effect::Save(p)] => assert!(p.template.starts_with("XrqExtract")),
        other => panic!("{other:?}"),
    }
    send(&mut s, [key(KeyCode::Esc)]);
    assert_eq!(s.mode, Mode::Normal);
    let fx = send(&mut s, [Event::Saved(Ok("prompts/extract-definitions.toml".into()))]);
    assert!(matches!(fx.as_slice(), [Effect::LoadPrompts]));
    assert!(!s.editor.as_ref().unwrap().dirty);
}

#[test]
fn schema_error_is_at_its_line() {
    let mut s = state();
    send(&mut s, [key(KeyCode::Enter), key(KeyCode::Right), key(KeyCode::Right)]);
    assert_eq!(s.editor.as_ref().unwrap().field, Field::Schema);
    // Go to line 3 and break it.
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Down), ch('e'), ch('}')]);
    let e = s.editor.as_ref().unwrap();
    let err = e.errors[Field::Schema.index()].as_ref().expect("schema error");
    assert_eq!(err.line, 3, "{err:?}");
    assert!(e.errors[Field::Template.index()].is_none());
    // A run refuses to start with a broken schema.
    send(&mut s, [key(KeyCode::Esc)]);
    let fx = send(&mut s, [ch('r')]);
    assert!(start_ids(&fx).is_empty());
    assert!(s.message.as_ref().unwrap().error);
}

#[test]
fn limit_keys() {
    let mut s = state();
    assert_eq!(s.max_tokens, None);
    send(&mut s, [ch('+')]);
    assert_eq!(s.max_tokens, Some(256));
    send(&mut s, [ch('-'), ch('-')]);
    assert_eq!(s.max_tokens, Some(224));
    send(&mut s, [ch('0')]);
    assert_eq!(s.max_tokens, None);
    send(&mut s, [ch('-')]);
    assert_eq!(s.max_tokens, Some(256));
    send(
        &mut s,
        [ch('m'), ch('1'), ch('x'), ch('2'), ch('8'), key(KeyCode::Enter)],
    );
    assert_eq!(s.max_tokens, Some(128));
    assert_eq!(s.mode, Mode::Normal);
    send(&mut s, [ch('m'), ch('9'), key(KeyCode::Esc)]);
    assert_eq!(s.max_tokens, Some(128));
    send(&mut s, [ch('m'), ch('0'), key(KeyCode::Enter)]);
    assert_eq!(s.max_tokens, None);
}

#[test]
fn run_streams_and_cancels() {
    let mut s = state();
    send(&mut s, [ch('m'), ch('4'), ch('0'), key(KeyCode::Enter)]);
    let fx = send(&mut s, [ch('r')]);
    let job = match fx.as_slice() {
        [Effect::Start(j)] => j.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(job.provider, ProviderChoice::Replay);
    assert_eq!(job.max_tokens, Some(40));
    match &job.source {
        Source::Prompt(spec) => {
            assert_eq!(spec.prompt.id, "extract-definitions");
            assert_eq!(spec.vars["text"], "Plants turn light into sugar.");
            assert_eq!(spec.cli.max_tokens, Some(40));
        }
        Source::Recording { .. } => panic!("expected a prompt run"),
    }
    assert_eq!(s.tab, Tab::Run);
    let (msgs, _end) = stream(&tui_support::json_prompt(), TRUNCATED_ARRAY, 5, FinishReason::Length);
    send(
        &mut s,
        [Event::Run {
            id: job.id,
            msg: RunMsg::Started {
                provider: "replay".into(),
                note: None,
                at_ms: 0,
            },
        }],
    );
    let mut seen = Vec::new();
    for m in msgs.into_iter().take(40) {
        send(&mut s, [Event::Run { id: job.id, msg: m }]);
        seen.push(s.shown.as_ref().unwrap().json_side().elements.len());
    }
    // Elements appear one by one as they complete, not at the end.
    assert_eq!(seen.first(), Some(&0));
    assert!(seen.contains(&1) && seen.contains(&2), "{seen:?}");
    let r = s.shown.as_ref().unwrap().json_side();
    assert_eq!(r.phase, Phase::Streaming);
    assert!(r.json.is_none());
    let fx = send(&mut s, [key(KeyCode::Esc)]);
    assert!(matches!(fx.as_slice(), [Effect::Cancel(id)] if *id == job.id));
    let before = s.shown.as_ref().unwrap().json_side().text.clone();
    assert_eq!(s.shown.as_ref().unwrap().json_side().phase, Phase::Cancelled);
    // A late delta of the cancelled run changes nothing.
    send(
        &mut s,
        [Event::Run {
            id: job.id,
            msg: RunMsg::Delta {
                text: "more".into(),
                pieces: vec![],
                elements: vec![],
                lines: vec![],
            },
        }],
    );
    assert_eq!(s.shown.as_ref().unwrap().json_side().text, before);
}

#[test]
fn a_finished_run_has_both_parses() {
    let mut s = state();
    let fx = send(&mut s, [ch('r')]);
    let id = start_ids(&fx)[0];
    let (msgs, end) = stream(&tui_support::json_prompt(), TRUNCATED_ARRAY, 3, FinishReason::Length);
    send(&mut s, msgs.into_iter().map(|msg| Event::Run { id, msg }));
    send(&mut s, [Event::Run { id, msg: end }]);
    let r = s.shown.as_ref().unwrap().json_side();
    assert_eq!(r.phase, Phase::Done);
    assert_eq!(r.text, TRUNCATED_ARRAY);
    let j = r.json.as_ref().unwrap();
    assert!(j.error.as_ref().unwrap().truncated);
    assert_eq!(j.items.len(), 0);
    assert_eq!(j.salvaged.len(), 3);
    assert_eq!(r.salvaged_items(), 3);
    assert_eq!(r.finish, Some(FinishReason::Length));
    assert!(s.message.as_ref().unwrap().text.contains("max-token limit"));
}

#[test]
fn twins_run_as_a_pair() {
    let mut s = state();
    let fx = send(&mut s, [key(KeyCode::Down), ch('t')]);
    let ids = start_ids(&fx);
    assert_eq!(ids.len(), 2);
    let jobs: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Start(j) => Some(j.clone()),
            _ => None,
        })
        .collect();
    let prompt_ids: Vec<String> = jobs
        .iter()
        .map(|j| match &j.source {
            Source::Prompt(sp) => sp.prompt.id.clone(),
            Source::Recording { .. } => String::new(),
        })
        .collect();
    // The JSON side first, whichever of the pair was selected.
    assert_eq!(prompt_ids, ["extract-definitions", "extract-definitions-jsonl"]);
    let Some(Shown::Twins { json, jsonl }) = &s.shown else {
        panic!("not twins")
    };
    assert_eq!((json.id, jsonl.id), (ids[0], ids[1]));
    // Same input and limit for both.
    let vars: Vec<_> = jobs
        .iter()
        .map(|j| match &j.source {
            Source::Prompt(sp) => sp.vars.clone(),
            Source::Recording { .. } => serde_json::Map::default(),
        })
        .collect();
    assert_eq!(vars[0], vars[1]);
    // A prompt without a twin says so.
    send(
        &mut s,
        [ch('1'), key(KeyCode::Down), key(KeyCode::Down), key(KeyCode::Enter)],
    );
    let fx = send(&mut s, [ch('t')]);
    assert!(start_ids(&fx).is_empty());
    assert!(s.message.as_ref().unwrap().text.contains("has no twin"));
}

#[test]
fn sweep_cursor_recuts_both_panes() {
    let mut s = state();
    let fx = send(&mut s, [ch('r')]);
    let id = start_ids(&fx)[0];
    let (msgs, end) = stream(&tui_support::json_prompt(), TRUNCATED_ARRAY, 4, FinishReason::Stop);
    send(&mut s, msgs.into_iter().map(|msg| Event::Run { id, msg }));
    send(&mut s, [Event::Run { id, msg: end }]);
    let fx = send(&mut s, [ch('s')]);
    assert_eq!(s.tab, Tab::Sweep);
    let job = match fx.as_slice() {
        [Effect::Sweep(j)] => j.clone(),
        other => panic!("{other:?}"),
    };
    let data = compute_sweep(&job);
    assert!(!data.estimated, "recorded pieces are the cuts");
    send(&mut s, [Event::SweepReady(Box::new(data))]);
    let sw = s.sweep.ready().unwrap();
    let max = sw.max_tokens();
    assert_eq!(sw.cursor, max, "no limit: the cursor starts at the end");
    assert_eq!(sw.at(max), (0, 3, 0));
    // Back to a cut before the third element closed.
    let mut k = max;
    while s.sweep.ready().unwrap().at(k).1 == 3 {
        k -= 1;
    }
    for _ in k..max {
        send(&mut s, [key(KeyCode::Left)]);
    }
    let sw = s.sweep.ready().unwrap();
    assert_eq!(sw.cursor, k);
    let cut = sw.json_cut.as_ref().unwrap();
    assert_eq!(cut.json.salvaged.len(), 2);
    assert_eq!(sw.jsonl_cut.as_ref().unwrap().tokens, k);
    // Shift-→ jumps ten, clamped at the end.
    send(
        &mut s,
        [cutline::tui::Event::Key(ratatui::crossterm::event::KeyEvent::new(
            KeyCode::Right,
            KeyModifiers::SHIFT,
        ))],
    );
    assert_eq!(s.sweep.ready().unwrap().cursor, (k + 10).min(max));
}

#[test]
fn local_not_installed_names_the_setup_command() {
    let mut s = state();
    send(&mut s, [ch('p'), key(KeyCode::Down), key(KeyCode::Enter)]);
    assert_eq!(s.provider, ProviderChoice::Local);
    let m = s.message.clone().unwrap();
    assert!(m.error && m.text.contains("cutline setup local"), "{m:?}");
    let fx = send(&mut s, [ch('r')]);
    assert!(start_ids(&fx).is_empty());
    send(&mut s, [ch('p'), key(KeyCode::Up), key(KeyCode::Enter)]);
    assert_eq!(s.provider, ProviderChoice::Replay);
}

#[test]
fn help_quit_and_ctrl_c() {
    let mut s = state();
    send(&mut s, [ch('?')]);
    assert_eq!(s.mode, Mode::Help);
    send(&mut s, [ch('x')]);
    assert_eq!(s.mode, Mode::Normal);
    let fx = send(&mut s, [ch('q')]);
    assert!(matches!(fx.last(), Some(Effect::Quit)));
    let mut s = state();
    send(&mut s, [key(KeyCode::Enter), ch('e')]);
    assert_eq!(s.mode, Mode::Insert);
    let fx = send(&mut s, [ctrl('c')]);
    assert!(matches!(fx.last(), Some(Effect::Quit)));
    let mut s = state();
    let fx = send(&mut s, [Event::Terminate]);
    assert!(matches!(fx.last(), Some(Effect::Quit)));
}

#[test]
fn rebound_keys_drive_the_reducer() {
    let mut s = state();
    let mut km = Keymap::defaults();
    let t: toml::Table = "run = \"x\"\nquit = \"ctrl-q\"".parse().unwrap();
    assert!(km.apply_table(&t).is_empty());
    s.keymap = km;
    assert!(start_ids(&send(&mut s, [ch('r')])).is_empty());
    assert_eq!(start_ids(&send(&mut s, [ch('x')])).len(), 1);
    assert!(send(&mut s, [ch('q')]).is_empty());
    assert!(matches!(send(&mut s, [ctrl('q')]).last(), Some(Effect::Quit)));
}

#[test]
fn mouse_scrolls_the_pane_under_it_and_tabs_click() {
    let mut s = state();
    let text: String = (0..500).fold(String::new(), |mut t, i| {
        let _ = writeln!(t, "{{\"entity\": \"e{i}\", \"definition\": \"d\"}}");
        t
    });
    show(
        &mut s,
        finished(7, &tui_support::jsonl_prompt(), &text, FinishReason::Stop),
    );
    // The JSONL pane is bottom right.
    let (w, h) = s.size;
    let ev = |kind| {
        Event::Mouse(MouseEvent {
            kind,
            column: w - 5,
            row: h - 6,
            modifiers: KeyModifiers::NONE,
        })
    };
    assert!(s.scroll(OutPane::Jsonl).follow);
    send(&mut s, [ev(MouseEventKind::ScrollUp)]);
    assert!(!s.scroll(OutPane::Jsonl).follow);
    let top = s.scroll(OutPane::Jsonl).top;
    send(&mut s, [ev(MouseEventKind::ScrollUp)]);
    assert_eq!(s.scroll(OutPane::Jsonl).top, top - 3);
    assert!(s.scroll(OutPane::Json).follow, "the other pane did not move");
    send(
        &mut s,
        [ev(MouseEventKind::Down(ratatui::crossterm::event::MouseButton::Left))],
    );
    assert_eq!(s.focus, OutPane::Jsonl);
    // Click the Sessions tab.
    let x = cutline::tui::layout::tab_spans()
        .into_iter()
        .find(|t| t.0 == Tab::Sessions)
        .unwrap()
        .1;
    send(
        &mut s,
        [Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(ratatui::crossterm::event::MouseButton::Left),
            column: x + 1,
            row: 0,
            modifiers: KeyModifiers::NONE,
        })],
    );
    assert_eq!(s.tab, Tab::Sessions);
    send(&mut s, [Event::Resize(40, 12)]);
    assert_eq!(s.size, (40, 12));
}

#[test]
fn keyboard_scrolling_of_a_long_response() {
    let mut s = state();
    let text: String = (0..50_000).fold(String::new(), |mut t, i| {
        let _ = writeln!(t, "{{\"entity\": \"e{i}\", \"definition\": \"d\"}}");
        t
    });
    show(
        &mut s,
        finished(9, &tui_support::jsonl_prompt(), &text, FinishReason::Stop),
    );
    s.focus = OutPane::Jsonl;
    send(&mut s, [key(KeyCode::Home)]);
    assert_eq!(s.scroll(OutPane::Jsonl).top, 0);
    send(&mut s, [key(KeyCode::PageDown), key(KeyCode::Down)]);
    assert!(s.scroll(OutPane::Jsonl).top > 1);
    send(&mut s, [key(KeyCode::End)]);
    assert!(s.scroll(OutPane::Jsonl).follow);
    let out = screen(&s, 100, 30);
    assert!(out.contains("50000"), "the last lines are on screen");
}

#[test]
fn sessions_reopen_and_replay_at_another_limit() {
    let mut s = state();
    let session = recorded_session();
    send(&mut s, [Event::SessionsLoaded(vec![session]), ch('5')]);
    assert_eq!(s.tab, Tab::Sessions);
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter)]);
    assert_eq!(s.tab, Tab::Run);
    let r = s.shown.as_ref().unwrap().json_side();
    assert_eq!(r.phase, Phase::Done);
    assert_eq!(r.jsonl.counts.ok, 2);
    assert_eq!(r.note.as_deref(), Some("recorded demo#1"));
    send(&mut s, [ch('m'), ch('9'), key(KeyCode::Enter)]);
    let fx = send(&mut s, [ch('r')]);
    match fx.as_slice() {
        [Effect::Start(j)] => {
            assert_eq!(j.max_tokens, Some(9));
            assert_eq!(j.provider, ProviderChoice::Replay);
            assert!(matches!(&j.source, Source::Recording { reference, .. } if reference == "demo#1"));
        }
        other => panic!("{other:?}"),
    }
}

/// A session holding one recorded JSONL run.
pub fn recorded_session() -> cutline::session::Session {
    let text = VALID_JSONL;
    let pieces: Vec<cutline::llm::Piece> = pieces(text, 6)
        .into_iter()
        .map(|t| cutline::llm::Piece {
            text: t,
            ms: 1,
            delta: false,
        })
        .collect();
    let run = cutline::session::RunRecord {
        kind: cutline::session::RecordKind::Run,
        run_id: "demo#1".into(),
        started_ms: 1,
        prompt_id: "extract-definitions-jsonl".into(),
        response_type: cutline::prompt::ResponseType::Jsonl,
        prompt: serde_json::json!({}),
        system: String::new(),
        rendered: "Extract".into(),
        variables: serde_json::Map::new(),
        provider: cutline::llm::ProviderInfo {
            name: "local".into(),
            kind: "llama-server".into(),
            model: "gemma-3-270m".into(),
            base_url: None,
        },
        params: cutline::session::Params::default(),
        text: text.into(),
        finish: FinishReason::Stop,
        raw_reason: None,
        usage: cutline::llm::Usage {
            prompt_tokens: Some(10),
            completion_tokens: u32::try_from(pieces.len()).ok(),
            ..Default::default()
        },
        pieces,
        error: None,
        first_token_ms: Some(1),
        total_ms: 40,
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
    cutline::session::Session {
        path: "sessions/demo.jsonl".into(),
        header: cutline::session::Header {
            kind: cutline::session::HeaderKind::Session,
            version: 1,
            id: "demo".into(),
            created_ms: 0,
        },
        runs: vec![run],
        warnings: vec![],
    }
}

#[test]
fn a_cut_inside_a_multibyte_character_neither_panics_nor_garbles() {
    let p = tui_support::jsonl_prompt();
    let schemas = cutline::tui::run::schemas_for(&p);
    let text = JSONL_WITH_ERRORS;
    for b in 0..=text.len() {
        let c = cutline::tui::run::cut(text, b, b, &schemas);
        assert_eq!(c.bytes, b);
    }
    // Pieces that split a character (byte-level tokens) still draw.
    let mut s = state();
    show(&mut s, finished(3, &p, text, FinishReason::Length));
    let out = screen(&s, 100, 30);
    assert!(out.contains("光合作用"));
    let _ = update(&mut s, Event::Resize(7, 5));
    let _ = screen(&s, 7, 5);
}

#[test]
fn quitting_with_unsaved_edits_asks_once() {
    let mut s = state();
    send(&mut s, [key(KeyCode::Enter), ch('e'), ch('x'), key(KeyCode::Esc)]);
    let fx = send(&mut s, [ch('q')]);
    assert!(fx.is_empty());
    assert!(s.message.as_ref().unwrap().text.contains("unsaved"));
    // Another key in between drops the question: q asks again.
    let fx = send(&mut s, [key(KeyCode::Down), ch('q')]);
    assert!(fx.is_empty());
    // The answer does not live in the message: clearing it changes nothing.
    s.message = None;
    let fx = send(&mut s, [ch('q')]);
    assert!(matches!(fx.last(), Some(Effect::Quit)));
}

#[test]
fn template_error_is_at_its_line() {
    let mut s = state();
    send(&mut s, [key(KeyCode::Enter), key(KeyCode::Down), ch('e')]);
    send(&mut s, "{% if %}".chars().map(ch));
    let e = s.editor.as_ref().unwrap();
    let err = e.errors[Field::Template.index()].as_ref().expect("template error");
    assert_eq!(err.line, 2, "{err:?}");
    assert!(e.rendered.is_err());
    assert!(e.errors[Field::System.index()].is_none());
}

#[test]
fn next_sample_input_is_what_runs() {
    let mut s = state();
    let mut p = tui_support::json_prompt();
    let mut other = p.inputs[0].clone();
    other.name = "ja".into();
    other
        .vars
        .insert("text".into(), "光合成とは植物が糖を作る過程である。".into());
    p.inputs.push(other);
    send(
        &mut s,
        [Event::PromptsLoaded {
            prompts: vec![p],
            errors: vec![],
            warnings: vec![],
        }],
    );
    send(&mut s, [key(KeyCode::Enter), ch('n')]);
    let e = s.editor.as_ref().unwrap();
    assert_eq!(e.input_name.as_deref(), Some("ja"));
    assert_eq!(e.text(Field::Input), "光合成とは植物が糖を作る過程である。");
    let fx = send(&mut s, [ch('r')]);
    match fx.as_slice() {
        [Effect::Start(j)] => match &j.source {
            Source::Prompt(spec) => assert_eq!(spec.vars["text"], "光合成とは植物が糖を作る過程である。"),
            Source::Recording { .. } => panic!("prompt run expected"),
        },
        other => panic!("{other:?}"),
    }
    send(&mut s, [ch('2'), ch('n')]);
    assert_eq!(s.editor.as_ref().unwrap().input_name.as_deref(), Some("photosynthesis"));
}

fn configured_entries() -> Vec<cutline::tui::event::ProviderEntry> {
    use cutline::llm::config::{Kind, ProviderConfig};
    let mut a = ProviderConfig::new("openai", Kind::Openai);
    a.model = Some("gpt-4o-mini".into());
    let b = ProviderConfig::new("claude", Kind::Anthropic);
    vec![
        cutline::tui::event::ProviderEntry {
            config: a,
            key_set: true,
        },
        cutline::tui::event::ProviderEntry {
            config: b,
            key_set: false,
        },
    ]
}

#[test]
fn provider_picker_chooses_a_configured_provider_and_its_model() {
    let mut s = state();
    let fx = send(&mut s, [ch('p')]);
    assert!(matches!(fx.as_slice(), [Effect::LoadProviders]));
    assert_eq!(s.mode, Mode::Picker);
    send(&mut s, [Event::ProvidersLoaded(Ok(configured_entries()))]);
    // Row 2 is the first configured provider; e edits its model.
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Down), ch('e')]);
    assert!(matches!(s.mode, Mode::ModelInput(_)));
    assert_eq!(s.mode, Mode::ModelInput("gpt-4o-mini".into()));
    for _ in 0.."mini".len() {
        send(&mut s, [key(KeyCode::Backspace)]);
    }
    send(&mut s, [ch('o'), key(KeyCode::Enter)]);
    assert_eq!(s.mode, Mode::Picker);
    send(&mut s, [key(KeyCode::Enter)]);
    assert_eq!(s.mode, Mode::Normal);
    assert_eq!(
        s.provider,
        ProviderChoice::Configured {
            name: "openai".into(),
            model: Some("gpt-4o-o".into())
        }
    );
    // Runs go to it.
    let fx = send(&mut s, [ch('r')]);
    let job = fx
        .iter()
        .find_map(|e| match e {
            Effect::Start(j) => Some(j.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(job.provider, s.provider);
    // A provider whose key is missing can be chosen, with an error saying so.
    send(&mut s, [ch('p'), key(KeyCode::End), key(KeyCode::Enter)]);
    let m = s.message.clone().unwrap();
    assert!(m.error && m.text.contains("$ANTHROPIC_API_KEY is not set"), "{m:?}");
    // Esc closes without choosing.
    send(&mut s, [ch('p'), key(KeyCode::Home), key(KeyCode::Esc)]);
    assert_eq!(s.mode, Mode::Normal);
    assert_eq!(s.provider.label(), "claude");
}

#[test]
fn a_bad_provider_config_is_reported_and_falls_back() {
    let opts = cutline::tui::TuiOptions {
        provider: Some("openai".into()),
        ..Default::default()
    };
    let mut s = cutline::tui::initial_state(
        &opts,
        Keymap::defaults(),
        cutline::tui::theme::Theme { color: false },
        false,
    );
    assert_eq!(s.provider.label(), "openai");
    send(
        &mut s,
        [Event::ProvidersLoaded(Err(cutline::llm::config::ProvidersFileError {
            path: "./cutline.toml".into(),
            at: Some((3, 9)),
            message: "expected `=`".into(),
            source: None,
        }))],
    );
    let m = s.message.clone().unwrap();
    assert!(m.error && m.text.contains("cutline.toml:3:9"), "{m:?}");
    assert_eq!(s.picker.error.as_deref(), Some("./cutline.toml:3:9: expected `=`"));
    // Known at start by name: picks up the configured model once loaded.
    let mut s = cutline::tui::initial_state(
        &opts,
        Keymap::defaults(),
        cutline::tui::theme::Theme { color: false },
        false,
    );
    send(&mut s, [Event::ProvidersLoaded(Ok(configured_entries()))]);
    assert_eq!(
        s.provider,
        ProviderChoice::Configured {
            name: "openai".into(),
            model: Some("gpt-4o-mini".into())
        }
    );
}

#[test]
fn migrate_writes_with_confirm_and_runs_the_pair() {
    use cutline::tui::event::WriteOutcome;
    let mut s = state();
    send(&mut s, [ch('M')]);
    assert_eq!(s.tab, Tab::Migrate);
    let m = s.migrate.as_ref().unwrap();
    // The first free id: the loaded twin has `extract-definitions-jsonl`.
    assert_eq!(m.target, "prompts/extract-definitions-jsonl-2.toml");
    assert!(m.result.is_ok());
    let fx = send(&mut s, [ch('W')]);
    match fx.as_slice() {
        [Effect::WriteMigrated { config, overwrite }] => {
            assert!(!overwrite);
            assert_eq!(config.id, "extract-definitions-jsonl-2");
            assert_eq!(config.origin.file, "prompts/extract-definitions-jsonl-2.toml");
            assert_eq!(config.twin.as_deref(), Some("extract-definitions"));
        }
        other => panic!("{other:?}"),
    }
    // It exists: nothing written until the key again.
    let fx = send(
        &mut s,
        [Event::MigrateWritten(WriteOutcome::Exists(
            "prompts/extract-definitions-jsonl-2.toml".into(),
        ))],
    );
    assert!(fx.is_empty());
    assert!(s.migrate.as_ref().unwrap().confirm_overwrite);
    let fx = send(&mut s, [ch('W')]);
    assert!(matches!(fx.as_slice(), [Effect::WriteMigrated { overwrite: true, .. }]));
    let fx = send(
        &mut s,
        [Event::MigrateWritten(WriteOutcome::Written(
            "prompts/extract-definitions-jsonl-2.toml".into(),
        ))],
    );
    assert!(matches!(fx.as_slice(), [Effect::LoadPrompts]));
    // t on the Migrate tab runs the original and the migration as a pair.
    send(&mut s, [ch('6')]);
    let fx = send(&mut s, [ch('t')]);
    let ids: Vec<(String, cutline::prompt::ResponseType)> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Start(j) => match &j.source {
                Source::Prompt(sp) => Some((sp.prompt.id.clone(), sp.prompt.response_type)),
                Source::Recording { .. } => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("extract-definitions".into(), cutline::prompt::ResponseType::Json),
            (
                "extract-definitions-jsonl-2".into(),
                cutline::prompt::ResponseType::Jsonl
            )
        ]
    );
    assert!(s.shown.as_ref().unwrap().twins());
    // A JSONL prompt has no migration; writing says so.
    send(&mut s, [ch('1'), key(KeyCode::Down), ch('M')]);
    assert!(s.migrate.as_ref().unwrap().result.is_err());
    assert!(send(&mut s, [ch('W')]).is_empty());
    assert!(s.message.as_ref().unwrap().error);
}

#[test]
fn a_finished_pair_is_compared_with_its_gold_set() {
    let mut s = state();
    let fx = send(&mut s, [ch('t')]);
    let ids = start_ids(&fx);
    let (ma, ea) = stream(&json_prompt(), TRUNCATED_ARRAY, 7, FinishReason::Length);
    let (mb, eb) = stream(&jsonl_prompt(), JSONL_WITH_ERRORS, 7, FinishReason::Length);
    for m in ma {
        send(&mut s, [Event::Run { id: ids[0], msg: m }]);
    }
    for m in mb {
        send(&mut s, [Event::Run { id: ids[1], msg: m }]);
    }
    assert!(send(&mut s, [Event::Run { id: ids[0], msg: ea }]).is_empty());
    let fx = send(&mut s, [Event::Run { id: ids[1], msg: eb }]);
    let want = vec!["extract-definitions".to_owned(), "extract-definitions-jsonl".to_owned()];
    assert!(
        fx.iter().any(|e| matches!(e, Effect::LoadGold(v) if *v == want)),
        "{fx:?}"
    );
    let r = s.compare.report.as_ref().unwrap().as_ref().unwrap();
    // The array was cut: a strict consumer keeps nothing, three were lost.
    assert_eq!(r.a.kept, 0);
    assert_eq!(r.a.lost_to_truncation, 3);
    assert_eq!(r.b.kept, 2);
    assert!(r.total.gold.is_none());
    let gold = vec![serde_json::json!({"entity": "photosynthesis", "definition": "how plants make sugar from light"})];
    send(
        &mut s,
        [Event::GoldLoaded {
            ids: want,
            result: Ok(Some(("gold.jsonl".into(), gold))),
        }],
    );
    let r = s.compare.report.as_ref().unwrap().as_ref().unwrap();
    let [a, b] = r.total.gold.clone().unwrap();
    assert_eq!((a.true_positives, b.true_positives), (0, 1));
    // A gold set for another pair is ignored.
    send(
        &mut s,
        [Event::GoldLoaded {
            ids: vec!["other".into()],
            result: Err(cutline::eval::inputs::InputsError {
                file: "other.jsonl".into(),
                line: Some(1),
                column: None,
                message: "bad".into(),
                source: None,
            }),
        }],
    );
    assert!(s.compare.gold_error.is_none());
    // Scrolling the tab never panics.
    send(
        &mut s,
        [ch('7'), key(KeyCode::PageDown), key(KeyCode::End), key(KeyCode::Home)],
    );
}

#[test]
fn migrate_keys_are_rebindable() {
    let mut s = state();
    let mut km = Keymap::defaults();
    let t: toml::Table = "migrate = \"F6\"\nmigrate_write = \"ctrl-w\"".parse().unwrap();
    assert!(km.apply_table(&t).is_empty());
    s.keymap = km;
    send(&mut s, [ch('M')]);
    assert!(s.migrate.is_none());
    send(&mut s, [key(KeyCode::F(6))]);
    assert!(s.migrate.is_some());
    assert!(send(&mut s, [ch('W')]).is_empty());
    assert!(matches!(
        send(&mut s, [ctrl('w')]).as_slice(),
        [Effect::WriteMigrated { .. }]
    ));
}

#[test]
fn a_pinned_run_is_compared_with_the_next_one() {
    let mut s = state();
    assert!(send(&mut s, [ch('P')]).is_empty());
    assert!(s.pinned.is_none());
    show(
        &mut s,
        finished(1, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length),
    );
    send(&mut s, [ch('P')]);
    assert_eq!(s.pinned.as_ref().map(|r| r.id), Some(1));
    // The same run on show is no pair yet.
    send(&mut s, [ch('7')]);
    assert!(s.compare.report.as_ref().unwrap().is_err());
    // The same prompt at another limit is.
    show(&mut s, finished(2, &json_prompt(), VALID_ARRAY, FinishReason::Stop));
    let fx = send(&mut s, [ch('3'), ch('7')]);
    assert!(
        matches!(fx.as_slice(), [Effect::LoadGold(ids)] if *ids == vec!["extract-definitions".to_owned()]),
        "{fx:?}"
    );
    let r = s.compare.report.as_ref().unwrap().as_ref().unwrap();
    assert_eq!((r.a.kept, r.b.kept), (0, 2));
    assert_eq!((r.total.both, r.total.only_b), (0, 2));
    assert!(s.compare.labels[0].contains("@ "), "{:?}", s.compare.labels);
}

#[test]
fn the_migrate_tab_follows_the_selection() {
    let mut s = state();
    send(&mut s, [ch('6')]);
    assert_eq!(s.migrate.as_ref().unwrap().source.id, "extract-definitions");
    send(&mut s, [key(KeyCode::PageDown), key(KeyCode::End)]);
    let top = s.migrate.as_ref().unwrap().top;
    assert!(top > 0);
    // Back to the same prompt: the view (and its scroll) is kept.
    send(&mut s, [ch('1'), ch('6')]);
    assert_eq!(s.migrate.as_ref().unwrap().top, top);
    // Another selection: migrated afresh.
    send(&mut s, [ch('1'), key(KeyCode::Down), key(KeyCode::Down), ch('6')]);
    let m = s.migrate.as_ref().unwrap();
    assert_eq!(m.source.id, "extract-graph-jsonl");
    assert!(m.result.is_err());
    assert_eq!(m.top, 0);
}

/// No sequence of keys, resizes and results panics the reducer or a frame:
/// a seeded random walk over every bound key (and typing keys) through
/// every tab and mode, drawing at sizes down to a single cell.
#[test]
fn random_keys_and_sizes_never_panic() {
    use ratatui::crossterm::event::KeyEvent;
    let codes: Vec<KeyCode> = "qtrsWMPpe?/mnN0123456789+-=<>[]hjklgGvoiRxcy/"
        .chars()
        .map(KeyCode::Char)
        .chain([
            KeyCode::Enter,
            KeyCode::Esc,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Backspace,
        ])
        .collect();
    let sizes = [(1u16, 1u16), (10, 5), (40, 12), (100, 30), (200, 60)];
    for seed in 0..6u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut s = state();
        s.shown = Some(Shown::Twins {
            json: Box::new(finished(90, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length)),
            jsonl: Box::new(finished(91, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length)),
        });
        send(&mut s, [Event::ProvidersLoaded(Ok(configured_entries()))]);
        for i in 0..600 {
            let code = codes[rng.usize(..codes.len())];
            let mods = match rng.u8(..20) {
                0 | 1 => KeyModifiers::SHIFT,
                // Ctrl-O (the external editor) and Ctrl-S among the rest.
                2 => KeyModifiers::CONTROL,
                _ => KeyModifiers::NONE,
            };
            // Ctrl-C quits: leave it out so the walk goes on.
            if mods == KeyModifiers::CONTROL && code == KeyCode::Char('c') {
                continue;
            }
            let code = if mods == KeyModifiers::CONTROL && rng.bool() {
                KeyCode::Char('o')
            } else {
                code
            };
            for fx in update(&mut s, Event::Key(KeyEvent::new(code, mods))) {
                // The editor's answer, as the event loop would send it.
                if let Effect::EditExternally { field, text, .. } = fx {
                    let _ = update(
                        &mut s,
                        Event::EditedExternally {
                            field,
                            result: Ok(format!("{text}x")),
                        },
                    );
                }
            }
            s.quit = false;
            if i % 50 == 0 {
                let (w, h) = sizes[rng.usize(..sizes.len())];
                let _ = update(&mut s, Event::Resize(w, h));
                let _ = screen(&s, w, h);
            }
        }
        let _ = screen(&s, 100, 30);
    }
}

/// A bracketed paste is one event, inserted in one step: a 10 KB paste
/// (with the terminal's `\r` line ends) lands whole, and a Ctrl-S right
/// after it saves all of it.
#[test]
fn a_paste_is_inserted_in_one_step_and_a_save_after_it_has_it_all() {
    let mut s = state();
    send(&mut s, [key(KeyCode::Enter), ch('e')]);
    assert_eq!(s.mode, Mode::Insert);
    let mut pasted = String::new();
    for i in 0..200 {
        let _ = writeln!(
            pasted,
            "pasted line {i:03} of a ten kilobyte paste, fifty-one bytes a line"
        );
    }
    assert!(pasted.len() >= 10_000);
    let fx = update(&mut s, Event::Paste(pasted.replace('\n', "\r")));
    assert!(fx.is_empty(), "{fx:?}");
    let e = s.editor.as_ref().unwrap();
    assert!(e.dirty);
    assert_eq!(
        e.text(Field::Template),
        format!("{pasted}Extract definitions from:\n{{{{ text }}}}\nJSON:")
    );
    let fx = send(&mut s, [ctrl('s')]);
    match fx.as_slice() {
        [Effect::Save(p)] => assert!(p.template.contains("pasted line 199"), "{}", p.template),
        other => panic!("{other:?}"),
    }
    // In normal mode a paste is never taken as commands.
    send(&mut s, [key(KeyCode::Esc)]);
    let fx = update(&mut s, Event::Paste("qqq".into()));
    assert!(fx.is_empty() && !s.quit);
    // A filter takes the first line of a paste.
    send(&mut s, [ch('/')]);
    update(&mut s, Event::Paste("jsonl\rmore".into()));
    assert_eq!(s.prompts.filter, "jsonl");
}

/// Keys that only type (a paste in a terminal without bracketed paste) are
/// joined by the event loop into one insertion; a key that does more (Ctrl-S)
/// ends the run and is handled after it.
#[test]
fn a_run_of_typed_keys_is_one_insertion() {
    use cutline::tui::paste::Typed;
    let mut s = state();
    send(&mut s, [key(KeyCode::Enter), ch('e')]);
    let mut typed = Typed::default();
    let mut handled = Vec::new();
    for ev in [ch('a'), ch('B'), key(KeyCode::Enter), ch('c'), ctrl('s')] {
        if let Some(ev) = typed.take(&s, ev) {
            handled.push(typed.flush().expect("the run before Ctrl-S"));
            handled.push(ev);
        }
    }
    assert!(typed.flush().is_none());
    assert!(matches!(&handled[0], Event::Paste(t) if t == "aB\nc"), "{handled:?}");
    let mut fx = Vec::new();
    for ev in handled {
        fx.extend(update(&mut s, ev));
    }
    match fx.as_slice() {
        [Effect::Save(p)] => assert!(p.template.starts_with("aB\ncExtract"), "{}", p.template),
        other => panic!("{other:?}"),
    }
    // Outside insert mode keys are commands, never joined.
    send(&mut s, [key(KeyCode::Esc)]);
    assert!(typed.take(&s, ch('q')).is_some());
}

/// `y` copies the focused response, or in a parse pane the kept items one
/// per line, through an OSC 52 effect, and says what it copied.
#[test]
fn copy_takes_the_focused_response_or_its_kept_items() {
    let mut s = state();
    let fx = send(&mut s, [ch('y')]);
    assert!(fx.is_empty());
    assert!(s.message.as_ref().unwrap().text.starts_with("nothing to copy"));
    show(
        &mut s,
        finished(1, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length),
    );
    s.focus = OutPane::Response;
    let fx = send(&mut s, [ch('y')]);
    assert!(
        matches!(fx.as_slice(), [Effect::Copy(t)] if t == TRUNCATED_ARRAY),
        "{fx:?}"
    );
    assert_eq!(
        s.message.as_ref().unwrap().text,
        format!("copied the response ({} B) to the clipboard", TRUNCATED_ARRAY.len())
    );
    s.focus = OutPane::Json;
    let fx = send(&mut s, [ch('y')]);
    let salvaged = s
        .shown
        .as_ref()
        .unwrap()
        .json_side()
        .json
        .as_ref()
        .unwrap()
        .salvaged
        .clone();
    let expected: Vec<String> = salvaged.iter().map(ToString::to_string).collect();
    assert!(
        matches!(fx.as_slice(), [Effect::Copy(t)] if *t == expected.join("\n")),
        "{fx:?}"
    );
    assert!(s.message.as_ref().unwrap().text.starts_with("copied 3 kept items"));
}

/// `c` continues only a JSONL answer the limit cut; anything else says so.
#[test]
fn continue_needs_a_cut_jsonl_answer() {
    let mut s = state();
    assert!(send(&mut s, [ch('c')]).is_empty());
    assert!(
        s.message
            .as_ref()
            .unwrap()
            .text
            .starts_with("c continues a JSONL answer the limit cut")
    );
    show(&mut s, finished(1, &jsonl_prompt(), VALID_JSONL, FinishReason::Stop));
    assert!(send(&mut s, [ch('c')]).is_empty(), "an answer that ended on its own");
    show(
        &mut s,
        finished(2, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length),
    );
    assert!(
        send(&mut s, [ch('c')]).is_empty(),
        "a JSON array is not continued line by line"
    );
}

/// `c` hands the runner the model's own token ids behind the cut answer
/// when the view has them, so llama-server goes on from those tokens.
#[test]
fn continue_carries_the_token_ids_of_the_answer_on_show() {
    let mut s = state();
    // The JSONL prompt open, as after running it.
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter)]);
    let mut cut = finished(1, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length);
    cut.token_ids = Some(vec![5, 6, 7]);
    show(&mut s, cut);
    let fx = send(&mut s, [ch('c')]);
    assert!(
        matches!(fx.as_slice(), [Effect::Start(j)]
            if j.prefill.text == JSONL_WITH_ERRORS && j.prefill.token_ids == Some(vec![5, 6, 7])),
        "{fx:?} {:?}",
        s.message
    );
}

/// `c` on an answer the provider left incomplete with its continuation
/// token (Gemini's `CONTINUATION`), whatever its type, hands the runner
/// that token, as `run --continue` resends it; without a token such an
/// answer is not continued.
#[test]
fn continue_carries_the_continuation_token_of_the_answer_on_show() {
    let mut s = state();
    // The JSON prompt open, as after running it.
    send(&mut s, [key(KeyCode::Enter)]);
    let mut left = finished(1, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Incomplete);
    show(&mut s, left.clone());
    assert!(send(&mut s, [ch('c')]).is_empty(), "no token, nothing to resend");
    left.continuation_token = Some("Q0hFQ0tQT0lOVC0x".into());
    show(&mut s, left);
    let fx = send(&mut s, [ch('c')]);
    assert!(
        matches!(fx.as_slice(), [Effect::Start(j)]
            if j.prefill.text == TRUNCATED_ARRAY
                && j.prefill.continuation_token.as_deref() == Some("Q0hFQ0tQT0lOVC0x")
                && j.prefill.token_ids.is_none()),
        "{fx:?} {:?}",
        s.message
    );
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "continuing the answer by the provider's continuation token, as the same request"
    );
}

/// A continuation call the provider refuses says so in the status line,
/// as a failed continuation with the answer before it kept, not as a run
/// that failed (issue 24); a plain run's failure keeps its own words.
#[test]
fn a_refused_continuation_says_so_in_the_status_line() {
    let refused = "BadRequest (HTTP 400): This model does not support assistant message prefill.";
    for continuing in [true, false] {
        let mut s = state();
        send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter)]);
        show(
            &mut s,
            finished(1, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length),
        );
        let fx = send(&mut s, [ch(if continuing { 'c' } else { 'r' })]);
        let [Effect::Start(job)] = fx.as_slice() else {
            panic!("{fx:?}");
        };
        let (_, end) = stream(&jsonl_prompt(), JSONL_WITH_ERRORS, 8, FinishReason::Error);
        let RunMsg::Done(mut end) = end else { unreachable!() };
        end.error = Some(cutline::llm::LlmError {
            kind: cutline::llm::ErrorKind::BadRequest,
            status: Some(400),
            message: "This model does not support assistant message prefill.".into(),
            source: None,
        });
        send(
            &mut s,
            [Event::Run {
                id: job.id,
                msg: RunMsg::Done(end),
            }],
        );
        let msg = s.message.as_ref().unwrap();
        let expected = if continuing {
            format!("continuation refused: {refused}; the answer before it is kept")
        } else {
            format!("run failed: {refused}")
        };
        assert_eq!(msg.text, expected);
        assert!(msg.error, "shown as an error");
    }
}

/// Ctrl-O hands the focused field to the external editor (with a suffix
/// for its syntax) and takes its text back: the field changes, is dirty and
/// revalidated; an editor that failed leaves it as it was (issue 13).
#[test]
fn ctrl_o_edits_the_focused_field_externally() {
    let mut s = state();
    let fx = send(&mut s, [ctrl('o')]);
    assert!(fx.is_empty());
    assert!(s.message.as_ref().unwrap().text.starts_with("Ctrl-O edits a field"));
    send(&mut s, [key(KeyCode::Enter), key(KeyCode::Right), key(KeyCode::Right)]);
    let schema = s.editor.as_ref().unwrap().areas[Field::Schema.index()]
        .lines()
        .join("\n");
    // From normal mode and from insert mode alike.
    for keys in [vec![ctrl('o')], vec![ch('e'), ctrl('o')]] {
        let fx = send(&mut s, keys);
        match fx.as_slice() {
            [Effect::EditExternally { field, text, suffix }] => {
                assert_eq!(*field, Field::Schema);
                assert_eq!(*text, schema);
                assert_eq!(*suffix, ".json");
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(s.mode, Mode::Insert, "typing goes on after the editor");
    // The same text back: nothing changes.
    send(
        &mut s,
        [Event::EditedExternally {
            field: Field::Schema,
            result: Ok(schema.clone()),
        }],
    );
    assert!(!s.editor.as_ref().unwrap().dirty);
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "Schema: unchanged in the external editor"
    );
    // A broken schema back: the field holds it, with its error at its line.
    let broken = "{\n  \"type\": \"object\",\n  \"properties\": }\n}";
    send(
        &mut s,
        [Event::EditedExternally {
            field: Field::Schema,
            result: Ok(broken.into()),
        }],
    );
    let e = s.editor.as_ref().unwrap();
    assert!(e.dirty);
    assert_eq!(e.areas[Field::Schema.index()].lines().join("\n"), broken);
    assert_eq!(e.errors[Field::Schema.index()].as_ref().unwrap().line, 3);
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "Schema: edited in the external editor (Ctrl-S saves)"
    );
    // A failed editor: the field is unchanged and the status says why.
    send(
        &mut s,
        [Event::EditedExternally {
            field: Field::Schema,
            result: Err(cutline::tui::editor::external::ExternalError::Exit {
                editor: "false".into(),
                status: std::os::unix::process::ExitStatusExt::from_raw(1 << 8),
            }),
        }],
    );
    assert_eq!(
        s.editor.as_ref().unwrap().areas[Field::Schema.index()]
            .lines()
            .join("\n"),
        broken
    );
    let m = s.message.as_ref().unwrap();
    assert!(m.error);
    assert_eq!(
        m.text,
        "external editor: `false` exited with exit status: 1; the field is unchanged"
    );
}

/// `/` in the Run tab searches the focused pane (case-insensitive, in the
/// rows as drawn), `n`/`N` move between hits and wrap, `Esc` ends it; on the
/// Prompts tab `/` still filters (issue 13).
#[test]
fn slash_searches_the_focused_pane_and_n_moves_between_hits() {
    let mut s = state();
    s.size = (110, 30);
    let mut text = String::new();
    for i in 0..60 {
        let _ = writeln!(text, "{{\"entity\": \"term{i}\", \"definition\": \"filler\"}}");
    }
    text.push_str("{\"entity\": \"Chlorophyll\", \"definition\": \"green\"}\n{\"entity\": \"stomata\", \"definition\": \"pores, not chlorophyll\"}\n");
    show(&mut s, finished(1, &jsonl_prompt(), &text, FinishReason::Stop));
    s.tab = Tab::Run;
    s.focus = OutPane::Response;
    send(&mut s, [ch('/')]);
    assert_eq!(s.mode, Mode::Search(OutPane::Response, String::new()));
    send(&mut s, "CHLORO".chars().map(ch).chain([key(KeyCode::Enter)]));
    assert_eq!(s.mode, Mode::Normal);
    let x = s.search.clone().expect("a hit");
    assert_eq!(
        (x.pane, x.query.as_str(), x.row),
        (OutPane::Response, "CHLORO", Some(60))
    );
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "/CHLORO: match 1 of 2 (row 61) · n next · N previous · Esc ends"
    );
    // The hit is in view, and drawn in reverse video.
    let top = s.scroll(OutPane::Response).top;
    assert!(top <= 60 && 60 < top + 10, "top {top}");
    send(&mut s, [ch('n')]);
    assert_eq!(s.search.as_ref().unwrap().row, Some(61));
    send(&mut s, [ch('n')]);
    assert_eq!(s.search.as_ref().unwrap().row, Some(60), "n wraps to the first hit");
    send(&mut s, [ch('N')]);
    assert_eq!(s.search.as_ref().unwrap().row, Some(61), "N wraps back to the last");
    assert!(s.message.as_ref().unwrap().text.starts_with("/CHLORO: match 2 of 2"));
    // The JSONL pane searches its own rows (the line outcomes).
    s.focus = OutPane::Jsonl;
    send(&mut s, [ch('/')]);
    assert_eq!(
        s.mode,
        Mode::Search(OutPane::Jsonl, String::new()),
        "a new pane starts empty"
    );
    send(&mut s, "pores".chars().map(ch).chain([key(KeyCode::Enter)]));
    assert_eq!(s.search.as_ref().unwrap().row, Some(62), "row 0 is the pane's header");
    // No match: said, and the search ends.
    send(&mut s, [ch('/')]);
    assert_eq!(
        s.mode,
        Mode::Search(OutPane::Jsonl, "pores".into()),
        "the last query comes back"
    );
    send(
        &mut s,
        [key(KeyCode::Backspace)]
            .into_iter()
            .chain("zz".chars().map(ch))
            .chain([key(KeyCode::Enter)]),
    );
    assert_eq!(s.message.as_ref().unwrap().text, "/porezz: no match in this pane");
    // A search that found nothing lasts: n says so again, and never moves
    // on to the next sample input.
    let input = s.editor.as_ref().map(|e| e.input_name.clone());
    send(&mut s, [ch('n')]);
    assert_eq!(s.message.as_ref().unwrap().text, "/porezz: no match in this pane");
    assert_eq!(s.editor.as_ref().map(|e| e.input_name.clone()), input);
    send(&mut s, [key(KeyCode::Esc)]);
    assert!(s.search.is_none());
    // Without a search, n is the next sample input again; Esc ends a search.
    send(&mut s, "/pores".chars().map(ch).chain([key(KeyCode::Enter)]));
    assert!(s.search.is_some());
    send(&mut s, [key(KeyCode::Esc)]);
    assert!(s.search.is_none());
    // On the Prompts tab, / filters the list as before.
    s.tab = Tab::Prompts;
    send(&mut s, [ch('/')]);
    assert_eq!(s.mode, Mode::Filter);
}

/// The current hit is drawn in reverse video.
#[test]
fn the_search_hit_is_drawn_in_reverse_video() {
    let mut s = state();
    s.size = (110, 30);
    show(&mut s, finished(1, &jsonl_prompt(), VALID_JSONL, FinishReason::Stop));
    s.tab = Tab::Run;
    s.focus = OutPane::Response;
    send(&mut s, "/green".chars().map(ch).chain([key(KeyCode::Enter)]));
    let backend = ratatui::backend::TestBackend::new(110, 30);
    let mut term = ratatui::Terminal::new(backend).unwrap();
    term.draw(|f| cutline::tui::draw(f, &s)).unwrap();
    let buf = term.backend().buffer();
    // Above the two status lines (the status bar has its own style).
    let reversed: Vec<u16> = (0..28)
        .filter(|&y| buf[(10, y)].modifier.contains(ratatui::style::Modifier::REVERSED))
        .collect();
    assert_eq!(reversed.len(), 1, "{reversed:?}");
    let y = reversed[0];
    let row: String = (0..110).map(|x| buf[(x, y)].symbol().to_owned()).collect();
    assert!(row.contains("the green pigment"), "{row}");
}

/// `w` in the picker saves the model typed for a configured provider into
/// the file that defines it, asking first; any other key keeps the model
/// for this session only (issue 13).
#[test]
fn w_in_the_picker_asks_then_saves_the_typed_model() {
    let mut s = state();
    let mut entries = configured_entries();
    entries[0].config.file = Some("conf/cutline.toml".into());
    send(&mut s, [ch('p'), Event::ProvidersLoaded(Ok(entries))]);
    // On replay: nothing to save.
    assert!(send(&mut s, [ch('w')]).is_empty());
    assert!(s.message.as_ref().unwrap().text.starts_with("w saves a model typed"));
    // The configured model itself: nothing typed, nothing to save.
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Down)]);
    assert!(send(&mut s, [ch('w')]).is_empty());
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "openai: type a model first (e), then w saves it"
    );
    send(&mut s, [ch('e')]);
    send(
        &mut s,
        (0..11)
            .map(|_| key(KeyCode::Backspace))
            .chain("gpt-5-mini".chars().map(ch)),
    );
    send(&mut s, [key(KeyCode::Enter)]);
    assert_eq!(s.mode, Mode::Picker);
    // Asked first.
    assert!(send(&mut s, [ch('w')]).is_empty());
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "write model = \"gpt-5-mini\" for openai into conf/cutline.toml? w again writes · any other key keeps it for this session"
    );
    // Another key drops the question; w asks again, then w writes.
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Up)]);
    assert!(s.picker.save.is_none());
    assert!(send(&mut s, [ch('w')]).is_empty());
    let fx = send(&mut s, [ch('w')]);
    match fx.as_slice() {
        [Effect::SaveModel(job)] => {
            assert_eq!(job.provider, "openai");
            assert_eq!(job.model, "gpt-5-mini");
            assert_eq!(job.file, std::path::PathBuf::from("conf/cutline.toml"));
        }
        other => panic!("{other:?}"),
    }
    // Saved: the config is read again; a failure is shown.
    let fx = send(&mut s, [Event::ModelSaved(Ok("saved".into()))]);
    assert!(matches!(fx.as_slice(), [Effect::LoadProviders]));
    send(
        &mut s,
        [Event::ModelSaved(Err(cutline::tui::providers::SaveModelError {
            path: "conf/cutline.toml".into(),
            source: cutline::tui::providers::SaveModelCause::Write(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "permission denied",
            )),
        }))],
    );
    let m = s.message.as_ref().unwrap();
    assert!(m.error);
    assert_eq!(m.text, "model not saved: conf/cutline.toml: permission denied");
    // A provider defined in no file cannot be saved.
    send(
        &mut s,
        [key(KeyCode::Down), ch('e'), ch('x'), key(KeyCode::Enter), ch('w')],
    );
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "claude: not defined in a file, so there is nowhere to save its model"
    );
}

/// The last tab and the pinned compare side are kept for the next
/// session: quitting says what to keep (the pin as its recording), and at
/// start the tab comes back and the pin is restored once the sessions are
/// loaded, whichever arrives first (issue 13).
#[test]
fn the_last_tab_and_the_pin_are_kept_between_sessions() {
    use cutline::tui::event::Remembered;
    let mut s = state();
    send(&mut s, [Event::SessionsLoaded(vec![recorded_session()]), ch('5')]);
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter), ch('P'), ch('7')]);
    assert_eq!(s.pinned.as_ref().unwrap().recorded.as_deref(), Some("demo#1"));
    let fx = send(&mut s, [ch('q')]);
    let kept = match fx.as_slice() {
        [Effect::Remember(r), Effect::Quit] => r.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        kept,
        Remembered {
            tab: Some(Tab::Compare),
            pin: Some("demo#1".into()),
            ..Remembered::default()
        }
    );
    // Its bytes on disk are plain JSON.
    assert_eq!(
        serde_json::to_string(&kept).unwrap(),
        r#"{"tab":"compare","pin":"demo#1"}"#
    );
    // Remembered before the sessions load: the pin waits for them.
    let mut s = state();
    s.sessions.loaded = false;
    send(&mut s, [Event::Remembered(kept.clone())]);
    assert_eq!(s.tab, Tab::Compare);
    assert!(s.pinned.is_none());
    send(&mut s, [Event::SessionsLoaded(vec![recorded_session()])]);
    let pinned = s.pinned.as_ref().expect("restored");
    assert_eq!(pinned.recorded.as_deref(), Some("demo#1"));
    assert_eq!(pinned.jsonl.counts.ok, 2);
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "compare side A: demo#1, pinned last session"
    );
    // After them: at once. A run no longer recorded is said, not pinned.
    let mut s = state();
    send(&mut s, [Event::SessionsLoaded(vec![recorded_session()])]);
    send(
        &mut s,
        [Event::Remembered(Remembered {
            tab: Some(Tab::Sessions),
            pin: Some("demo#9".into()),
            ..Remembered::default()
        })],
    );
    assert_eq!(s.tab, Tab::Sessions);
    assert!(s.pinned.is_none());
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "the run pinned last session (demo#9) is no longer recorded"
    );
    // A person who moved already keeps their tab.
    let mut s = state();
    send(&mut s, [ch('3'), Event::Remembered(kept)]);
    assert_eq!(s.tab, Tab::Run);
}

/// A session holding a JSON-array run (`demo#1`) and its JSONL twin's run
/// (`demo#2`), both recorded.
fn twins_session() -> cutline::session::Session {
    let mut s = recorded_session();
    let mut json = s.runs[0].clone();
    json.prompt_id = "extract-definitions".into();
    json.response_type = cutline::prompt::ResponseType::Json;
    json.text = VALID_ARRAY.into();
    json.pieces = pieces(VALID_ARRAY, 6)
        .into_iter()
        .map(|t| cutline::llm::Piece {
            text: t,
            ms: 1,
            delta: false,
        })
        .collect();
    s.runs[0].run_id = "demo#2".into();
    s.runs.insert(0, json);
    s
}

/// What the last tab showed comes back with it (issue 25, item 6): the
/// prompt open in the editor, or Prompts when it is gone. The context is
/// kept only when there is some, so the file of a session with just a pin
/// reads as before.
#[test]
fn the_remembered_tab_comes_back_with_what_it_showed() {
    use cutline::tui::event::Remembered;
    // Edit: quitting keeps the prompt open.
    let mut s = state();
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter)]);
    assert_eq!(s.tab, Tab::Edit);
    let fx = send(&mut s, [ch('q')]);
    let kept = match fx.as_slice() {
        [Effect::Remember(r), Effect::Quit] => r.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        serde_json::to_string(&kept).unwrap(),
        r#"{"tab":"edit","pin":null,"prompt":"extract-definitions-jsonl"}"#
    );
    // Next time, before the prompts load: the tab at once, the editor once
    // they are there, on that prompt (not the first of the list).
    let mut s = state();
    s.prompts.loaded = false;
    send(&mut s, [Event::Remembered(kept.clone())]);
    assert_eq!(s.tab, Tab::Edit);
    assert!(s.editor.is_none());
    send(
        &mut s,
        [Event::PromptsLoaded {
            prompts: vec![json_prompt(), jsonl_prompt(), union_prompt()],
            errors: Vec::new(),
            warnings: Vec::new(),
        }],
    );
    assert_eq!(s.tab, Tab::Edit);
    assert_eq!(s.editor.as_ref().unwrap().base.id, "extract-definitions-jsonl");
    assert_eq!(s.prompts.selected_prompt().unwrap().id, "extract-definitions-jsonl");
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "back where you left off: extract-definitions-jsonl"
    );
    // The prompt is gone: Prompts, and why.
    let mut s = state();
    let gone = Remembered {
        prompt: Some("renamed-away".into()),
        ..kept.clone()
    };
    send(&mut s, [Event::Remembered(gone)]);
    assert_eq!(s.tab, Tab::Prompts);
    assert!(s.editor.is_none());
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "renamed-away, on show when you left, is gone: opening on Prompts"
    );
}

/// Compare and Run come back with the recorded runs they showed; when the
/// runs are gone, or the person moved meanwhile, they do not.
#[test]
fn the_remembered_runs_come_back_with_their_tab() {
    // Compare on recorded twins: both come back, and the report with them.
    let mut s = state();
    send(&mut s, [Event::SessionsLoaded(vec![twins_session()]), ch('5')]);
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter)]);
    let a = s.shown.take().unwrap();
    send(&mut s, [ch('5'), key(KeyCode::Down), key(KeyCode::Enter)]);
    let b = s.shown.take().unwrap();
    let (Shown::Single(a), Shown::Single(b)) = (a, b) else {
        panic!("single runs")
    };
    s.shown = Some(Shown::Twins { json: a, jsonl: b });
    send(&mut s, [ch('7')]);
    let fx = send(&mut s, [ch('q')]);
    let kept = match fx.as_slice() {
        [Effect::Remember(r), Effect::Quit] => r.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(kept.shown, ["demo#1", "demo#2"]);
    let mut s = state();
    s.sessions.loaded = false;
    send(&mut s, [Event::Remembered(kept.clone())]);
    assert_eq!(s.tab, Tab::Compare);
    let fx = send(&mut s, [Event::SessionsLoaded(vec![twins_session()])]);
    assert!(matches!(fx.as_slice(), [Effect::LoadGold(_)]), "{fx:?}");
    assert!(s.shown.as_ref().is_some_and(Shown::twins));
    assert!(matches!(&s.compare.report, Some(Ok(_))), "{:?}", s.compare.report);
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "back where you left off: demo#1 + demo#2"
    );
    // Its runs are no longer recorded: Prompts.
    let mut s = state();
    send(&mut s, [Event::Remembered(kept.clone())]);
    assert_eq!(s.tab, Tab::Prompts);
    assert!(s.shown.is_none());
    // The person moved before the sessions loaded: their tab stays.
    let mut s = state();
    s.sessions.loaded = false;
    send(&mut s, [Event::Remembered(kept), ch('2')]);
    send(&mut s, [Event::SessionsLoaded(vec![twins_session()])]);
    assert_eq!(s.tab, Tab::Edit);
    assert!(s.shown.is_none());
    // Run with the pinned run on show: the pin names it, and it is shown.
    let mut s = state();
    send(&mut s, [Event::SessionsLoaded(vec![recorded_session()]), ch('5')]);
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter), ch('P')]);
    assert_eq!(s.tab, Tab::Run);
    let kept = match send(&mut s, [ch('q')]).as_slice() {
        [Effect::Remember(r), Effect::Quit] => r.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(serde_json::to_string(&kept).unwrap(), r#"{"tab":"run","pin":"demo#1"}"#);
    let mut s = state();
    s.sessions.loaded = false;
    send(
        &mut s,
        [Event::Remembered(kept), Event::SessionsLoaded(vec![recorded_session()])],
    );
    assert_eq!(s.tab, Tab::Run);
    assert_eq!(
        s.shown.as_ref().unwrap().json_side().recorded.as_deref(),
        Some("demo#1")
    );
    assert_eq!(s.pinned.as_ref().unwrap().recorded.as_deref(), Some("demo#1"));
}

/// `x` asks for the report of the recorded runs on show; a replay (not
/// recorded), a live run or nothing on show is said instead (issue 13).
#[test]
fn x_writes_the_report_of_the_recorded_runs_on_show() {
    let mut s = state();
    assert!(send(&mut s, [ch('x')]).is_empty());
    assert!(s.message.as_ref().unwrap().text.starts_with("x writes the HTML report"));
    // A run that was not recorded (a replay).
    show(&mut s, finished(1, &jsonl_prompt(), VALID_JSONL, FinishReason::Stop));
    assert!(send(&mut s, [ch('x')]).is_empty());
    assert!(s.message.as_ref().unwrap().text.starts_with("x reports recorded runs"));
    // An opened recording.
    send(&mut s, [Event::SessionsLoaded(vec![recorded_session()]), ch('5')]);
    send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter)]);
    let fx = send(&mut s, [ch('x')]);
    match fx.as_slice() {
        [Effect::WriteReport { session, runs, .. }] => {
            assert_eq!(session, "demo");
            assert_eq!(runs, &[1]);
        }
        other => panic!("{other:?}"),
    }
    send(
        &mut s,
        [Event::ReportWritten(Err(cutline::tui::report::ReportError::Write {
            path: "sessions".into(),
            source: std::io::Error::other("disk full"),
        }))],
    );
    assert_eq!(
        s.message.as_ref().unwrap().text,
        "report not written: sessions: disk full"
    );
    // Twins recorded as #3 and #4 of one session: one report of both.
    let mut a = finished(7, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length);
    a.recorded = Some("w-1#3".into());
    let mut b = finished(8, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length);
    b.recorded = Some("w-1#4".into());
    s.shown = Some(Shown::Twins {
        json: Box::new(a),
        jsonl: Box::new(b),
    });
    let fx = send(&mut s, [ch('x')]);
    assert!(
        matches!(fx.as_slice(), [Effect::WriteReport { session, runs, .. }] if session == "w-1" && runs == &[3, 4]),
        "{fx:?}"
    );
}

/// The runner's side: the page lands beside the sessions, names the
/// prompt and draws its chart, and the status says where.
#[test]
fn the_report_file_is_written_beside_the_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    let mut session = recorded_session();
    // The fixture's one run (its `sessions/demo.jsonl` path is the repo's
    // demo session, which holds other runs): written out here.
    let mut text = String::from("{\"type\":\"session\",\"version\":1,\"id\":\"demo\",\"created_ms\":0}\n");
    text.push_str(&serde_json::to_string(&session.runs[0]).unwrap());
    text.push('\n');
    session.path = sessions.join("demo.jsonl");
    std::fs::write(&session.path, text).unwrap();
    let said = cutline::tui::report::write_report(
        &sessions,
        &dir.path().join("prompts"),
        "demo",
        &[1],
        cutline::output::tg::TgPython::default(),
    )
    .unwrap();
    let page = std::fs::read_to_string(sessions.join("demo-1.html")).unwrap();
    assert!(
        said.starts_with(&format!("report: {} (", sessions.join("demo-1.html").display())),
        "{said}"
    );
    assert!(
        said.ends_with("KB, 1 runs) — open it in a browser or send it"),
        "{said}"
    );
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..80]);
    assert!(page.contains("extract-definitions-jsonl"));
    assert!(page.contains("<svg"), "the chart is drawn inline");
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing outside the file"
    );
    let missing = cutline::tui::report::write_report(
        &sessions,
        dir.path(),
        "nope",
        &[1],
        cutline::output::tg::TgPython::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(missing.contains("nope"), "{missing}");
}

/// With a gold set, the Compare tab says why each side missed what it
/// missed: a cut side is judged against the other side when that one ended
/// on its own (issue 12).
#[test]
fn compare_explains_each_missed_gold_item() {
    let mut s = state();
    s.shown = Some(Shown::Twins {
        json: Box::new(finished(1, &json_prompt(), TRUNCATED_ARRAY, FinishReason::Length)),
        jsonl: Box::new(finished(2, &jsonl_prompt(), VALID_JSONL, FinishReason::Stop)),
    });
    send(&mut s, [ch('7')]);
    let gold = vec![
        serde_json::json!({"entity": "chlorophyll", "definition": "the green pigment"}),
        serde_json::json!({"entity": "xylem", "definition": "water pipes"}),
    ];
    send(
        &mut s,
        [Event::GoldLoaded {
            ids: vec!["extract-definitions".into(), "extract-definitions-jsonl".into()],
            result: Ok(Some(("g.jsonl".into(), gold))),
        }],
    );
    let [a, b] = s.compare.loss.clone().expect("losses with a gold set");
    // A (the cut JSON array) kept nothing: chlorophyll is in B, which ended
    // on its own, so the cut lost it; xylem is in neither.
    assert_eq!((a.total.found, a.total.cut_by_limit, a.total.never_produced), (0, 1, 1));
    // B found chlorophyll, never produced xylem, and has one item not in gold.
    assert_eq!(
        (
            b.total.found,
            b.total.cut_by_limit,
            b.total.never_produced,
            b.total.invented
        ),
        (1, 0, 1, 1)
    );
    let out = screen(&s, 120, 40);
    assert!(
        out.contains("A  cut by the limit 1 · rejected by the schema 0 · never produced 1 · invented 0"),
        "{out}"
    );
}

/// Open the JSON prompt and show the eval view (`E` on the Prompts tab).
fn eval_view() -> cutline::tui::state::State {
    let mut s = state();
    send(&mut s, [ch('E')]);
    s
}

fn eval_job(fx: &[Effect]) -> &cutline::tui::event::EvalJob {
    match fx {
        [Effect::Eval(job)] => job,
        other => panic!("no eval started: {other:?}"),
    }
}

#[test]
fn e_shows_the_eval_view_over_compare_and_back() {
    let mut s = eval_view();
    assert_eq!(s.tab, Tab::Compare);
    assert!(s.overlay == Some(Id("eval")));
    assert_eq!(s.editor.as_ref().unwrap().base.id, "extract-definitions");
    // `E` again: the pair's report, as `7` shows it.
    send(&mut s, [ch('E')]);
    assert_eq!(s.tab, Tab::Compare);
    assert!(s.overlay != Some(Id("eval")));
    // From another tab it comes back.
    send(&mut s, [ch('1'), ch('E')]);
    assert!(s.overlay == Some(Id("eval")) && s.tab == Tab::Compare);
}

#[test]
fn r_on_the_eval_view_asks_for_the_prompt_and_twin_at_the_limits() {
    use cutline::tui::eval::EvalRun;
    let mut s = state();
    // Nothing open yet (the list is empty after a filter): it says why.
    s.tab = Tab::Compare;
    s.overlay = Some(Id("eval"));
    assert!(send(&mut s, [ch('r')]).is_empty());
    assert!(s.message.as_ref().unwrap().error, "{:?}", s.message);
    let mut s = eval_view();
    s.provider = ProviderChoice::Configured {
        name: "claude".into(),
        model: Some("sonnet".into()),
    };
    s.structured = Some(cutline::llm::structured::Path::Prompt);
    let fx = send(&mut s, [ch('r')]);
    let job = eval_job(&fx);
    let ids: Vec<&str> = job.prompts.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["extract-definitions", "extract-definitions-jsonl"]);
    assert_eq!(job.limits, [Some(64), Some(128), Some(256), None]);
    assert_eq!(job.provider, s.provider);
    assert_eq!(job.structured, Some(cutline::llm::params::Structured::Prompt));
    assert!(matches!(s.eval.run, EvalRun::Planning { id, .. } if id == job.id));
    // A second `r` while it runs starts nothing.
    assert!(send(&mut s, [ch('r')]).is_empty());
    // Outside the view, `r` is the Run tab's again.
    let fx = send(&mut s, [ch('3'), ch('r')]);
    assert!(matches!(fx.as_slice(), [Effect::Start(_)]), "{fx:?}");
}

#[test]
fn m_on_the_eval_view_types_the_limits_and_refuses_a_bad_list() {
    let mut s = eval_view();
    send(&mut s, [ch('m')]);
    assert_eq!(s.mode, Mode::EvalLimits("64,128,256,none".into()));
    for _ in 0..15 {
        send(&mut s, [key(KeyCode::Backspace)]);
    }
    send(&mut s, "32, none".chars().map(ch));
    send(&mut s, [key(KeyCode::Enter)]);
    assert_eq!(s.mode, Mode::Normal);
    assert_eq!(s.eval.limits, [Some(32), None]);
    // The run tab's limit is not touched.
    assert_eq!(s.max_tokens, None);
    send(&mut s, [ch('m')]);
    send(&mut s, ",32".chars().map(ch));
    send(&mut s, [key(KeyCode::Enter)]);
    let m = s.message.as_ref().unwrap();
    assert!(m.error && m.text.contains("given twice"), "{m:?}");
    assert_eq!(s.eval.limits, [Some(32), None]);
    // Esc drops what was typed.
    send(&mut s, [ch('m'), ch('9'), key(KeyCode::Esc)]);
    assert_eq!(s.eval.limits, [Some(32), None]);
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
fn the_engines_news_folds_into_progress_table_and_twins() {
    use cutline::tui::eval::{Ending, EvalRun};
    use cutline::tui::event::{EvalEnd, EvalMsg};
    let mut s = eval_view();
    send(&mut s, [ch('m')]);
    for _ in 0..15 {
        send(&mut s, [key(KeyCode::Backspace)]);
    }
    send(&mut s, "64,none".chars().map(ch).chain([key(KeyCode::Enter)]));
    let id = eval_job(&send(&mut s, [ch('r')])).id;
    let (json, jsonl) = (json_prompt(), jsonl_prompt());
    let skipped = {
        let mut x = eval_summary(&json, "a", None, (3, 3), false, None);
        x.skipped = true;
        x
    };
    let ev = |msg| Event::Eval { id, msg };
    send(&mut s, [ev(EvalMsg::Planned(Box::new(eval_plan(1, 2, vec![skipped]))))]);
    // News of another eval is not this one's.
    send(
        &mut s,
        [Event::Eval {
            id: id + 100,
            msg: EvalMsg::InFlight(9),
        }],
    );
    let EvalRun::Running(p) = &s.eval.run else {
        panic!("{:?}", s.eval.run)
    };
    assert_eq!((p.total, p.skipped, p.done(), p.in_flight), (4, 1, 1, 0));
    assert_eq!(p.rows.len(), 4);
    s.clock_ms += 2000;
    send(
        &mut s,
        [
            ev(EvalMsg::InFlight(2)),
            ev(EvalMsg::Finished(Box::new(eval_summary(
                &json,
                "a",
                Some(64),
                (0, 2),
                true,
                None,
            )))),
            ev(EvalMsg::Finished(Box::new(eval_summary(
                &jsonl,
                "a",
                Some(64),
                (2, 3),
                true,
                None,
            )))),
        ],
    );
    let EvalRun::Running(p) = &s.eval.run else {
        panic!("{:?}", s.eval.run)
    };
    assert_eq!((p.done(), p.ran, p.in_flight), (3, 2, 2));
    assert_eq!(p.rate(s.clock_ms), Some(1.0));
    assert_eq!(p.left_secs(s.clock_ms), Some(1.0));
    let t64 = p.twins.iter().find(|t| t.max_tokens == Some(64)).unwrap();
    assert_eq!((t64.json.items_total, t64.jsonl.items_total), (0, 2));
    send(
        &mut s,
        [
            ev(EvalMsg::Finished(Box::new(eval_summary(
                &jsonl,
                "a",
                None,
                (0, 0),
                false,
                Some("HTTP 400: bad request"),
            )))),
            ev(EvalMsg::Done(EvalEnd::default())),
        ],
    );
    let EvalRun::Ended(p, Ending::Complete) = &s.eval.run else {
        panic!("{:?}", s.eval.run)
    };
    assert_eq!((p.done(), p.failed), (4, 1));
    assert!(p.first_failure().unwrap().contains("HTTP 400"));
    let msg = s.message.as_ref().unwrap();
    assert!(msg.error && msg.text.contains("1 of 4 runs failed"), "{msg:?}");
}

#[test]
fn esc_on_the_eval_view_stops_the_eval_and_keeps_what_ran() {
    use cutline::tui::eval::{Ending, EvalRun};
    use cutline::tui::event::EvalMsg;
    let mut s = eval_view();
    let id = eval_job(&send(&mut s, [ch('r')])).id;
    // Before the plan: the eval is dropped whole.
    assert!(matches!(send(&mut s, [key(KeyCode::Esc)]).as_slice(), [Effect::Cancel(x)] if *x == id));
    assert!(matches!(s.eval.run, EvalRun::Idle));
    let id = eval_job(&send(&mut s, [ch('r')])).id;
    let j = json_prompt();
    send(
        &mut s,
        [
            Event::Eval {
                id,
                msg: EvalMsg::Planned(Box::new(eval_plan(1, 4, Vec::new()))),
            },
            Event::Eval {
                id,
                msg: EvalMsg::Finished(Box::new(eval_summary(&j, "a", Some(64), (1, 2), true, None))),
            },
        ],
    );
    let fx = send(&mut s, [key(KeyCode::Esc)]);
    assert!(matches!(fx.as_slice(), [Effect::Cancel(x)] if *x == id), "{fx:?}");
    let EvalRun::Ended(p, Ending::Cancelled) = &s.eval.run else {
        panic!("{:?}", s.eval.run)
    };
    assert_eq!((p.ran, p.total), (1, 8));
    // Late news of the stopped eval changes nothing.
    send(
        &mut s,
        [Event::Eval {
            id,
            msg: EvalMsg::Finished(Box::new(eval_summary(&j, "a", Some(128), (2, 2), false, None))),
        }],
    );
    assert!(matches!(&s.eval.run, EvalRun::Ended(p, _) if p.ran == 1));
    // A failure to start says why, in the view and the status.
    let id = eval_job(&send(&mut s, [ch('r')])).id;
    send(
        &mut s,
        [Event::Eval {
            id,
            msg: EvalMsg::Failed(cutline::tui::eval::EvalError::Provider {
                name: "claude".into(),
                source: cutline::llm::LlmError {
                    kind: cutline::llm::ErrorKind::Auth,
                    status: Some(401),
                    message: "\u{1b}]52;c;AAAA\u{7}401 unauthorized\nsecond line".into(),
                    source: None,
                },
            }),
        }],
    );
    assert!(matches!(&s.eval.run, EvalRun::Failed { error, .. } if error.contains("401")));
    let m = s.message.as_ref().unwrap();
    assert!(m.error && !m.text.contains("second line"), "{m:?}");
}

/// Quitting with a run no session holds on show (a replay's): the next
/// start opens the same tab with that prompt open, `r` runs it, and says
/// so — never "?, on show when you left, is gone".
#[test]
fn a_replayed_run_on_show_comes_back_as_its_prompt() {
    let mut s = state();
    let p = jsonl_prompt();
    show(&mut s, finished(1, &p, VALID_JSONL, cutline::llm::FinishReason::Stop));
    s.tab = Tab::Run;
    let kept = match send(&mut s, [ch('q')]).as_slice() {
        [Effect::Remember(r), Effect::Quit] => r.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        serde_json::to_string(&kept).unwrap(),
        format!(r#"{{"tab":"run","pin":null,"prompt":"{}"}}"#, p.id)
    );
    let mut s = state();
    s.prompts.loaded = false;
    send(&mut s, [Event::Remembered(kept)]);
    assert_eq!(s.tab, Tab::Run);
    send(
        &mut s,
        [Event::PromptsLoaded {
            prompts: vec![json_prompt(), jsonl_prompt(), union_prompt()],
            errors: Vec::new(),
            warnings: Vec::new(),
        }],
    );
    assert_eq!(s.tab, Tab::Run);
    assert_eq!(s.editor.as_ref().unwrap().base.id, p.id);
    assert_eq!(
        s.message.as_ref().unwrap().text,
        format!(
            "back where you left off: {} is open again (its runs were not recorded; r runs it)",
            p.id
        )
    );
}

/// A run cut with no limit set here (a replay of a recording made at a
/// limit, or a model's own stop) never blames "the max-token limit"; one
/// cut at the limit set here does.
#[test]
fn a_cut_with_no_limit_set_says_so() {
    for limit in [None, Some(30)] {
        let mut s = state();
        s.max_tokens = limit;
        send(&mut s, [key(KeyCode::Down), key(KeyCode::Enter)]);
        let fx = send(&mut s, [ch('r')]);
        let [Effect::Start(job)] = fx.as_slice() else {
            panic!("{fx:?}");
        };
        let (_, end) = stream(&jsonl_prompt(), JSONL_WITH_ERRORS, 8, FinishReason::Length);
        send(&mut s, [Event::Run { id: job.id, msg: end }]);
        let text = &s.message.as_ref().unwrap().text;
        if limit.is_none() {
            assert!(text.starts_with("cut, with no max-token limit set here:"), "{text}");
        } else {
            assert!(text.starts_with("cut by the max-token limit:"), "{text}");
        }
    }
}

/// The workbench opens on the local model at a limit where a cut is worth
/// seeing (a small model can loop for minutes with none), and says so; on
/// replay it opens with none.
#[test]
fn the_local_model_opens_at_a_first_limit() {
    let theme = cutline::tui::theme::Theme { color: false };
    let opts = cutline::tui::TuiOptions::default();
    let s = cutline::tui::initial_state(&opts, Keymap::defaults(), theme, true);
    assert_eq!(s.provider, ProviderChoice::Local);
    assert_eq!(s.max_tokens, Some(cutline::tui::LOCAL_FIRST_LIMIT));
    assert!(
        s.message
            .as_ref()
            .unwrap()
            .text
            .starts_with("local model: opening at a 256-token limit"),
        "{:?}",
        s.message
    );
    let s = cutline::tui::initial_state(&opts, Keymap::defaults(), theme, false);
    assert_eq!(s.provider, ProviderChoice::Replay);
    assert_eq!(s.max_tokens, None);
}
