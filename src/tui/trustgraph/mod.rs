//! A running TrustGraph deployment in the workbench, when the prompts
//! directory is one `cutline tg pull` made: the status line names the
//! deployment, workspace and version pulled; `T` pushes the prompt on show
//! (on the Migrate tab: the migration, in place of the prompt it migrates)
//! after showing the diff of every key it writes and asking; a refusal
//! shows its reasons. The push is `cutline tg push`'s own: the same plan,
//! TrustGraph loader checks, journal (`cutline tg undo` puts it back) and
//! read-back (`tg::push`).
//!
//! `state` holds [`TgState`] (in `State::parts`), `jobs` reads the pull,
//! checks and pushes off the UI thread, `update` answers keys and jobs,
//! `view` draws the question and the refusal.

pub mod error;
pub mod jobs;
pub mod state;
mod update;
pub mod view;

#[cfg(test)]
mod tests;

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::Line;

pub use state::{Stage, TgState};

use crate::tui::Effect;
use crate::tui::component::{Component, Id, Place};
use crate::tui::keymap::{Action, OwnKey};
use crate::tui::state::State;

/// The component's id.
pub const ID: Id = Id("trustgraph");

/// Its key: push the prompt on show.
const PUSH: OwnKey = OwnKey {
    name: "tg_push",
    keys: &["T"],
    help: "tui.tg.push_help",
};

/// The deployment a pulled directory came from, and `T`.
#[derive(Debug, Clone, Copy)]
pub struct TrustGraph;

impl Component for TrustGraph {
    fn id(&self) -> Id {
        ID
    }

    fn place(&self) -> Place {
        Place::Popup
    }

    fn keys(&self) -> &'static [OwnKey] {
        &[PUSH]
    }

    fn init(&self, _s: &State) -> Vec<Effect> {
        vec![Effect::Job {
            to: ID,
            job: Box::new(jobs::Load),
        }]
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        update::start(s)
    }

    fn key(&self, s: &mut State, k: KeyEvent) -> Vec<Effect> {
        update::key(s, &k)
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        if let Some(st) = s.parts.get::<TgState>() {
            view::draw(f, area, st, s.theme);
        }
    }

    fn status(&self, s: &State) -> Vec<String> {
        s.parts
            .get::<TgState>()
            .and_then(|st| st.pulled.as_ref())
            .map(|p| {
                rust_i18n::t!(
                    "tui.tg.status",
                    workspace = p.workspace,
                    host = p.host(),
                    version = p.version
                )
                .into_owned()
            })
            .into_iter()
            .collect()
    }

    fn mode_hint(&self, s: &State) -> Option<Cow<'static, str>> {
        let asking = s.parts.get::<TgState>().is_some_and(|t| matches!(t.stage, Stage::Ask(_)));
        Some(if asking {
            rust_i18n::t!("tui.tg.mode_hint")
        } else {
            rust_i18n::t!("tui.tg.any_key")
        })
    }

    fn answer(&self, s: &mut State, msg: Box<dyn std::any::Any + Send>) -> Vec<Effect> {
        match msg.downcast::<jobs::TgMsg>() {
            Ok(m) => update::answer(s, *m),
            Err(_) => Vec::new(),
        }
    }
}
