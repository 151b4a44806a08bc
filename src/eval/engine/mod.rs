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
///
/// Group commit: [`Writer::stage`] writes a run's line without syncing,
/// [`Writer::commit`] syncs every staged line at once and only then tells
/// the caller (`Events::finished`). A run is acknowledged only once it is
/// on the disk, so a crash loses at most the runs staged since the last
/// commit (never one the caller was told of), and one `fdatasync` serves
/// every run that finished while the previous one was under way.
pub struct Writer<'a> {
    /// The session.
    pub recorder: &'a mut Recorder,
    /// What was written.
    pub done: Executed,
    /// Runs written since the last commit, not yet told.
    pub staged: Vec<RunSummary>,
}

impl<'a> Writer<'a> {
    /// A writer recording into `recorder`.
    pub fn new(recorder: &'a mut Recorder) -> Self {
        Self {
            recorder,
            done: Executed::default(),
            staged: Vec::new(),
        }
    }

    /// This writer, with room for the summaries of `runs` runs: grown by
    /// doubling, 100,000 of them would hold room for 131,072 (~13 MB for
    /// nothing).
    #[must_use]
    pub fn expecting(mut self, runs: usize) -> Self {
        self.done.summaries.reserve_exact(runs);
        self
    }

    /// Record `record` of `planned` (analysed as `analysis`) and tell the
    /// caller, synced before it returns; `false` when the session is full
    /// and the eval must stop.
    pub fn write(
        &mut self,
        m: &Matrix,
        planned: &Planned,
        record: RunRecord,
        analysis: &Analysis,
        events: &mut impl Events,
    ) -> io::Result<bool> {
        let go_on = self.stage(m, planned, record, analysis, events)?;
        let synced = self.recorder.sync();
        self.acknowledge(synced, events)?;
        Ok(go_on)
    }

    /// Write `record`'s line (not synced yet) and keep its summary for the
    /// next commit; `false` when the session is full and the eval must
    /// stop.
    pub fn stage(
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
        if let Err(e) = self.recorder.record_unsynced(&record) {
            self.done.unrecorded.0 += 1;
            if crate::session::is_full(&e) && self.done.full.is_none() {
                events.warn(format!("{e}; the eval stops here"))?;
                self.done.full = Some(e.to_string());
                go_on = false;
            } else {
                self.unrecorded_warning(&e, events)?;
            }
        }
        self.staged.push(eval::summarise(
            planned.key.clone(),
            &plan.inputs[planned.input].id,
            &record,
            analysis,
            plan.gold.as_ref(),
            false,
        ));
        Ok(go_on)
    }

    /// Sync every staged line with one `fdatasync` on this thread, then
    /// tell the caller of each (for callers outside the async runtime).
    pub fn commit_now(&mut self, events: &mut impl Events) -> io::Result<()> {
        if self.staged.is_empty() {
            return Ok(());
        }
        let synced = self.recorder.sync();
        self.acknowledge(synced, events)
    }

    /// Sync every staged line with one `fdatasync` on a blocking thread
    /// (the runs in flight go on meanwhile), then tell the caller of each.
    pub async fn commit(&mut self, events: &mut impl Events) -> io::Result<()> {
        if self.staged.is_empty() {
            return Ok(());
        }
        let synced = match self.recorder.sync_handle() {
            Ok(file) => tokio::task::spawn_blocking(move || file.sync_data())
                .await
                .unwrap_or_else(|e| Err(io::Error::other(e))),
            Err(e) => Err(e),
        };
        self.acknowledge(synced, events)
    }

    /// Tell the caller of every staged run; when the sync failed, say so
    /// once (the lines may not be on the disk: a rerun reads what is).
    fn acknowledge(&mut self, synced: io::Result<()>, events: &mut impl Events) -> io::Result<()> {
        if let Err(e) = synced {
            self.unrecorded_warning(&e, events)?;
        }
        for s in self.staged.drain(..) {
            events.finished(&s)?;
            self.done.summaries.push(s);
        }
        Ok(())
    }

    fn unrecorded_warning(&mut self, e: &io::Error, events: &mut impl Events) -> io::Result<()> {
        if self.done.unrecorded.1.is_none() {
            self.done.unrecorded.1 = Some(e.to_string());
            events.warn(format!(
                "could not record runs in {}: {e}; a rerun will run them again",
                self.recorder.path().display()
            ))?;
        }
        Ok(())
    }
}
