//! The reducer: `update(&mut State, Event) -> Vec<Effect>`. Pure — no IO, no
//! clock, no terminal — so every key can be tested without a terminal. Work
//! that needs IO (runs, saves, loading) goes out as [`Effect`]s and comes back
//! as [`Event`]s. This module only dispatches each event to its feature's
//! `update.rs` and routes the navigation messages among the effects
//! ([`crate::tui::registry::settle`]); `keys` maps keys to actions and
//! actions to components.

mod keys;

use super::State;
use super::compare::update::gold_loaded;
use super::migrate::update::migrate_written;
use super::providers::update::providers_loaded;
use super::run::update::{run_msg, tick};
use super::sweep::update::sweep_ready;
use super::{Effect, Event};
use keys::{key, mouse, quit};

pub use keys::is_root;

/// The default max-token limit that `-`/`+` start from when there is none.
pub const DEFAULT_LIMIT: u32 = 256;

/// Apply one event; return the work it asks for.
pub fn update(s: &mut State, ev: Event) -> Vec<Effect> {
    let out = dispatch(s, ev);
    super::registry::settle(s, out)
}

fn dispatch(s: &mut State, ev: Event) -> Vec<Effect> {
    if matches!(ev, Event::Key(_) | Event::Mouse(_) | Event::Paste(_)) {
        s.first_screen = None;
        super::remember::update::moved(s);
    }
    match ev {
        Event::Key(k) => key(s, k),
        Event::Mouse(m) => mouse(s, m),
        Event::Paste(text) => super::paste::paste(s, &text),
        Event::EditedExternally { field, result } => super::editor::external_update::edited(s, field, result),
        Event::ModelSaved(r) => super::providers::save_model::saved(s, r),
        Event::Remembered(r) => super::remember::update::loaded(s, r),
        Event::ReportWritten(r) => super::report::update::written(s, r),
        Event::Resize(w, h) => {
            s.size = (w, h);
            Vec::new()
        }
        Event::Tick(ms) => tick(s, ms),
        Event::PromptsLoaded {
            prompts,
            errors,
            warnings,
        } => super::prompts::update::loaded(s, prompts, errors, &warnings),
        Event::SessionsLoaded(sessions) => super::sessions::update::loaded(s, sessions),
        Event::Run { id, msg } => run_msg(s, id, msg),
        Event::Saved(r) => super::editor::update::saved(s, r),
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
        Event::Answer(a) => match super::registry::get(a.to) {
            Some(c) => c.answer(s, a.msg),
            None => Vec::new(),
        },
        Event::Eval { id, msg } => super::eval::update::msg(s, id, msg),
        Event::MigrateWritten(w) => migrate_written(s, w),
        Event::Terminate => quit(s),
    }
}
