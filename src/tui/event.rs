//! What flows through the workbench: [`Event`]s into the reducer (keys,
//! mouse, resizes, and results of work done elsewhere) and [`Effect`]s out
//! of it (work for the effects runner). Both are plain data.

//!
//! The data they carry belongs to the features that make and read it (a
//! run's job and news to `run`, a sweep's to `sweep`, …); it is
//! re-exported here, so whoever drives the workbench (the event loop, the
//! tests) names what flows through it from one place.

use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use serde_json::Value;

use crate::eval::strategy::StrategyRun;
use crate::prompt::PromptConfig;
use crate::session::Session;

pub use super::costs::CostJob;
pub use super::eval::{EvalEnd, EvalJob, EvalMsg, EvalPlan};
pub use super::migrate::WriteOutcome;
pub use super::providers::{ProviderChoice, ProviderEntry, SaveModel};
pub use super::remember::Remembered;
pub use super::run::{Origin, Prefill, RunEnd, RunJob, RunMsg, Source};
pub use super::sweep::{SweepData, SweepInput, SweepJob};

/// Everything the reducer reacts to.
#[derive(Debug)]
pub enum Event {
    /// A key was pressed.
    Key(KeyEvent),
    /// The mouse scrolled or clicked.
    Mouse(MouseEvent),
    /// Text pasted (bracketed paste): inserted in one step.
    Paste(String),
    /// What the last session kept.
    Remembered(Remembered),
    /// The report was written (what the status says), or why not.
    ReportWritten(Result<String, super::report::ReportError>),
    /// A model was saved to this file, or why not.
    ModelSaved(Result<String, super::providers::SaveModelError>),
    /// The external editor closed: the field's new text, or why not.
    EditedExternally {
        /// The field it was opened for.
        field: crate::tui::editor::Field,
        /// The text saved in the editor, or why there is none.
        result: Result<String, crate::tui::editor::external::ExternalError>,
    },
    /// The terminal was resized to (columns, rows).
    Resize(u16, u16),
    /// Time passed: milliseconds since the workbench started.
    Tick(u64),
    /// The prompts directory was (re)loaded.
    PromptsLoaded {
        /// Prompts that loaded.
        prompts: Vec<PromptConfig>,
        /// Files that did not (each names file, line, column, cause).
        errors: Vec<String>,
        /// Warnings while loading.
        warnings: Vec<String>,
    },
    /// The sessions directory was (re)loaded.
    SessionsLoaded(Vec<Session>),
    /// News of a run.
    Run {
        /// Which run.
        id: u64,
        /// What happened.
        msg: RunMsg,
    },
    /// A save finished: the file written, or why not.
    Saved(Result<String, crate::prompt::ConfigError>),
    /// A sweep was computed.
    SweepReady(Box<SweepData>),
    /// Whether the local model is installed (checked at start).
    LocalInstalled(bool),
    /// The providers configured in cutline.toml, or why the config did not
    /// load (its file, line and column).
    ProvidersLoaded(Result<Vec<ProviderEntry>, crate::llm::config::ProvidersFileError>),
    /// A gold set for the compared pair: the file and its items, `None`
    /// when neither prompt has one, or why it did not load.
    GoldLoaded {
        /// The prompt ids it was looked up for (the pair on show).
        ids: Vec<String>,
        /// `(file, items)`, none, or where the gold set is malformed.
        result: Result<Option<(String, Vec<Value>)>, crate::eval::inputs::InputsError>,
    },
    /// The strategies ran on the pair with these run ids (`S`).
    CostsDone {
        /// The pair's run ids (JSON side, JSONL side).
        ids: (u64, u64),
        /// Each side's strategy runs, or why they could not run.
        result: Result<Vec<StrategyRun>, super::costs::CostsError>,
    },
    /// News of an eval (the eval view's `r`).
    Eval {
        /// Which eval.
        id: u64,
        /// What happened.
        msg: EvalMsg,
    },
    /// The migrated prompt was written (or not).
    MigrateWritten(WriteOutcome),
    /// SIGTERM, SIGINT or SIGHUP: leave now.
    Terminate,
}

/// Work for the effects runner.
#[derive(Debug)]
pub enum Effect {
    /// Load the prompts directory.
    LoadPrompts,
    /// Load the sessions directory.
    LoadSessions,
    /// Start a run.
    Start(Box<RunJob>),
    /// Cancel a run.
    Cancel(u64),
    /// Save a prompt to its file (atomically).
    Save(Box<PromptConfig>),
    /// Compute a sweep.
    Sweep(Box<SweepJob>),
    /// Read the configured providers (cutline.toml) and which keys are set.
    LoadProviders,
    /// Look for a gold set `gold/<id>.jsonl` under the prompts directory,
    /// trying `ids` in order.
    LoadGold(Vec<String>),
    /// Run each strategy on the pair on show (`S` in the Compare tab).
    Costs(Box<CostJob>),
    /// Run an eval of the prompt on show and its twin (the eval view's
    /// `r`); [`Effect::Cancel`] with its id stops it.
    Eval(Box<EvalJob>),
    /// Write a migrated prompt to `origin.file` atomically; unless
    /// `overwrite`, an existing file is left alone and reported.
    WriteMigrated {
        /// The migrated prompt, its origin set to the new file.
        config: Box<PromptConfig>,
        /// The author confirmed replacing an existing file.
        overwrite: bool,
    },
    /// Put text on the terminal's clipboard (OSC 52: works over SSH and
    /// through tmux with `set-clipboard on`).
    Copy(String),
    /// Write the HTML report of runs of one session beside the sessions
    /// ([`Event::ReportWritten`]).
    WriteReport {
        /// The session's id.
        session: String,
        /// The runs' numbers (`session#N`).
        runs: Vec<usize>,
        /// The Python whose limits the report's verdicts follow.
        py: crate::output::tg::TgPython,
    },
    /// Read what the last session kept ([`Event::Remembered`]).
    LoadRemembered,
    /// Keep this for the next session (written before the workbench exits).
    Remember(Remembered),
    /// Write a model typed in the picker into the provider's config file
    /// (atomically, every other byte kept); the answer is
    /// [`Event::ModelSaved`].
    SaveModel(SaveModel),
    /// Hand a field to `$VISUAL`/`$EDITOR` with the workbench suspended;
    /// the result comes back as [`Event::EditedExternally`].
    EditExternally {
        /// The field.
        field: crate::tui::editor::Field,
        /// Its text now.
        text: String,
        /// File name suffix, so the editor picks its syntax (`.json`).
        suffix: &'static str,
    },
    /// A component asks for another (open this in Compare, sweep what is
    /// on show): routed by the reducer before the effects leave it, so the
    /// runner never gets one.
    Nav(super::component::Nav),
    /// Leave the workbench.
    Quit,
}
