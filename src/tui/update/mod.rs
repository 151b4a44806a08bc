//! The reducer: `update(&mut State, Event) -> Vec<Effect>`. Pure — no IO, no
//! clock, no terminal — so every key can be tested without a terminal. Work
//! that needs IO (runs, saves, loading) goes out as [`Effect`]s and comes back
//! as [`Event`]s.

mod compare;
mod costs;
mod external;
mod keys;
mod migrate;
mod open;
mod providers;
mod remember;
mod report;
mod run;
mod save_model;
mod search;
mod sweep;

use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui_textarea::{CursorMove, Input, Key as TaKey};

use crate::llm::FinishReason;
use crate::llm::params::Structured;
use crate::llm::structured::Path as StructuredPath;
use crate::prompt::{PromptConfig, ResponseType};
use crate::run::Spec;
use crate::session::RunRecord;

use super::event::{
    CostJob, Effect, Event, Origin, ProviderChoice, RunJob, RunMsg, Source, SweepData, SweepInput, SweepJob,
};
use super::keymap::Action;
use super::layout;
use super::panes;
use super::run_view::{self, Phase, RunView};
use super::state::{Editor, Field, FirstScreen, Mode, OutPane, Shown, State, SweepView, Tab, Target};

use compare::{gold_loaded, pair_on_show, pin, refresh_compare};
use keys::{key, mouse, quit, step};
use migrate::{migrate_selected, migrate_selected_from, migrate_source, migrate_twins, migrate_write, migrate_written};
use open::{copy, edit, first_screen, open, open_prompt, reference, save, view_of_record};
use providers::{model_key, open_picker, picker_key, providers_loaded};
use run::{cancel_live, continue_run, cycle_structured, run, run_msg, run_pair, show, twins};
use sweep::{sweep, sweep_effect, sweep_ready};

pub use keys::scroll_pane;
pub use migrate::migrate_target;
pub use open::prompt_of_record;
pub use run::limit_label;
pub use sweep::set_cursor;

/// The default max-token limit that `-`/`+` start from when there is none.
pub const DEFAULT_LIMIT: u32 = 256;

/// Apply one event; return the work it asks for.
pub fn update(s: &mut State, ev: Event) -> Vec<Effect> {
    if matches!(ev, Event::Key(_) | Event::Mouse(_) | Event::Paste(_)) {
        s.first_screen = None;
    }
    match ev {
        Event::Key(k) => key(s, k),
        Event::Mouse(m) => mouse(s, m),
        Event::Paste(text) => super::paste::paste(s, &text),
        Event::EditedExternally { field, result } => external::edited(s, field, result),
        Event::ModelSaved(r) => save_model::saved(s, r),
        Event::Remembered(r) => remember::loaded(s, r),
        Event::ReportWritten(r) => report::written(s, r),
        Event::Resize(w, h) => {
            s.size = (w, h);
            Vec::new()
        }
        Event::Tick(ms) => tick(s, ms),
        Event::PromptsLoaded {
            prompts,
            errors,
            warnings,
        } => {
            let n = prompts.len();
            s.prompts.prompts = prompts;
            s.prompts.errors = errors;
            s.prompts.loaded = true;
            s.prompts.selected = s.prompts.selected.min(s.prompts.filtered().len().saturating_sub(1));
            if let Some(e) = s.prompts.errors.first() {
                s.error(rust_i18n::t!(
                    "tui.msg.prompts_failed",
                    n = s.prompts.errors.len(),
                    error = e
                ));
            } else if let Some(w) = warnings.first() {
                s.info(rust_i18n::t!("tui.msg.warning", warning = w));
            } else if n == 0 {
                s.info(rust_i18n::t!("tui.msg.no_prompts", dir = s.prompts_dir.display()));
            }
            Vec::new()
        }
        Event::SessionsLoaded(sessions) => {
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
            remember::restore_pin(s)
        }
        Event::Run { id, msg } => run_msg(s, id, msg),
        Event::Saved(r) => {
            match r {
                Ok(file) => {
                    if let Some(e) = &mut s.editor {
                        e.dirty = false;
                        if let Ok((p, _)) = e.config() {
                            e.base = p;
                        }
                    }
                    s.info(rust_i18n::t!("tui.msg.saved", file = file));
                    return vec![Effect::LoadPrompts];
                }
                Err(e) => s.error(rust_i18n::t!("tui.msg.not_saved", error = e)),
            }
            Vec::new()
        }
        Event::SweepReady(data) => {
            sweep_ready(s, *data);
            Vec::new()
        }
        Event::LocalInstalled(yes) => {
            s.local_installed = Some(yes);
            Vec::new()
        }
        Event::ProvidersLoaded(r) => {
            providers_loaded(s, r);
            Vec::new()
        }
        Event::GoldLoaded { ids, result } => gold_loaded(s, &ids, result),
        Event::CostsDone { ids, result } => costs::done(s, ids, result),
        Event::MigrateWritten(w) => migrate_written(s, w),
        Event::Terminate => quit(s),
    }
}

/// The clock moved: streaming runs' elapsed time follows it.
fn tick(s: &mut State, ms: u64) -> Vec<Effect> {
    s.clock_ms = ms;
    if let Some(shown) = &mut s.shown {
        for id in shown
            .runs()
            .iter()
            .filter(|r| r.live())
            .map(|r| r.id)
            .collect::<Vec<_>>()
        {
            if let Some(r) = shown.find_mut(id)
                && r.phase == Phase::Streaming
            {
                r.elapsed_ms = ms.saturating_sub(r.started_ms);
            }
        }
    }
    Vec::new()
}

impl State {
    /// The focused pane, within the panes the current tab has.
    pub fn focus_in_tab(&self) -> OutPane {
        let twins = self.shown.as_ref().is_some_and(Shown::twins);
        match (self.tab, self.focus) {
            (Tab::Sweep, OutPane::Response | OutPane::Response2) => OutPane::Json,
            (_, OutPane::Response2) if !twins => OutPane::Response,
            (_, f) => f,
        }
    }
}
