//! One eval engine for every caller (`cutline eval`, the workbench):
//! the matrix planned and the session resumed (`plan.rs`), every pending
//! run executed (streamed with bounded concurrency, `stream.rs`, or by the
//! provider's batch API, `batched.rs`), each answer recorded through the
//! one run path's `run::finish` and reduced to a [`RunSummary`], and every
//! step told to the caller as an [`Events`] call. The caller draws the
//! table (pure: `eval::table`) and maps failures to its own codes.

pub mod batched;
pub mod plan;
pub mod rounds;
pub mod session;
pub mod stream;

use std::io;

use crate::eval::{self, RunSummary};
use crate::run::Analysis;
use crate::session::{Recorder, RunRecord};
pub use plan::{Ask, Matrix, PlanError, Planned, PromptPlan, hold_in_batches, in_batches, plan, resume};

/// What the engine tells its caller.
pub trait Events {
    /// A run finished and was recorded (or could not be): its summary.
    fn finished(&mut self, s: &RunSummary) -> io::Result<()>;
    /// Something a person should read.
    fn warn(&mut self, message: String) -> io::Result<()>;
    /// Runs in flight now (for a progress bar).
    fn progress(&mut self, in_flight: usize);
    /// A batch step (submitted, polled, collected, waiting).
    fn batch(&mut self, note: &crate::eval::batch::Note) -> io::Result<()>;
}

/// What an execution did.
#[derive(Debug, Default)]
pub struct Executed {
    /// Every run recorded now, in the order they finished.
    pub summaries: Vec<RunSummary>,
    /// Runs whose record could not be written, and the first error.
    pub unrecorded: (usize, Option<String>),
    /// The session reached the size cutline reads back: the eval stopped.
    pub full: Option<String>,
    /// Runs still in provider batches when the wait ran out.
    pub pending: usize,
    /// The most runs in flight at once (streamed).
    pub max_in_flight: usize,
}

/// Why an execution could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// Writing output failed.
    #[error("writing output: {0}")]
    Io(#[from] io::Error),
    /// A batch call failed.
    #[error(transparent)]
    Batch(#[from] crate::eval::batch::BatchError),
    /// The async runtime could not start.
    #[error("tokio runtime: {0}")]
    Runtime(String),
}

/// Records finished runs in order: the session line, the summary, the
/// caller's event. The one place a run of the matrix is written.
pub struct Writer<'a> {
    /// The session.
    pub recorder: &'a mut Recorder,
    /// What was written.
    pub done: Executed,
}

impl Writer<'_> {
    /// Record `record` of `planned` (analysed as `analysis`) and tell the
    /// caller; `false` when the session is full and the eval must stop.
    pub fn write(
        &mut self,
        m: &Matrix,
        planned: &Planned,
        mut record: RunRecord,
        analysis: &Analysis,
        events: &mut impl Events,
    ) -> io::Result<bool> {
        let plan = &m.plans[planned.prompt];
        record.run_id = self.recorder.next_run_id();
        let mut go_on = true;
        if let Err(e) = self.recorder.record(&record) {
            self.done.unrecorded.0 += 1;
            if crate::session::is_full(&e) && self.done.full.is_none() {
                events.warn(format!("{e}; the eval stops here"))?;
                self.done.full = Some(e.to_string());
                go_on = false;
            } else if self.done.unrecorded.1.is_none() {
                self.done.unrecorded.1 = Some(e.to_string());
                events.warn(format!(
                    "could not record runs in {}: {e}; a rerun will run them again",
                    self.recorder.path().display()
                ))?;
            }
        }
        let s = eval::summarise(
            planned.key.clone(),
            &plan.inputs[planned.input].id,
            &record,
            analysis,
            plan.gold.as_ref(),
            false,
        );
        events.finished(&s)?;
        self.done.summaries.push(s);
        Ok(go_on)
    }
}
