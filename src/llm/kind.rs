//! The wire protocol a configured provider speaks. Its own module at the
//! bottom of `llm`, so that profiles, parameters and wires can name a kind
//! without depending on the config file's reader.

use serde::{Deserialize, Serialize};

/// The wire protocol of a configured provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// OpenAI chat completions (`max_completion_tokens`).
    Openai,
    /// vLLM, LM Studio, llama-server's `/v1` and others (`max_tokens`).
    #[serde(alias = "openai_compatible")]
    OpenaiCompatible,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini.
    Gemini,
    /// Ollama's native `/api/chat`.
    Ollama,
    /// llama.cpp's native `/completion` (base models, token pieces).
    #[serde(alias = "llama_server")]
    LlamaServer,
    /// The embedded llama-server, started on first use.
    Local,
    /// A recorded run played back (chosen with `--provider replay`).
    Replay,
}

impl Kind {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::OpenaiCompatible => "openai-compatible",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Ollama => "ollama",
            Self::LlamaServer => "llama-server",
            Self::Local => "local",
            Self::Replay => "replay",
        }
    }

    /// The base URL when the config gives none.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Self::Openai => Some("https://api.openai.com/v1"),
            Self::Anthropic => Some("https://api.anthropic.com"),
            Self::Gemini => Some("https://generativelanguage.googleapis.com"),
            Self::Ollama => Some("http://127.0.0.1:11434"),
            Self::LlamaServer => Some("http://127.0.0.1:8080"),
            Self::OpenaiCompatible | Self::Local | Self::Replay => None,
        }
    }

    /// The key variable when the config names none (`None`: no key needed).
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            Self::Openai => Some("OPENAI_API_KEY"),
            Self::Anthropic => Some("ANTHROPIC_API_KEY"),
            Self::Gemini => Some("GEMINI_API_KEY"),
            _ => None,
        }
    }

    pub(super) fn needs_model(self) -> bool {
        matches!(
            self,
            Self::Openai | Self::OpenaiCompatible | Self::Anthropic | Self::Gemini | Self::Ollama
        )
    }
}
