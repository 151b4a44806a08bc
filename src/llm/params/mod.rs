//! Which value of each request parameter a run sends, and why.
//!
//! Precedence, highest first: the command line (or the workbench's own
//! controls), the prompt config, the provider config, the model profile, the
//! wire default. Each level is a [`Layer`] of optional values; [`resolve`]
//! takes the first that is set and remembers its [`Level`], then
//! [`Settings::fit`] makes the choice fit the model's [`Profile`]: a
//! parameter the model refuses is left off (stop sequences are then applied
//! by cutline to the text) and an object-root-only native schema path gets a
//! wrapped schema. Every such change is an [`Adjustment`] the run records.
//! Extra headers follow the same order without a level of their own here:
//! the wire's, then the provider config's, then the command line's
//! (`Request::headers`), each replacing a header of the same name.
//! Pure: values in, values out.

mod adjust;
mod fit;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use adjust::Adjustment;
pub use fit::Fitted;

use super::structured::Path;
pub use crate::prompt::params::Effort;

/// Where a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The command line or the workbench's controls.
    Cli,
    /// The prompt config.
    Prompt,
    /// The provider's entry in `cutline.toml`.
    Provider,
    /// The model profile.
    Profile,
    /// The wire format's default (or nothing sent).
    Wire,
}

pub use crate::prompt::params::Structured;

/// The values one level sets (`None`: this level says nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layer {
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
    /// Stop sequences (`Some(vec![])` says "none").
    pub stop: Option<Vec<String>>,
    /// Max tokens to generate.
    pub max_tokens: Option<u32>,
    /// Structured output.
    pub structured: Option<Structured>,
    /// Reasoning effort.
    pub effort: Option<Effort>,
    /// A thinking budget in tokens.
    pub thinking_budget: Option<u32>,
}

impl Layer {
    /// The prompt config's level: its generation settings and its stop
    /// sequences (an empty list says nothing).
    pub fn of_prompt(p: &crate::prompt::PromptConfig) -> Self {
        Self {
            temperature: p.params.temperature,
            top_p: p.params.top_p,
            stop: (!p.stop.is_empty()).then(|| p.stop.clone()),
            max_tokens: p.params.max_tokens,
            structured: p.params.structured,
            effort: p.params.effort,
            thinking_budget: None,
        }
    }
}

/// A chosen value and the level it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chosen<T> {
    /// The value (`None`: nothing is sent).
    pub value: Option<T>,
    /// Where it came from.
    pub from: Level,
}

/// The values a run sends, each with its level (before fitting the
/// profile: what was asked for).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Temperature.
    pub temperature: Chosen<f32>,
    /// `top_p`.
    pub top_p: Chosen<f32>,
    /// Stop sequences.
    pub stop: Chosen<Vec<String>>,
    /// Max tokens.
    pub max_tokens: Chosen<u32>,
    /// Structured output.
    pub structured: Chosen<Structured>,
    /// Reasoning effort.
    #[serde(default = "unset_wire", skip_serializing_if = "Chosen::is_unset")]
    pub effort: Chosen<Effort>,
    /// Thinking budget.
    #[serde(default = "unset_wire", skip_serializing_if = "Chosen::is_unset")]
    pub thinking_budget: Chosen<u32>,
}

fn unset_wire<T>() -> Chosen<T> {
    unset(Level::Wire)
}

impl<T> Chosen<T> {
    /// Nothing set at any level.
    pub fn is_unset(&self) -> bool {
        self.value.is_none() && self.from == Level::Wire
    }
}

/// The defaults of the wire itself: temperature 0 (greedy decoding keeps
/// replay exact) and, for a wire that requires a limit, that limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WireDefaults {
    /// The max-token limit the wire requires when none is set (Anthropic).
    pub max_tokens: Option<u32>,
}

fn unset<T>(from: Level) -> Chosen<T> {
    Chosen { value: None, from }
}

fn first<T: Clone>(levels: [(Option<&T>, Level); 3]) -> Option<Chosen<T>> {
    levels.into_iter().find_map(|(v, from)| {
        v.map(|v| Chosen {
            value: Some(v.clone()),
            from,
        })
    })
}

/// Take each parameter from the highest level that sets it.
pub fn resolve(cli: &Layer, prompt: &Layer, provider: &Layer, wire: WireDefaults) -> Settings {
    let layers = [(cli, Level::Cli), (prompt, Level::Prompt), (provider, Level::Provider)];
    let temperature = first(layers.map(|(l, from)| (l.temperature.as_ref(), from))).unwrap_or(Chosen {
        value: Some(0.0),
        from: Level::Wire,
    });
    let top_p = first(layers.map(|(l, from)| (l.top_p.as_ref(), from))).unwrap_or(unset(Level::Wire));
    let stop = first(layers.map(|(l, from)| (l.stop.as_ref(), from))).unwrap_or(unset(Level::Wire));
    let max_tokens = first(layers.map(|(l, from)| (l.max_tokens.as_ref(), from))).unwrap_or(Chosen {
        value: wire.max_tokens,
        from: Level::Wire,
    });
    let structured = first(layers.map(|(l, from)| (l.structured.as_ref(), from))).unwrap_or(Chosen {
        value: Some(Structured::Off),
        from: Level::Wire,
    });
    let effort = first(layers.map(|(l, from)| (l.effort.as_ref(), from))).unwrap_or(unset(Level::Wire));
    let thinking_budget =
        first(layers.map(|(l, from)| (l.thinking_budget.as_ref(), from))).unwrap_or(unset(Level::Wire));
    Settings {
        temperature,
        top_p,
        stop,
        max_tokens,
        structured,
        effort,
        thinking_budget,
    }
}

/// The structured path a run takes.
pub fn structured_path(s: &Settings, schema: Option<&Value>, json_response: bool) -> Path {
    match (s.structured.value, schema) {
        (Some(Structured::Native), Some(_)) if json_response => Path::Native,
        (Some(Structured::Native), Some(_)) => Path::Grammar,
        (Some(Structured::Prompt), Some(_)) if json_response => Path::Prompt,
        _ => Path::None,
    }
}

/// Whether a schema's root is an object (what OpenAI and Anthropic need).
pub fn is_object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

pub use super::structured::{WRAP_KEY, unwrap, wrap};

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::llm::kind::Kind;
    use crate::llm::profile::{Param, lookup};

    fn layer(t: Option<f32>, max: Option<u32>) -> Layer {
        Layer {
            temperature: t,
            max_tokens: max,
            ..Layer::default()
        }
    }

    #[test]
    fn the_highest_level_that_sets_a_value_wins() {
        let wire = WireDefaults { max_tokens: Some(4096) };
        let s = resolve(
            &layer(None, None),
            &layer(Some(0.5), None),
            &layer(Some(0.3), Some(9)),
            wire,
        );
        assert_eq!((s.temperature.value, s.temperature.from), (Some(0.5), Level::Prompt));
        assert_eq!((s.max_tokens.value, s.max_tokens.from), (Some(9), Level::Provider));
        let s = resolve(&layer(Some(0.9), None), &Layer::default(), &Layer::default(), wire);
        assert_eq!(s.temperature.from, Level::Cli);
        assert_eq!((s.max_tokens.value, s.max_tokens.from), (Some(4096), Level::Wire));
        let s = resolve(
            &Layer::default(),
            &Layer::default(),
            &Layer::default(),
            WireDefaults::default(),
        );
        assert_eq!((s.temperature.value, s.temperature.from), (Some(0.0), Level::Wire));
        assert_eq!(s.structured.value, Some(Structured::Off));
    }

    #[test]
    fn a_reasoning_model_gets_no_temperature_and_client_side_stop() {
        let prompt = Layer {
            stop: Some(vec!["\n\n".into()]),
            ..Layer::default()
        };
        let s = resolve(&Layer::default(), &prompt, &Layer::default(), WireDefaults::default());
        let f = s.fit(&lookup(Kind::Openai, "gpt-5-mini"), Path::None, None);
        assert_eq!(f.temperature, None);
        assert!(f.stop.is_empty());
        assert_eq!(f.client_stop, vec!["\n\n".to_owned()]);
        let not_sent = |param| Adjustment::NotSent {
            param,
            family: "openai-reasoning".into(),
        };
        assert_eq!(f.adjustments, vec![not_sent(Param::Temperature), not_sent(Param::Stop)]);
        let s = resolve(
            &layer(Some(0.2), None),
            &Layer::default(),
            &Layer::default(),
            WireDefaults::default(),
        );
        let f = s.fit(&lookup(Kind::Openai, "o3"), Path::None, None);
        assert_eq!(f.temperature, None);
        assert!(matches!(
            f.adjustments[0],
            Adjustment::NotSent {
                param: Param::Temperature,
                ..
            }
        ));
    }

    #[test]
    fn array_roots_are_wrapped_for_object_root_models() {
        let schema = json!({"type": "array", "items": {"$ref": "#/$defs/x"}, "$defs": {"x": {"type": "string"}}});
        let s = resolve(
            &Layer {
                structured: Some(Structured::Native),
                ..Layer::default()
            },
            &Layer::default(),
            &Layer::default(),
            WireDefaults::default(),
        );
        let f = s.fit(&lookup(Kind::Openai, "gpt-4.1"), Path::Native, Some(&schema));
        assert_eq!(f.path, Path::NativeWrapped);
        let w = f.native_schema.unwrap();
        assert_eq!(w["properties"]["items"]["type"], "array");
        assert_eq!(w["$defs"]["x"]["type"], "string");
        assert!(w["properties"]["items"].get("$defs").is_none());
        let f = s.fit(&lookup(Kind::Gemini, "gemini-2.0-flash"), Path::Native, Some(&schema));
        assert_eq!((f.path, f.native_schema), (Path::Native, Some(schema.clone())));
        assert_eq!(unwrap(&json!({"items": [1]})), Some(&json!([1])));
        assert_eq!(unwrap(&json!({"items": [1], "x": 2})), None);
    }
}
