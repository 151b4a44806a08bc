//! What a run is started from and what the runner says about it: the job
//! the reducer hands out ([`RunJob`]) and the news that comes back
//! ([`RunMsg`]).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::llm::{FinishReason, Usage};
use crate::output::json::{JsonAnalysis, SalvagedElement};
use crate::output::jsonl::{JsonlAnalysis, LineOutcome};
use crate::output::sweep::SweepSchemas;
use crate::run::Spec;
use crate::session::RunRecord;
use crate::tui::choice::ProviderChoice;

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
    Failed(super::RunError),
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
    pub structured_path: crate::llm::structured::Path,
    /// The failure, when the provider failed midway.
    pub error: Option<crate::llm::LlmError>,
    /// `session#n` when the run was recorded.
    pub recorded: Option<String>,
    /// What was changed to fit the model, and where the output budget
    /// went ("limit 400: 380 reasoning, 20 answer"), for the status line.
    pub notes: Vec<String>,
    /// The token ids behind the whole text on show (a continuation's
    /// prefill included), when known.
    pub token_ids: Option<Vec<u32>>,
    /// The provider's token to resume the answer it left incomplete
    /// (Gemini's `continuationToken`), as the run's record keeps it.
    pub continuation_token: Option<String>,
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
    /// Max-token limit: the run's, over whatever its spec says
    /// ([`RunJob::spec`]).
    pub max_tokens: Option<u32>,
    /// The Python whose limits TrustGraph's verdict follows.
    pub tg_python: crate::output::tg::TgPython,
    /// Where to record local runs.
    pub sessions_dir: PathBuf,
    /// A continuation (`c`): the answer so far, which the run goes on from
    /// (prefilled where the provider can, else a follow-up turn); empty for
    /// a fresh run.
    pub prefill: Prefill,
}

impl RunJob {
    /// The spec the run is planned from, at the job's limit: the one place
    /// the runner puts the limit into a spec (`run::plan`, or a
    /// recording's own request through `Plan::recorded`, reads it from
    /// there). A recording's is its recorded prompt (a prompt of its id
    /// when the snapshot does not load) and variables.
    pub fn spec(&self) -> Spec {
        match &self.source {
            Source::Prompt(spec) => spec.as_ref().clone().limit(self.max_tokens),
            Source::Recording { record, .. } => {
                let prompt = record.prompt_config().unwrap_or_else(|_| crate::prompt::PromptConfig {
                    id: record.prompt_id.clone(),
                    ..crate::prompt::PromptConfig::default()
                });
                let mut spec = Spec::new(prompt, record.variables.clone()).limit(self.max_tokens);
                spec.tg_python = self.tg_python;
                spec
            }
        }
    }
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
    /// The provider's token to resume the answer (Gemini's
    /// `continuationToken`), from the record of the run on show: the same
    /// request goes again with it, as `run --continue` sends it.
    pub continuation_token: Option<String>,
}
