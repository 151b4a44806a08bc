//! Sample inputs for TrustGraph-format prompts, which have no place for
//! them: a sidecar `<file stem>.inputs.json` beside the prompt file holds
//! `{"<prompt id>": {"<input name>": {"<variable>": <any JSON>}}}`.
//! Pure: the store reads the bytes and hands them in.

use serde_json::Value;

use super::{ConfigError, PromptConfig, SampleInput, Warning};
use crate::output::schema::kind_of;

/// Add the sidecar's inputs to `prompts`; an id no prompt has is a warning.
pub fn apply(label: &str, bytes: &[u8], prompts: &mut [PromptConfig]) -> Result<Vec<Warning>, ConfigError> {
    let text = super::load::check_bytes(label, bytes)?;
    let root = super::tg_load::parse_json(label, text)?;
    let shape = |what: &str, v: &Value| {
        ConfigError::new(
            label,
            format!(
                "{what} must be an object ({{\"<prompt id>\": {{\"<input name>\": {{variables}}}}}}), found {}",
                kind_of(v)
            ),
        )
    };
    let Value::Object(by_id) = &root else {
        return Err(shape("the sidecar", &root));
    };
    let mut warnings = Vec::new();
    for (id, inputs) in by_id {
        let Value::Object(inputs) = inputs else {
            return Err(shape(&format!("`{id}`"), inputs));
        };
        let Some(p) = prompts.iter_mut().find(|p| &p.id == id) else {
            warnings.push(Warning::new(
                label,
                None,
                format!("no prompt `{id}` in the file beside it (ignored)"),
            ));
            continue;
        };
        for (name, vars) in inputs {
            let Value::Object(vars) = vars else {
                return Err(shape(&format!("`{id}`.`{name}`"), vars));
            };
            p.inputs.push(SampleInput {
                name: name.clone(),
                vars: vars.clone(),
            });
        }
    }
    Ok(warnings)
}
