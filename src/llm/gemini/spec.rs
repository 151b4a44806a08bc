//! What cutline knows of Gemini besides the wire: the config words,
//! defaults and the seed profile rows (first match wins), registered in
//! `llm::PROVIDERS`.

use enumset::enum_set;

use super::Gemini;
use crate::llm::kind::{Kind, WireKind};
use crate::llm::profile::table::{NO_EFFORT, OPEN, Row};
use crate::llm::profile::{Effort, Profile, ThinkingForm};
use crate::llm::wire::Endpoint;
use crate::llm::{Build, Provider, ProviderSpec};

use Effort::{High, Low, Medium, Minimal, Xhigh};

/// Google Gemini.
pub const SPEC: ProviderSpec = ProviderSpec {
    kind: Kind::Gemini,
    aliases: &[],
    records: Some(WireKind::Gemini),
    base_url: Some("https://generativelanguage.googleapis.com"),
    key_env: Some("GEMINI_API_KEY"),
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
    /// Google Gemini.
    pub const Gemini: Kind = Kind::named("gemini");
}

#[allow(
    non_upper_case_globals,
    reason = "named as the enum variants they replaced, so `WireKind::Openai` reads and matches as before"
)]
impl WireKind {
    /// Gemini's `generateContent`.
    pub const Gemini: WireKind = WireKind::recorded("gemini");
}

fn build(endpoint: Endpoint) -> Box<dyn Provider> {
    Box::new(Gemini::new(endpoint))
}

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

/// Gemini's rows, first match wins.
const ROWS: &[Row] = &[
    Row {
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
        prefixes: &[""],
        profile: Profile {
            family: "gemini",
            greedy: false,
            prefill: false,
            effort: NO_EFFORT,
            ..OPEN
        },
    },
];
