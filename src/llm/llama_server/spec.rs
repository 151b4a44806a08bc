//! What cutline knows of llama.cpp's server besides the wire, configured
//! (`llama-server`) or embedded (`local`, started on first use by
//! `llm::local`): the config words, defaults and the seed profile row,
//! registered in `llm::PROVIDERS`.

use enumset::EnumSet;

use super::LlamaServer;
use crate::llm::kind::{Kind, WireKind};
use crate::llm::profile::Profile;
use crate::llm::profile::table::{NO_EFFORT, OPEN, Row};
use crate::llm::wire::Endpoint;
use crate::llm::{Build, Provider, ProviderSpec};

/// llama.cpp's native `/completion` (base models, token pieces).
pub const SPEC: ProviderSpec = ProviderSpec {
    kind: Kind::LlamaServer,
    aliases: &["llama_server"],
    records: Some(WireKind::LlamaServer),
    base_url: Some("http://127.0.0.1:8080"),
    key_env: None,
    needs_model: false,
    model: Some("llama-server"),
    max_tokens: None,
    rows: ROWS,
    retired: &[],
    build: Some(Build::Endpoint(build)),
    options: &[],
};

/// The embedded llama-server, started on first use; chosen with
/// `--provider local`, built by the registry. Its runs record the
/// `llama_server` wire.
pub const LOCAL: ProviderSpec = ProviderSpec {
    kind: Kind::Local,
    aliases: &[],
    records: None,
    base_url: None,
    key_env: None,
    needs_model: false,
    model: None,
    max_tokens: None,
    rows: ROWS,
    retired: &[],
    build: None,
    options: &[],
};

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `Kind::Openai` reads and matches as before"
)]
impl Kind {
    /// llama.cpp's native `/completion` (base models, token pieces).
    pub const LlamaServer: Kind = Kind::named("llama-server");

    /// The embedded llama-server, started on first use.
    pub const Local: Kind = Kind::named("local");
}

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `WireKind::Openai` reads and matches as before"
)]
impl WireKind {
    /// llama-server's `/completion` (the local model).
    pub const LlamaServer: WireKind = WireKind::recorded("llama_server");
}

fn build(endpoint: Endpoint) -> Box<dyn Provider> {
    Box::new(LlamaServer::new(endpoint))
}

/// Any model on llama-server: a GBNF grammar, no thinking forms.
const ROWS: &[Row] = &[Row {
    prefixes: &[""],
    profile: Profile {
        family: "llama-server",
        grammar: true,
        thinking: EnumSet::empty(),
        effort: NO_EFFORT,
        ..OPEN
    },
}];
