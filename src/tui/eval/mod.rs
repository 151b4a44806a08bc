//! The eval view (`E`, over the Compare tab): the prompt on show and its
//! twin run over the prompt's own sample inputs at a list of limits, on
//! the workbench's provider, by the one eval engine `cutline eval` runs
//! (`eval::engine`: plan, resume, streamed execution, the writer), into
//! the session `cutline eval` would use for the same prompts and provider,
//! so either resumes what the other recorded. While it runs: runs done,
//! rate and time left; then the summary table (`eval::table`), the twins
//! at each limit and, with a gold set, why gold items were missed.
//!
//! The feature in one folder: its state ([`EvalView`], in `State::eval`),
//! the reducer's part (`update`: open, start, limits, cancel, the engine's
//! news), the view (`view`) and the runner's part (`effects`: the engine
//! on a runtime of its own, dropped whole when the eval is cancelled).

mod effects;
mod error;
mod state;
pub(super) mod update;
pub mod view;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::eval::{RunSummary, TablePrompt};
use crate::llm::params::Structured;
use crate::prompt::PromptConfig;
use crate::tui::providers::ProviderChoice;

pub(super) use effects::spawn;
pub use error::EvalError;
pub use state::{Ending, EvalRun, EvalView, Progress};

/// The limits an eval view starts with.
pub const DEFAULT_LIMITS: &str = "64,128,256,none";

/// An eval for the runner to carry out.
#[derive(Debug, Clone)]
pub struct EvalJob {
    /// Its id (from the run ids, so a cancel names it alone).
    pub id: u64,
    /// The prompt on show, then its twin.
    pub prompts: Vec<PromptConfig>,
    /// The limits.
    pub limits: Vec<Option<u32>>,
    /// The provider (the Run tab's).
    pub provider: ProviderChoice,
    /// Structured output asked for (the Run tab's).
    pub structured: Option<Structured>,
    /// The Python whose limits TrustGraph's verdict follows.
    pub tg_python: crate::output::tg::TgPython,
    /// Where the session is.
    pub sessions_dir: PathBuf,
}

/// The matrix planned and what the session already held.
#[derive(Debug, Clone)]
pub struct EvalPlan {
    /// The session's id.
    pub session: String,
    /// Its file.
    pub path: String,
    /// The model answering (empty for replay).
    pub model: String,
    /// Runs in the matrix.
    pub runs: usize,
    /// Runs the session already held, as summaries (not run again).
    pub skipped: Vec<RunSummary>,
    /// The prompts as the table lists them.
    pub prompts: Vec<TablePrompt>,
    /// Runs per table row, per prompt (its inputs).
    pub per_prompt: BTreeMap<String, usize>,
    /// What a person should read before the runs (identical inputs,
    /// inputs without a recording, the session's own warnings).
    pub warnings: Vec<String>,
}

/// How an eval ended, when it was not cancelled and did not fail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvalEnd {
    /// Runs whose record could not be written.
    pub unrecorded: usize,
    /// Why (the session full, or the first write error).
    pub problem: Option<String>,
}

/// News of an eval, from the runner.
#[derive(Debug)]
pub enum EvalMsg {
    /// Planned; the session opened and read.
    Planned(Box<EvalPlan>),
    /// A run finished and was recorded.
    Finished(Box<RunSummary>),
    /// Runs in flight now.
    InFlight(usize),
    /// Something a person should read.
    Warn(String),
    /// Every pending run ran.
    Done(EvalEnd),
    /// The eval could not start or go on.
    Failed(EvalError),
}
