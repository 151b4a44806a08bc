//! What cutline knows of a TrustGraph deployment's prompt service besides
//! its client: the config words, defaults and how an entry becomes one
//! (its token, workspace and flow), registered in `llm::PROVIDERS`. No
//! profile rows: the deployment decides what it sends.

use super::TrustGraph;
use crate::llm::config::{ProviderConfig, key_from_env};
use crate::llm::http::key::ApiKey;
use crate::llm::kind::Kind;
use crate::llm::{Build, LlmError, Provider, ProviderSpec};

/// A TrustGraph deployment's own prompt service (its gateway's WebSocket
/// API): the prompt goes by id, the deployment renders it.
pub const SPEC: ProviderSpec = ProviderSpec {
    kind: Kind::Trustgraph,
    aliases: &[],
    records: None,
    base_url: Some("http://localhost:8888"),
    key_env: None,
    needs_model: false,
    model: None,
    max_tokens: None,
    rows: &[],
    retired: &[],
    build: Some(Build::Entry(build)),
    options: &["workspace", "flow"],
};

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `Kind::Openai` reads and matches as before"
)]
impl Kind {
    /// A TrustGraph deployment's own prompt service (its gateway's
    /// WebSocket API): the prompt goes by id, the deployment renders it.
    pub const Trustgraph: Kind = Kind::named("trustgraph");
}

/// A TrustGraph deployment's prompt service: the gateway URL, the token
/// from `api_key_env` (else `TRUSTGRAPH_TOKEN` when it is set, as
/// TrustGraph's CLI reads it), the workspace and the flow.
fn build(cfg: &ProviderConfig, env: &dyn Fn(&str) -> Option<String>) -> Result<Box<dyn Provider>, LlmError> {
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
    Ok(Box::new(TrustGraph {
        name: cfg.name.clone(),
        base_url: format!("{}/", base.trim_end_matches('/')),
        token,
        workspace: cfg.workspace.clone().unwrap_or_else(|| "default".to_owned()),
        flow: cfg.flow.clone().unwrap_or_else(|| "default".to_owned()),
        timeouts: cfg.timeouts(),
    }))
}
