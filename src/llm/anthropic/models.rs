//! Anthropic's Models API: `GET {base}/v1/models/{model}` reports, per
//! model, which thinking types and effort levels it takes, whether it has
//! structured outputs, and its lifecycle (`active`, `deprecated`,
//! `retired`, with `deprecated_at` and `retires_at`). cutline reads it once
//! per model (`llm::learned` keeps the answer a week), so a model released
//! after this build is fitted right from its first request.

use enumset::EnumSet;
use serde_json::Value;

use super::API_VERSION;
use crate::llm::learned::ModelsApi;
use crate::llm::profile::{Effort, Native, Overrides, ThinkingForm};
use crate::llm::wire::{Auth, Endpoint};

/// Ask the Models API about `endpoint`'s model; `Ok(None)` when the server
/// has no such endpoint or model (a proxy, an older gateway).
pub fn describe(endpoint: Endpoint) -> crate::llm::Describe {
    Box::pin(async move {
        let url = format!("{}/v1/models/{}", endpoint.base_url, endpoint.model);
        let v = endpoint
            .get_json(&url, Auth::Header("x-api-key"), &[("anthropic-version", API_VERSION)])
            .await?;
        Ok(v.map(|v| read(&v, crate::llm::learned::now_ms())))
    })
}

/// What a `ModelInfo` says, read at `now_ms`.
pub fn read(v: &Value, now_ms: u64) -> ModelsApi {
    let caps = v.get("capabilities");
    let supported = |p: &str| {
        caps.and_then(|c| c.pointer(p))
            .and_then(|s| s.get("supported"))
            .and_then(Value::as_bool)
    };
    let thinking = supported("/thinking").map(|on| {
        let mut forms = EnumSet::new();
        if on {
            for (key, form) in [("enabled", ThinkingForm::Budget), ("adaptive", ThinkingForm::Adaptive)] {
                if supported(&format!("/thinking/types/{key}")) == Some(true) {
                    forms |= form;
                }
            }
        }
        forms
    });
    let effort = supported("/effort").map(|on| {
        if !on {
            return EnumSet::new();
        }
        Effort::ALL
            .into_iter()
            .filter(|e| supported(&format!("/effort/{}", e.as_str())) == Some(true))
            .collect()
    });
    let native = supported("/structured_outputs").map(|on| if on { Native::OutputConfig } else { Native::ToolInput });
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    ModelsApi {
        fetched_ms: now_ms,
        facts: Overrides {
            native,
            thinking,
            effort,
            ..Overrides::default()
        },
        lifecycle: text("lifecycle"),
        deprecated_at: text("deprecated_at"),
        retires_at: text("retires_at"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn capabilities_become_facts() {
        let info = json!({
            "id": "claude-sonnet-4-5", "type": "model", "lifecycle": "deprecated",
            "deprecated_at": "2026-06-01T00:00:00Z", "retires_at": "2026-11-30T00:00:00Z",
            "capabilities": {
                "thinking": {"supported": true, "types": {"enabled": {"supported": false}, "adaptive": {"supported": true}, "disabled": {"supported": true}, "between_tools": {"supported": true}}},
                "effort": {"supported": true, "low": {"supported": true}, "medium": {"supported": true}, "high": {"supported": true}, "max": {"supported": false}, "xhigh": null},
                "structured_outputs": {"supported": true}
            }
        });
        let m = read(&info, 7);
        assert_eq!(m.facts.thinking, Some(EnumSet::only(ThinkingForm::Adaptive)));
        assert_eq!(m.facts.effort, Some(Effort::Low | Effort::Medium | Effort::High));
        assert_eq!(m.facts.native, Some(Native::OutputConfig));
        assert_eq!(m.retires_at.as_deref(), Some("2026-11-30T00:00:00Z"));
        assert_eq!(read(&json!({"id": "x"}), 7).facts, Overrides::default(), "says nothing");
    }
}
