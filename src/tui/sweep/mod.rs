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
