//! Generation settings a cutline TOML prompt may carry (`temperature`,
//! `top-p`, `max-tokens`, `structured`): the "prompt" level of the run
//! precedence (command line > prompt > provider > model profile > wire).
//! TrustGraph's formats have no such keys.

use serde_json::Value;

/// A structured-output choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Structured {
    /// The provider's native schema support.
    Native,
    /// The schema added to the system prompt.
    Prompt,
    /// No structured output.
    Off,
}

impl Structured {
    /// The config word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Prompt => "prompt",
            Self::Off => "off",
        }
    }
}

/// How much a reasoning model thinks before it answers: OpenAI's
/// `reasoning_effort` / Responses `reasoning.effort`, Anthropic's
/// `output_config.effort`, Gemini 3's `thinkingLevel`, Ollama's `think`
/// level. At small limits a reasoning model can spend the whole budget
/// thinking, so the JSON/JSONL comparison needs it settable.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize, enumset::EnumSetType,
)]
#[serde(rename_all = "snake_case")]
#[enumset(no_super_impls, serialize_repr = "list")]
pub enum Effort {
    /// No reasoning (OpenAI gpt-5.1+ then take sampling parameters).
    None,
    /// The least reasoning a model allows.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high.
    Xhigh,
    /// The most a model allows.
    Max,
}

impl Effort {
    /// Every level, lowest first.
    pub const ALL: [Self; 7] = [
        Self::None,
        Self::Minimal,
        Self::Low,
        Self::Medium,
        Self::High,
        Self::Xhigh,
        Self::Max,
    ];

    /// The config and wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }

    /// The level a word names.
    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == word)
    }
}

/// The settings; `None` leaves a parameter to the lower levels.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunParams {
    /// Sampling temperature (0–2).
    pub temperature: Option<f32>,
    /// Nucleus sampling (0–1).
    pub top_p: Option<f32>,
    /// Max tokens to generate.
    pub max_tokens: Option<u32>,
    /// Structured output.
    pub structured: Option<Structured>,
    /// Reasoning effort.
    pub effort: Option<Effort>,
}

/// The TOML keys these settings use.
pub const KEYS: &[&str] = &["temperature", "top-p", "max-tokens", "structured", "effort"];

/// A generation setting the file gives wrong: the cause of a
/// `file:line:col` message (the loader adds the place).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// A number out of its range (or not a number).
    #[error("`{key}` must be a number between {lo} and {hi}")]
    Range {
        /// The setting.
        key: String,
        /// Its least value.
        lo: f64,
        /// Its greatest value.
        hi: f64,
    },
    /// `max-tokens` not a positive integer.
    #[error("`max-tokens` must be a positive integer")]
    MaxTokens,
    /// `structured` not one of its words.
    #[error("`structured` must be one of: native, prompt, off")]
    Structured,
    /// `effort` not one of its words.
    #[error("`effort` must be one of: none, minimal, low, medium, high, xhigh, max")]
    Effort,
    /// Not a generation setting at all.
    #[error("`{0}` is not a generation setting")]
    Unknown(String),
}

/// Set the setting `key` from its TOML value.
pub fn set(p: &mut RunParams, key: &str, v: &Value) -> Result<(), ParamError> {
    let number = |lo: f64, hi: f64| {
        v.as_f64()
            .filter(|x| (lo..=hi).contains(x))
            .map(|x| {
                #[allow(
                    clippy::cast_possible_truncation,
                    reason = "a sampling parameter: f32 is the precision providers take"
                )]
                let f = x as f32;
                f
            })
            .ok_or_else(|| ParamError::Range {
                key: key.to_owned(),
                lo,
                hi,
            })
    };
    match key {
        "temperature" => p.temperature = Some(number(0.0, 2.0)?),
        "top-p" => p.top_p = Some(number(0.0, 1.0)?),
        "max-tokens" => {
            let n = v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or(ParamError::MaxTokens)?;
            p.max_tokens = Some(n);
        }
        "structured" => {
            p.structured = Some(match v.as_str() {
                Some("native") => Structured::Native,
                Some("prompt") => Structured::Prompt,
                Some("off") => Structured::Off,
                _ => return Err(ParamError::Structured),
            });
        }
        "effort" => {
            p.effort = Some(v.as_str().and_then(Effort::parse).ok_or(ParamError::Effort)?);
        }
        other => return Err(ParamError::Unknown(other.to_owned())),
    }
    Ok(())
}

/// The settings as TOML lines (`key = value`), in [`KEYS`] order.
pub fn toml_lines(p: &RunParams) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(t) = p.temperature {
        out.push(("temperature", short(t)));
    }
    if let Some(t) = p.top_p {
        out.push(("top-p", short(t)));
    }
    if let Some(n) = p.max_tokens {
        out.push(("max-tokens", n.to_string()));
    }
    if let Some(s) = p.structured {
        out.push(("structured", format!("\"{}\"", s.as_str())));
    }
    if let Some(e) = p.effort {
        out.push(("effort", format!("\"{}\"", e.as_str())));
    }
    out
}

/// An `f32` written as its shortest decimal that reads back the same.
fn short(x: f32) -> String {
    let s = format!("{x}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_and_write_back() {
        let mut p = RunParams::default();
        set(&mut p, "temperature", &json!(0.3)).unwrap();
        set(&mut p, "top-p", &json!(1)).unwrap();
        set(&mut p, "max-tokens", &json!(512)).unwrap();
        set(&mut p, "structured", &json!("native")).unwrap();
        assert_eq!(
            toml_lines(&p),
            vec![
                ("temperature", "0.3".to_owned()),
                ("top-p", "1.0".to_owned()),
                ("max-tokens", "512".to_owned()),
                ("structured", "\"native\"".to_owned())
            ]
        );
        assert_eq!(
            set(&mut p, "temperature", &json!(3)).unwrap_err().to_string(),
            "`temperature` must be a number between 0 and 2"
        );
        assert_eq!(set(&mut p, "max-tokens", &json!(0)), Err(ParamError::MaxTokens));
        assert_eq!(set(&mut p, "structured", &json!("maybe")), Err(ParamError::Structured));
    }
}
