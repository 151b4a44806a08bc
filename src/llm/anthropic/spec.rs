//! What cutline knows of Anthropic besides the wire: the config words,
//! defaults (its required `max_tokens`) and the seed profile rows (first
//! match wins), registered in `llm::PROVIDERS`.

use enumset::enum_set;

use super::{Anthropic, DEFAULT_MAX_TOKENS};
use crate::llm::kind::{Kind, WireKind};
use crate::llm::profile::table::{NO_EFFORT, OPEN, Row};
use crate::llm::profile::{Effort, Native, Profile, ThinkingForm};
use crate::llm::wire::Endpoint;
use crate::llm::{Build, Provider, ProviderSpec};

use Effort::{High, Low, Max, Medium, Xhigh};

/// Anthropic Messages.
pub const SPEC: ProviderSpec = ProviderSpec {
    kind: Kind::Anthropic,
    aliases: &[],
    records: Some(WireKind::Anthropic),
    base_url: Some("https://api.anthropic.com"),
    key_env: Some("ANTHROPIC_API_KEY"),
    needs_model: true,
    model: None,
    max_tokens: Some(DEFAULT_MAX_TOKENS),
    rows: ROWS,
    retired: &[],
    build: Some(Build::Endpoint(build)),
    options: &["structured_via"],
};

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `Kind::Openai` reads and matches as before"
)]
impl Kind {
    /// Anthropic Messages.
    pub const Anthropic: Kind = Kind::named("anthropic");
}

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `WireKind::Openai` reads and matches as before"
)]
impl WireKind {
    /// Anthropic's Messages API.
    pub const Anthropic: WireKind = WireKind::recorded("anthropic");
}

fn build(endpoint: Endpoint) -> Box<dyn Provider> {
    Box::new(Anthropic::new(endpoint))
}

/// Claude, any model: sampling only when configured; the rest learned.
const CLAUDE: Profile = Profile {
    family: "claude",
    greedy: false,
    sampling_together: false,
    native: Native::OutputConfig,
    prefill: true,
    thinking: enum_set!(ThinkingForm::Budget),
    ..OPEN
};

/// Claude Opus 4.7+, Sonnet 5, Fable 5 and later: no sampling parameters
/// at all (the SDK dropped them), no prefill, adaptive thinking only.
const CLAUDE_CURRENT: Profile = Profile {
    family: "claude-current",
    temperature: false,
    top_p: false,
    prefill: false,
    reasons: true,
    thinking: enum_set!(ThinkingForm::Adaptive),
    effort: enum_set!(Low | Medium | High | Xhigh | Max),
    ..CLAUDE
};

/// Claude 4.5 / Opus 4.1: temperature or top_p (not both), prefill,
/// budgeted thinking, `output_config`.
const CLAUDE_45: Profile = Profile {
    family: "claude-4.5",
    greedy: true,
    effort: NO_EFFORT,
    ..CLAUDE
};

/// Claude's rows, first match wins.
const ROWS: &[Row] = &[
    Row {
        prefixes: &[
            "claude-opus-4-7",
            "claude-opus-4-8",
            "claude-opus-5",
            "claude-sonnet-5",
            "claude-haiku-5",
            "claude-fable-5",
            "claude-mythos",
        ],
        profile: CLAUDE_CURRENT,
    },
    Row {
        prefixes: &["claude-opus-4-6", "claude-sonnet-4-6"],
        profile: Profile {
            family: "claude-4.6",
            greedy: true,
            prefill: false,
            reasons: true,
            thinking: enum_set!(ThinkingForm::Adaptive),
            effort: enum_set!(Low | Medium | High | Max),
            ..CLAUDE
        },
    },
    Row {
        prefixes: &["claude-sonnet-4-5"],
        profile: Profile {
            retires: Some("2026-11-30"),
            ..CLAUDE_45
        },
    },
    Row {
        prefixes: &["claude-opus-4-5"],
        profile: Profile {
            effort: enum_set!(Low | Medium | High),
            retires: Some("2027-01-22"),
            ..CLAUDE_45
        },
    },
    Row {
        prefixes: &["claude-haiku-4-5", "claude-opus-4-1"],
        profile: CLAUDE_45,
    },
    Row {
        prefixes: &["claude-opus-4", "claude-sonnet-4"],
        profile: Profile {
            family: "claude-4",
            native: Native::ToolInput,
            ..CLAUDE_45
        },
    },
    Row {
        prefixes: &["claude-3"],
        profile: Profile {
            family: "claude-3",
            sampling_together: true,
            native: Native::ToolInput,
            ..CLAUDE_45
        },
    },
    Row {
        prefixes: &[""],
        profile: CLAUDE,
    },
];
