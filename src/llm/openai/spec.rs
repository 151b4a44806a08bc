//! What cutline knows of OpenAI and of the servers that speak its chat
//! completions, besides the wire: the config words, defaults and the seed
//! profile rows (first match wins), registered in `llm::PROVIDERS`.

use enumset::{EnumSet, enum_set};

use super::OpenAi;
use crate::llm::kind::{Kind, WireKind};
use crate::llm::profile::table::{NO_EFFORT, OPEN, Row};
use crate::llm::profile::{Api, Effort, Native, Profile, TokenField};
use crate::llm::wire::Endpoint;
use crate::llm::{Build, Provider, ProviderSpec};

use Effort::{High, Low, Max, Medium, Minimal, Xhigh};

/// OpenAI's own API (`max_completion_tokens`).
pub const OPENAI: ProviderSpec = ProviderSpec {
    kind: Kind::Openai,
    aliases: &[],
    records: Some(WireKind::Openai),
    base_url: Some("https://api.openai.com/v1"),
    key_env: Some("OPENAI_API_KEY"),
    needs_model: true,
    model: None,
    max_tokens: None,
    rows: OPENAI_ROWS,
    retired: OPENAI_SHUTDOWN,
    build: Some(Build::Endpoint(build_openai)),
    options: &["api"],
};

/// vLLM, LM Studio, llama-server's `/v1` and others (`max_tokens`).
pub const COMPATIBLE: ProviderSpec = ProviderSpec {
    kind: Kind::OpenaiCompatible,
    aliases: &["openai_compatible"],
    records: Some(WireKind::OpenaiCompatible),
    base_url: None,
    key_env: None,
    needs_model: true,
    model: None,
    max_tokens: None,
    rows: COMPATIBLE_ROWS,
    retired: &[],
    build: Some(Build::Endpoint(build_compatible)),
    options: &["api"],
};

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `Kind::Openai` reads and matches as before"
)]
impl Kind {
    /// OpenAI's own API (`max_completion_tokens`).
    pub const Openai: Kind = Kind::named("openai");

    /// vLLM, LM Studio, llama-server's `/v1` and others (`max_tokens`).
    pub const OpenaiCompatible: Kind = Kind::named("openai-compatible");
}

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `WireKind::Openai` reads and matches as before"
)]
impl WireKind {
    /// OpenAI's own API.
    pub const Openai: WireKind = WireKind::recorded("openai");

    /// A server that speaks OpenAI's chat completions.
    pub const OpenaiCompatible: WireKind = WireKind::recorded("openai_compatible");
}

fn build_openai(endpoint: Endpoint) -> Box<dyn Provider> {
    Box::new(OpenAi::new(endpoint))
}

fn build_compatible(endpoint: Endpoint) -> Box<dyn Provider> {
    Box::new(OpenAi::compatible(endpoint))
}

/// OpenAI chat models (gpt-4.1, gpt-4o, the chat-latest aliases).
const OPENAI_CHAT: Profile = Profile {
    family: "openai-chat",
    token_field: TokenField::MaxCompletionTokens,
    native: Native::ObjectRoot,
    prefill: false,
    effort: NO_EFFORT,
    thinking: EnumSet::empty(),
    ..OPEN
};

/// OpenAI reasoning models before gpt-5.1: no sampling, no stop.
const OPENAI_REASONING: Profile = Profile {
    family: "openai-reasoning",
    temperature: false,
    greedy: false,
    top_p: false,
    stop: false,
    reasons: true,
    effort: enum_set!(Minimal | Low | Medium | High),
    ..OPENAI_CHAT
};

/// OpenAI's announced shutdown dates by exact model id, from the openai SDK
/// 3.57's `ChatModel` deprecation notes (a date there applies to the ids it
/// names, not to a family: `gpt-5` shuts down, `gpt-5.1` later). What the
/// Models API says (`shutdown_date`) wins over these.
const OPENAI_SHUTDOWN: &[(&[&str], &str)] = &[
    (
        &[
            "gpt-5.1",
            "gpt-5.1-2025-11-13",
            "gpt-5.4-nano",
            "gpt-5.4-nano-2026-03-17",
        ],
        "2027-04-01",
    ),
    (
        &[
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-4.1-2025-04-14",
            "gpt-4.1-mini-2025-04-14",
            "gpt-4o",
            "gpt-4o-2024-11-20",
            "gpt-4o-2024-08-06",
            "gpt-4o-mini",
            "gpt-4o-mini-2024-07-18",
        ],
        "2027-01-14",
    ),
    (
        &[
            "gpt-5",
            "gpt-5-mini",
            "gpt-5-nano",
            "gpt-5-2025-08-07",
            "gpt-5-mini-2025-08-07",
            "gpt-5-nano-2025-08-07",
            "o3",
            "o3-2025-04-16",
        ],
        "2026-12-11",
    ),
    (
        &[
            "gpt-4.1-nano",
            "gpt-4.1-nano-2025-04-14",
            "o4-mini",
            "o4-mini-2025-04-16",
            "o3-mini",
            "o3-mini-2025-01-31",
            "o1",
            "o1-2024-12-17",
            "gpt-4o-2024-05-13",
            "gpt-4-turbo",
            "gpt-4-turbo-2024-04-09",
            "gpt-4-1106-preview",
            "gpt-4",
            "gpt-4-0613",
            "gpt-3.5-turbo",
            "gpt-3.5-turbo-0125",
        ],
        "2026-10-23",
    ),
    (&["gpt-3.5-turbo-1106"], "2026-09-28"),
    (&["gpt-5.3-chat-latest", "gpt-5.2-chat-latest"], "2026-08-10"),
    (
        &["gpt-5.1-codex", "gpt-5.1-chat-latest", "gpt-5-chat-latest"],
        "2026-07-23",
    ),
    (&["chatgpt-4o-latest"], "2026-02-17"),
    (&["o1-mini", "o1-mini-2024-09-12"], "2025-10-27"),
    (&["o1-preview", "o1-preview-2024-09-12"], "2025-07-28"),
];

/// OpenAI's rows, first match wins.
const OPENAI_ROWS: &[Row] = &[
    // Models only `/v1/responses` serves (the openai SDK's ResponsesModel
    // literals that ChatModel lacks).
    Row {
        prefixes: &[
            "o1-pro",
            "o3-pro",
            "o3-deep-research",
            "o4-mini-deep-research",
            "computer-use-preview",
            "gpt-5-pro",
            "gpt-5.5-pro",
            "gpt-5-codex",
            "gpt-5.1-codex-max",
            "gpt-5.6-cyber",
            "gpt-6-cyber",
            "gpt-6-rosalind",
            "gpt-6.2-astra-law",
            "gpt-rosalind",
            "gpt-daybreak",
        ],
        profile: Profile {
            family: "openai-responses-only",
            api: Api::Responses,
            effort: enum_set!(Low | Medium | High | Xhigh),
            ..OPENAI_REASONING
        },
    },
    Row {
        prefixes: &["gpt-5-chat", "gpt-5.1-chat", "gpt-5.2-chat", "gpt-5.3-chat", "chatgpt-"],
        profile: OPENAI_CHAT,
    },
    // gpt-5.1 and later take sampling parameters at effort `none`. `max`
    // is in the SDK's `ReasoningEffort`: it is sent, and a model that
    // refuses it lists what it takes (`llm::adapt`).
    Row {
        prefixes: &["gpt-5.", "gpt-6", "gpt-7"],
        profile: Profile {
            family: "openai-reasoning-effort-none",
            temperature: true,
            greedy: true,
            top_p: true,
            sampling_needs_no_effort: true,
            effort: enum_set!(Effort::None | Low | Medium | High | Xhigh | Max),
            ..OPENAI_REASONING
        },
    },
    Row {
        prefixes: &["gpt-5", "o1", "o3", "o4"],
        profile: OPENAI_REASONING,
    },
    Row {
        prefixes: &["gpt-4", "gpt-3.5"],
        profile: OPENAI_CHAT,
    },
    // A model no row knows: every effort level is offered (a refusal
    // teaches the ones it takes), and `cutline probe` asks.
    Row {
        prefixes: &[""],
        profile: Profile {
            family: "openai",
            effort: EnumSet::all(),
            ..OPENAI_CHAT
        },
    },
];

/// A compatible server's rows: open-weights reasoning models.
const COMPATIBLE_ROWS: &[Row] = &[
    // gpt-oss cannot switch its reasoning off (harmony takes low, medium
    // and high).
    Row {
        prefixes: &["gpt-oss"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            effort: enum_set!(Low | Medium | High),
            ..OPEN
        },
    },
    Row {
        prefixes: &["deepseek-r1", "qwq", "qwen3", "magistral"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            effort: enum_set!(Effort::None),
            ..OPEN
        },
    },
];
