//! The Compare tab's strategies (`S`): each side of the pair on show
//! through `eval::cell::run_cell`, the cells `eval --strategy` runs, so the
//! workbench's table and the command's agree.

use std::sync::Arc;

use super::CostJob;
use crate::eval::cell::{Cell, Shared, run_cell};
use crate::eval::strategy::StrategyRun;
use crate::eval::{Gold, Input};
use crate::tui::choice::ProviderChoice;
use crate::tui::runs::{Origin, Source};
use crate::tui::runs::{RunError, record, target_of};
use crate::tui::work::{Job, JobContext, RunContext};

/// `retry-double`'s retries and `continue`'s further calls: the defaults of
/// `eval --strategy`.
const RETRIES: u32 = 3;
const CONTINUE_CALLS: u32 = 6;

/// Why the strategies could not run on the pair.
#[derive(Debug, thiserror::Error)]
pub enum CostsError {
    /// A side could not start or run (the run path's error).
    #[error(transparent)]
    Run(#[from] RunError),
    /// The strategies panicked (caught; the log has the panic).
    #[error("internal error: the strategies panicked (see the log)")]
    Panicked,
}

/// The strategies ran on the pair with these run ids: the table's own
/// message, answered to it ([`crate::tui::work::Answer`]).
#[derive(Debug)]
pub struct CostsDone {
    /// The pair's run ids (JSON side, JSONL side).
    pub ids: (u64, u64),
    /// Each side's strategy runs, or why they could not run.
    pub result: Result<Vec<StrategyRun>, CostsError>,
}

/// Run the strategies of `S` on the pair and answer [`CostsDone`]; a
/// panic is reported as a failure.
impl Job for CostJob {
    fn start(self: Box<Self>, cx: JobContext) {
        tokio::spawn(async move {
            let job = *self;
            let ids = job.ids;
            tracing::info!("strategies on runs {ids:?}: start");
            let work = std::panic::AssertUnwindSafe(run(job, cx.run.clone()));
            let result = futures_util::FutureExt::catch_unwind(work)
                .await
                .unwrap_or(Err(CostsError::Panicked));
            if let Err(e) = &result {
                tracing::warn!("strategies on runs {ids:?}: {e}");
            }
            cx.answer(CostsDone { ids, result });
        });
    }
}

/// Both sides' strategy runs, side A's first.
async fn run(job: CostJob, ctx: RunContext) -> Result<Vec<StrategyRun>, CostsError> {
    let mut runs = Vec::new();
    for (origin, limit) in &job.sides {
        runs.extend(side(origin, *limit, &job, &ctx).await?);
    }
    Ok(runs)
}

async fn side(
    origin: &Origin,
    limit: Option<u32>,
    job: &CostJob,
    ctx: &RunContext,
) -> Result<Vec<StrategyRun>, RunError> {
    let spec = match &origin.source {
        Source::Prompt(spec) => spec.as_ref().clone(),
        Source::Recording { record, .. } => crate::run::Spec::new(record.prompt_config()?, record.variables.clone()),
    };
    let target = target_of(&origin.source, &origin.provider, &job.sessions_dir, &ctx.registry)
        .await?
        .target;
    let gold = job
        .gold
        .as_ref()
        .map(|(file, items)| Arc::new(Gold::new(file.clone(), items.clone(), &spec.prompt, &spec.vars, &[])));
    let cell = Cell {
        prompt: Arc::new(spec.prompt.clone()),
        gold,
        input: Input {
            id: "on show".into(),
            vars: spec.vars.clone(),
        },
        limit,
        target,
    };
    let shared = Shared {
        strategies: super::strategies_for(spec.prompt.response_type).to_vec(),
        retries: RETRIES,
        continue_calls: CONTINUE_CALLS,
        layer: spec.cli.clone(),
        headers: spec.headers.clone(),
        tg_python: spec.tg_python,
    };
    let done = run_cell(&cell, &shared).await?;
    // Calls on a model are recorded, as the workbench's runs are.
    let on_model = matches!(
        origin.provider,
        ProviderChoice::Local | ProviderChoice::Configured { .. }
    ) && matches!(origin.source, Source::Prompt(_));
    if on_model {
        for r in done.records {
            record(&ctx.recorder, &job.sessions_dir, &spec.prompt.id, r);
        }
    }
    Ok(done.runs.into_iter().map(|(r, _)| r).collect())
}
