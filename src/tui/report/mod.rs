//! `x`: the shareable HTML report of the recorded runs on show (the page
//! `cutline report` writes), for people who are not at the terminal.
//!
//! `update` asks for it (the runs on show must be recordings of one
//! session) and takes the answer, `effects` writes it through
//! `report::load` and `report::html` beside the sessions.

mod effects;
pub(super) mod update;

pub(super) use effects::spawn;
pub use effects::{ReportError, write_report};

use crate::tui::{Effect, Event};
use crate::tui::State;
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Place};
use crate::tui::keymap::Action;

/// `x`: the HTML report of the runs on show; its answer is the status line.
#[derive(Debug, Clone, Copy)]
pub struct Report;

impl Component for Report {
    fn id(&self) -> Id {
        Id("report")
    }

    fn place(&self) -> Place {
        Place::Job
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Report]
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        let Effect::WriteReport { session, runs, py } = e else {
            return Err(e);
        };
        spawn(cx.tx(), cx.sessions_dir.clone(), cx.prompts_dir(), session, runs, py);
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::ReportWritten(r) => Ok(update::written(s, r)),
            other => Err(other),
        }
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        update::write(s)
    }
}
