//! The seed table: what each model family accepts, as of the providers'
//! SDKs of late 2026 (anthropic 2.14, openai 3.57, google-genai 3.6) and
//! their documentation. First match wins. It is the starting point only:
//! what a Models API reports, what a server refuses and what `cutline
//! probe` finds are laid over it (`llm::learned`).

use enumset::{EnumSet, enum_set};

use super::{Api, Effort, Native, Profile, ThinkingForm, TokenField};
use crate::llm::kind::Kind;

/// One row: wire kinds, model-id prefixes (lower case; "" matches any
/// model), and the profile.
pub struct Row {
    /// Wire kinds the row applies to.
    pub kinds: &'static [Kind],
    /// Model-id prefixes (after any `models/` or `vendor/` part).
    pub prefixes: &'static [&'static str],
    /// What those models accept.
    pub profile: Profile,
}

/// Any model no row knows: sent everything, taught by its refusals.
pub const OPEN: Profile = Profile {
    family: "default",
    temperature: true,
    greedy: true,
    top_p: true,
    sampling_together: true,
    sampling_needs_no_effort: false,
    stop: true,
    token_field: TokenField::MaxTokens,
    native: Native::AnyRoot,
    reasons: false,
    grammar: false,
    prefill: true,
    thinking: enum_set!(ThinkingForm::Budget),
    effort: EnumSet::all(),
    effort_nearest: false,
    api: Api::Chat,
    retires: None,
};

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

const NO_EFFORT: EnumSet<Effort> = EnumSet::empty();

use Effort::{High, Low, Max, Medium, Minimal, Xhigh};

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

/// Gemini 3 and later: `thinkingLevel`; Google keeps temperature at 1.0.
const GEMINI_3: Profile = Profile {
    family: "gemini-3",
    greedy: false,
    reasons: true,
    prefill: false,
    thinking: enum_set!(ThinkingForm::Level),
    effort: enum_set!(Minimal | Low | Medium | High | Xhigh),
    ..OPEN
};

/// OpenAI's announced shutdown dates by exact model id, from the openai SDK
/// 3.57's `ChatModel` deprecation notes (a date there applies to the ids it
/// names, not to a family: `gpt-5` shuts down, `gpt-5.1` later). What the
/// Models API says (`shutdown_date`) wins over these.
pub const OPENAI_SHUTDOWN: &[(&[&str], &str)] = &[
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

/// The rows, first match wins.
pub const TABLE: &[Row] = &[
    Row {
        kinds: &[Kind::LlamaServer, Kind::Local],
        prefixes: &[""],
        profile: Profile {
            family: "llama-server",
            grammar: true,
            thinking: EnumSet::empty(),
            effort: NO_EFFORT,
            ..OPEN
        },
    },
    // Models only `/v1/responses` serves (the openai SDK's ResponsesModel
    // literals that ChatModel lacks).
    Row {
        kinds: &[Kind::Openai],
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
        kinds: &[Kind::Openai],
        prefixes: &["gpt-5-chat", "gpt-5.1-chat", "gpt-5.2-chat", "gpt-5.3-chat", "chatgpt-"],
        profile: OPENAI_CHAT,
    },
    // gpt-5.1 and later take sampling parameters at effort `none`. `max`
    // is in the SDK's `ReasoningEffort`: it is sent, and a model that
    // refuses it lists what it takes (`llm::adapt`).
    Row {
        kinds: &[Kind::Openai],
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
        kinds: &[Kind::Openai],
        prefixes: &["gpt-5", "o1", "o3", "o4"],
        profile: OPENAI_REASONING,
    },
    Row {
        kinds: &[Kind::Openai],
        prefixes: &["gpt-4", "gpt-3.5"],
        profile: OPENAI_CHAT,
    },
    // A model no row knows: every effort level is offered (a refusal
    // teaches the ones it takes), and `cutline probe` asks.
    Row {
        kinds: &[Kind::Openai],
        prefixes: &[""],
        profile: Profile {
            family: "openai",
            effort: EnumSet::all(),
            ..OPENAI_CHAT
        },
    },
    Row {
        kinds: &[Kind::Anthropic],
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
        kinds: &[Kind::Anthropic],
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
        kinds: &[Kind::Anthropic],
        prefixes: &["claude-sonnet-4-5"],
        profile: Profile {
            retires: Some("2026-11-30"),
            ..CLAUDE_45
        },
    },
    Row {
        kinds: &[Kind::Anthropic],
        prefixes: &["claude-opus-4-5"],
        profile: Profile {
            effort: enum_set!(Low | Medium | High),
            retires: Some("2027-01-22"),
            ..CLAUDE_45
        },
    },
    Row {
        kinds: &[Kind::Anthropic],
        prefixes: &["claude-haiku-4-5", "claude-opus-4-1"],
        profile: CLAUDE_45,
    },
    Row {
        kinds: &[Kind::Anthropic],
        prefixes: &["claude-opus-4", "claude-sonnet-4"],
        profile: Profile {
            family: "claude-4",
            native: Native::ToolInput,
            ..CLAUDE_45
        },
    },
    Row {
        kinds: &[Kind::Anthropic],
        prefixes: &["claude-3"],
        profile: Profile {
            family: "claude-3",
            sampling_together: true,
            native: Native::ToolInput,
            ..CLAUDE_45
        },
    },
    Row {
        kinds: &[Kind::Anthropic],
        prefixes: &[""],
        profile: CLAUDE,
    },
    Row {
        kinds: &[Kind::Gemini],
        prefixes: &[
            "gemini-3",
            "gemini-4",
            "gemini-flash-latest",
            "gemini-pro-latest",
            "gemini-flash-lite-latest",
        ],
        profile: GEMINI_3,
    },
    Row {
        kinds: &[Kind::Gemini],
        prefixes: &["gemini-2.5"],
        profile: Profile {
            family: "gemini-2.5",
            reasons: true,
            prefill: false,
            effort: NO_EFFORT,
            ..OPEN
        },
    },
    // Before thinking: greedy decoding is theirs to take.
    Row {
        kinds: &[Kind::Gemini],
        prefixes: &["gemini-1.", "gemini-2.0"],
        profile: Profile {
            family: "gemini-2.0",
            prefill: false,
            effort: NO_EFFORT,
            ..OPEN
        },
    },
    // A model newer than this table: every Gemini since 2.5 thinks, and
    // Google's guidance for thinking models is to keep their temperature
    // (1.0), so none is sent until the Models API (`gemini::models`) says
    // otherwise; when it cannot answer (404, a timeout) this holds.
    Row {
        kinds: &[Kind::Gemini],
        prefixes: &[""],
        profile: Profile {
            family: "gemini",
            greedy: false,
            prefill: false,
            effort: NO_EFFORT,
            ..OPEN
        },
    },
    // gpt-oss cannot switch its reasoning off (harmony takes low, medium
    // and high; Ollama sends its `max` as high).
    Row {
        kinds: &[Kind::Ollama],
        prefixes: &["gpt-oss"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            effort: enum_set!(Low | Medium | High | Max),
            ..OLLAMA
        },
    },
    Row {
        kinds: &[Kind::OpenaiCompatible],
        prefixes: &["gpt-oss"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            effort: enum_set!(Low | Medium | High),
            ..OPEN
        },
    },
    // Thinking switched on and off: Ollama's `think`, a compatible
    // server's `chat_template_kwargs.enable_thinking` (effort none).
    Row {
        kinds: &[Kind::Ollama],
        prefixes: &["deepseek-r1", "qwq", "qwen3", "magistral"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            ..OLLAMA
        },
    },
    Row {
        kinds: &[Kind::OpenaiCompatible],
        prefixes: &["deepseek-r1", "qwq", "qwen3", "magistral"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            effort: enum_set!(Effort::None),
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Ollama],
        prefixes: &[""],
        profile: OLLAMA,
    },
];
