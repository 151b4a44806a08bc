//! The wire protocol a provider speaks: as configured (`Kind`) and as runs
//! record it (`WireKind`). Its own module at the bottom of `llm`, so that
//! profiles, parameters and wires can name a kind without depending on the
//! config file's reader. Neither type lists the providers: each
//! provider's spec declares its `Kind` and `WireKind` constants beside it,
//! and the words are read from the list `llm::PROVIDERS` (the parent's own
//! item, so no wire is imported here).

use serde::{Deserialize, Serialize};

/// The wire protocol of a configured provider: its config word. Each
/// provider's spec declares its own, as an associated constant next to the
/// spec (`Kind::Openai` in `openai/spec.rs`), so a new provider adds no
/// variant here; the constants still name a kind as a value and in a
/// `match` (the derived equality is structural over the word). What each
/// kind is (its defaults, profile rows, how it is built) is its provider's
/// spec (`llm::ProviderSpec`, in the provider's folder), found with
/// [`Kind::spec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kind(&'static str);

/// How many config words there are, older spellings included.
const WORD_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < super::PROVIDERS.len() {
        n += 1 + super::PROVIDERS[i].aliases.len();
        i += 1;
    }
    n
};

/// The config words in `llm::PROVIDERS`' order, each followed by its older
/// spellings: what an unknown word's error lists, as it always has.
const WORDS: [&str; WORD_COUNT] = {
    let mut out = [""; WORD_COUNT];
    let (mut i, mut n) = (0, 0);
    while i < super::PROVIDERS.len() {
        out[n] = super::PROVIDERS[i].kind.0;
        n += 1;
        let mut a = 0;
        while a < super::PROVIDERS[i].aliases.len() {
            out[n] = super::PROVIDERS[i].aliases[a];
            n += 1;
            a += 1;
        }
        i += 1;
    }
    out
};

/// A kind no spec registers: words and defaults empty, no rows.
const UNREGISTERED: super::ProviderSpec = super::ProviderSpec {
    kind: Kind(""),
    aliases: &[],
    records: None,
    base_url: None,
    key_env: None,
    needs_model: false,
    model: None,
    max_tokens: None,
    rows: &[],
    retired: &[],
    build: None,
    options: &[],
};

impl Kind {
    /// The kind a spec declares by its config word; only a spec names one
    /// (a word no spec registers would have no spec).
    pub(crate) const fn named(word: &'static str) -> Self {
        Self(word)
    }

    /// Its provider's spec (`llm::PROVIDERS`).
    pub fn spec(self) -> &'static super::ProviderSpec {
        super::PROVIDERS
            .iter()
            .find(|s| s.kind == self)
            .unwrap_or(&UNREGISTERED)
    }

    /// The kind a config word (or an older spelling) names.
    pub fn from_word(word: &str) -> Option<Self> {
        super::PROVIDERS
            .iter()
            .find(|s| s.kind.0 == word || s.aliases.contains(&word))
            .map(|s| s.kind)
    }

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The base URL when the config gives none.
    pub fn default_base_url(self) -> Option<&'static str> {
        self.spec().base_url
    }

    /// The key variable when the config names none (`None`: no key needed).
    pub fn default_key_env(self) -> Option<&'static str> {
        self.spec().key_env
    }

    pub(super) fn needs_model(self) -> bool {
        self.spec().needs_model
    }
}

impl Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Word;
        impl serde::de::Visitor<'_> for Word {
            type Value = Kind;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("variant identifier")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Kind, E> {
                Kind::from_word(v).ok_or_else(|| E::unknown_variant(v, &WORDS))
            }
        }
        d.deserialize_str(Word)
    }
}

/// The wire protocol a provider speaks, as runs record it. The words a
/// provider records are declared by its spec (`ProviderSpec::records`), as
/// associated constants next to it (`WireKind::Openai` in
/// `openai/spec.rs`); a word no spec records (a test double's, or a wire's
/// from a later cutline in an old session) is kept as it is, so every
/// session reads back and writes the same bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum WireKind {
    /// A word a provider's spec records.
    Known(KnownWire),
    /// Any other word, kept.
    Other(String),
}

/// A word a provider's spec records; only a spec makes one, so a `Known`
/// word always reads back as itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KnownWire(&'static str);

impl WireKind {
    /// The wire a spec declares by the word its runs record.
    pub(crate) const fn recorded(word: &'static str) -> Self {
        Self::Known(KnownWire(word))
    }

    /// The word runs record.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Known(KnownWire(w)) => w,
            Self::Other(w) => w,
        }
    }
}

impl From<&str> for WireKind {
    fn from(w: &str) -> Self {
        super::PROVIDERS
            .iter()
            .filter_map(|s| s.records.as_ref())
            .find(|k| k.as_str() == w)
            .map_or_else(|| Self::Other(w.to_owned()), Clone::clone)
    }
}

impl From<String> for WireKind {
    fn from(w: String) -> Self {
        match Self::from(w.as_str()) {
            Self::Other(_) => Self::Other(w),
            known @ Self::Known(_) => known,
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
    use super::{Kind, WireKind};

    #[test]
    fn every_kind_has_its_one_spec_and_reads_back_from_its_words() {
        let all = [
            Kind::Openai,
            Kind::OpenaiCompatible,
            Kind::Anthropic,
            Kind::Gemini,
            Kind::Ollama,
            Kind::LlamaServer,
            Kind::Local,
            Kind::Replay,
            Kind::Trustgraph,
        ];
        assert_eq!(crate::llm::PROVIDERS.len(), all.len());
        for k in all {
            assert_eq!(crate::llm::PROVIDERS.iter().filter(|s| s.kind == k).count(), 1, "{k:?}");
            assert_eq!(k.spec().kind, k);
            assert_eq!(Kind::from_word(k.as_str()), Some(k));
            for a in k.spec().aliases {
                assert_eq!(Kind::from_word(a), Some(k));
            }
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(serde_json::from_str::<Kind>(&json).unwrap(), k);
        }
        let err = serde_json::from_str::<Kind>("\"gpt\"").unwrap_err().to_string();
        assert!(
            err.starts_with(
                "unknown variant `gpt`, expected one of `openai`, `openai-compatible`, `openai_compatible`, \
                 `anthropic`, `gemini`, `ollama`, `llama-server`, `llama_server`, `local`, `replay`, `trustgraph`"
            ),
            "{err}"
        );
    }

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
