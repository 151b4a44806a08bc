//! One prompt × input × limit got by each strategy: a first call at the
//! limit shared by every strategy, then each strategy's own calls, through
//! the one run path. Not pure (it calls the provider): `eval --strategy`
//! and the workbench's Compare tab both run their cells here.

use std::sync::Arc;

use crate::compare::loss::{self, Loss};
use crate::eval::strategy::{Strategy, StrategyRun};
use crate::eval::{Gold, Input};
use crate::llm::params::Layer;
use crate::llm::registry::Target;
use crate::prompt::PromptConfig;
use crate::run::continuation::{self, Call, Ended, How};
use crate::run::{Analysis, Outcome, Spec, StartError, retry};
use crate::session::RunRecord;

/// One prompt × input × limit.
pub struct Cell {
    /// The prompt.
    pub prompt: Arc<PromptConfig>,
    /// Its gold set, if any.
    pub gold: Option<Arc<Gold>>,
    /// The input.
    pub input: Input,
    /// The starting limit.
    pub limit: Option<u32>,
    /// Where to run it.
    pub target: Target,
}

/// What a cell's task hands back: every call's record (the shared first
/// call first) and each strategy's run, whose calls point into `records`.
pub struct Done {
    /// Every call's record, the shared first call first.
    pub records: Vec<RunRecord>,
    /// Each strategy's run and where its calls are in `records`.
    pub runs: Vec<(StrategyRun, Vec<usize>)>,
}

/// What every cell shares.
pub struct Shared {
    /// The strategies, in order.
    pub strategies: Vec<Strategy>,
    /// `retry-double`'s retries.
    pub retries: u32,
    /// `continue`'s further calls.
    pub continue_calls: u32,
    /// Sampling parameters from the command line (or the workbench).
    pub layer: Layer,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// The Python whose limits TrustGraph's verdict follows.
    pub tg_python: crate::output::tg::TgPython,
}

/// The first call, then each strategy on it.
pub async fn run_cell(cell: &Cell, common: &Shared) -> Result<Done, StartError> {
    let mut spec = Spec::new((*cell.prompt).clone(), cell.input.vars.clone());
    spec.cli.clone_from(&common.layer);
    spec.cli.max_tokens = cell.limit;
    spec.headers.clone_from(&common.headers);
    spec.tg_python = common.tg_python;
    let first = crate::run::execute(&cell.target, &spec, None, |_, _| {}).await?;
    let mut records = vec![first.record.clone()];
    let mut got: Vec<Got> = Vec::new();
    for &strategy in &common.strategies {
        // Continuation is line by line: a JSON array has nothing to continue.
        if strategy == Strategy::Continue && cell.prompt.response_type != crate::prompt::ResponseType::Jsonl {
            continue;
        }
        let (calls, ended, fin, more) = match strategy {
            Strategy::Single => {
                let only = Call::of(How::First, &first, first.analysis.items().len(), 0);
                (
                    vec![only],
                    single_end(&first),
                    Final::of(&first, &cell.prompt),
                    Vec::new(),
                )
            }
            Strategy::RetryDouble => {
                let r = retry::run(&cell.target, &spec, &first, common.retries, None).await?;
                let fin = Final::of(&r.last, &cell.prompt);
                (r.calls, r.ended, fin, r.records)
            }
            Strategy::Continue => {
                let c = continuation::run(&cell.target, &spec, &first, common.continue_calls, None).await?;
                let fin = Final::stitched(&spec, &c);
                (c.calls, c.ended, fin, c.records)
            }
        };
        // Call 0 is the shared first call; the rest are this strategy's.
        let base = records.len();
        let at = std::iter::once(0).chain(base..base + more.len()).collect();
        records.extend(more);
        got.push(Got {
            strategy,
            calls,
            at,
            ended,
            fin,
        });
    }
    // Losses are explained against the fullest answer that ended on its own.
    let reference = got
        .iter()
        .filter(|g| g.ended == Ended::Finished)
        .max_by_key(|g| g.fin.items.len())
        .map(|g| g.fin.items.clone());
    let runs = got.into_iter().map(|g| g.run(cell, reference.as_deref())).collect();
    Ok(Done { records, runs })
}

/// How a single call ends as a strategy.
fn single_end(first: &Outcome) -> Ended {
    match first.record.finish {
        crate::llm::FinishReason::Length => Ended::OutOfCalls,
        crate::llm::FinishReason::Error | crate::llm::FinishReason::Unknown => Ended::Failed,
        _ => Ended::Finished,
    }
}

/// One strategy's result in a cell, before billing and loss.
struct Got {
    strategy: Strategy,
    calls: Vec<Call>,
    /// Where each call's record is in the cell's records.
    at: Vec<usize>,
    ended: Ended,
    fin: Final,
}

impl Got {
    fn run(self, cell: &Cell, reference: Option<&[serde_json::Value]>) -> (StrategyRun, Vec<usize>) {
        let loss = cell
            .gold
            .as_ref()
            .filter(|g| g.applies(&cell.input.vars))
            .map(|g| self.fin.loss(g, reference));
        let run = StrategyRun {
            prompt: cell.prompt.id.clone(),
            response_type: cell.prompt.response_type,
            input: cell.input.id.clone(),
            max_tokens: cell.limit,
            strategy: self.strategy,
            items: self.fin.items.len(),
            calls: self.calls,
            ended: self.ended,
            tokens_billed: 0,
            usage_complete: false,
            wall_ms: 0,
            loss,
        }
        .billed();
        (run, self.at)
    }
}

/// A strategy's final answer.
struct Final {
    items: Vec<serde_json::Value>,
    cut: bool,
    analysis: Analysis,
    text: String,
}

impl Final {
    /// The answer `o` gave, its items counted once each by the prompt's
    /// item keys (a looping answer repeats them), as continuation counts.
    fn of(o: &Outcome, p: &PromptConfig) -> Self {
        let keys = crate::compare::Keys::of(crate::eval::item_schema(p).as_ref(), &[]);
        let mut seen = std::collections::HashSet::new();
        Self {
            items: o
                .analysis
                .items()
                .iter()
                .filter(|i| seen.insert(keys.key(i)))
                .cloned()
                .collect(),
            cut: o.record.finish == crate::llm::FinishReason::Length,
            analysis: o.analysis.clone(),
            text: o.record.text.clone(),
        }
    }

    fn stitched(spec: &crate::run::Spec, c: &continuation::Continued) -> Self {
        let p = &spec.prompt;
        let schema = crate::run::analysis_schema(crate::llm::structured::Path::None, p.schema.as_ref());
        let analysis = Analysis::of(p.response_type, schema.as_ref(), &c.text, spec.tg_python);
        Self {
            items: c.items.clone(),
            cut: c.ended != Ended::Finished,
            analysis,
            text: c.text.clone(),
        }
    }

    fn loss(&self, gold: &Gold, reference: Option<&[serde_json::Value]>) -> Loss {
        let run = loss::Run {
            analysis: &self.analysis,
            text: &self.text,
            cut: self.cut,
        };
        loss::of(run, &gold.items, &gold.keys, reference)
    }
}
