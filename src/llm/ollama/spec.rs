//! What cutline knows of Ollama besides the wire: the config words,
//! defaults and the seed profile rows (first match wins), registered in
//! `llm::PROVIDERS`.

use enumset::{EnumSet, enum_set};

use super::Ollama;
use crate::llm::kind::{Kind, WireKind};
use crate::llm::profile::table::{OPEN, Row};
use crate::llm::profile::{Effort, Profile};
use crate::llm::wire::Endpoint;
use crate::llm::{Build, Provider, ProviderSpec};

use Effort::{High, Low, Max, Medium};

/// Ollama's native `/api/chat`.
pub const SPEC: ProviderSpec = ProviderSpec {
    kind: Kind::Ollama,
    aliases: &[],
    records: Some(WireKind::Ollama),
    base_url: Some("http://127.0.0.1:11434"),
    key_env: None,
    needs_model: true,
    model: None,
    max_tokens: None,
    rows: ROWS,
    retired: &[],
    build: Some(Build::Endpoint(build)),
    options: &[],
};

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `Kind::Openai` reads and matches as before"
)]
impl Kind {
    /// Ollama's native `/api/chat`.
    pub const Ollama: Kind = Kind::named("ollama");
}

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `WireKind::Openai` reads and matches as before"
)]
impl WireKind {
    /// Ollama's `/api/chat`.
    pub const Ollama: WireKind = WireKind::recorded("ollama");
}

fn build(endpoint: Endpoint) -> Box<dyn Provider> {
    Box::new(Ollama::new(endpoint))
}

/// What Ollama's `think` takes (`api/types.go`'s `ThinkValue`): `false`
/// (effort none), `"low"`, `"medium"`, `"high"`, `"max"`; other levels go
/// as the nearest of those.
const OLLAMA_THINK: EnumSet<Effort> = enum_set!(Effort::None | Low | Medium | High | Max);

/// Any model on Ollama: thinking is on by default where the model thinks,
/// so effort `none` sends `think: false`; a model without thinking refuses
/// any other `think` and is taught by that refusal.
const OLLAMA: Profile = Profile {
    family: "ollama",
    effort: OLLAMA_THINK,
    effort_nearest: true,
    ..OPEN
};

/// Ollama's rows, first match wins.
const ROWS: &[Row] = &[
    // gpt-oss cannot switch its reasoning off (harmony takes low, medium
    // and high; Ollama sends its `max` as high).
    Row {
        prefixes: &["gpt-oss"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            effort: enum_set!(Low | Medium | High | Max),
            ..OLLAMA
        },
    },
    // Thinking switched on and off: Ollama's `think`, a compatible
    // server's `chat_template_kwargs.enable_thinking` (effort none).
    Row {
        prefixes: &["deepseek-r1", "qwq", "qwen3", "magistral"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            ..OLLAMA
        },
    },
    Row {
        prefixes: &[""],
        profile: OLLAMA,
    },
];
