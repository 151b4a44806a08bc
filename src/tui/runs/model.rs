//! One run as the workbench shows it: the text as it streams in, the array
//! elements and JSONL lines completed so far, and — once it ends — the full
//! strict JSON and JSONL analyses. Built from stream events by the reducer, or
//! at once from fixed text (a reopened recording, a test, a bench).

use std::sync::Arc;

use serde_json::Value;

use crate::llm::{FinishReason, Usage};
use crate::output::json::{self, JsonAnalysis, SalvagedElement};
use crate::output::jsonl::{self, JsonlAnalysis, LineOutcome};
use crate::output::sweep::SweepSchemas;
use crate::prompt::{PromptConfig, ResponseType};

use crate::tui::text;

/// Where a run is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the provider (starting the local model, connecting).
    Starting,
    /// Text is arriving.
    Streaming,
    /// Finished (any finish reason).
    Done,
    /// Cancelled by the person; what arrived is kept.
    Cancelled,
    /// Could not start or failed; what arrived (if anything) is kept.
    Failed(String),
}

/// The schemas of a prompt as both parsers need them: the JSON side checks
/// the whole value and array elements, the JSONL side each line. Never
/// fails: a schema Python's `jsonschema` would not compile checks nothing
/// (as TrustGraph does), so a bad schema costs no run.
pub fn schemas_for(p: &PromptConfig) -> SweepSchemas {
    SweepSchemas::of_response_python(p.response_type == crate::prompt::ResponseType::Jsonl, p.schema.as_ref())
}

/// One run: its text, token boundaries and both analyses.
#[derive(Debug, Clone)]
pub struct RunView {
    /// Run id within this workbench (events of older runs are ignored).
    pub id: u64,
    /// The prompt run.
    pub prompt_id: String,
    /// The prompt's response type.
    pub response_type: ResponseType,
    /// Compiled schemas for both parsers.
    pub schemas: Arc<SweepSchemas>,
    /// The prompt's `object-schema`, compiled: TrustGraph ignores it, so it
    /// only marks the kept lines it would reject.
    pub ignored: Option<Arc<crate::output::schema::CompiledSchema>>,
    /// Provider label (`replay`, `local`, …).
    pub provider: String,
    /// Where a replay comes from, or another note for the status bar.
    pub note: Option<String>,
    /// The max-token limit asked for.
    pub max_tokens: Option<u32>,
    /// The Python whose limits TrustGraph's verdict on the run follows.
    pub tg_python: crate::output::tg::TgPython,
    /// The text received so far.
    pub text: String,
    /// Start of every line of `text` (only visible lines are drawn).
    pub line_starts: Vec<usize>,
    /// Byte offset after each token piece, from 0: entry `k` is the cut for
    /// a limit of `k` tokens.
    pub boundaries: Vec<usize>,
    /// True when every piece is a real token (else boundaries are deltas
    /// and the sweep re-tokenises).
    pub token_pieces: bool,
    /// Array elements completed so far, each validated (the JSON side).
    pub elements: Vec<SalvagedElement>,
    /// JSONL lines judged so far; the full analysis once done.
    pub jsonl: JsonlAnalysis,
    /// The strict JSON + salvage analysis, once the run ended.
    pub json: Option<JsonAnalysis>,
    /// Its phase.
    pub phase: Phase,
    /// Why it ended.
    pub finish: Option<FinishReason>,
    /// Token counts reported.
    pub usage: Usage,
    /// Workbench clock (ms) when it started.
    pub started_ms: u64,
    /// Milliseconds it took (so far, while streaming).
    pub elapsed_ms: u64,
    /// Structured-output path taken.
    pub structured_path: crate::llm::structured::Path,
    /// The session run it was recorded as, if recorded.
    pub recorded: Option<String>,
    /// What it was started from (none for a run made outside this session
    /// of the workbench).
    pub origin: Option<Arc<super::Origin>>,
    /// The model's own token ids behind `text`, once it ended, when the
    /// server reported them: what `c` prefills on llama-server.
    pub token_ids: Option<Vec<u32>>,
    /// The provider's token to resume the answer it left incomplete
    /// (Gemini's `continuationToken`), once it ended: what `c` resends.
    pub continuation_token: Option<String>,
    /// A continuation call (`c`) of the answer it started from: a failure
    /// is the continuation's, refused with the answer before it kept.
    pub continues: bool,
}

impl RunView {
    /// A run about to start.
    pub fn starting(
        id: u64,
        prompt: &PromptConfig,
        schemas: Arc<SweepSchemas>,
        provider: &str,
        max_tokens: Option<u32>,
    ) -> Self {
        Self {
            id,
            prompt_id: prompt.id.clone(),
            response_type: prompt.response_type,
            schemas,
            ignored: prompt
                .object_schema
                .as_ref()
                .filter(|_| prompt.response_type == ResponseType::Jsonl)
                .and_then(|s| crate::output::schema::CompiledSchema::compile(s).ok())
                .map(Arc::new),
            provider: provider.to_owned(),
            note: None,
            max_tokens,
            tg_python: crate::output::tg::TgPython::default(),
            text: String::new(),
            line_starts: vec![0],
            boundaries: vec![0],
            token_pieces: true,
            elements: Vec::new(),
            jsonl: JsonlAnalysis::default(),
            json: None,
            phase: Phase::Starting,
            finish: None,
            usage: Usage::default(),
            started_ms: 0,
            elapsed_ms: 0,
            structured_path: crate::llm::structured::Path::None,
            recorded: None,
            origin: None,
            token_ids: None,
            continuation_token: None,
            continues: false,
        }
    }

    /// A finished run from fixed text: analysed at once. `pieces` are its
    /// token pieces when known.
    pub fn from_text(
        id: u64,
        prompt: &PromptConfig,
        schemas: Arc<SweepSchemas>,
        text: &str,
        pieces: Option<&[String]>,
        finish: FinishReason,
        py: crate::output::tg::TgPython,
    ) -> Self {
        let mut v = Self::starting(id, prompt, schemas, "fixed", None);
        v.tg_python = py;
        text.clone_into(&mut v.text);
        v.line_starts = text::line_starts(text);
        match pieces {
            Some(p) => {
                v.boundaries = crate::output::tokens::boundaries_from_pieces(p);
                v.usage.completion_tokens = u32::try_from(p.len()).ok();
            }
            None => {
                v.token_pieces = false;
                v.boundaries = vec![0, text.len()];
            }
        }
        v.completion(finish);
        v
    }

    /// Analyse the whole text and mark the run done with `finish`.
    pub fn completion(&mut self, finish: FinishReason) {
        let mut j = json::analyse(&self.text, &self.schemas.json);
        super::analysers::with_raises(&mut j, &self.text, &self.schemas, self.tg_python);
        self.elements.clone_from(&j.elements);
        self.json = Some(j);
        self.jsonl = jsonl::analyse_py(self.text.as_bytes(), self.schemas.line.as_ref(), self.tg_python);
        self.finish = Some(finish);
        self.phase = Phase::Done;
    }

    /// Fold in one streamed delta and what it completed.
    pub fn push_delta(
        &mut self,
        delta: &str,
        pieces: &[String],
        elements: Vec<SalvagedElement>,
        lines: Vec<(LineOutcome, Option<Value>)>,
    ) {
        let from = self.text.len();
        self.text.push_str(delta);
        text::extend_line_starts(&mut self.line_starts, &self.text, from);
        if pieces.is_empty() {
            if !delta.is_empty() {
                self.token_pieces = false;
                self.boundaries.push(self.text.len());
            }
        } else {
            let mut at = from;
            for p in pieces {
                at += p.len();
                self.boundaries.push(at);
            }
        }
        self.elements.extend(elements);
        for (outcome, value) in lines {
            self.jsonl.push(outcome, value);
        }
        if self.phase == Phase::Starting {
            self.phase = Phase::Streaming;
        }
    }

    /// Tokens received (pieces, or reported usage when larger).
    pub fn tokens(&self) -> usize {
        let pieces = self.boundaries.len().saturating_sub(1);
        let reported = self
            .usage
            .completion_tokens
            .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        if self.token_pieces {
            pieces.max(reported)
        } else {
            reported.max(pieces)
        }
    }

    /// True while the run may still change.
    pub fn live(&self) -> bool {
        matches!(self.phase, Phase::Starting | Phase::Streaming)
    }

    /// Items the JSON side gets: strict items when done, else 0.
    pub fn strict_items(&self) -> usize {
        self.json.as_ref().map_or(0, |j| j.items.len())
    }

    /// Valid salvaged elements so far.
    pub fn salvaged_items(&self) -> usize {
        self.elements.iter().filter(|e| e.valid).count()
    }

    /// Number of lines of text.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

/// Both analyses of a run's text cut after `bytes` bytes (a sweep cursor).
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The cut in tokens.
    pub tokens: usize,
    /// The cut in bytes (may fall inside a multi-byte character).
    pub bytes: usize,
    /// Strict JSON + salvage of the prefix.
    pub json: JsonAnalysis,
    /// JSONL of the prefix.
    pub jsonl: JsonlAnalysis,
}

/// Analyse `text` cut at byte `bytes`. A cut inside a multi-byte
/// character is analysed as bytes (the partial character is replaced, never
/// split), so it neither panics nor garbles.
pub fn cut(text: &str, bytes: usize, tokens: usize, schemas: &SweepSchemas) -> Cut {
    let bytes = bytes.min(text.len());
    let raw = &text.as_bytes()[..bytes];
    let prefix = String::from_utf8_lossy(raw);
    Cut {
        tokens,
        bytes,
        json: json::analyse(&prefix, &schemas.json),
        jsonl: jsonl::analyse(raw, schemas.line.as_ref()),
    }
}
