//! Export to TrustGraph's formats. STUB: to be implemented.

use serde_json::{Value, json};

use super::PromptConfig;

/// A TrustGraph single-prompt object `{"prompt","response-type","schema"}`.
pub fn to_trustgraph_prompt(p: &PromptConfig) -> Value {
    json!({"prompt": p.template, "response-type": p.response_type.as_str(), "schema": p.schema})
}

/// A TrustGraph config bundle of `prompts` with a shared `system`.
pub fn to_trustgraph_bundle(prompts: &[PromptConfig], system: &str) -> Value {
    let _ = (prompts, system);
    json!({})
}
