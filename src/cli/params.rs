//! The command line's generation settings, shared by `run` and `eval`: the
//! highest level of the run precedence (command line, then prompt config,
//! provider config, model profile, wire default), and the provider
//! registry, read once per process.

use std::sync::OnceLock;

use super::out::CliError;
use crate::llm::params::{Layer, Structured};
use crate::llm::registry::Registry;

/// Settings that override the prompt's and the provider's.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Sampling {
    /// Temperature (default: the prompt's, the provider's, else 0 where the
    /// model takes one).
    #[arg(long, value_parser = parse_temperature)]
    pub temperature: Option<f32>,
    /// Nucleus sampling `top_p` (0–1).
    #[arg(long, value_parser = parse_top_p)]
    pub top_p: Option<f32>,
    /// A stop sequence (repeatable; replaces the prompt's). `\n` and `\t`
    /// are read as newline and tab.
    #[arg(long = "stop", value_name = "TEXT")]
    pub stop: Vec<String>,
    /// Send no stop sequences, whatever the prompt says.
    #[arg(long, conflicts_with = "stop")]
    pub no_stop: bool,
    /// Reasoning effort: none, minimal, low, medium, high, xhigh or max
    /// (OpenAI `reasoning_effort`, Anthropic `output_config.effort`, Gemini 3
    /// `thinkingLevel`, Ollama `think`); a model that takes no such level
    /// runs without it, and the record says so.
    #[arg(long, value_parser = parse_effort)]
    pub effort: Option<crate::llm::params::Effort>,
    /// A thinking budget in tokens (Anthropic `budget_tokens`, at least
    /// 1024 and below the limit; Gemini 2.5 `thinkingBudget`; Ollama
    /// `think`); a model that takes only adaptive thinking or a level gets
    /// that instead, and the record says so.
    #[arg(long, value_name = "TOKENS")]
    pub thinking_budget: Option<u32>,
    /// An extra request header `Name: value` (repeatable; replaces a
    /// configured header of the same name).
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
}

impl Sampling {
    /// The command line's level, with `max_tokens` and `structured`.
    pub fn layer(&self, max_tokens: Option<u32>, structured: Option<Structured>) -> Layer {
        Layer {
            temperature: self.temperature,
            top_p: self.top_p,
            stop: if self.no_stop {
                Some(Vec::new())
            } else if self.stop.is_empty() {
                None
            } else {
                Some(
                    self.stop
                        .iter()
                        .map(|s| s.replace("\\n", "\n").replace("\\t", "\t"))
                        .collect(),
                )
            },
            max_tokens,
            structured,
            effort: self.effort,
            thinking_budget: self.thinking_budget,
        }
    }
}

fn parse_temperature(s: &str) -> Result<f32, String> {
    s.parse::<f32>()
        .ok()
        .filter(|t| (0.0..=2.0).contains(t))
        .ok_or_else(|| format!("{s:?} is not a temperature between 0 and 2"))
}

fn parse_top_p(s: &str) -> Result<f32, String> {
    s.parse::<f32>()
        .ok()
        .filter(|t| (0.0..=1.0).contains(t))
        .ok_or_else(|| format!("{s:?} is not a top_p between 0 and 1"))
}

fn parse_effort(s: &str) -> Result<crate::llm::params::Effort, String> {
    crate::llm::params::Effort::parse(s)
        .ok_or_else(|| format!("{s:?} is not an effort: none, minimal, low, medium, high, xhigh or max"))
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| "a header is `Name: value`".to_owned())?;
    let k = k.trim();
    if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("{k:?} is not a header name"));
    }
    Ok((k.to_owned(), v.trim().to_owned()))
}

/// The providers of `cutline.toml` and the user config, read on first use
/// and kept for the rest of the process.
pub fn registry() -> Result<&'static Registry, CliError> {
    registry_loaded()
}

/// `--provider WORD` as a choice: `local`, `replay`, or a provider
/// `cutline.toml` configures. A name none configures is a usage error
/// (exit 2) naming the ones that are, not a provider that failed.
pub fn choice(word: &str) -> Result<crate::llm::registry::Choice, CliError> {
    use crate::llm::registry::Choice;
    let choice = Choice::parse(word);
    if let Choice::Named(name) = &choice {
        let config = registry()?.config();
        if config.get(name).is_none() {
            let known: Vec<&str> = config.providers.iter().map(|p| p.name.as_str()).collect();
            return Err(CliError::new(
                super::out::Category::Usage,
                format!(
                    "unknown provider {name:?}: use `local`, `replay` or one configured in cutline.toml (configured: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
    }
    Ok(choice)
}

fn registry_loaded() -> Result<&'static Registry, CliError> {
    static REGISTRY: OnceLock<Result<Registry, crate::llm::config::ProvidersFileError>> = OnceLock::new();
    REGISTRY
        .get_or_init(Registry::load)
        .as_ref()
        .map_err(|e| CliError::from(e.clone()))
}
