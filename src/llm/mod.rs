//! Talking to models: one async trait that streams events, one file per
//! provider, and the shared HTTP plumbing (retries, SSE, timeouts).
//!
//! Every provider maps its own wire format onto [`Event`]s: text deltas (with
//! token pieces where the server gives them), one finish (normalised reason
//! and usage) or an error. A stream that breaks halfway still delivers every
//! delta that arrived before the error, so nothing received is lost.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod adapt;
pub mod batch;
pub mod config;
pub mod grammar;
pub mod http;
pub mod kind;
pub use kind::WireKind;
pub mod learned;
pub mod local;
pub mod mismatch;
pub mod models_api;
pub mod params;
pub mod profile;
pub mod redact;
pub mod registry;
pub mod structured;
mod transcript;
pub mod wire;

pub use transcript::{Piece, Transcript, collect};

/// One provider kind's facts besides its wire code, written once in the
/// provider's own folder (`openai/spec.rs`, `anthropic/spec.rs`, …) and
/// registered in [`PROVIDERS`]: its `Kind` and config words, the wire word
/// its runs record, its defaults, its seed profile rows and how a config
/// entry becomes one. The `Kind` and `WireKind` constants it names are
/// declared beside it (`impl Kind { pub const Openai … }`), so a provider
/// is its folder and its line here. `Kind`'s words and defaults,
/// `WireKind`'s words, the registry's wire defaults, the profile table and
/// the config builder all read it from here.
pub struct ProviderSpec {
    /// The kind, which is its config spelling (`Kind::as_str`).
    pub kind: kind::Kind,
    /// Older spellings read as it.
    pub aliases: &'static [&'static str],
    /// The wire word its runs record (`None`: it records another wire's,
    /// or a word of its own kept as it is).
    pub records: Option<WireKind>,
    /// The base URL when the config gives none.
    pub base_url: Option<&'static str>,
    /// The key variable when the config names none (`None`: no key).
    pub key_env: Option<&'static str>,
    /// Whether a config entry must name a model.
    pub needs_model: bool,
    /// The model sent when the config names none.
    pub model: Option<&'static str>,
    /// The wire's own max-token default (Anthropic requires one).
    pub max_tokens: Option<u32>,
    /// The seed profile rows, first match wins (none: the open profile).
    pub rows: &'static [profile::table::Row],
    /// Announced shutdown dates by exact model id.
    pub retired: &'static [(&'static [&'static str], &'static str)],
    /// A provider from a config entry (`None`: chosen with `--provider`,
    /// built by the registry; its entry takes no headers and no key).
    pub build: Option<Build>,
    /// The kind-specific config keys it takes (`api`, `structured_via`,
    /// `workspace` and `flow`); another kind's entry refuses them.
    pub options: &'static [&'static str],
}

/// How a config entry becomes a provider.
#[derive(Clone, Copy)]
pub enum Build {
    /// An HTTP wire on the endpoint the entry resolves to
    /// (`config::endpoint`: URL, model, key, headers, retries, timeouts).
    Endpoint(fn(wire::Endpoint) -> Box<dyn Provider>),
    /// From the entry itself, its key read through the lookup given.
    Entry(FromEntry),
}

/// An environment lookup (`std::env::var`, or a test's map).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A provider built from its config entry, its key read through `Env`.
pub type FromEntry = fn(&config::ProviderConfig, Env<'_>) -> Result<Box<dyn Provider>, LlmError>;

/// Declares each provider's folder and lists its specs in [`PROVIDERS`],
/// so a provider is registered by one line (as the workbench's
/// `components!`): `folder::{SPEC, …}`, the specs its `spec.rs` holds.
macro_rules! providers {
    ($($module:ident :: { $($spec:ident),+ $(,)? }),* $(,)?) => {
        $(pub mod $module;)*

        /// Every provider kind, in the order the config's error names the
        /// words. A new provider is its folder (its `spec.rs` declaring its
        /// `Kind` and `WireKind` constants beside its spec) and its line in
        /// the `providers!` list.
        pub const PROVIDERS: &[ProviderSpec] = &[$($($module::spec::$spec),+),*];
    };
}

// The providers, one folder each (the wire in `mod.rs`, the facts in
// `spec.rs`): the registration.
providers! {
    openai::{OPENAI, COMPATIBLE},
    anthropic::{SPEC},
    gemini::{SPEC},
    ollama::{SPEC},
    llama_server::{SPEC, LOCAL},
    replay::{SPEC},
    trustgraph::{SPEC},
}

/// A request, provider-neutral.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Rendered system prompt ("" for none).
    pub system: String,
    /// Rendered user prompt.
    pub prompt: String,
    /// Max tokens to generate; `None` is the provider's own limit.
    pub max_tokens: Option<u32>,
    /// The field that carries `max_tokens` on OpenAI's chat wire, decided
    /// by `run::plan` from the profile in force (what was learned
    /// included), so a server that refused one name gets the other on the
    /// retry and in every later process. `None`: the wire's own default
    /// (`max_completion_tokens` for OpenAI, `max_tokens` for compatible
    /// servers), for requests built by hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_field: Option<profile::TokenField>,
    /// Stop sequences.
    pub stop: Vec<String>,
    /// Sampling temperature (`None`: not sent, the model's default).
    pub temperature: Option<f32>,
    /// Nucleus sampling (`None`: not sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// JSON Schema sent on the native path, exactly as the wire gets it
    /// (already wrapped when the model needs an object root).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    /// Extra headers for this request, over the provider's (the command
    /// line's `--header`). `Debug` of a value is never logged.
    #[serde(skip)]
    pub headers: Vec<(String, String)>,
    /// Text the answer already begins with (a continuation): a wire that
    /// can prefill puts it where the answer starts and the model goes on
    /// from there. Sent only to a provider whose `prefills()` is true.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefill: String,
    /// The prefill as the token ids the model generated it as, when known
    /// (llama-server sends them instead of the text, so the continuation
    /// starts from exactly the state the cut left, not a re-tokenised one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefill_tokens: Vec<u32>,
    /// A GBNF grammar constraining a JSONL answer (`llm::grammar`); only a
    /// profile with `grammar` gets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
    /// Send `response_schema` as the input schema of a forced tool
    /// (Claude models without `output_config`) rather than the wire's own
    /// schema field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub schema_as_tool: bool,
    /// Reasoning effort, in the wire's own field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<profile::Effort>,
    /// Thinking, in the form the model takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    /// Which OpenAI endpoint (other wires have one).
    #[serde(default, skip_serializing_if = "is_chat")]
    pub api: profile::Api,
    /// A provider's token to resume an answer it stopped before the end
    /// (Gemini `continuationToken`): the same request goes again with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
    /// The prompt by id and variables, for a provider that renders it
    /// itself (a TrustGraph deployment's prompt service); decided by
    /// `run::plan`, never recorded (the record keeps the rendered text).
    #[serde(skip)]
    pub service: Option<trustgraph::ServicePrompt>,
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde passes a reference")]
fn is_chat(a: &profile::Api) -> bool {
    *a == profile::Api::Chat
}

/// Thinking as one request asks for it, already fitted to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum Thinking {
    /// A token budget (Anthropic `enabled`, Gemini 2.5 `thinkingBudget`,
    /// Ollama `think: true`).
    Budget {
        /// Tokens.
        tokens: u32,
    },
    /// Anthropic `{type: adaptive}`.
    Adaptive,
    /// Gemini 3 `thinkingLevel`.
    Level {
        /// The level, as an effort.
        level: profile::Effort,
    },
}

/// Why generation ended, normalised across providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model stopped (end of text or a stop sequence).
    Stop,
    /// The max-token limit cut it: every provider's word for truncation.
    Length,
    /// The model called a tool.
    ToolCalls,
    /// A safety filter stopped it.
    ContentFilter,
    /// The provider stopped at a limit of its own before the answer was
    /// done, and can resume it (Gemini `CONTINUATION` with a
    /// `continuationToken`): neither a cut by the max-token limit nor a stop.
    Incomplete,
    /// The request or stream failed.
    Error,
    /// The provider ended with a reason cutline does not know (kept in
    /// `raw_reason`): neither a clean stop nor a cut is claimed. Added
    /// after the others, so every record written before reads the same.
    Unknown,
}

impl FinishReason {
    /// The normalised word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolCalls => "tool_calls",
            Self::ContentFilter => "content_filter",
            Self::Incomplete => "incomplete",
            Self::Error => "error",
            Self::Unknown => "unknown",
        }
    }
}

/// Token counts a provider reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u32>,
    /// Generated tokens, reasoning included: everything billed as output
    /// and counted against the max-token limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u32>,
    /// The part of `completion_tokens` spent on reasoning / thinking
    /// (OpenAI `reasoning_tokens`, Gemini `thoughtsTokenCount`; for
    /// Anthropic and Ollama, which report no such count, estimated from the
    /// thinking text with the o200k tokenizer and marked so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
    /// True when `reasoning_tokens` is an estimate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_estimated: bool,
    /// Prompt tokens read from the provider's cache (OpenAI
    /// `cached_tokens`, Anthropic `cache_read_input_tokens`, Gemini
    /// `cachedContentTokenCount`): part of `prompt_tokens`, billed less.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    /// Prompt tokens written to the provider's cache (Anthropic
    /// `cache_creation_input_tokens`, OpenAI `cache_write_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u32>,
}

impl Usage {
    /// Output tokens of the visible answer, when both counts are known.
    pub fn answer_tokens(&self) -> Option<u32> {
        Some(
            self.completion_tokens?
                .saturating_sub(self.reasoning_tokens.unwrap_or(0)),
        )
    }
}

/// What kind of failure, for retry decisions and messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Could not connect.
    Connect,
    /// 401/403: the key is missing or wrong.
    Auth,
    /// 429/529 after the retries ran out.
    RateLimited,
    /// 5xx after the retries ran out.
    Server,
    /// The prompt does not fit the model's context.
    ContextLength,
    /// Another 4xx.
    BadRequest,
    /// No bytes for longer than the idle timeout, or no connection in time.
    Timeout,
    /// The stream broke or sent something unreadable.
    Stream,
    /// The caller cancelled.
    Cancelled,
    /// The local model is not installed.
    SetupRequired,
    /// Out of quota or credit (OpenAI `insufficient_quota`, Anthropic
    /// `billing_error` or a spend limit): retrying never clears it.
    Quota,
}

/// A provider failure. Never carries an API key: not in its message, and
/// not in its cause ([`http::key::ApiKey::scrub_error`] drops a cause whose
/// text shows the key).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LlmError {
    /// What kind.
    pub kind: ErrorKind,
    /// HTTP status, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// For a person.
    pub message: String,
    /// The typed error underneath (reqwest's, the socket's, serde_json's),
    /// kept as [`std::error::Error::source`] for whoever walks the chain.
    /// `message` already says it, so the edge prints `message` alone. Not
    /// recorded, and not part of equality (two errors that say the same
    /// are the same).
    #[serde(skip)]
    pub source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl LlmError {
    /// A new error.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            status: None,
            message: message.into(),
            source: None,
        }
    }

    /// A new error from the typed error `source`, kept as its source;
    /// `message` is what a person reads (and says the cause already).
    pub fn caused(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            source: Some(Arc::new(source)),
            ..Self::new(kind, message)
        }
    }
}

impl PartialEq for LlmError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.status == other.status && self.message == other.message
    }
}

impl Eq for LlmError {}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}{}: {}", self.kind, HttpStatus(self.status), self.message)
    }
}

impl std::error::Error for LlmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// The text of `e` and of every error under it, joined by `: `: what a
/// person would read if the whole chain were printed (to check it for a
/// secret before the chain is kept).
pub fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        text.push_str(": ");
        text.push_str(&s.to_string());
        next = s.source();
    }
    text
}

/// ` (HTTP 429)`, or nothing when no status came.
struct HttpStatus(Option<u16>);

impl std::fmt::Display for HttpStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(s) => write!(f, " (HTTP {s})"),
            None => Ok(()),
        }
    }
}

/// One streamed event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// More text; `pieces` are its tokens when the server reports them.
    Delta {
        /// The text.
        text: String,
        /// Token pieces making up `text`, in order (empty when unknown).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pieces: Vec<String>,
    },
    /// The ids of the tokens just generated, one per piece (llama-server),
    /// so a continuation can hand the model back exactly these tokens.
    Tokens {
        /// Token ids, in order.
        ids: Vec<u32>,
    },
    /// Reasoning / thinking text the model streamed (never part of the
    /// analysed answer).
    Thinking {
        /// The text.
        text: String,
    },
    /// The provider's token to resume this answer (before its `Finish`).
    Resume {
        /// The opaque token, as the provider sent it.
        token: String,
    },
    /// Generation ended.
    Finish {
        /// Normalised reason.
        reason: FinishReason,
        /// The provider's own word for it.
        #[serde(skip_serializing_if = "Option::is_none")]
        raw_reason: Option<String>,
        /// Token counts.
        usage: Usage,
    },
    /// The request or stream failed; deltas before it still stand.
    Error(LlmError),
    /// The answer came back in a provider batch, not a stream (first, so
    /// the run records which batch and custom id answered it).
    Batch(BatchRef),
}

/// Which provider batch answered a run, and the run's id in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchRef {
    /// The provider's batch id.
    pub id: String,
    /// The run's custom id in the batch.
    pub custom_id: String,
}

/// A stream of events; ends after a `Finish` or an `Error`.
pub type EventStream = Pin<Box<dyn Stream<Item = Event> + Send>>;

/// Who answers, without secrets: safe to record and show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// The configured name.
    pub name: String,
    /// The wire protocol.
    pub kind: WireKind,
    /// Model id.
    pub model: String,
    /// Base URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// A provider's answer about its model from its Models API (`Ok(None)`:
/// it has none, or does not know the model).
pub type Describe = futures_util::future::BoxFuture<'static, Result<Option<learned::ModelsApi>, LlmError>>;

/// A model endpoint.
pub trait Provider: Send + Sync {
    /// Name, kind, model and URL, never the key.
    fn info(&self) -> ProviderInfo;
    /// Send `req` and stream the answer. Dropping the stream cancels it.
    fn stream(&self, req: Request) -> EventStream;
    /// Whether `Request::prefill` is honoured (the answer continues from
    /// it exactly); otherwise a continuation asks in a follow-up turn.
    fn prefills(&self) -> bool {
        false
    }

    /// Whether the provider renders the prompt itself from its id and
    /// variables (`Request::service`) and decides sampling and the limit
    /// (a TrustGraph deployment's prompt service): `run::plan` then sends
    /// none of them and records why.
    fn renders_itself(&self) -> bool {
        false
    }

    /// The URL and exact JSON body this provider sends for `req`, so a
    /// refusal can be read against the fields it names (`llm::adapt`);
    /// `None` for providers that are not HTTP.
    fn wire(&self, _req: &Request) -> Option<(String, Value)> {
        None
    }

    /// Ask the provider's Models API what it says of the model; `None`
    /// when the provider has no such API.
    fn describe(&self) -> Option<Describe> {
        None
    }

    /// Whether what [`Provider::describe`] answers could change `req`:
    /// a provider whose Models API decides only some fields is not asked
    /// (one more request before the answer) when `req` has none of them.
    fn describe_matters(&self, _req: &Request) -> bool {
        true
    }

    /// The wire a batch API can be built on (`batch::api` picks the API
    /// for a window); `None` for a provider no batch API serves. The wire
    /// names itself; it does not build its batch API, so the wires never
    /// import `batch`, which encodes with them.
    fn batch_wire(&self) -> Option<BatchWire> {
        None
    }
}

/// A hosted wire with a batch API, as its provider is configured.
#[derive(Debug, Clone)]
pub enum BatchWire {
    /// OpenAI (batches, and Responses background mode).
    OpenAi(openai::OpenAi),
    /// Anthropic's Message Batches.
    Anthropic(anthropic::Anthropic),
    /// Gemini's batch mode.
    Gemini(gemini::Gemini),
}

/// Timeouts every HTTP provider honours.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// To establish the connection.
    pub connect: Duration,
    /// Longest silence between two chunks of a stream.
    pub idle: Duration,
    /// Longest wait for the response headers, per attempt (a server that
    /// accepts and never answers, or sends half its headers).
    pub first_byte: Duration,
    /// Longest a whole request may take, retries and stream included (a
    /// stream that trickles forever).
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            first_byte: Duration::from_secs(120),
            total: Duration::from_secs(900),
        }
    }
}
