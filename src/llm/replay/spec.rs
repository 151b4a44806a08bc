//! What cutline knows of a replay besides its provider: its words, and
//! that it takes every parameter as recorded (no profile rows: the open
//! profile), registered in `llm::PROVIDERS`. Chosen with `--provider
//! replay`, built by `run::target`, never from a config entry.

use crate::llm::ProviderSpec;
use crate::llm::kind::{Kind, WireKind};

/// A recorded run played back.
pub const SPEC: ProviderSpec = ProviderSpec {
    kind: Kind::Replay,
    aliases: &[],
    records: Some(WireKind::Replay),
    base_url: None,
    key_env: None,
    needs_model: false,
    model: None,
    max_tokens: None,
    rows: &[],
    retired: &[],
    build: None,
    options: &[],
};

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `Kind::Openai` reads and matches as before"
)]
impl Kind {
    /// A recorded run played back (chosen with `--provider replay`).
    pub const Replay: Kind = Kind::named("replay");
}

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `WireKind::Openai` reads and matches as before"
)]
impl WireKind {
    /// A recorded run played back.
    pub const Replay: WireKind = WireKind::recorded("replay");
}
