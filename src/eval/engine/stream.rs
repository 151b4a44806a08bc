//! Streamed execution: one shared target (one connection pool), at most
//! `concurrency` runs in flight. A spawner takes a semaphore permit per run
//! before spawning it, and a run holds its permit until its result is
//! handed to the writer over a bounded channel, so memory grows with runs
//! in flight, not with runs done. The writer (this task, the only owner of
//! the recorder) records each run as it finishes. Dropping the execution
//! (a cancelled eval) stops the spawner and every run it started.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::{Ask, Events, ExecError, Executed, Matrix, Planned, Writer};
use crate::llm::{ErrorKind, LlmError};
use crate::run::{Analysis, Outcome};
use crate::session::{Recorder, RunRecord};

/// A finished run on its way to the writer.
struct Finished {
    planned: Planned,
    record: RunRecord,
    analysis: Analysis,
}

/// Run `pending` with at most `concurrency` in flight, recording each.
pub async fn execute(
    m: Arc<Matrix>,
    ask: Arc<Ask>,
    pending: Vec<Planned>,
    concurrency: usize,
    recorder: &mut Recorder,
    events: &mut impl Events,
) -> Result<Executed, ExecError> {
    let runs = pending.len();
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Finished>(concurrency.clamp(1, 1024));
    let mut spawner = Spawner(tokio::spawn(spawn_runs(
        m.clone(),
        ask,
        pending,
        concurrency,
        tx,
        (in_flight.clone(), max_in_flight.clone()),
    )));
    let mut w = Writer::new(recorder).expecting(runs);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        let f = tokio::select! {
            f = rx.recv() => f,
            _ = tick.tick() => {
                events.progress(in_flight.load(Ordering::Relaxed));
                continue;
            }
        };
        let Some(f) = f else { break };
        // Group commit: every run that finished meanwhile is written, then
        // one sync covers them all before any is told (Writer).
        let mut go_on = w.stage(&m, &f.planned, f.record, &f.analysis, events)?;
        while go_on && let Ok(f) = rx.try_recv() {
            go_on = w.stage(&m, &f.planned, f.record, &f.analysis, events)?;
        }
        w.commit(events).await?;
        events.progress(in_flight.load(Ordering::Relaxed));
        if !go_on {
            spawner.0.abort();
            break;
        }
    }
    let _ = (&mut spawner.0).await;
    w.done.max_in_flight = max_in_flight.load(Ordering::Relaxed);
    Ok(w.done)
}

type Counters = (Arc<AtomicUsize>, Arc<AtomicUsize>);

/// The spawner's task, aborted when the execution is dropped: its runs
/// (held in its `JoinSet`) go with it.
struct Spawner(tokio::task::JoinHandle<()>);

impl Drop for Spawner {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Start every pending run, never more than `concurrency` at once.
async fn spawn_runs(
    m: Arc<Matrix>,
    ask: Arc<Ask>,
    pending: Vec<Planned>,
    concurrency: usize,
    tx: tokio::sync::mpsc::Sender<Finished>,
    (in_flight, max_in_flight): Counters,
) {
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut runs = tokio::task::JoinSet::new();
    for p in pending {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            return;
        };
        // Forget the runs that ended: the set holds those in flight only.
        while runs.try_join_next().is_some() {}
        let Some(target) = m.target(&p, &ask).cloned() else {
            continue;
        };
        let spec = m.spec(&p, &ask);
        let (tx, in_flight, max_in_flight) = (tx.clone(), in_flight.clone(), max_in_flight.clone());
        runs.spawn(async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            max_in_flight.fetch_max(now, Ordering::SeqCst);
            let result = run_once(&target, &spec).await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            let finished = match result {
                Ok(Outcome { record, analysis, .. }) => Finished {
                    planned: p,
                    record,
                    analysis,
                },
                Err(e) => {
                    let Some(f) = failed(&target, &spec, p, e.to_string()) else {
                        return;
                    };
                    f
                }
            };
            let _ = tx.send(finished).await;
            drop(permit);
        });
    }
    // Every run ends here, or with this task when it is aborted.
    while runs.join_next().await.is_some() {}
}

/// One run; a pooled keep-alive connection the server closed just as it
/// was reused fails before any byte comes back: nothing was generated, so
/// the run is sent again (twice at most).
async fn run_once(
    target: &crate::llm::registry::Target,
    spec: &crate::run::Spec,
) -> Result<Outcome, crate::run::StartError> {
    let mut result = crate::run::execute(target, spec, None, |_, _| {}).await;
    for _ in 0..2 {
        match &result {
            Ok(o)
                if o.record.text.is_empty()
                    && o.record.error.as_ref().is_some_and(|e| e.kind == ErrorKind::Connect) =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
                result = crate::run::execute(target, spec, None, |_, _| {}).await;
            }
            _ => break,
        }
    }
    result
}

/// The record of a run that could not start (a prompt whose schema does
/// not compile): an error run, recorded like any other.
fn failed(target: &crate::llm::registry::Target, spec: &crate::run::Spec, p: Planned, why: String) -> Option<Finished> {
    let t = crate::llm::Transcript {
        finish: Some(crate::llm::FinishReason::Error),
        error: Some(LlmError::new(ErrorKind::BadRequest, why)),
        ..crate::llm::Transcript::default()
    };
    let plan = crate::run::plan(spec, target).ok()?;
    let o = crate::run::finish(target.provider.info(), spec, &plan, crate::session::now_ms(), &t, None);
    Some(Finished {
        planned: p,
        record: o.record,
        analysis: o.analysis,
    })
}
