//! A provider's `Kind` and `WireKind` are declared by its spec (issue 36):
//! every spec in `llm::PROVIDERS` has its own words, and the words read
//! back as the kind they came from, in config files and in records alike.

use std::collections::HashSet;

use cutline::llm::kind::Kind;
use cutline::llm::{PROVIDERS, WireKind};

#[test]
fn every_spec_has_a_distinct_kind_word_and_no_word_is_read_twice() {
    let mut words = HashSet::new();
    for spec in PROVIDERS {
        assert!(!spec.kind.as_str().is_empty(), "a spec with no word");
        assert!(words.insert(spec.kind.as_str()), "{} twice", spec.kind.as_str());
        for alias in spec.aliases {
            assert!(words.insert(alias), "{alias} twice");
        }
    }
}

#[test]
fn each_kind_word_round_trips_through_the_spec_the_config_and_serde() {
    for spec in PROVIDERS {
        let k = spec.kind;
        assert_eq!(k.spec().kind, k);
        assert_eq!(
            (k.spec().aliases, k.spec().base_url, k.spec().key_env),
            (spec.aliases, spec.base_url, spec.key_env)
        );
        assert_eq!(Kind::from_word(k.as_str()), Some(k));
        let json = serde_json::to_string(&k).unwrap();
        assert_eq!(json, format!("\"{}\"", k.as_str()));
        assert_eq!(serde_json::from_str::<Kind>(&json).unwrap(), k);
    }
    assert_eq!(Kind::from_word("gpt"), None);
}

#[test]
fn the_kind_constants_are_the_words_configs_have_always_used() {
    let named = [
        (Kind::Openai, "openai"),
        (Kind::OpenaiCompatible, "openai-compatible"),
        (Kind::Anthropic, "anthropic"),
        (Kind::Gemini, "gemini"),
        (Kind::Ollama, "ollama"),
        (Kind::LlamaServer, "llama-server"),
        (Kind::Local, "local"),
        (Kind::Replay, "replay"),
        (Kind::Trustgraph, "trustgraph"),
    ];
    for (k, w) in named {
        assert_eq!(k.as_str(), w);
        assert_eq!(PROVIDERS.iter().filter(|s| s.kind == k).count(), 1, "{w}");
    }
    assert_eq!(Kind::from_word("openai_compatible"), Some(Kind::OpenaiCompatible));
    assert_eq!(Kind::from_word("llama_server"), Some(Kind::LlamaServer));
}

/// The constants are patterns too, as the enum's variants were.
fn family(k: Kind) -> &'static str {
    match k {
        Kind::Openai | Kind::OpenaiCompatible => "openai",
        Kind::Local | Kind::LlamaServer => "llama",
        _ => "other",
    }
}

#[test]
fn kind_constants_match_in_patterns() {
    assert_eq!(family(Kind::OpenaiCompatible), "openai");
    assert_eq!(family(Kind::Local), "llama");
    assert_eq!(family(Kind::Gemini), "other");
}

#[test]
fn recorded_wire_words_are_distinct_and_read_back_as_the_specs_constants() {
    let recorded: Vec<&WireKind> = PROVIDERS.iter().filter_map(|s| s.records.as_ref()).collect();
    let words: HashSet<&str> = recorded.iter().map(|w| w.as_str()).collect();
    assert_eq!(words.len(), recorded.len(), "a wire word recorded by two specs");
    let named = [
        (WireKind::Openai, "openai"),
        (WireKind::OpenaiCompatible, "openai_compatible"),
        (WireKind::Anthropic, "anthropic"),
        (WireKind::Gemini, "gemini"),
        (WireKind::Ollama, "ollama"),
        (WireKind::LlamaServer, "llama_server"),
        (WireKind::Replay, "replay"),
    ];
    for (k, w) in &named {
        assert_eq!(k.as_str(), *w);
        assert!(recorded.contains(&k), "{w}");
    }
    for w in recorded {
        assert_eq!(&WireKind::from(w.as_str()), w);
        assert_eq!(&WireKind::from(w.as_str().to_owned()), w);
        let json = serde_json::to_string(w).unwrap();
        assert_eq!(json, format!("\"{}\"", w.as_str()));
        assert_eq!(&serde_json::from_str::<WireKind>(&json).unwrap(), w);
    }
    assert_eq!(WireKind::from("llama_server"), WireKind::LlamaServer);
    assert!(matches!(WireKind::from("replay"), WireKind::Replay));
    // A word no spec records (TrustGraph's own, a test double's) is kept.
    for other in ["trustgraph", "mock", "openai-compatible", ""] {
        let k = WireKind::from(other);
        assert_eq!(k, WireKind::Other(other.to_owned()));
        assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{other}\""));
    }
}
