//! The Run tab: starting a run (one prompt, a recording, twins, a
//! continuation `c`), cancelling, copying, and drawing the response(s) and
//! both parses. The runs themselves — their model, jobs, rows and panes —
//! are the shared `tui::runs`, re-exported here under the names the
//! workbench's users know.

pub(super) mod update;
pub mod view;

pub use crate::tui::runs::{
    Analysers, Cut, Origin, Phase, Prefill, RunEnd, RunError, RunJob, RunMsg, RunView, Shown, Source, Target, cut,
    json, json_source, jsonl, jsonl_source, limit_label, pane_order, response, row_text, rows, schemas_for,
    scroll_pane,
};

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{State, Tab};

/// The Run tab: starting, cancelling, continuing and copying runs, and
/// their response and parse panes.
#[derive(Debug, Clone, Copy)]
pub struct Run;

impl Component for Run {
    fn id(&self) -> Id {
        Id("run")
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
                let out = s.cancel_live();
                if out.is_empty() {
                    s.message = None;
                    return vec![Effect::Nav(Nav::EndSearch)];
                }
                s.info(rust_i18n::t!("tui.msg.cancelled"));
                out
            }
        }
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        let Effect::Start(job) = e else { return Err(e) };
        let id = job.id;
        let (task, stop) = crate::tui::runs::spawn(cx.tx(), cx.run.clone(), cx.start, *job);
        cx.track(id, task, Some(stop));
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::Run { id, msg } => Ok(update::run_msg(s, id, msg)),
            Event::Tick(ms) => Ok(update::tick(s, ms)),
            other => Err(other),
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

    fn status(&self, s: &State) -> Vec<String> {
        view::status(s)
    }

    fn navigate(&self, s: &mut State, nav: &Nav) -> Option<Vec<Effect>> {
        let Nav::RunPair { array, lines, vars } = nav else {
            return None;
        };
        Some(update::run_pair(s, array, lines, vars.clone()))
    }
}
