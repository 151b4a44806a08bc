//! The Sweep tab: items recovered by strict JSON, salvage and JSONL at
//! every token cut of the answer(s) on show (`output::sweep`), a cursor
//! that re-analyses both sides at its cut, and the recommended budget.
//!
//! `state` holds [`Sweep`] (`Idle | Pending | Ready`) and the job and
//! result types, `update` asks for it, takes it and moves the cursor,
//! `view` draws the chart, the summary and the two cut parses, `effects`
//! computes it off the UI task.

mod effects;
mod state;
pub(super) mod update;
pub mod view;

pub use effects::compute_sweep;
pub(super) use effects::spawn;
pub use state::{BUDGET_TARGET, Sweep, SweepData, SweepInput, SweepJob, SweepView};
pub use update::set_cursor;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{OutPane, State, Tab};

/// The Sweep tab: items recovered against the limit, its cursor, and both
/// parses cut there.
#[derive(Debug, Clone, Copy)]
pub struct SweepTab;

impl Component for SweepTab {
    fn id(&self) -> Id {
        Id("sweep")
    }

    fn place(&self) -> Place {
        Place::Tab(Tab::Sweep)
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Sweep]
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        update::sweep(s)
    }

    fn enter(&self, s: &mut State) -> Vec<Effect> {
        if matches!(s.sweep, Sweep::Idle) {
            return update::sweep_effect(s).into_iter().collect();
        }
        Vec::new()
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        let Effect::Sweep(job) = e else { return Err(e) };
        spawn(cx.tx(), job);
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::SweepReady(data) => {
                update::sweep_ready(s, *data);
                Ok(Vec::new())
            }
            other => Err(other),
        }
    }

    fn move_by(&self, s: &mut State, by: isize, _under: &[Line<'static>]) {
        crate::tui::runs::scroll_pane(s, s.focus_in_tab(), by);
    }

    fn sideways(&self, s: &mut State, by: isize) {
        if let Some(sw) = s.sweep.ready() {
            let max = sw.max_tokens();
            let k = if by < 0 {
                sw.cursor.saturating_sub(by.unsigned_abs())
            } else {
                (sw.cursor + by.unsigned_abs()).min(max)
            };
            set_cursor(s, k);
        }
    }

    fn focus(&self, s: &mut State, dir: isize) -> bool {
        crate::tui::panes::focus_in(s, &[OutPane::Json, OutPane::Jsonl], dir);
        true
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, s);
    }

    fn navigate(&self, s: &mut State, nav: &Nav) -> Option<Vec<Effect>> {
        matches!(nav, Nav::Sweep).then(|| update::sweep_effect(s).into_iter().collect())
    }
}
