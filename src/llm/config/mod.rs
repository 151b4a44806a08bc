//! Providers configured in TOML, and the factory that builds them.
//!
//! The files, later ones overriding earlier ones provider by provider (by
//! `name`): `$CUTLINE_CONFIG` alone when it is set; otherwise the user's
//! `cutline/config.toml` in the config directory (`~/.config` on Linux), then
//! `cutline.toml` in the working directory. Other tables in those files (such
//! as the workbench's `[keys]`) are left to their readers.
//!
//! ```toml
//! [[provider]]
//! name = "gpt"
//! kind = "openai"            # openai | openai-compatible | anthropic | gemini
//!                            # | ollama | llama-server | local | replay
//! model = "gpt-4o-mini"
//! api_key_env = "OPENAI_API_KEY"   # the NAME of the variable, never the key
//! base_url = "https://api.openai.com/v1"
//! max_tokens = 1024          # when neither the command line nor the prompt sets one
//! temperature = 0.0          # likewise (default 0 where the model takes one)
//! top_p = 0.9
//! stop = ["\n\n"]             # when the prompt sets none
//! headers = { "OpenAI-Organization" = "org-123" }
//! structured = "auto"        # auto (no opinion) | native | prompt | off
//! thinking_budget = 2048     # Anthropic extended thinking, Gemini thinkingBudget, Ollama think
//! effort = "low"             # none | minimal | low | medium | high | xhigh | max
//! api = "responses"          # openai: chat (default) | responses
//!
//! [provider.profile]         # override the model profile (llm::profile)
//! stop = false               # the model refuses stop: cutline applies it
//! ```
//!
//! Optional tuning: `max_retries`, `retry_base_secs`, `retry_max_wait_secs`
//! (the longest wait a server may ask for, default 60), `connect_timeout_secs`
//! (10), `idle_timeout_secs` (silence inside a stream, 60),
//! `first_byte_timeout_secs` (to the response headers, 120),
//! `total_timeout_secs` (a whole request, 900); for `anthropic`, `structured_via = "auto" |
//! "output_config" | "tool"`.
//!
//! Keys are read from the environment when a provider is built and live in
//! an [`ApiKey`](super::wire::ApiKey), whose `Debug` never shows them. A key
//! written into the file (`api_key = …`) is refused without being echoed.
//!
//! One file per step: `parse` reads and checks a file's text, `files` finds
//! and reads the files (and edits one in place), `build` turns an entry into
//! a provider with its key from the environment.

mod build;
mod files;
mod parse;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::Timeouts;
use super::anthropic::Via;
use super::http::RetryPolicy;
use super::params::{Layer, Structured};
use super::profile::{self, Api, Effort, Profile};
use super::structured::Mode;
use super::wire::Headers;

pub use super::kind::Kind;
pub use build::{build, build_with_env, endpoint, key_from_env};
pub use files::{WithModelError, default_paths, with_model};
pub use parse::parse;

/// One configured provider. Holds the NAME of the key's variable, never a key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderConfig {
    /// The name runs refer to (`--provider NAME`).
    pub name: String,
    /// Wire protocol.
    pub kind: Kind,
    /// Base URL (the kind's default when `None`).
    pub base_url: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// The environment variable holding the key (the kind's default when
    /// `None`: `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`).
    pub api_key_env: Option<String>,
    /// Max tokens when a run sets none.
    pub max_tokens: Option<u32>,
    /// Temperature when a run sets none.
    pub temperature: Option<f32>,
    /// `top_p` when a run sets none.
    pub top_p: Option<f32>,
    /// Stop sequences when the prompt sets none.
    pub stop: Option<Vec<String>>,
    /// Extra request headers (`Debug` shows their names only).
    #[serde(skip)]
    pub headers: Headers,
    /// How structured output is honoured (`auto`: as the run asks).
    pub structured: Mode,
    /// Thinking budget (Anthropic, Gemini; Ollama: on).
    pub thinking_budget: Option<u32>,
    /// Reasoning effort when a run sets none.
    pub effort: Option<Effort>,
    /// The OpenAI endpoint, when configured.
    pub api: Option<Api>,
    /// Overrides of the model profile.
    pub profile: profile::Overrides,
    /// Anthropic only: how a schema is sent.
    pub structured_via: Option<Via>,
    /// Retries after the first attempt (429/529, 5xx).
    pub max_retries: Option<u32>,
    /// First retry backoff, seconds.
    pub retry_base_secs: Option<f64>,
    /// Longest wait for one retry, seconds (caps `retry-after`).
    pub retry_max_wait_secs: Option<f64>,
    /// Connect timeout, seconds.
    pub connect_timeout_secs: Option<f64>,
    /// Longest silence inside a stream, seconds.
    pub idle_timeout_secs: Option<f64>,
    /// Longest wait for response headers, seconds (default 120).
    pub first_byte_timeout_secs: Option<f64>,
    /// Longest a whole request may take, seconds (default 900).
    pub total_timeout_secs: Option<f64>,
    /// TrustGraph only: the workspace (default `default`).
    pub workspace: Option<String>,
    /// TrustGraph only: the flow whose prompt service answers (default `default`).
    pub flow: Option<String>,
    /// Where it was defined (`file:line:col`), for messages.
    pub origin: Option<String>,
    /// The file it was defined in (where the workbench saves a model).
    pub file: Option<PathBuf>,
}

impl ProviderConfig {
    /// A config with only a name and a kind; everything else default.
    pub fn new(name: &str, kind: Kind) -> Self {
        Self {
            name: name.to_owned(),
            kind,
            base_url: None,
            model: None,
            api_key_env: None,
            max_tokens: None,
            temperature: None,
            top_p: None,
            stop: None,
            headers: Headers::default(),
            structured: Mode::Auto,
            thinking_budget: None,
            effort: None,
            api: None,
            profile: profile::Overrides::default(),
            structured_via: None,
            max_retries: None,
            retry_base_secs: None,
            retry_max_wait_secs: None,
            connect_timeout_secs: None,
            idle_timeout_secs: None,
            first_byte_timeout_secs: None,
            total_timeout_secs: None,
            workspace: None,
            flow: None,
            origin: None,
            file: None,
        }
    }

    /// The model profile: the table's row for this kind and model, with the
    /// config's overrides (what was learned of the model goes between the
    /// two: `Target::profile`).
    pub fn profile(&self) -> Profile {
        self.seed().with(&self.overrides())
    }

    /// The table's row for this kind and model.
    pub fn seed(&self) -> Profile {
        profile::lookup(self.kind, self.model.as_deref().unwrap_or_default())
    }

    /// What the config says of the model: `[provider.profile]`, with `api`
    /// and `structured_via` over it.
    pub fn overrides(&self) -> profile::Overrides {
        let native = match self.structured_via {
            Some(Via::Tool) => Some(profile::Native::ToolInput),
            Some(Via::OutputConfig) => Some(profile::Native::OutputConfig),
            Some(Via::Auto) | None => None,
        };
        self.profile.then(&profile::Overrides {
            api: self.api,
            native,
            ..profile::Overrides::default()
        })
    }

    /// The values this provider's entry sets, as a precedence level.
    pub fn layer(&self) -> Layer {
        Layer {
            temperature: self.temperature,
            top_p: self.top_p,
            stop: self.stop.clone(),
            max_tokens: self.max_tokens,
            effort: self.effort,
            thinking_budget: self.thinking_budget,
            structured: match self.structured {
                Mode::Auto => None,
                Mode::Native => Some(Structured::Native),
                Mode::Prompt => Some(Structured::Prompt),
                Mode::Off => Some(Structured::Off),
            },
        }
    }

    /// The key variable in force (configured, else the kind's default).
    pub fn key_env(&self) -> Option<&str> {
        self.api_key_env.as_deref().or(self.kind.default_key_env())
    }

    /// Retries from the config.
    pub fn retry_policy(&self) -> RetryPolicy {
        let d = RetryPolicy::default();
        RetryPolicy {
            attempts: self.max_retries.map_or(d.attempts, |n| n.saturating_add(1)),
            base: secs(self.retry_base_secs).unwrap_or(d.base),
            max_wait: secs(self.retry_max_wait_secs).unwrap_or(d.max_wait),
        }
    }

    /// Timeouts from the config.
    pub fn timeouts(&self) -> Timeouts {
        let d = Timeouts::default();
        Timeouts {
            connect: secs(self.connect_timeout_secs).unwrap_or(d.connect),
            idle: secs(self.idle_timeout_secs).unwrap_or(d.idle),
            first_byte: secs(self.first_byte_timeout_secs).unwrap_or(d.first_byte),
            total: secs(self.total_timeout_secs).unwrap_or(d.total),
        }
    }

    fn label(&self) -> String {
        match &self.origin {
            Some(o) => format!("provider {:?} ({o})", self.name),
            None => format!("provider {:?}", self.name),
        }
    }
}

/// Seconds as a duration; `None` for none, negative or non-finite values.
fn secs(v: Option<f64>) -> Option<Duration> {
    v.and_then(|s| Duration::try_from_secs_f64(s).ok())
}

/// A providers file (`cutline.toml`, the user config) that cannot be read
/// or is invalid, with its location. (Prompt files have their own
/// [`crate::prompt::ConfigError`].)
#[derive(Debug, Clone)]
pub struct ProvidersFileError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line and column, when known.
    pub at: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
    /// The io error of a file that does not read, kept as
    /// [`std::error::Error::source`] (`message` already says it). A parse
    /// error keeps none: toml's error quotes the offending line, which can
    /// hold a key, so only its message and position are kept. Not part of
    /// equality.
    pub source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

impl PartialEq for ProvidersFileError {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.at == other.at && self.message == other.message
    }
}

impl Eq for ProvidersFileError {}

impl std::fmt::Display for ProvidersFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some((l, c)) = self.at {
            write!(f, ":{l}:{c}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ProvidersFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// The providers of all config files, merged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// In definition order; a later file's provider replaces an earlier one
    /// of the same name in place.
    pub providers: Vec<ProviderConfig>,
}

impl Config {
    /// The provider called `name`.
    pub fn get(&self, name: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// Add `later`, replacing providers of the same name.
    pub fn merge(&mut self, later: Vec<ProviderConfig>) {
        for p in later {
            match self.providers.iter_mut().find(|q| q.name == p.name) {
                Some(q) => *q = p,
                None => self.providers.push(p),
            }
        }
    }
}
