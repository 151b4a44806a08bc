//! Rendering with minijinja. STUB: to be implemented.

use serde_json::{Map, Value};

use super::{ConfigError, PromptConfig};

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rendered {
    /// Rendered system text (empty when the prompt has none).
    pub system: String,
    /// Rendered prompt text.
    pub prompt: String,
}

/// Render `cfg`: globals < prompt terms < `vars`.
pub fn render(
    cfg: &PromptConfig,
    globals: &Map<String, Value>,
    vars: &Map<String, Value>,
) -> Result<Rendered, ConfigError> {
    let _ = (globals, vars);
    Ok(Rendered {
        system: cfg.system.clone(),
        prompt: cfg.template.clone(),
    })
}

/// The variables of the named sample input (default: the first).
pub fn input_vars(cfg: &PromptConfig, name: Option<&str>) -> Result<Map<String, Value>, ConfigError> {
    let _ = name;
    Ok(cfg.inputs.first().map(|i| i.vars.clone()).unwrap_or_default())
}
