//! The root's questions to the one list of components ([`COMPONENTS`],
//! made by the `components!` list in `tui/mod.rs`): which is on show,
//! which owns an action, a key or a mode, what sits under a body, who
//! answers a [`Nav`] or a job's answer.

use ratatui::text::Line;

use super::Effect;
use super::component::{Component, Id, Nav, Place};
use super::keymap::{Action, OwnKey};
use super::state::{Mode, State};

pub use super::COMPONENTS;

/// The component `id`.
pub fn get(id: Id) -> Option<&'static dyn Component> {
    COMPONENTS.iter().copied().find(|c| c.id() == id)
}

/// The components on show now, in registry order.
pub fn on_show(s: &State) -> impl Iterator<Item = &'static dyn Component> + '_ {
    COMPONENTS.iter().copied().filter(move |c| c.on_show(s))
}

/// The component drawing the body: the open view over the tab, else the
/// tab's own.
pub fn body(s: &State) -> Option<&'static dyn Component> {
    let over = on_show(s).find(|c| matches!(c.place(), Place::Over(_)));
    over.or_else(|| on_show(s).find(|c| matches!(c.place(), Place::Tab(_))))
}

/// The component that owns `a`.
pub fn owner(a: Action) -> Option<&'static dyn Component> {
    COMPONENTS
        .iter()
        .copied()
        .find(|c| c.actions().contains(&a) || c.keys().iter().any(|k| Action::Own(k.name) == a))
}

/// Every component's own keys, in registry order (for the keymap).
pub fn own_keys() -> Vec<OwnKey> {
    COMPONENTS.iter().flat_map(|c| c.keys().iter().copied()).collect()
}

/// The component whose typing mode `m` is.
pub fn mode_owner(m: &Mode) -> Option<&'static dyn Component> {
    COMPONENTS.iter().copied().find(|c| c.owns_mode(m))
}

/// The lines of the sections under `id`'s body.
pub fn under(s: &State, id: Id) -> Vec<Line<'static>> {
    COMPONENTS
        .iter()
        .filter(|c| c.place() == Place::Under(id))
        .flat_map(|c| c.lines(s))
        .collect()
}

/// Route `nav` to every component that answers it, in registry order.
pub fn route(s: &mut State, nav: &Nav) -> Vec<Effect> {
    match nav {
        Nav::Act(a) => return owner(*a).map_or_else(Vec::new, |c| c.action(s, *a)),
        Nav::Say(text) => {
            s.info(text.clone());
            return Vec::new();
        }
        _ => {}
    }
    let mut out = Vec::new();
    for c in COMPONENTS {
        if let Some(e) = c.navigate(s, nav) {
            out.extend(e);
        }
    }
    out
}

/// Carry out the navigation messages among `effects` where they stand,
/// so the runner gets only work and in the order it was asked.
pub fn settle(s: &mut State, effects: Vec<Effect>) -> Vec<Effect> {
    let mut out = Vec::with_capacity(effects.len());
    for e in effects {
        match e {
            Effect::Nav(nav) => {
                let routed = route(s, &nav);
                out.extend(settle(s, routed));
            }
            other => out.push(other),
        }
    }
    out
}
