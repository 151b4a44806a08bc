//! What the workbench keeps between sessions: the last tab and the pinned
//! compare side. Written on the way out (`Effect::Remember`), read at start
//! (`Event::Remembered`); a pin is a recorded run (`session#N`), restored
//! once the sessions have loaded, and dropped when that run is gone.

use super::super::event::{Effect, Remembered};
use super::super::state::{State, Tab};

/// What to keep, as the workbench quits.
pub fn on_quit(s: &State) -> Effect {
    Effect::Remember(Remembered {
        tab: Some(s.tab),
        pin: s.pinned.as_ref().and_then(|p| p.recorded.clone()),
    })
}

/// The last session's tab and pin arrived.
pub fn loaded(s: &mut State, r: Remembered) -> Vec<Effect> {
    // Only while the person has not moved yet.
    if let (Some(tab), Tab::Prompts) = (r.tab, s.tab) {
        s.tab = tab;
    }
    s.pin_to_restore = r.pin;
    restore_pin(s)
}

/// Pin the remembered run once the sessions are there.
pub fn restore_pin(s: &mut State) -> Vec<Effect> {
    if !s.sessions.loaded {
        return Vec::new();
    }
    let Some(want) = s.pin_to_restore.take() else {
        return Vec::new();
    };
    let found = s
        .sessions
        .sessions
        .iter()
        .enumerate()
        .find_map(|(si, x)| (0..x.runs.len()).find(|&ri| x.reference(ri) == want).map(|ri| (si, ri)));
    match found.map(|(si, ri)| super::view_of_record(s, si, ri)) {
        Some(Ok(v)) => {
            s.pinned = Some(Box::new(v));
            s.info(rust_i18n::t!("tui.status.pin_restored", run = want).into_owned());
        }
        Some(Err(e)) => s.error(e),
        None => s.info(rust_i18n::t!("tui.status.pin_gone", run = want).into_owned()),
    }
    Vec::new()
}
