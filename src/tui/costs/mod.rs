//! The Compare tab's strategy table (`S`): what getting every item of the
//! pair on show costs, strategy by strategy. The same cells and rows as
//! `cutline eval --strategy`, for one input: the pair's own.
//!
//! The feature in one folder: its state ([`Costs`], in `State::costs`),
//! the reducer's part (`update`: ask, take the answer), its lines at the
//! foot of the Compare report (`view`; [`Place::Under`] the Compare tab)
//! and the runner's part (`effects`: each side through
//! `eval::cell::run_cell`). A new pair on show drops the old pair's table
//! ([`Nav::PairChanged`]).

mod effects;
mod state;
pub(super) mod update;
pub mod view;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::eval::strategy::{self, Strategy, StrategyRow, StrategyRun};
use crate::prompt::ResponseType;
use crate::tui::runs::Origin;

pub use effects::{CostsDone, CostsError};
pub use state::Costs;

/// The strategies to run on the pair on show: the JSON side by `single`
/// and `retry-double`, the JSONL side by `single` and `continue`, each
/// from its own origin and limit.
#[derive(Debug, Clone)]
pub struct CostJob {
    /// The pair's run ids (JSON side, JSONL side).
    pub ids: (u64, u64),
    /// Each side's origin and limit.
    pub sides: [(Arc<Origin>, Option<u32>); 2],
    /// The gold set on show (file, items), for recall and loss.
    pub gold: Option<(String, Vec<Value>)>,
    /// Where calls on a model are recorded.
    pub sessions_dir: PathBuf,
}

/// The strategies a side runs: a JSONL answer is continued, anything else
/// is retried with twice the limit (the loop users write around a JSON
/// array); both against one call at the limit.
pub fn strategies_for(response_type: ResponseType) -> [Strategy; 2] {
    match response_type {
        ResponseType::Jsonl => [Strategy::Single, Strategy::Continue],
        _ => [Strategy::Single, Strategy::RetryDouble],
    }
}

/// One side of the pair as the table lists it.
#[derive(Debug, Clone, Copy)]
pub struct SideOf<'a> {
    /// Prompt id.
    pub prompt: &'a str,
    /// Its response type.
    pub response_type: ResponseType,
    /// The limit it ran at.
    pub limit: Option<u32>,
}

/// The rows and headline of the pair's strategy runs.
pub fn table(sides: [SideOf<'_>; 2], runs: &[StrategyRun]) -> (Vec<StrategyRow>, Option<String>) {
    let mut rows = Vec::new();
    for (i, side) in sides.iter().enumerate() {
        let other = sides[1 - i].prompt;
        let listed = [(side.prompt, side.response_type, Some(other))];
        rows.extend(strategy::table(
            &listed,
            &[side.limit],
            &strategies_for(side.response_type),
            runs,
        ));
    }
    let headline = strategy::headlines(&rows).first().map(strategy::Headline::sentence);
    (rows, headline)
}

use ratatui::text::Line;

use crate::tui::Effect;
use crate::tui::State;
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::keymap::Action;

/// The strategy table, under the Compare report.
#[derive(Debug, Clone, Copy)]
pub struct CostsTable;

impl Component for CostsTable {
    fn id(&self) -> Id {
        Id("costs")
    }

    fn place(&self) -> Place {
        Place::Under(Id("compare"))
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Costs]
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        update::start(s)
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        let Effect::Costs(job) = e else { return Err(e) };
        crate::tui::work::Job::start(job, cx.job_context(self.id()));
        Ok(())
    }

    fn answer(&self, s: &mut State, msg: Box<dyn std::any::Any + Send>) -> Vec<Effect> {
        match msg.downcast::<CostsDone>() {
            Ok(done) => update::done(s, done.ids, done.result),
            Err(_) => Vec::new(),
        }
    }

    fn lines(&self, s: &State) -> Vec<Line<'static>> {
        view::lines(&s.costs, &s.keymap.key_for(Action::Costs), s.theme)
    }

    fn navigate(&self, s: &mut State, nav: &Nav) -> Option<Vec<Effect>> {
        matches!(nav, Nav::PairChanged).then(|| {
            s.costs = Costs::Idle;
            Vec::new()
        })
    }
}
