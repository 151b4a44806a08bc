//! The reducer: `update(&mut State, Event) -> Vec<Effect>`. Pure — no IO, no
//! clock, no terminal — so every key can be tested without a terminal. Work
//! that needs IO (runs, saves, loading) goes out as [`Effect`]s and comes back
//! as [`Event`]s. This module takes the root's events (keys, mouse, paste,
//! resize, signals, jobs' answers), hands every other to the component
//! whose it is (`Component::event`), and routes the navigation messages
//! among the effects ([`crate::tui::registry::settle`]); `keys` maps keys
//! to actions and actions to components.

mod keys;

use super::State;
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
        // The person moved: the tab they are on is theirs now, so what
        // the last session showed is not put back over it (the pin
        // still comes back).
        s.restore.tab = None;
    }
    match ev {
        Event::Key(k) => key(s, k),
        Event::Mouse(m) => mouse(s, m),
        Event::Paste(text) => super::paste::paste(s, &text),
        Event::Resize(w, h) => {
            s.size = (w, h);
            Vec::new()
        }
        Event::LocalInstalled(yes) => {
            s.local_installed = Some(yes);
            Vec::new()
        }
        Event::Answer(a) => match super::registry::get(a.to) {
            Some(c) => c.answer(s, a.msg),
            None => Vec::new(),
        },
        Event::Terminate => quit(s),
        // The rest is some component's own.
        mut ev => {
            for c in super::COMPONENTS {
                match c.event(s, ev) {
                    Ok(out) => return out,
                    Err(back) => ev = back,
                }
            }
            tracing::warn!("no component took {ev:?}");
            Vec::new()
        }
    }
}
