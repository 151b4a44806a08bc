//! What flows through the workbench: [`Event`]s into the reducer (keys,
//! mouse, resizes, and results of work done elsewhere) and [`Effect`]s out
//! of it (work for the effects runner). Both are plain data.

use std::path::PathBuf;
use std::sync::Arc;

use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use serde_json::Value;

use crate::eval::strategy::StrategyRun;
use crate::llm::config::ProviderConfig;
use crate::llm::{FinishReason, Usage};
use crate::output::json::{JsonAnalysis, SalvagedElement};
use crate::output::jsonl::{JsonlAnalysis, LineOutcome};
use crate::output::sweep::{SweepPoint, SweepSchemas};
use crate::prompt::PromptConfig;
use crate::run::Spec;
use crate::session::{RunRecord, Session};

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
    ReportWritten(Result<String, String>),
    /// A model was saved to this file, or why not.
    ModelSaved(Result<String, String>),
    /// The external editor closed: the field's new text, or why not.
    EditedExternally {
        /// The field it was opened for.
        field: crate::tui::state::Field,
        /// The text saved in the editor, or why there is none.
        result: Result<String, String>,
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
    Saved(Result<String, String>),
    /// A sweep was computed.
    SweepReady(Box<SweepData>),
    /// Whether the local model is installed (checked at start).
    LocalInstalled(bool),
    /// The providers configured in cutline.toml, or why the config did not
    /// load (`file:line:col: cause`).
    ProvidersLoaded(Result<Vec<ProviderEntry>, String>),
    /// A gold set for the compared pair: the file and its items, `None`
    /// when neither prompt has one, or why it did not load.
    GoldLoaded {
        /// The prompt ids it was looked up for (the pair on show).
        ids: Vec<String>,
        /// `(file, items)`, none, or the error.
        result: Result<Option<(String, Vec<Value>)>, String>,
    },
    /// The strategies ran on the pair with these run ids (`S`).
    CostsDone {
        /// The pair's run ids (JSON side, JSONL side).
        ids: (u64, u64),
        /// Each side's strategy runs, or why they could not run.
        result: Result<Vec<StrategyRun>, String>,
    },
    /// The migrated prompt was written (or not).
    MigrateWritten(WriteOutcome),
    /// SIGTERM, SIGINT or SIGHUP: leave now.
    Terminate,
}

/// A configured provider as the picker shows it. Holds whether its key
/// variable is set, never the key.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderEntry {
    /// The provider's config (the name of its key variable, no key).
    pub config: ProviderConfig,
    /// True when its key variable is set (or the kind needs no key).
    pub key_set: bool,
}

/// What the workbench keeps between sessions, beside the sessions it
/// records: the last tab and the pinned compare side (by its recording).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Remembered {
    /// The tab open at quit.
    pub tab: Option<crate::tui::state::Tab>,
    /// The pinned run, as `session#N`, when it was recorded.
    pub pin: Option<String>,
}

/// A model to save for a configured provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveModel {
    /// The provider's name.
    pub provider: String,
    /// The model typed.
    pub model: String,
    /// The config file that defines the provider.
    pub file: PathBuf,
}

/// How writing a migrated prompt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Written to this file.
    Written(String),
    /// The file exists and overwriting was not confirmed.
    Exists(String),
    /// The write failed.
    Failed(String),
}

/// News of one run, from the effects runner.
#[derive(Debug)]
pub enum RunMsg {
    /// The provider is ready and the request went out.
    Started {
        /// Provider label.
        provider: String,
        /// Where a replay comes from, or another note.
        note: Option<String>,
        /// Workbench clock (ms) at the start.
        at_ms: u64,
    },
    /// Text arrived.
    Delta {
        /// The text.
        text: String,
        /// Its token pieces, when known.
        pieces: Vec<String>,
        /// Array elements it completed, validated.
        elements: Vec<SalvagedElement>,
        /// JSONL lines it completed, judged (value when kept).
        lines: Vec<(LineOutcome, Option<Value>)>,
    },
    /// The run ended (any finish reason, including a failure midway).
    Done(Box<RunEnd>),
    /// The run could not start (no recording, no local model, bad prompt).
    Failed(String),
}

/// How a run ended.
#[derive(Debug)]
pub struct RunEnd {
    /// Strict JSON + salvage of the whole text.
    pub json: JsonAnalysis,
    /// JSONL of the whole text.
    pub jsonl: JsonlAnalysis,
    /// Normalised finish reason.
    pub finish: FinishReason,
    /// Token counts.
    pub usage: Usage,
    /// Milliseconds the run took.
    pub total_ms: u64,
    /// Structured-output path taken.
    pub structured_path: String,
    /// The failure, when the provider failed midway.
    pub error: Option<String>,
    /// `session#n` when the run was recorded.
    pub recorded: Option<String>,
    /// What was changed to fit the model, and where the output budget
    /// went ("limit 400: 380 reasoning, 20 answer"), for the status line.
    pub notes: Vec<String>,
    /// The token ids behind the whole text on show (a continuation's
    /// prefill included), when known.
    pub token_ids: Option<Vec<u32>>,
}

/// Which provider runs prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderChoice {
    /// Recorded runs from the sessions directory, cut at the limit.
    Replay,
    /// The managed llama-server with Gemma 3 270M.
    Local,
    /// A provider configured in cutline.toml, by name, with the model chosen
    /// in the workbench (`None`: the configured one). The runner reads the
    /// config and builds it per run, so an edited config or a missing key
    /// is a failed run with its message, never a crash.
    Configured {
        /// The provider's name in cutline.toml.
        name: String,
        /// The model chosen in the workbench.
        model: Option<String>,
    },
}

impl ProviderChoice {
    /// Its name.
    pub fn label(&self) -> &str {
        match self {
            Self::Replay => "replay",
            Self::Local => "local",
            Self::Configured { name, .. } => name,
        }
    }
}

/// What a run sends.
#[derive(Debug, Clone)]
pub enum Source {
    /// Render and send a prompt (a replay finds a recording of it).
    Prompt(Box<Spec>),
    /// Replay one recorded run at the job's limit.
    Recording {
        /// The run.
        record: Box<RunRecord>,
        /// Its `session#n`.
        reference: String,
    },
}

/// What a run was started from, kept on the run so the Compare tab can run
/// it again by each strategy.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The provider it ran on.
    pub provider: ProviderChoice,
    /// What was sent.
    pub source: Source,
}

/// The strategies to run on the pair on show: the JSON side by `single`
/// and `retry-double`, the JSONL side by `single` and `continue`, each
/// from its own origin and limit.
#[derive(Debug, Clone)]
pub struct CostJob {
    /// The pair's run ids (JSON side, JSONL side).
    pub ids: (u64, u64),
    /// Each side's origin and limit.
    pub sides: [(Arc<Origin>, Option<u32>); 2],
    /// The gold set on show (file, items), for recall and loss.
    pub gold: Option<(String, Vec<Value>)>,
    /// Where calls on a model are recorded.
    pub sessions_dir: PathBuf,
}

/// A run for the effects runner to start.
#[derive(Debug, Clone)]
pub struct RunJob {
    /// Run id.
    pub id: u64,
    /// The provider.
    pub provider: ProviderChoice,
    /// What to send.
    pub source: Source,
    /// Schemas for the streaming analysers.
    pub schemas: Arc<SweepSchemas>,
    /// Max-token limit.
    pub max_tokens: Option<u32>,
    /// Where to record local runs.
    pub sessions_dir: PathBuf,
    /// A continuation (`c`): the answer so far, which the run goes on from
    /// (prefilled where the provider can, else a follow-up turn); empty for
    /// a fresh run.
    pub prefill: Prefill,
}

/// The answer a continuation goes on from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prefill {
    /// Its text; empty for a fresh run.
    pub text: String,
    /// The model's own token ids behind `text`, when every call reported
    /// them: llama-server then goes on from those tokens, as `run
    /// --continue` does, not from the text tokenised again.
    pub token_ids: Option<Vec<u32>>,
}

/// One side of a sweep.
#[derive(Debug, Clone)]
pub struct SweepInput {
    /// Run id.
    pub id: u64,
    /// The response text.
    pub text: String,
    /// Token boundaries from recorded pieces, when they are real tokens.
    pub boundaries: Option<Vec<usize>>,
    /// Schemas.
    pub schemas: Arc<SweepSchemas>,
}

/// A sweep to compute: the JSON side and the JSONL side (the same run for a
/// single run, the pair for twins).
#[derive(Debug, Clone)]
pub struct SweepJob {
    /// The run read as a JSON array.
    pub json: SweepInput,
    /// The run read as JSONL.
    pub jsonl: SweepInput,
}

/// A computed sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepData {
    /// Run id of the JSON side.
    pub json_id: u64,
    /// Its token boundaries.
    pub json_bounds: Vec<usize>,
    /// Its points.
    pub json_points: Vec<SweepPoint>,
    /// Run id of the JSONL side.
    pub jsonl_id: u64,
    /// Its token boundaries.
    pub jsonl_bounds: Vec<usize>,
    /// Its points.
    pub jsonl_points: Vec<SweepPoint>,
    /// True when boundaries came from a tokenizer, not recorded tokens.
    pub estimated: bool,
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
        field: crate::tui::state::Field,
        /// Its text now.
        text: String,
        /// File name suffix, so the editor picks its syntax (`.json`).
        suffix: &'static str,
    },
    /// Leave the workbench.
    Quit,
}
