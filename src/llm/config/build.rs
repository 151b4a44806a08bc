//! Building a provider from its entry: the endpoint resolved (URL, model,
//! headers, retries, timeouts) and the key read from the environment, named
//! in every error by its variable, never by its value.

use super::ProviderConfig;
use super::parse::is_env_name;
use crate::llm::wire::{ApiKey, Auth, Endpoint};
use crate::llm::{Build, ErrorKind, LlmError, Provider};

/// Build the provider `cfg` describes, reading its key from the process
/// environment, as its kind's spec builds it (`llm::ProviderSpec::build`).
/// `local` and `replay` are not built here: the registry (`llm::registry`)
/// and `run::target` make those.
pub fn build(cfg: &ProviderConfig) -> Result<Box<dyn Provider>, LlmError> {
    build_with_env(cfg, &|name| std::env::var(name).ok())
}

/// [`build`] with the environment looked up through `env`.
pub fn build_with_env(
    cfg: &ProviderConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Provider>, LlmError> {
    let spec = cfg.kind.spec();
    let build = spec.build.ok_or_else(|| {
        LlmError::new(
            ErrorKind::BadRequest,
            format!(
                "{}: kind {} is chosen with `--provider {}`, not built from a config entry",
                cfg.label(),
                spec.kind.as_str(),
                spec.kind.as_str()
            ),
        )
    })?;
    match build {
        Build::Endpoint(wire) => Ok(wire(endpoint(cfg, env)?)),
        Build::Entry(from) => from(cfg, env),
    }
}

/// The resolved endpoint of an HTTP provider: URL, model, key (from `env`),
/// headers, profile, thinking budget, retries and timeouts.
pub fn endpoint(cfg: &ProviderConfig, env: &dyn Fn(&str) -> Option<String>) -> Result<Endpoint, LlmError> {
    let base = cfg
        .base_url
        .as_deref()
        .or(cfg.kind.default_base_url())
        .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{} needs a `base_url`", cfg.label())))?;
    let model = cfg
        .model
        .as_deref()
        .unwrap_or(cfg.kind.spec().model.unwrap_or_default());
    if cfg.kind.needs_model() && model.is_empty() {
        return Err(LlmError::new(
            ErrorKind::BadRequest,
            format!("{} needs a `model`", cfg.label()),
        ));
    }
    let mut ep = Endpoint::new(&cfg.name, base, model);
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
pub fn key_from_env(cfg: &ProviderConfig, var: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<ApiKey, LlmError> {
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
