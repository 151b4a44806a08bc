//! The seed table's parts: a row (model-id prefixes and the profile) and
//! the open profile every row starts from. The rows themselves are each
//! provider's, in its spec (`llm::openai::spec`, `anthropic::spec`, …),
//! as of the providers' SDKs of late 2026 (anthropic 2.14, openai 3.57,
//! google-genai 3.6) and their documentation; `profile::lookup` takes the
//! first of a kind's rows that matches. It is the starting point only:
//! what a Models API reports, what a server refuses and what `cutline
//! probe` finds are laid over it (`llm::learned`).

use enumset::{EnumSet, enum_set};

use super::{Api, Effort, Native, Profile, ThinkingForm, TokenField};

/// One row of a provider's spec: model-id prefixes (lower case; "" matches
/// any model) and the profile.
pub struct Row {
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

/// No effort levels.
pub const NO_EFFORT: EnumSet<Effort> = EnumSet::empty();
