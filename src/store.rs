//! The prompts directory on disk. STUB: to be implemented.

use std::path::Path;

use crate::prompt::{ConfigError, PromptConfig, Warning};

/// Load every prompt file in `dir`; a bad file does not hide the others.
pub fn load_dir(dir: &Path) -> (Vec<PromptConfig>, Vec<ConfigError>, Vec<Warning>) {
    let _ = dir;
    (Vec::new(), Vec::new(), Vec::new())
}

/// Resolve a prompt id (in `dir`) or a path to a config file.
pub fn resolve(reference: &str, dir: &Path) -> Result<PromptConfig, ConfigError> {
    let _ = dir;
    Err(ConfigError {
        file: reference.into(),
        line: None,
        column: None,
        cause: "not implemented".into(),
    })
}
