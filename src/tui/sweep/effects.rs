//! The runner's part of the Sweep tab: the sweep itself, pure CPU, off the
//! UI task.

use tokio::sync::mpsc::UnboundedSender;

use super::{SweepData, SweepInput, SweepJob};
use crate::output::sweep::{SweepPoint, sweep};
use crate::output::tokens::{Tokenizer, boundaries};
use crate::tui::Event;

/// Compute `job` on the blocking pool and send [`Event::SweepReady`]; a
/// panic is logged and leaves the tab waiting.
pub(in crate::tui) fn spawn(tx: UnboundedSender<Event>, job: Box<SweepJob>) {
    tokio::task::spawn_blocking(move || {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compute_sweep(&job))) {
            Ok(data) => {
                let _ = tx.send(Event::SweepReady(Box::new(data)));
            }
            Err(_) => tracing::error!("sweep panicked"),
        }
    });
}

/// Points and boundaries of one side of a sweep.
fn side(input: &SweepInput) -> (Vec<usize>, Vec<SweepPoint>, bool) {
    let (bounds, estimated) = match &input.boundaries {
        Some(b) => (b.clone(), false),
        None => (boundaries(&input.text, Tokenizer::O200kBase), true),
    };
    let points = sweep(input.text.as_bytes(), &bounds, &input.schemas);
    (bounds, points, estimated)
}

/// Compute a sweep job (pure CPU; the runner does it off the UI task).
pub fn compute_sweep(job: &SweepJob) -> SweepData {
    let (jb, jp, je) = side(&job.json);
    let (lb, lp, le) = if job.jsonl.id == job.json.id {
        (jb.clone(), jp.clone(), je)
    } else {
        side(&job.jsonl)
    };
    SweepData {
        json_id: job.json.id,
        json_bounds: jb,
        json_points: jp,
        jsonl_id: job.jsonl.id,
        jsonl_bounds: lb,
        jsonl_points: lp,
        estimated: je || le,
    }
}
