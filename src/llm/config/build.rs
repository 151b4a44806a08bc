//! Building a provider from its entry: the endpoint resolved (URL, model,
//! headers, retries, timeouts) and the key read from the environment, named
//! in every error by its variable, never by its value.

use super::parse::is_env_name;
use super::{Kind, ProviderConfig};
use crate::llm::anthropic::Anthropic;
use crate::llm::gemini::Gemini;
use crate::llm::llama_server::LlamaServer;
use crate::llm::ollama::Ollama;
use crate::llm::openai::OpenAi;
use crate::llm::trustgraph::TrustGraph;
use crate::llm::wire::{ApiKey, Auth, Endpoint};
use crate::llm::{ErrorKind, LlmError, Provider};

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
        Kind::Trustgraph => Box::new(trustgraph(cfg, env)?),
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

/// A TrustGraph deployment's prompt service: the gateway URL, the token
/// from `api_key_env` (else `TRUSTGRAPH_TOKEN` when it is set, as
/// TrustGraph's CLI reads it), the workspace and the flow.
fn trustgraph(cfg: &ProviderConfig, env: &dyn Fn(&str) -> Option<String>) -> Result<TrustGraph, LlmError> {
    let base = cfg
        .base_url
        .as_deref()
        .or(cfg.kind.default_base_url())
        .unwrap_or_default();
    let token = match cfg.api_key_env.as_deref() {
        Some(var) => Some(key_from_env(cfg, var, env)?),
        None => env("TRUSTGRAPH_TOKEN")
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .map(|v| ApiKey::new("TRUSTGRAPH_TOKEN", v)),
    };
    Ok(TrustGraph {
        name: cfg.name.clone(),
        base_url: format!("{}/", base.trim_end_matches('/')),
        token,
        workspace: cfg.workspace.clone().unwrap_or_else(|| "default".to_owned()),
        flow: cfg.flow.clone().unwrap_or_else(|| "default".to_owned()),
        timeouts: cfg.timeouts(),
    })
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
