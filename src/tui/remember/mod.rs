//! What the workbench keeps between sessions: the last tab with what it
//! showed (the prompt open, the recorded runs on show) and the pinned
//! compare side. Written on the way out (`Effect::Remember`), read at start
//! (`Event::Remembered`). A tab comes back with its context or not at all:
//! when the prompt or the runs it showed are gone, the workbench opens on
//! Prompts and says why.
//!
//! [`Remembered`] is what is kept, `update` builds it at quit and restores
//! it at start (once the prompts and the sessions it names have loaded),
//! `effects` reads and writes the file beside the sessions.

pub mod effects;
pub(super) mod update;

use crate::tui::state::Tab;

pub use effects::REMEMBERED_FILE;

/// What the workbench keeps between sessions, beside the sessions it
/// records: the last tab, what it showed, and the pinned compare side (by
/// its recording). The fields added after the first two are left out of
/// the file when empty, so a file without them reads as before.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Remembered {
    /// The tab open at quit.
    pub tab: Option<Tab>,
    /// The pinned run, as `session#N`, when it was recorded.
    pub pin: Option<String>,
    /// The prompt the tab showed, by id: the one open in the editor (Edit)
    /// or migrated (Migrate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The runs on show (Run, Sweep, Compare), as `session#N`, when every
    /// one was recorded: one run, or twins (the JSON side first). Left out
    /// when it is the pinned run, which `pin` names already.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shown: Vec<String>,
}

use crate::tui::{Effect, Event};
use crate::tui::State;
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Nav, Place};

/// What the workbench keeps between starts: written at quit, put back as
/// the prompts and sessions it names load ([`Nav::Resume`]).
#[derive(Debug, Clone, Copy)]
pub struct Remember;

impl Component for Remember {
    fn id(&self) -> Id {
        Id("remember")
    }

    fn place(&self) -> Place {
        Place::Job
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        match e {
            // Written at once: it comes just before the workbench exits.
            Effect::Remember(r) => effects::remember(cx.sessions_dir, &r),
            Effect::LoadRemembered => {
                let (tx, dir) = (cx.tx(), cx.sessions_dir.clone());
                tokio::task::spawn_blocking(move || {
                    if let Some(r) = effects::remembered(&dir) {
                        let _ = tx.send(Event::Remembered(r));
                    }
                });
            }
            other => return Err(other),
        }
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::Remembered(r) => Ok(update::loaded(s, r)),
            other => Err(other),
        }
    }

    fn on_quit(&self, s: &State) -> Vec<Effect> {
        vec![update::on_quit(s)]
    }

    fn navigate(&self, s: &mut State, nav: &Nav) -> Option<Vec<Effect>> {
        matches!(nav, Nav::Resume).then(|| update::resume(s))
    }
}
