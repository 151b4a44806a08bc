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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::anthropic::{Anthropic, Via};
use super::gemini::Gemini;
use super::http::RetryPolicy;
use super::llama_server::LlamaServer;
use super::ollama::Ollama;
use super::openai::OpenAi;
use super::params::{Layer, Structured};
use super::profile::{self, Api, Effort, Profile};
use super::structured::Mode;
use super::wire::{ApiKey, Auth, Endpoint, Headers};
use super::{ErrorKind, LlmError, Provider, Timeouts};

pub use super::kind::Kind;

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
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), at.map_or_else(String::new, |(l, c)| format!(":{l}:{c}")))]
pub struct ProvidersFileError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line and column, when known.
    pub at: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
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

    /// Read and merge `paths` in order; files that do not exist are skipped.
    pub fn load_from(paths: &[PathBuf]) -> Result<Self, ProvidersFileError> {
        let mut cfg = Self::default();
        for path in paths {
            let text = match crate::limits::read(path)
                .and_then(|b| String::from_utf8(b).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
            {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(ProvidersFileError {
                        path: path.clone(),
                        at: None,
                        message: e.to_string(),
                    });
                }
            };
            cfg.merge(parse(&text, path)?);
        }
        Ok(cfg)
    }

    /// Read the default files (see the module docs).
    pub fn load() -> Result<Self, ProvidersFileError> {
        if let Some(p) = std::env::var_os("CUTLINE_CONFIG").filter(|v| !v.is_empty()) {
            let p = PathBuf::from(p);
            if !p.is_file() {
                return Err(ProvidersFileError {
                    path: p,
                    at: None,
                    message: "CUTLINE_CONFIG names a file that does not exist".into(),
                });
            }
            return Self::load_from(&[p]);
        }
        Self::load_from(&default_paths())
    }
}

/// The user's file, then the project's.
pub fn default_paths() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(d) = dirs::config_dir() {
        v.push(d.join("cutline").join("config.toml"));
    }
    v.push(PathBuf::from("cutline.toml"));
    v
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    provider: Vec<Spanned<Raw>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Spanned<String>,
    kind: Kind,
    base_url: Option<Spanned<String>>,
    model: Option<String>,
    api_key_env: Option<Spanned<String>>,
    api_key: Option<Spanned<serde::de::IgnoredAny>>,
    max_tokens: Option<u32>,
    temperature: Option<Spanned<f32>>,
    top_p: Option<Spanned<f32>>,
    stop: Option<Vec<String>>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    structured: Mode,
    thinking_budget: Option<u32>,
    effort: Option<Effort>,
    api: Option<Spanned<Api>>,
    #[serde(default)]
    profile: profile::Overrides,
    structured_via: Option<Spanned<Via>>,
    max_retries: Option<u32>,
    retry_base_secs: Option<Spanned<f64>>,
    retry_max_wait_secs: Option<Spanned<f64>>,
    connect_timeout_secs: Option<Spanned<f64>>,
    idle_timeout_secs: Option<Spanned<f64>>,
    first_byte_timeout_secs: Option<Spanned<f64>>,
    total_timeout_secs: Option<Spanned<f64>>,
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parse one config file's text; `path` is for messages.
pub fn parse(text: &str, path: &Path) -> Result<Vec<ProviderConfig>, ProvidersFileError> {
    let err_at = |offset: Option<usize>, message: String| ProvidersFileError {
        path: path.to_owned(),
        at: offset.map(|o| line_col(text, o)),
        message,
    };
    // The error's own Display quotes the offending line, which could hold a
    // secret: only its message and position are used.
    let file: File = toml::from_str(text).map_err(|e| err_at(e.span().map(|s| s.start), e.message().to_owned()))?;
    let mut out: Vec<ProviderConfig> = Vec::new();
    for entry in file.provider {
        let at = entry.span().start;
        let raw = entry.into_inner();
        let name = raw.name.get_ref().trim().to_owned();
        let name_at = Some(raw.name.span().start);
        if name.is_empty() {
            return Err(err_at(name_at, "a provider needs a non-empty `name`".into()));
        }
        if out.iter().any(|p| p.name == name) {
            return Err(err_at(
                name_at,
                format!("provider {name:?} is defined twice in this file"),
            ));
        }
        if let Some((offset, message)) = check(&raw, &name, at) {
            return Err(err_at(Some(offset), message));
        }
        let (line, col) = line_col(text, at);
        out.push(ProviderConfig {
            name,
            kind: raw.kind,
            base_url: raw.base_url.map(|u| u.into_inner().trim_end_matches('/').to_owned()),
            model: raw.model,
            api_key_env: raw.api_key_env.map(Spanned::into_inner),
            max_tokens: raw.max_tokens,
            temperature: raw.temperature.map(Spanned::into_inner),
            top_p: raw.top_p.map(Spanned::into_inner),
            stop: raw.stop,
            headers: Headers(raw.headers.into_iter().collect()),
            structured: raw.structured,
            thinking_budget: raw.thinking_budget,
            effort: raw.effort,
            api: raw.api.map(Spanned::into_inner),
            profile: raw.profile,
            structured_via: raw.structured_via.map(Spanned::into_inner),
            max_retries: raw.max_retries,
            retry_base_secs: raw.retry_base_secs.map(Spanned::into_inner),
            retry_max_wait_secs: raw.retry_max_wait_secs.map(Spanned::into_inner),
            connect_timeout_secs: raw.connect_timeout_secs.map(Spanned::into_inner),
            idle_timeout_secs: raw.idle_timeout_secs.map(Spanned::into_inner),
            first_byte_timeout_secs: raw.first_byte_timeout_secs.map(Spanned::into_inner),
            total_timeout_secs: raw.total_timeout_secs.map(Spanned::into_inner),
            origin: Some(format!("{}:{line}:{col}", path.display())),
            file: Some(path.to_owned()),
        });
    }
    Ok(out)
}

/// What is wrong with one entry, and where (byte offset); `at` is the
/// entry's own offset.
fn check(raw: &Raw, name: &str, at: usize) -> Option<(usize, String)> {
    if let Some(k) = &raw.api_key {
        return Some((
            k.span().start,
            format!(
                "provider {name:?}: API keys do not go in config files; export the key in an \
                 environment variable and name that variable with `api_key_env`"
            ),
        ));
    }
    if let Some(env) = raw.api_key_env.as_ref().filter(|e| !is_env_name(e.get_ref())) {
        return Some((
            env.span().start,
            format!(
                "provider {name:?}: `api_key_env` must be the NAME of an environment variable \
                 (like OPENAI_API_KEY), not the key itself"
            ),
        ));
    }
    if raw.kind.needs_model() && raw.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
        return Some((
            at,
            format!("provider {name:?} (kind {}) needs a `model`", raw.kind.as_str()),
        ));
    }
    match &raw.base_url {
        Some(u) => {
            let ok = reqwest::Url::parse(u.get_ref()).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
            if !ok {
                return Some((
                    u.span().start,
                    format!("provider {name:?}: `base_url` must be an http:// or https:// URL"),
                ));
            }
        }
        None if raw.kind == Kind::OpenaiCompatible => {
            return Some((
                at,
                format!("provider {name:?} (kind openai-compatible) needs a `base_url`, e.g. http://127.0.0.1:8080/v1"),
            ));
        }
        None => {}
    }
    if let Some(a) = raw
        .api
        .as_ref()
        .filter(|_| !matches!(raw.kind, Kind::Openai | Kind::OpenaiCompatible))
    {
        return Some((
            a.span().start,
            format!("provider {name:?}: `api` applies to kinds openai and openai-compatible only"),
        ));
    }
    if let Some(v) = raw.structured_via.as_ref().filter(|_| raw.kind != Kind::Anthropic) {
        return Some((
            v.span().start,
            format!("provider {name:?}: `structured_via` applies to kind anthropic only"),
        ));
    }
    if matches!(raw.kind, Kind::Local | Kind::Replay) {
        let unsupported = if raw.headers.is_empty() { None } else { Some("headers") };
        if let Some(what) = unsupported.or(raw.api_key_env.as_ref().map(|_| "api_key_env")) {
            return Some((
                at,
                format!(
                    "provider {name:?}: `{what}` is not supported for kind {}",
                    raw.kind.as_str()
                ),
            ));
        }
    }
    if let Some(t) = raw.temperature.as_ref().filter(|t| !(0.0..=2.0).contains(t.get_ref())) {
        return Some((
            t.span().start,
            format!("provider {name:?}: `temperature` must be between 0 and 2"),
        ));
    }
    if let Some(t) = raw.top_p.as_ref().filter(|t| !(0.0..=1.0).contains(t.get_ref())) {
        return Some((
            t.span().start,
            format!("provider {name:?}: `top_p` must be between 0 and 1"),
        ));
    }
    check_durations(raw, name)
}

/// A retry or timeout setting that is not a positive number of seconds.
fn check_durations(raw: &Raw, name: &str) -> Option<(usize, String)> {
    for (key, v) in [
        ("retry_base_secs", &raw.retry_base_secs),
        ("retry_max_wait_secs", &raw.retry_max_wait_secs),
        ("connect_timeout_secs", &raw.connect_timeout_secs),
        ("idle_timeout_secs", &raw.idle_timeout_secs),
        ("first_byte_timeout_secs", &raw.first_byte_timeout_secs),
        ("total_timeout_secs", &raw.total_timeout_secs),
    ] {
        if let Some(v) = v
            .as_ref()
            .filter(|v| !(v.get_ref().is_finite() && *v.get_ref() > 0.0 && *v.get_ref() < 86_400.0))
        {
            return Some((
                v.span().start,
                format!("provider {name:?}: `{key}` must be a positive number of seconds"),
            ));
        }
    }
    None
}

/// Build the provider `cfg` describes, reading its key from the process
/// environment. `local` and `replay` are not built here: the registry
/// (`llm::registry`) makes those.
pub fn build(cfg: &ProviderConfig) -> Result<Box<dyn Provider>, LlmError> {
    build_with_env(cfg, &|name| std::env::var(name).ok())
}

/// [`build`] with the environment looked up through `env`.
pub fn build_with_env(
    cfg: &ProviderConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Provider>, LlmError> {
    Ok(match cfg.kind {
        Kind::Openai => Box::new(OpenAi::new(endpoint(cfg, env)?)),
        Kind::OpenaiCompatible => Box::new(OpenAi::compatible(endpoint(cfg, env)?)),
        Kind::Anthropic => Box::new(Anthropic::new(endpoint(cfg, env)?)),
        Kind::Gemini => Box::new(Gemini::new(endpoint(cfg, env)?)),
        Kind::Ollama => Box::new(Ollama::new(endpoint(cfg, env)?)),
        Kind::LlamaServer => Box::new(LlamaServer::new(endpoint(cfg, env)?)),
        Kind::Local | Kind::Replay => {
            return Err(LlmError::new(
                ErrorKind::BadRequest,
                format!(
                    "{}: kind {} is chosen with `--provider {}`, not built from a config entry",
                    cfg.label(),
                    cfg.kind.as_str(),
                    cfg.kind.as_str()
                ),
            ));
        }
    })
}

/// The resolved endpoint of an HTTP provider: URL, model, key (from `env`),
/// headers, profile, thinking budget, retries and timeouts.
pub fn endpoint(cfg: &ProviderConfig, env: &dyn Fn(&str) -> Option<String>) -> Result<Endpoint, LlmError> {
    let base = cfg
        .base_url
        .as_deref()
        .or(cfg.kind.default_base_url())
        .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{} needs a `base_url`", cfg.label())))?;
    let model = cfg.model.as_deref().unwrap_or(if cfg.kind == Kind::LlamaServer {
        "llama-server"
    } else {
        ""
    });
    if cfg.kind.needs_model() && model.is_empty() {
        return Err(LlmError::new(
            ErrorKind::BadRequest,
            format!("{} needs a `model`", cfg.label()),
        ));
    }
    let mut ep = Endpoint::new(&cfg.name, base, model, cfg.profile());
    if let Some(var) = cfg.key_env() {
        ep.key = Some(key_from_env(cfg, var, env)?);
    }
    ep.headers = cfg.headers.clone();
    ep.retry = cfg.retry_policy();
    ep.set_timeouts(cfg.timeouts());
    // Check the headers (and the key as a header value) now, not per request.
    ep.header_map(Auth::Bearer, &[], &[])?;
    Ok(ep)
}

/// The key in `var`, or an error naming the variable (never a value).
fn key_from_env(cfg: &ProviderConfig, var: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<ApiKey, LlmError> {
    if !is_env_name(var) {
        return Err(LlmError::new(
            ErrorKind::Auth,
            format!(
                "{}: `api_key_env` must be the NAME of an environment variable, not the key itself",
                cfg.label()
            ),
        ));
    }
    match env(var).map(|v| v.trim().to_owned()) {
        Some(v) if !v.is_empty() => Ok(ApiKey::new(var, v)),
        Some(_) => Err(LlmError::new(
            ErrorKind::Auth,
            format!(
                "{}: the environment variable {var} is empty; set it to the API key",
                cfg.label()
            ),
        )),
        None => Err(LlmError::new(
            ErrorKind::Auth,
            format!(
                "{}: the environment variable {var} is not set; export it with the API key \
                 (the config names the variable, never the key)",
                cfg.label()
            ),
        )),
    }
}

/// `text` (a config file) with the `model` of provider `name` set, every
/// other byte kept (comments, order, spacing): what the workbench writes
/// when a model typed in the picker is saved.
///
/// # Errors
/// The text is not TOML, or has no `[[provider]]` named `name`.
pub fn with_model(text: &str, name: &str, model: &str) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| e.message().to_owned())?;
    let entry = doc
        .get_mut("provider")
        .and_then(toml_edit::Item::as_array_of_tables_mut)
        .and_then(|ps| {
            ps.iter_mut()
                .find(|p| p.get("name").and_then(toml_edit::Item::as_str).map(str::trim) == Some(name))
        })
        .ok_or_else(|| format!("no [[provider]] named {name:?}"))?;
    entry["model"] = toml_edit::value(model);
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars() {
        assert_eq!(line_col("ab\ncdé\nx", 0), (1, 1));
        assert_eq!(line_col("ab\ncdé\nx", 3), (2, 1));
        assert_eq!(line_col("ab\ncdé\nx", 8), (3, 1));
    }

    #[test]
    fn env_names() {
        assert!(is_env_name("OPENAI_API_KEY"));
        assert!(is_env_name("_x1"));
        assert!(!is_env_name("sk-abc"));
        assert!(!is_env_name("1A"));
        assert!(!is_env_name(""));
    }

    #[test]
    fn with_model_sets_one_providers_model_and_keeps_every_other_byte() {
        let text = "# mine\n[keys]\nsweep = [\"s\"]\n\n[[provider]]\nname = \"a\"   # first\nkind = \"openai\"\nmodel = \"gpt-4o\"\n\n[[provider]]\nname = \"b\"\nkind = \"ollama\"\n";
        let out = with_model(text, "a", "gpt-5-mini").unwrap();
        assert_eq!(out, text.replace("model = \"gpt-4o\"", "model = \"gpt-5-mini\""));
        let out = with_model(text, "b", "qwen3:4b").unwrap();
        assert_eq!(out, format!("{text}model = \"qwen3:4b\"\n"));
        let parsed = parse(&out, Path::new("c.toml")).unwrap();
        assert_eq!(parsed[1].model.as_deref(), Some("qwen3:4b"));
        assert_eq!(with_model(text, "c", "x").unwrap_err(), "no [[provider]] named \"c\"");
        assert!(with_model("[[provider]\n", "a", "x").is_err());
    }
}
