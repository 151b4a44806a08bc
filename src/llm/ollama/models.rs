//! Ollama's model API: `POST {base}/api/show {"model": id}` answers the
//! model's `capabilities` (the ollama SDK's `ShowResponse.capabilities`:
//! `completion`, `tools`, `vision`, `thinking`, …). Asked only for a model
//! no table row knows by name (the catch-all row): whether it thinks then
//! decides what `--effort` sends, so a model without thinking is never
//! sent a `think` it refuses, and a thinking one can be switched off
//! (`think: false`). Read once and kept with what was learned; a model the
//! table knows keeps the table's word.

use enumset::EnumSet;
use reqwest::Method;
use serde_json::{Value, json};

use crate::llm::kind::Kind;
use crate::llm::learned::ModelsApi;
use crate::llm::models_api::{self, Ask};
use crate::llm::profile::Overrides;
use crate::llm::wire::json::Body;
use crate::llm::wire::{Auth, Endpoint};

/// The table's row for a model no other row names.
const GENERIC: &str = "ollama";

/// Whether `/api/show` is asked about `model`: no row knows it by name.
pub fn asks(model: &str) -> bool {
    models_api::asks(Kind::Ollama, GENERIC, model)
}

/// Ask `/api/show` about `endpoint`'s model; `Ok(None)` when Ollama does
/// not have it (404).
pub fn describe(endpoint: Endpoint) -> crate::llm::Describe {
    let ask = Ask {
        method: Method::POST,
        url: format!("{}/api/show", endpoint.base_url),
        body: Body::Json(json!({"model": endpoint.model})),
        auth: Auth::Bearer,
    };
    models_api::describe(endpoint, ask, read)
}

/// What a `ShowResponse` says, read at `now_ms`. Capabilities listed
/// without `thinking`: the model does not think, so no effort is sent.
/// With it: it thinks (effort as the Ollama row takes it). No list (an
/// Ollama before capabilities were reported): nothing is assumed.
pub fn read(v: &Value, now_ms: u64) -> ModelsApi {
    let caps = v.get("capabilities").and_then(Value::as_array);
    let thinking = Overrides {
        reasons: Some(true),
        ..Overrides::default()
    };
    let plain = Overrides {
        reasons: Some(false),
        effort: Some(EnumSet::empty()),
        ..Overrides::default()
    };
    let thinks = caps.map(|c| c.iter().any(|x| x.as_str() == Some("thinking")));
    models_api::by_thinking(thinks, thinking, plain, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_decide_thinking_and_silence_assumes_nothing() {
        let thinks = read(&json!({"capabilities": ["completion", "thinking"]}), 3);
        assert_eq!(thinks.fetched_ms, 3);
        assert_eq!((thinks.facts.reasons, thinks.facts.effort), (Some(true), None));
        let plain = read(&json!({"capabilities": ["completion", "tools"]}), 0);
        assert_eq!(
            (plain.facts.reasons, plain.facts.effort),
            (Some(false), Some(EnumSet::empty()))
        );
        assert!(read(&json!({"template": "{{ .Prompt }}"}), 0).facts.is_empty());
        assert!(asks("granite4:tiny") && !asks("qwen3:4b") && !asks("gpt-oss:20b"));
    }
}
