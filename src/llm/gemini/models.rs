//! Gemini's Models API: `GET {base}/v1beta/models/{id}` (`Model` in the
//! google-genai SDK: `thinking`, `temperature`, `maxTemperature`, `topP`,
//! `topK`, `outputTokenLimit`). Asked only for a model no table row knows
//! by name: what it says then sets that model's defaults (a thinking model
//! keeps its own temperature, Google's guidance being 1.0, and takes
//! effort as a thinking level), read once and kept with what was learned.
//! A model the table knows keeps the table's word.

use enumset::{EnumSet, enum_set};
use reqwest::Method;
use serde_json::Value;

use crate::llm::kind::Kind;
use crate::llm::learned::ModelsApi;
use crate::llm::models_api::{self, Ask};
use crate::llm::profile::{Effort, Overrides, ThinkingForm};
use crate::llm::wire::json::Body;
use crate::llm::wire::{Auth, Endpoint};

/// The table's row for a model no other row names.
const GENERIC: &str = "gemini";

/// Whether the Models API is asked about `model`: no row knows it by name.
pub fn asks(model: &str) -> bool {
    models_api::asks(Kind::Gemini, GENERIC, model)
}

/// Ask the Models API about `endpoint`'s model; `Ok(None)` when it does not
/// know it.
pub fn describe(endpoint: Endpoint) -> crate::llm::Describe {
    let model = endpoint.model.trim_start_matches("models/");
    let ask = Ask {
        method: Method::GET,
        url: format!("{}/v1beta/models/{model}", endpoint.base_url),
        body: Body::Empty,
        auth: Auth::Header("x-goog-api-key"),
    };
    models_api::describe(endpoint, ask, read)
}

/// What a `Model` says, read at `now_ms`: a thinking model is not sent
/// temperature 0 and takes a thinking level or budget, effort as a level;
/// a model without thinking is sent none. Unsaid, nothing is assumed.
pub fn read(v: &Value, now_ms: u64) -> ModelsApi {
    let thinking = Overrides {
        greedy: Some(false),
        reasons: Some(true),
        thinking: Some(enum_set!(ThinkingForm::Level | ThinkingForm::Budget)),
        effort: Some(enum_set!(Effort::Minimal | Effort::Low | Effort::Medium | Effort::High)),
        ..Overrides::default()
    };
    let plain = Overrides {
        reasons: Some(false),
        thinking: Some(EnumSet::empty()),
        effort: Some(EnumSet::empty()),
        ..Overrides::default()
    };
    models_api::by_thinking(v.get("thinking").and_then(Value::as_bool), thinking, plain, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_thinking_model_keeps_its_temperature_and_takes_a_level() {
        let v = json!({"name": "models/gemini-5-flash", "temperature": 1.0, "maxTemperature": 2.0, "topP": 0.95, "topK": 64, "thinking": true, "outputTokenLimit": 65536});
        let a = read(&v, 7);
        assert_eq!(a.fetched_ms, 7);
        assert_eq!((a.facts.greedy, a.facts.reasons), (Some(false), Some(true)));
        assert!(a.facts.thinking.unwrap().contains(ThinkingForm::Level));
        assert_eq!(
            read(&json!({"thinking": false}), 0).facts.effort,
            Some(EnumSet::empty())
        );
        assert!(read(&json!({"name": "models/x"}), 0).facts.is_empty());
        assert!(asks("gemini-5-flash") && asks("models/gemma-4"));
        assert!(!asks("gemini-3-pro-preview") && !asks("gemini-2.5-flash"));
    }
}
