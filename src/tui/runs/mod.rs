//! The runs on show, as every component reads them: not a tab but the
//! shared model the Run, Sweep, Compare, Sessions and eval views and the
//! strategy table work on, so none of them imports another to see a run.
//!
//! `model` is one run as the workbench shows it ([`RunView`]: text, token
//! boundaries, both analyses), `state` what is on show ([`Shown`]) and
//! what `r` runs ([`Target`]), `job` what goes to the runner and comes
//! back, `record` a recorded run as a view, `rows` the scrolling panes'
//! rows (the one count the reducer and the views share), `response`,
//! `json` and `jsonl` those panes, `effects`, `analysers` and `stop` the
//! runner's part.

mod analysers;
mod effects;
mod error;
mod job;
pub mod json;
pub mod jsonl;
mod model;
mod record;
pub mod response;
mod rows;
mod state;
mod stop;

pub use analysers::Analysers;
pub(in crate::tui) use effects::{record, spawn, target_of};
pub use error::RunError;
pub use job::{Origin, Prefill, RunEnd, RunJob, RunMsg, Source};
pub use model::{Cut, Phase, RunView, cut, schemas_for};
pub use record::prompt_of_record;
pub(in crate::tui) use record::{reference, view_of_record};
pub use rows::{json_source, jsonl_source, pane_order, row_text, rows, scroll_pane};
pub use state::{Shown, Target, pair_of};
pub(in crate::tui) use stop::Stop;

/// A limit as people read it, in the UI language.
pub fn limit_label(l: Option<u32>) -> String {
    l.map_or_else(
        || rust_i18n::t!("tui.msg.no_limit").into_owned(),
        |n| rust_i18n::t!("tui.msg.n_tokens", n = n).into_owned(),
    )
}
