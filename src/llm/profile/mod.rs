//! Model profiles: what a model accepts on the wire, as data.
//!
//! A [`Profile`] is the seed: a row of the kind's spec (`llm::ProviderSpec`,
//! in the provider's folder; [`table::Row`]) looked up by model id, brought
//! up to date with what each provider's SDK says of its
//! current models. It is never the last word. What the provider's Models API
//! reports, what servers refused (and `cutline probe` found) and the
//! provider's `[provider.profile]` table are [`Overrides`] laid over it, in
//! that order (`llm::learned` keeps the learned ones per base URL and model),
//! so a model that ships next month works after its first refusal, and from
//! the first request in every process after that.

pub mod table;

use enumset::EnumSet;
use serde::{Deserialize, Serialize};

use super::kind::Kind;
pub use crate::prompt::params::Effort;

/// How a model takes a native response schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Native {
    /// No native schema support: structured output goes by prompt.
    None,
    /// Only an object at the root: other roots are wrapped in
    /// `{"items": …}` and unwrapped on receipt (OpenAI `response_format`).
    ObjectRoot,
    /// Any root (llama-server, Ollama, Gemini, vLLM).
    AnyRoot,
    /// Anthropic `output_config.format`: an object root, and keywords it
    /// does not support moved into descriptions, as Anthropic's SDK does.
    OutputConfig,
    /// Anthropic's forced tool whose input schema is the response schema
    /// (object root; Claude models before `output_config`).
    ToolInput,
}

impl Native {
    /// Whether only an object may be at the root.
    pub fn object_root(self) -> bool {
        matches!(self, Self::ObjectRoot | Self::OutputConfig | Self::ToolInput)
    }
}

/// The field that carries the max-token limit (OpenAI chat only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenField {
    /// `max_tokens` (compatible servers, every other wire).
    MaxTokens,
    /// `max_completion_tokens` (OpenAI proper; the only one reasoning models take).
    MaxCompletionTokens,
}

impl TokenField {
    /// The JSON field name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxTokens => "max_tokens",
            Self::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// Which OpenAI endpoint a model answers on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `/chat/completions`.
    #[default]
    Chat,
    /// `/responses` (the only one some models take: o1-pro, gpt-5-pro, …).
    Responses,
}

/// A form of thinking a model takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, enumset::EnumSetType)]
#[serde(rename_all = "snake_case")]
#[enumset(no_super_impls, serialize_repr = "list")]
pub enum ThinkingForm {
    /// A token budget: Anthropic `{type: enabled, budget_tokens}`, Gemini
    /// 2.5 `thinkingBudget`, Ollama `think`.
    Budget,
    /// Anthropic `{type: adaptive}`: the model decides, steered by
    /// `output_config.effort`.
    Adaptive,
    /// Gemini 3 `thinkingLevel`.
    Level,
}

/// What one model accepts: a row of capabilities, so plain flags.
#[allow(
    clippy::struct_excessive_bools,
    reason = "a row of independent capabilities, each a yes or no"
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// The table row that matched (for messages and records).
    pub family: &'static str,
    /// Accepts a `temperature` when one is configured.
    pub temperature: bool,
    /// The wire's default temperature 0 is sent: the model honours it and
    /// its maker does not advise against it. False for current Claude
    /// (no sampling parameter unless configured) and Gemini 3 (Google keeps
    /// it at 1.0, lower can loop): those runs use the model's default and
    /// are not greedy.
    pub greedy: bool,
    /// Accepts `top_p`.
    pub top_p: bool,
    /// Takes `temperature` and `top_p` in one request (Claude 4.x does not).
    pub sampling_together: bool,
    /// Takes sampling parameters only at effort `none` (OpenAI gpt-5.1+).
    pub sampling_needs_no_effort: bool,
    /// Accepts stop sequences (false: cutline applies them to the text).
    pub stop: bool,
    /// The max-token field.
    pub token_field: TokenField,
    /// Native structured output.
    pub native: Native,
    /// Spends output tokens on reasoning before the visible answer.
    pub reasons: bool,
    /// Takes a GBNF grammar (llama.cpp), so a JSONL answer can be
    /// constrained line by line.
    pub grammar: bool,
    /// Takes an assistant prefill (a conversation that ends with the
    /// answer so far), where the wire has one.
    pub prefill: bool,
    /// The thinking forms it takes.
    pub thinking: EnumSet<ThinkingForm>,
    /// The effort levels it takes (empty: no effort parameter).
    pub effort: EnumSet<Effort>,
    /// A level it does not take is sent as the nearest one it does
    /// (Ollama's `think` has four words, so `minimal` goes as `low`), rather
    /// than left off; `none` is never rounded up into thinking.
    pub effort_nearest: bool,
    /// Which OpenAI endpoint it answers on.
    pub api: Api,
    /// When its maker retires it, when known (`YYYY-MM-DD`).
    pub retires: Option<&'static str>,
}

/// The profile of `model` on `kind`: the first of its spec's rows that
/// matches (the open default when none does).
pub fn lookup(kind: Kind, model: &str) -> Profile {
    let lower = model.to_ascii_lowercase();
    // `models/gemini-2.5-pro`, `openai/gpt-5`: the last segment names it.
    let id = lower.rsplit('/').next().unwrap_or(&lower);
    let spec = kind.spec();
    let mut p = spec
        .rows
        .iter()
        .find(|r| r.prefixes.iter().any(|p| id.starts_with(p)))
        .map_or(table::OPEN, |r| r.profile);
    if let Some((_, date)) = spec.retired.iter().find(|(ids, _)| ids.contains(&id)) {
        p.retires = Some(date);
    }
    p
}

/// Settings laid over a profile: the provider's `[provider.profile]`
/// table, and what was learned of a model (its Models API, refusals,
/// `cutline probe`). `None` keeps the profile's value.
#[allow(
    clippy::struct_field_names,
    reason = "the fields mirror the capabilities they override, by name"
)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    /// Accepts `temperature`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<bool>,
    /// Sends the wire's default temperature 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub greedy: Option<bool>,
    /// Accepts `top_p`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<bool>,
    /// Takes `temperature` and `top_p` together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_together: Option<bool>,
    /// Accepts stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<bool>,
    /// The max-token field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_field: Option<TokenField>,
    /// Native structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<Native>,
    /// Anthropic: `output_config` (true) or the forced tool (false); the
    /// older spelling of `native`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_config: Option<bool>,
    /// Reasons before answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasons: Option<bool>,
    /// Takes an assistant prefill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<bool>,
    /// The thinking forms it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<EnumSet<ThinkingForm>>,
    /// The effort levels it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<EnumSet<Effort>>,
    /// The OpenAI endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
}

impl Overrides {
    /// `later`'s settings over these.
    #[must_use]
    pub fn then(self, later: &Self) -> Self {
        Self {
            temperature: later.temperature.or(self.temperature),
            greedy: later.greedy.or(self.greedy),
            top_p: later.top_p.or(self.top_p),
            sampling_together: later.sampling_together.or(self.sampling_together),
            stop: later.stop.or(self.stop),
            token_field: later.token_field.or(self.token_field),
            native: later.native.or(self.native),
            output_config: later.output_config.or(self.output_config),
            reasons: later.reasons.or(self.reasons),
            prefill: later.prefill.or(self.prefill),
            thinking: later.thinking.or(self.thinking),
            effort: later.effort.or(self.effort),
            api: later.api.or(self.api),
        }
    }

    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

impl Profile {
    /// This profile with `o`'s settings in place of its own; a configured
    /// profile says so in its family.
    #[must_use]
    pub fn with(self, o: &Overrides) -> Self {
        let mut p = self.over(o);
        if !o.is_empty() {
            p.family = "configured";
        }
        p
    }

    /// This profile with `o`'s settings in place of its own, keeping its
    /// family (what was learned refines the row; it does not replace it).
    #[must_use]
    pub fn over(mut self, o: &Overrides) -> Self {
        self.temperature = o.temperature.unwrap_or(self.temperature);
        self.greedy = o.greedy.unwrap_or(self.greedy) && self.temperature;
        self.top_p = o.top_p.unwrap_or(self.top_p);
        self.sampling_together = o.sampling_together.unwrap_or(self.sampling_together);
        self.stop = o.stop.unwrap_or(self.stop);
        self.token_field = o.token_field.unwrap_or(self.token_field);
        if let Some(oc) = o.output_config {
            self.native = if oc { Native::OutputConfig } else { Native::ToolInput };
        }
        self.native = o.native.unwrap_or(self.native);
        self.reasons = o.reasons.unwrap_or(self.reasons);
        self.prefill = o.prefill.unwrap_or(self.prefill);
        self.thinking = o.thinking.unwrap_or(self.thinking);
        self.effort = o.effort.unwrap_or(self.effort);
        self.api = o.api.unwrap_or(self.api);
        self
    }
}

/// A request parameter a server can refuse and cutline can do without.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    /// `temperature`: the model's default is used instead.
    Temperature,
    /// `top_p`: the model's default is used instead.
    TopP,
    /// Stop sequences: applied by cutline to the streamed text instead.
    Stop,
    /// Reasoning effort: the model's default is used instead.
    Effort,
    /// A thinking configuration: the model's default is used instead.
    Thinking,
    /// The max-token limit: the server's own applies instead.
    MaxTokens,
}

impl Param {
    /// The word used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Temperature => "temperature",
            Self::TopP => "top_p",
            Self::Stop => "stop",
            Self::Effort => "effort",
            Self::Thinking => "thinking",
            Self::MaxTokens => "max_tokens",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        let f = |k, m| lookup(k, m).family;
        assert_eq!(f(Kind::Openai, "gpt-5-mini"), "openai-reasoning");
        assert_eq!(f(Kind::Openai, "o3-2025-04-16"), "openai-reasoning");
        assert_eq!(f(Kind::Openai, "gpt-5.1"), "openai-reasoning-effort-none");
        assert_eq!(f(Kind::Openai, "gpt-6-astra"), "openai-reasoning-effort-none");
        assert_eq!(f(Kind::Openai, "gpt-5-chat-latest"), "openai-chat");
        assert_eq!(f(Kind::Openai, "gpt-4.1-mini"), "openai-chat");
        assert_eq!(f(Kind::Openai, "gpt-4o"), "openai-chat");
        assert_eq!(f(Kind::Openai, "o9-preview"), "openai");
        assert!(lookup(Kind::Openai, "o9-preview").effort.contains(Effort::High));
        assert_eq!(f(Kind::Openai, "o3-pro"), "openai-responses-only");
        assert_eq!(f(Kind::Openai, "gpt-5.5-pro-2026-04-23"), "openai-responses-only");
        assert_eq!(lookup(Kind::Openai, "gpt-5-codex").api, Api::Responses);
        let retires = |m| lookup(Kind::Openai, m).retires;
        assert_eq!(retires("gpt-5"), Some("2026-12-11"));
        assert_eq!(retires("o3"), Some("2026-12-11"));
        assert_eq!(retires("gpt-5-mini-2025-08-07"), Some("2026-12-11"));
        assert_eq!(retires("gpt-4.1-nano"), Some("2026-10-23"));
        assert_eq!(retires("o4-mini"), Some("2026-10-23"));
        assert_eq!(retires("o1"), Some("2026-10-23"));
        assert_eq!(retires("gpt-3.5-turbo"), Some("2026-10-23"));
        assert_eq!(retires("gpt-4.1-mini"), Some("2027-01-14"));
        assert_eq!(retires("gpt-5.1"), Some("2027-04-01"));
        assert_eq!(retires("gpt-5.2"), None, "a date names its ids, not a family");
        assert_eq!(f(Kind::Anthropic, "claude-sonnet-4-5-20250929"), "claude-4.5");
        assert_eq!(lookup(Kind::Anthropic, "claude-sonnet-4-5").retires, Some("2026-11-30"));
        assert_eq!(f(Kind::Anthropic, "claude-opus-4-6"), "claude-4.6");
        assert_eq!(f(Kind::Anthropic, "claude-opus-4-8"), "claude-current");
        assert_eq!(f(Kind::Anthropic, "claude-fable-5"), "claude-current");
        assert_eq!(f(Kind::Anthropic, "claude-3-5-haiku-latest"), "claude-3");
        assert_eq!(f(Kind::Anthropic, "claude-nova-9"), "claude");
        assert_eq!(f(Kind::Gemini, "models/gemini-2.5-flash"), "gemini-2.5");
        assert_eq!(f(Kind::Gemini, "gemini-3-pro-preview"), "gemini-3");
        assert_eq!(f(Kind::LlamaServer, "anything"), "llama-server");
        assert!(lookup(Kind::LlamaServer, "anything").grammar);
        assert!(!lookup(Kind::OpenaiCompatible, "anything").grammar);
        assert_eq!(f(Kind::OpenaiCompatible, "deepseek/deepseek-r1"), "open-reasoning");
    }

    #[test]
    fn current_claude_takes_no_sampling_and_no_prefill() {
        let p = lookup(Kind::Anthropic, "claude-opus-4-8");
        assert!(!p.temperature && !p.top_p && !p.greedy && !p.prefill);
        assert_eq!(p.thinking, EnumSet::only(ThinkingForm::Adaptive));
        assert!(p.effort.contains(Effort::Xhigh));
        let unknown = lookup(Kind::Anthropic, "claude-nova-9");
        assert!(unknown.temperature && !unknown.greedy, "sent only when configured");
        let gemini3 = lookup(Kind::Gemini, "gemini-3-flash-preview");
        assert!(gemini3.temperature && !gemini3.greedy);
        assert_eq!(gemini3.thinking, EnumSet::only(ThinkingForm::Level));
    }

    #[test]
    fn overrides_lay_over_in_order() {
        let p = lookup(Kind::OpenaiCompatible, "m").with(&Overrides {
            stop: Some(false),
            ..Overrides::default()
        });
        assert!(!p.stop && p.temperature);
        assert_eq!(p.family, "configured");
        let learned = Overrides {
            temperature: Some(false),
            ..Overrides::default()
        };
        let p = lookup(Kind::Ollama, "m").over(&learned);
        assert!(!p.temperature && !p.greedy, "no temperature, so no greedy default");
        assert_eq!(p.family, "ollama");
        let both = learned.then(&Overrides {
            temperature: Some(true),
            prefill: Some(false),
            ..Overrides::default()
        });
        assert_eq!((both.temperature, both.prefill), (Some(true), Some(false)));
        let tool = lookup(Kind::Anthropic, "claude-opus-4-8").with(&Overrides {
            output_config: Some(false),
            ..Overrides::default()
        });
        assert_eq!(tool.native, Native::ToolInput);
    }
}
