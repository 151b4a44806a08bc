//! What cutline knows of a replay besides its provider: its words, and
//! that it takes every parameter as recorded (no profile rows: the open
//! profile), registered in `llm::PROVIDERS`. Chosen with `--provider
//! replay`, built by `run::target`, never from a config entry.

use crate::llm::ProviderSpec;
use crate::llm::kind::{Kind, WireKind};

/// A recorded run played back.
pub const SPEC: ProviderSpec = ProviderSpec {
    kind: Kind::Replay,
    word: "replay",
    aliases: &[],
    records: Some(("replay", WireKind::Replay)),
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
