//! The Sessions tab's part of the reducer: taking the sessions read, and
//! opening a recorded run as a finished view (Enter), with the prompt and
//! variables it was recorded with.

use std::sync::Arc;

use crate::prompt::PromptConfig;
use crate::run::Spec;
use crate::session::{RunRecord, Session};
use crate::tui::event::{Effect, Origin, Source};
use crate::tui::run::update::{cancel_live, show};
use crate::tui::run::{Phase, RunView, Shown, Target, limit_label, schemas_for};
use crate::tui::state::{FirstScreen, State, Tab};

/// The sessions directory was (re)read: keep the row and the target where
/// they still exist, say what the first screen should, restore the pin.
pub(in crate::tui) fn loaded(s: &mut State, sessions: Vec<Session>) -> Vec<Effect> {
    let first = !s.sessions.loaded;
    s.sessions.sessions = sessions;
    s.sessions.loaded = true;
    if first {
        first_screen(s);
    }
    s.sessions.selected = s.sessions.selected.min(s.sessions.rows().len().saturating_sub(1));
    if let Target::Recording(a, b) = s.target
        && s.sessions.sessions.get(a).and_then(|x| x.runs.get(b)).is_none()
    {
        s.target = Target::None;
    }
    crate::tui::remember::update::resume(s)
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
        response_type: rec.response_type,
        schema: rec.prompt.get("schema").filter(|v| v.is_object()).cloned(),
        ..PromptConfig::default()
    }
}

/// A recorded run as a finished view (its recorded reference set).
pub(in crate::tui) fn view_of_record(s: &mut State, si: usize, ri: usize) -> RunView {
    let rec = s.sessions.sessions[si].runs[ri].clone();
    let prompt = prompt_of_record(s, &rec);
    let schemas = Arc::new(schemas_for(&prompt));
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
        s.tg_python,
    );
    v.provider.clone_from(&rec.provider.name);
    v.max_tokens = rec.params.max_tokens;
    v.usage = rec.usage;
    v.elapsed_ms = rec.total_ms;
    v.structured_path = rec.structured_path;
    v.note = Some(rust_i18n::t!("tui.msg.recorded_note", run = reference(s, si, ri)).into_owned());
    v.recorded = Some(reference(s, si, ri));
    v.token_ids = crate::run::continuation::exact_ids(&rec);
    // Run again (by each strategy, `S`) on the workbench's provider, from
    // the recorded prompt and variables.
    let mut spec = Spec::new(prompt.clone(), rec.variables.clone()).limit(rec.params.max_tokens);
    spec.tg_python = s.tg_python;
    v.origin = Some(Arc::new(Origin {
        provider: s.provider.clone(),
        source: Source::Prompt(Box::new(spec)),
    }));
    if let Some(e) = &rec.error {
        v.phase = Phase::Failed(e.to_string());
    }
    v
}

pub(in crate::tui) fn open_recording(s: &mut State) {
    let Some((si, Some(ri))) = s.sessions.selected_row() else {
        s.info(rust_i18n::t!("tui.msg.select_run"));
        return;
    };
    let _ = cancel_live(s);
    let v = view_of_record(s, si, ri);
    show(s, Shown::Single(Box::new(v)));
    s.target = Target::Recording(si, ri);
    s.tab = Tab::Run;
    s.info(rust_i18n::t!(
        "tui.msg.opened",
        run = reference(s, si, ri),
        limit = limit_label(s.max_tokens)
    ));
}

pub(in crate::tui) fn reference(s: &State, si: usize, ri: usize) -> String {
    s.sessions.sessions[si].reference(ri)
}

/// The first screen without a local model says in one line what to do:
/// replay the recorded twins, or install the model.
fn first_screen(s: &mut State) {
    if s.local_installed != Some(false) || s.shown.is_some() {
        return;
    }
    s.first_screen = Some(if s.sessions.sessions.iter().any(|x| !x.runs.is_empty()) {
        FirstScreen::Replay
    } else {
        FirstScreen::Install
    });
}
