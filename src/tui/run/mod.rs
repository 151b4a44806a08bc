//! Runs and the Run tab: starting a run (one prompt, a recording, twins, a
//! continuation `c`), cancelling, folding in what the runner reports, and
//! drawing the response(s) and both parses.
//!
//! `model` is one run as the workbench shows it ([`RunView`]: text, token
//! boundaries, both analyses), `state` what is on show ([`Shown`]) and
//! what `r` runs ([`Target`]), `job` what goes to the runner and comes
//! back, `update` the reducer's part, `rows` the scrolling panes' rows
//! (the one count update and view share), `view` the tab with its panes
//! (`response`, `json`, `jsonl`; the Sweep tab draws the last two too),
//! `effects` and `analysers` the runner's part.

mod analysers;
mod effects;
mod error;
mod job;
pub mod json;
pub mod jsonl;
mod model;
pub mod response;
mod rows;
mod state;
mod stop;
pub(super) mod update;
pub mod view;

pub use analysers::Analysers;
pub(super) use effects::{record, spawn, target_of};
pub use error::RunError;
pub use job::{Origin, Prefill, RunEnd, RunJob, RunMsg, Source};
pub use model::{Cut, Phase, RunView, cut, schemas_for};
pub use rows::{json_source, jsonl_source, pane_order, row_text, rows, scroll_pane};
pub use state::{Shown, Target};
pub(in crate::tui) use stop::Stop;
pub use update::limit_label;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::event::Effect;
use crate::tui::keymap::Action;
use crate::tui::state::{State, Tab};

/// The Run tab: starting, cancelling, continuing and copying runs, and
/// their response and parse panes.
#[derive(Debug, Clone, Copy)]
pub struct Run;

impl Component for Run {
    fn id(&self) -> Id {
        Id::Run
    }

    fn place(&self) -> Place {
        Place::Tab(Tab::Run)
    }

    fn actions(&self) -> &'static [Action] {
        &[
            Action::Run,
            Action::Twins,
            Action::Cancel,
            Action::Copy,
            Action::Continue,
            Action::Structured,
        ]
    }

    fn action(&self, s: &mut State, a: Action) -> Vec<Effect> {
        match a {
            Action::Run => update::run(s),
            Action::Twins => update::twins(s),
            Action::Copy => update::copy(s),
            Action::Continue => update::continue_run(s),
            Action::Structured => {
                update::cycle_structured(s);
                Vec::new()
            }
            _ => {
                let out = update::cancel_live(s);
                if out.is_empty() {
                    s.message = None;
                    return vec![Effect::Nav(Nav::EndSearch)];
                }
                s.info(rust_i18n::t!("tui.msg.cancelled"));
                out
            }
        }
    }

    fn move_by(&self, s: &mut State, by: isize, _under: &[Line<'static>]) {
        scroll_pane(s, s.focus_in_tab(), by);
    }

    fn sideways(&self, s: &mut State, by: isize) {
        self.focus(s, by.signum());
    }

    fn focus(&self, s: &mut State, dir: isize) -> bool {
        crate::tui::panes::focus_in(s, pane_order(s), dir);
        true
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, s);
    }
}
