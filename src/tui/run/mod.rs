//! Runs and the Run tab: starting a run (one prompt, a recording, twins, a
//! continuation `c`), cancelling, folding in what the runner reports, and
//! drawing the response(s) and both parses.
//!
//! `model` is one run as the workbench shows it ([`RunView`]: text, token
//! boundaries, both analyses), `state` what is on show ([`Shown`]) and
//! what `r` runs ([`Target`]), `job` what goes to the runner and comes
//! back, `update` the reducer's part, `rows` the scrolling panes' rows
//! (the one count update and view share), `view` the tab with its panes
//! (`response`, `json`, `jsonl`; the Sweep tab draws the last two too),
//! `effects` and `analysers` the runner's part.

mod analysers;
mod effects;
mod error;
mod job;
pub mod json;
pub mod jsonl;
mod model;
pub mod response;
mod rows;
mod state;
mod stop;
pub(super) mod update;
pub mod view;

pub use analysers::Analysers;
pub(super) use effects::{record, spawn, target_of};
pub use error::RunError;
pub use job::{Origin, Prefill, RunEnd, RunJob, RunMsg, Source};
pub use model::{Cut, Phase, RunView, cut, schemas_for};
pub use rows::{json_source, jsonl_source, row_text, rows};
pub use state::{Shown, Target};
pub(in crate::tui) use stop::Stop;
pub use update::limit_label;
