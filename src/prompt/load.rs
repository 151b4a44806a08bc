//! Loading prompt configs from bytes. STUB: to be implemented.

use super::{ConfigError, PromptConfig, Warning};

/// Load every prompt in a file's bytes (a bundle holds many).
pub fn load_bytes(label: &str, bytes: &[u8]) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    let _ = bytes;
    Err(ConfigError {
        file: label.into(),
        line: None,
        column: None,
        cause: "not implemented".into(),
    })
}

/// Load one cutline TOML prompt.
pub fn load_toml(label: &str, text: &str) -> Result<(PromptConfig, Vec<Warning>), ConfigError> {
    let _ = text;
    Err(ConfigError {
        file: label.into(),
        line: None,
        column: None,
        cause: "not implemented".into(),
    })
}

/// Serialise a prompt as cutline TOML.
pub fn to_toml(p: &PromptConfig) -> String {
    let _ = p;
    String::new()
}
