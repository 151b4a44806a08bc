//! Model profiles: what a model family accepts on the wire, as data.
//!
//! Hosted models differ in ways that turn a valid request into a 400:
//! OpenAI's reasoning models (gpt-5, o1/o3/o4) refuse `temperature` other
//! than 1, `top_p` and `stop`; OpenAI's `response_format` and Anthropic's
//! `output_config` / forced tool need an object-root schema; only some Claude
//! models take `output_config`. A [`Profile`] says which, looked up by kind
//! and model id in [`TABLE`], overridable per provider in `cutline.toml`
//! (`[provider.profile]`), and adjusted at run time by what a server refused
//! ([`learn`]): the dynamic fallback remembers a refused parameter for the
//! rest of the process.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::config::Kind;

/// How a model takes a native response schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Native {
    /// No native schema support: structured output goes by prompt.
    None,
    /// Only an object at the root: other roots are wrapped in
    /// `{"items": …}` and unwrapped on receipt.
    ObjectRoot,
    /// Any root (llama-server, Ollama, Gemini, vLLM).
    AnyRoot,
}

/// The field that carries the max-token limit (OpenAI only).
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

/// What one model accepts: a row of capabilities, so plain flags.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// The table row that matched (for messages and records).
    pub family: &'static str,
    /// Accepts a `temperature` (false: the model's own default is used).
    pub temperature: bool,
    /// Accepts `top_p`.
    pub top_p: bool,
    /// Accepts stop sequences (false: cutline applies them to the text).
    pub stop: bool,
    /// The max-token field.
    pub token_field: TokenField,
    /// Native structured output.
    pub native: Native,
    /// Anthropic: takes `output_config.format` (else a forced tool).
    pub output_config: bool,
    /// Spends output tokens on reasoning before the visible answer.
    pub reasons: bool,
    /// Takes a GBNF grammar (llama.cpp), so a JSONL answer can be
    /// constrained line by line.
    pub grammar: bool,
}

/// One row of the table: a kind, a model-id prefix (lower case; "" matches
/// any model), and the profile.
pub struct Row {
    /// Wire kinds the row applies to.
    pub kinds: &'static [Kind],
    /// Model-id prefixes (after any `models/` or `vendor/` part).
    pub prefixes: &'static [&'static str],
    /// What those models accept.
    pub profile: Profile,
}

const OPEN: Profile = Profile {
    family: "default",
    temperature: true,
    top_p: true,
    stop: true,
    token_field: TokenField::MaxTokens,
    native: Native::AnyRoot,
    output_config: false,
    reasons: false,
    grammar: false,
};

/// The profiles, first match wins. Facts as of the providers' documentation
/// in late 2026; a provider's `[provider.profile]` table overrides a row.
pub const TABLE: &[Row] = &[
    Row {
        kinds: &[Kind::LlamaServer, Kind::Local],
        prefixes: &[""],
        profile: Profile {
            family: "llama-server",
            grammar: true,
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Openai],
        prefixes: &["gpt-5-chat", "gpt-5.1-chat", "gpt-5.2-chat"],
        profile: Profile {
            family: "openai-chat",
            token_field: TokenField::MaxCompletionTokens,
            native: Native::ObjectRoot,
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Openai],
        prefixes: &["gpt-5", "o1", "o3", "o4"],
        profile: Profile {
            family: "openai-reasoning",
            temperature: false,
            top_p: false,
            stop: false,
            token_field: TokenField::MaxCompletionTokens,
            native: Native::ObjectRoot,
            reasons: true,
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Openai],
        prefixes: &[""],
        profile: Profile {
            family: "openai-chat",
            token_field: TokenField::MaxCompletionTokens,
            native: Native::ObjectRoot,
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Anthropic],
        prefixes: &[
            "claude-opus-4-1",
            "claude-opus-4-5",
            "claude-opus-4-6",
            "claude-opus-4-7",
            "claude-sonnet-4-5",
            "claude-sonnet-4-6",
            "claude-haiku-4-5",
            "claude-opus-5",
            "claude-sonnet-5",
            "claude-haiku-5",
        ],
        profile: Profile {
            family: "claude-structured",
            native: Native::ObjectRoot,
            output_config: true,
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Anthropic],
        prefixes: &[""],
        profile: Profile {
            family: "claude",
            native: Native::ObjectRoot,
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Gemini],
        prefixes: &["gemini-2.5", "gemini-3", "gemini-flash-latest", "gemini-pro-latest"],
        profile: Profile {
            family: "gemini-thinking",
            reasons: true,
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Gemini],
        prefixes: &[""],
        profile: Profile {
            family: "gemini",
            ..OPEN
        },
    },
    Row {
        kinds: &[Kind::Ollama, Kind::OpenaiCompatible],
        prefixes: &["deepseek-r1", "qwq", "qwen3", "gpt-oss", "magistral"],
        profile: Profile {
            family: "open-reasoning",
            reasons: true,
            ..OPEN
        },
    },
];

/// The profile of `model` on `kind` (the open default when no row matches).
pub fn lookup(kind: Kind, model: &str) -> Profile {
    let lower = model.to_ascii_lowercase();
    // `models/gemini-2.5-pro`, `openai/gpt-5`: the last segment names it.
    let id = lower.rsplit('/').next().unwrap_or(&lower);
    TABLE
        .iter()
        .find(|r| r.kinds.contains(&kind) && r.prefixes.iter().any(|p| id.starts_with(p)))
        .map_or(OPEN, |r| r.profile)
}

/// Per-provider overrides from `cutline.toml` (`[provider.profile]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    /// Accepts `temperature`.
    pub temperature: Option<bool>,
    /// Accepts `top_p`.
    pub top_p: Option<bool>,
    /// Accepts stop sequences.
    pub stop: Option<bool>,
    /// The max-token field.
    pub token_field: Option<TokenField>,
    /// Native structured output.
    pub native: Option<Native>,
    /// Anthropic `output_config`.
    pub output_config: Option<bool>,
    /// Reasons before answering.
    pub reasons: Option<bool>,
}

impl Profile {
    /// This profile with `o`'s settings in place of its own.
    #[must_use]
    pub fn with(mut self, o: &Overrides) -> Self {
        let any = o != &Overrides::default();
        self.temperature = o.temperature.unwrap_or(self.temperature);
        self.top_p = o.top_p.unwrap_or(self.top_p);
        self.stop = o.stop.unwrap_or(self.stop);
        self.token_field = o.token_field.unwrap_or(self.token_field);
        self.native = o.native.unwrap_or(self.native);
        self.output_config = o.output_config.unwrap_or(self.output_config);
        self.reasons = o.reasons.unwrap_or(self.reasons);
        if any {
            self.family = "configured";
        }
        self
    }

    /// This profile less what the server refused earlier in the process.
    #[must_use]
    pub fn with_learned(mut self, provider: &str, model: &str) -> Self {
        for p in learned(provider, model) {
            match p {
                Param::Temperature => self.temperature = false,
                Param::TopP => self.top_p = false,
                Param::Stop => self.stop = false,
            }
        }
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
}

impl Param {
    /// The word used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Temperature => "temperature",
            Self::TopP => "top_p",
            Self::Stop => "stop",
        }
    }
}

/// Which droppable parameter a 400 body names, if any: OpenAI's
/// `"param": "temperature"` and "Unsupported parameter: 'stop'", Anthropic's
/// and compatible servers' "Extra inputs are not permitted" with the field
/// (`stop_sequences`, `top_p`), Gemini's "Invalid JSON payload … Unknown name
/// \"stopSequences\"". Only a body that names one of them counts.
pub fn refused_param(status: Option<u16>, body: &str) -> Option<Param> {
    if status != Some(400) && status != Some(422) {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    if let Some(p) = param_field(&lower) {
        return Some(p);
    }
    let refusal = [
        "unsupported parameter",
        "unsupported value",
        "not supported",
        "extra inputs are not permitted",
        "unknown name",
        "does not support",
        "is not allowed",
        "may only be set",
        "only the default",
    ]
    .iter()
    .any(|w| lower.contains(w));
    if !refusal {
        return None;
    }
    let named = |names: &[&str]| names.iter().any(|n| has_word(&lower, n));
    if named(&["temperature"]) {
        Some(Param::Temperature)
    } else if named(&["top_p", "topp"]) {
        Some(Param::TopP)
    } else if named(&["stop", "stop_sequences", "stopsequences"]) {
        Some(Param::Stop)
    } else {
        None
    }
}

/// `"param": "x"` in an OpenAI error body.
fn param_field(lower: &str) -> Option<Param> {
    let v: serde_json::Value = serde_json::from_str(lower).ok()?;
    let p = v.pointer("/error/param")?.as_str()?;
    match p {
        "temperature" => Some(Param::Temperature),
        "top_p" => Some(Param::TopP),
        "stop" => Some(Param::Stop),
        _ => None,
    }
}

/// Whether `name` appears in `text` as a field name does in an error
/// message: a whole word that is quoted (`'stop'`, `"stop"`, `` `stop` ``,
/// `.stop`) or leads a message (`top_p: Extra inputs …`).
fn has_word(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        if before.is_some_and(word) || after.is_some_and(word) {
            return false;
        }
        before.is_some_and(|c| matches!(c, '\'' | '"' | '`' | '.')) || after == Some(':')
    })
}

/// What servers refused in this process: (provider, model, parameter).
static LEARNED: Mutex<Vec<(String, String, Param)>> = Mutex::new(Vec::new());

/// Remember that `provider`'s `model` refused `param`.
pub fn learn(provider: &str, model: &str, param: Param) {
    let mut g = LEARNED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !g.iter().any(|(p, m, q)| p == provider && m == model && *q == param) {
        g.push((provider.to_owned(), model.to_owned(), param));
    }
}

/// What `provider`'s `model` refused earlier in this process.
pub fn learned(provider: &str, model: &str) -> Vec<Param> {
    let g = LEARNED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    g.iter()
        .filter(|(p, m, _)| p == provider && m == model)
        .map(|(_, _, q)| *q)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        assert_eq!(lookup(Kind::Openai, "gpt-5-mini").family, "openai-reasoning");
        assert_eq!(lookup(Kind::Openai, "o3-2025-04-16").family, "openai-reasoning");
        assert_eq!(lookup(Kind::Openai, "gpt-5-chat-latest").family, "openai-chat");
        assert_eq!(lookup(Kind::Openai, "gpt-4.1-mini").family, "openai-chat");
        assert_eq!(
            lookup(Kind::Anthropic, "claude-sonnet-4-5-20250929").family,
            "claude-structured"
        );
        assert_eq!(lookup(Kind::Anthropic, "claude-3-5-haiku-latest").family, "claude");
        assert_eq!(
            lookup(Kind::Gemini, "models/gemini-2.5-flash").family,
            "gemini-thinking"
        );
        assert_eq!(lookup(Kind::LlamaServer, "anything").family, "llama-server");
        assert!(lookup(Kind::LlamaServer, "anything").grammar);
        assert!(!lookup(Kind::OpenaiCompatible, "anything").grammar);
        assert_eq!(
            lookup(Kind::OpenaiCompatible, "deepseek/deepseek-r1").family,
            "open-reasoning"
        );
    }

    #[test]
    fn refused_params_from_real_bodies() {
        let openai = r#"{"error":{"message":"Unsupported value: 'temperature' does not support 0.0 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}"#;
        assert_eq!(refused_param(Some(400), openai), Some(Param::Temperature));
        let stop = r#"{"error":{"message":"Unsupported parameter: 'stop' is not supported with this model.","type":"invalid_request_error","param":"stop","code":"unsupported_parameter"}}"#;
        assert_eq!(refused_param(Some(400), stop), Some(Param::Stop));
        let extra = r#"{"type":"error","error":{"type":"invalid_request_error","message":"top_p: Extra inputs are not permitted"}}"#;
        assert_eq!(refused_param(Some(400), extra), Some(Param::TopP));
        let thinking = r#"{"type":"error","error":{"type":"invalid_request_error","message":"`temperature` may only be set to 1 when thinking is enabled."}}"#;
        assert_eq!(refused_param(Some(400), thinking), Some(Param::Temperature));
        let unrelated = r#"{"error":{"message":"Unsupported parameter: 'logprobs' is not supported; do not stop"}}"#;
        assert_eq!(refused_param(Some(400), unrelated), None, "only a named field counts");
        let extra = r#"{"detail":[{"type":"extra_forbidden","loc":["body","stop_sequences"],"msg":"Extra inputs are not permitted"}]}"#;
        assert_eq!(refused_param(Some(422), extra), Some(Param::Stop));
        let gemini = r#"{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"stopSequences\" at 'generation_config': Cannot find field.","status":"INVALID_ARGUMENT"}}"#;
        assert_eq!(refused_param(Some(400), gemini), Some(Param::Stop));
        assert_eq!(refused_param(Some(401), stop), None);
        assert_eq!(
            refused_param(Some(400), r#"{"error":{"message":"context length exceeded"}}"#),
            None
        );
    }

    #[test]
    fn overrides_and_learned() {
        let p = lookup(Kind::OpenaiCompatible, "m").with(&Overrides {
            stop: Some(false),
            ..Overrides::default()
        });
        assert!(!p.stop && p.temperature);
        assert_eq!(p.family, "configured");
        learn("prov-x", "model-y", Param::TopP);
        learn("prov-x", "model-y", Param::TopP);
        assert_eq!(learned("prov-x", "model-y"), vec![Param::TopP]);
        assert!(!lookup(Kind::Ollama, "m").with_learned("prov-x", "model-y").top_p);
        assert!(lookup(Kind::Ollama, "m").with_learned("prov-x", "other").top_p);
    }
}
