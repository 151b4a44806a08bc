//! The wire protocol a provider speaks: as configured (`Kind`) and as runs
//! record it (`WireKind`). Its own module at the bottom of `llm`, so that
//! profiles, parameters and wires can name a kind without depending on the
//! config file's reader.

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
    /// A TrustGraph deployment's own prompt service (its gateway's
    /// WebSocket API): the prompt goes by id, the deployment renders it.
    Trustgraph,
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
            Self::Trustgraph => "trustgraph",
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
            Self::Trustgraph => Some("http://localhost:8888"),
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

/// The wire protocol a provider speaks, as runs record it. A word it does
/// not know (a test double's, or a wire's from a later cutline in an old
/// session) is kept as it is, so every session reads back and writes the
/// same bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum WireKind {
    /// llama-server's `/completion` (the local model).
    LlamaServer,
    /// Ollama's `/api/chat`.
    Ollama,
    /// OpenAI's own API.
    Openai,
    /// A server that speaks OpenAI's chat completions.
    OpenaiCompatible,
    /// Anthropic's Messages API.
    Anthropic,
    /// Gemini's `generateContent`.
    Gemini,
    /// A recorded run played back.
    Replay,
    /// Any other word, kept.
    Other(String),
}

impl WireKind {
    const WORDS: [(&'static str, WireKind); 7] = [
        ("llama_server", Self::LlamaServer),
        ("ollama", Self::Ollama),
        ("openai", Self::Openai),
        ("openai_compatible", Self::OpenaiCompatible),
        ("anthropic", Self::Anthropic),
        ("gemini", Self::Gemini),
        ("replay", Self::Replay),
    ];

    /// The word runs record.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Other(w) => w,
            known => Self::WORDS.iter().find(|(_, k)| k == known).map_or("", |(w, _)| w),
        }
    }
}

impl From<&str> for WireKind {
    fn from(w: &str) -> Self {
        Self::WORDS
            .iter()
            .find(|(word, _)| *word == w)
            .map_or_else(|| Self::Other(w.to_owned()), |(_, k)| k.clone())
    }
}

impl From<String> for WireKind {
    fn from(w: String) -> Self {
        match Self::from(w.as_str()) {
            Self::Other(_) => Self::Other(w),
            known => known,
        }
    }
}

impl From<WireKind> for String {
    fn from(k: WireKind) -> Self {
        k.as_str().to_owned()
    }
}

impl std::fmt::Display for WireKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::WireKind;

    #[test]
    fn recorded_words_read_back_and_write_the_same() {
        for w in [
            "llama_server",
            "ollama",
            "openai",
            "openai_compatible",
            "anthropic",
            "gemini",
            "replay",
            "mock",
        ] {
            let k = WireKind::from(w);
            assert_eq!(k.as_str(), w);
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{w}\""));
            assert_eq!(serde_json::from_str::<WireKind>(&json).unwrap(), k);
        }
        assert_eq!(WireKind::from("openai_compatible"), WireKind::OpenaiCompatible);
        assert_eq!(WireKind::from("mock"), WireKind::Other("mock".into()));
    }
}
