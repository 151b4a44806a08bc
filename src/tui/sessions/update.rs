//! The Sessions tab's part of the reducer: taking the sessions read, and
//! opening a recorded run as a finished view (Enter), with the prompt and
//! variables it was recorded with.

use crate::session::Session;
use crate::tui::Effect;
use crate::tui::component::Nav;
use crate::tui::runs::{Shown, Target, limit_label, reference, view_of_record};
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
    vec![Effect::Nav(Nav::Resume)]
}

pub(in crate::tui) fn open_recording(s: &mut State) {
    let Some((si, Some(ri))) = s.sessions.selected_row() else {
        s.info(rust_i18n::t!("tui.msg.select_run"));
        return;
    };
    let _ = s.cancel_live();
    let v = view_of_record(s, si, ri);
    s.show(Shown::Single(Box::new(v)));
    s.target = Target::Recording(si, ri);
    s.tab = Tab::Run;
    s.info(rust_i18n::t!(
        "tui.msg.opened",
        run = reference(s, si, ri),
        limit = limit_label(s.max_tokens)
    ));
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
