//! Opening things: a prompt in the editor, a recorded run, saving, copying, the first screen.

use super::{
    Arc, Editor, Effect, FirstScreen, Mode, Origin, OutPane, Phase, PromptConfig, ResponseType, RunRecord, RunView,
    Shown, Source, Spec, State, Tab, Target, cancel_live, limit_label, run_view, show,
};

pub(super) fn open_prompt(s: &mut State) -> bool {
    let Some(p) = s.prompts.selected_prompt().cloned() else {
        s.info(rust_i18n::t!("tui.msg.no_prompt_selected"));
        return false;
    };
    let same = s
        .editor
        .as_ref()
        .is_some_and(|e| e.base.id == p.id && e.base.origin == p.origin);
    if !same {
        s.editor = Some(Editor::new(&p, s.theme));
    }
    s.target = Target::Prompt;
    true
}

pub(super) fn open(s: &mut State) -> Vec<Effect> {
    let tab = s.tab;
    if tab == Tab::Prompts && open_prompt(s) {
        s.tab = Tab::Edit;
    } else if tab == Tab::Edit {
        edit(s);
    } else if tab == Tab::Sessions {
        open_recording(s);
    }
    Vec::new()
}

pub(super) fn edit(s: &mut State) {
    if s.tab == Tab::Prompts && !open_prompt(s) {
        return;
    }
    if s.editor.is_some() {
        s.tab = Tab::Edit;
        s.mode = Mode::Insert;
    } else {
        s.info(rust_i18n::t!("tui.msg.open_prompt_first"));
    }
}

/// The prompt a recorded run was made with: its snapshot, else the loaded
/// prompt of that id, else a bare one of the recorded response type.
pub fn prompt_of_record(s: &State, rec: &RunRecord) -> PromptConfig {
    if let Ok(p) = rec.prompt_config() {
        return p;
    }
    if let Some(p) = s.prompts.by_id(&rec.prompt_id) {
        return p.clone();
    }
    PromptConfig {
        id: rec.prompt_id.clone(),
        response_type: ResponseType::parse(&rec.response_type).unwrap_or_default(),
        schema: rec.prompt.get("schema").filter(|v| v.is_object()).cloned(),
        ..PromptConfig::default()
    }
}

/// A recorded run as a finished view (its recorded reference set).
pub(super) fn view_of_record(s: &mut State, si: usize, ri: usize) -> Result<RunView, String> {
    let rec = s.sessions.sessions[si].runs[ri].clone();
    let prompt = prompt_of_record(s, &rec);
    let schemas = Arc::new(run_view::schemas_for(&prompt)?);
    let id = s.next_id;
    s.next_id += 1;
    let t = rec.transcript();
    let pieces: Vec<String> = t.pieces.iter().map(|p| p.text.clone()).collect();
    let mut v = RunView::from_text(
        id,
        &prompt,
        schemas,
        &rec.text,
        t.has_token_pieces().then_some(pieces.as_slice()),
        rec.finish,
    );
    v.provider.clone_from(&rec.provider.name);
    v.max_tokens = rec.params.max_tokens;
    v.usage = rec.usage;
    v.elapsed_ms = rec.total_ms;
    v.structured_path.clone_from(&rec.structured_path);
    v.note = Some(rust_i18n::t!("tui.msg.recorded_note", run = reference(s, si, ri)).into_owned());
    v.recorded = Some(reference(s, si, ri));
    v.token_ids = crate::run::continuation::exact_ids(&rec);
    // Run again (by each strategy, `S`) on the workbench's provider, from
    // the recorded prompt and variables.
    let spec = Spec::new(prompt.clone(), rec.variables.clone()).limit(rec.params.max_tokens);
    v.origin = Some(Arc::new(Origin {
        provider: s.provider.clone(),
        source: Source::Prompt(Box::new(spec)),
    }));
    if let Some(e) = &rec.error {
        v.phase = Phase::Failed(e.to_string());
    }
    Ok(v)
}

pub(super) fn open_recording(s: &mut State) {
    let Some((si, Some(ri))) = s.sessions.selected_row() else {
        s.info(rust_i18n::t!("tui.msg.select_run"));
        return;
    };
    let _ = cancel_live(s);
    let v = match view_of_record(s, si, ri) {
        Ok(v) => v,
        Err(e) => {
            s.error(e);
            return;
        }
    };
    show(s, Shown::Single(Box::new(v)));
    s.target = Target::Recording(si, ri);
    s.tab = Tab::Run;
    s.info(rust_i18n::t!(
        "tui.msg.opened",
        run = reference(s, si, ri),
        limit = limit_label(s.max_tokens)
    ));
}

pub(super) fn reference(s: &State, si: usize, ri: usize) -> String {
    s.sessions.sessions[si].reference(ri)
}

/// The first screen without a local model says in one line what to do:
/// replay the recorded twins, or install the model.
pub(super) fn first_screen(s: &mut State) {
    if s.local_installed != Some(false) || s.shown.is_some() {
        return;
    }
    s.first_screen = Some(if s.sessions.sessions.iter().any(|x| !x.runs.is_empty()) {
        FirstScreen::Replay
    } else {
        FirstScreen::Install
    });
}

pub(super) fn save(s: &mut State) -> Vec<Effect> {
    let Some(e) = &s.editor else {
        s.info(rust_i18n::t!("tui.msg.nothing_to_save"));
        return Vec::new();
    };
    match e.config() {
        Ok((p, _)) => {
            if let Some(err) = e.errors.iter().flatten().next() {
                s.info(rust_i18n::t!(
                    "tui.msg.saving_with_error",
                    line = err.line,
                    error = err.message
                ));
            } else {
                s.info(rust_i18n::t!("tui.msg.saving", file = p.origin.file));
            }
            vec![Effect::Save(Box::new(p))]
        }
        Err(err) => {
            s.error(rust_i18n::t!("tui.msg.cannot_save", error = err));
            Vec::new()
        }
    }
}

/// What `y` copies: the focused response's text, or (in a parse pane) the
/// items the run's consumer kept, one JSON value per line (a JSON answer's
/// strict items, else the elements salvage recovered).
pub(super) fn copy(s: &mut State) -> Vec<Effect> {
    let run = match &s.shown {
        Some(Shown::Single(r)) => r.as_ref(),
        Some(Shown::Twins { json, jsonl }) => {
            if matches!(s.focus, OutPane::Response2 | OutPane::Jsonl) {
                jsonl.as_ref()
            } else {
                json.as_ref()
            }
        }
        None => {
            s.info(rust_i18n::t!("tui.status.nothing_to_copy").into_owned());
            return Vec::new();
        }
    };
    let (what, text) = match s.focus {
        OutPane::Json | OutPane::Jsonl => {
            let items: &[serde_json::Value] = match (&run.json, run.response_type) {
                (Some(a), ResponseType::Json) if a.items.is_empty() => &a.salvaged,
                (Some(a), ResponseType::Json) => &a.items,
                _ => &run.jsonl.items,
            };
            let lines: Vec<String> = items.iter().map(serde_json::Value::to_string).collect();
            (
                rust_i18n::t!("tui.status.copied_items", n = items.len()),
                lines.join("\n"),
            )
        }
        OutPane::Response | OutPane::Response2 => (rust_i18n::t!("tui.status.copied_response"), run.text.clone()),
    };
    s.info(rust_i18n::t!("tui.status.copied", what = what, bytes = text.len()).into_owned());
    vec![Effect::Copy(text)]
}
