//! The providers files: which are read (see the module docs), reading and
//! merging them, and editing one in place without losing a byte.

use std::path::PathBuf;

use super::{Config, ProvidersFileError, parse};

impl Config {
    /// Read and merge `paths` in order; files that do not exist are skipped.
    pub fn load_from(paths: &[PathBuf]) -> Result<Self, ProvidersFileError> {
        let mut cfg = Self::default();
        for path in paths {
            let text = match crate::limits::read(path)
                .and_then(|b| String::from_utf8(b).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
            {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(ProvidersFileError {
                        path: path.clone(),
                        at: None,
                        message: e.to_string(),
                        source: Some(std::sync::Arc::new(e)),
                    });
                }
            };
            cfg.merge(parse(&text, path)?);
        }
        Ok(cfg)
    }

    /// Read the default files (see the module docs).
    pub fn load() -> Result<Self, ProvidersFileError> {
        if let Some(p) = std::env::var_os("CUTLINE_CONFIG").filter(|v| !v.is_empty()) {
            let p = PathBuf::from(p);
            if !p.is_file() {
                return Err(ProvidersFileError {
                    path: p,
                    at: None,
                    message: "CUTLINE_CONFIG names a file that does not exist".into(),
                    source: None,
                });
            }
            return Self::load_from(&[p]);
        }
        Self::load_from(&default_paths())
    }
}

/// The user's file, then the project's.
pub fn default_paths() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(d) = dirs::config_dir() {
        v.push(d.join("cutline").join("config.toml"));
    }
    v.push(PathBuf::from("cutline.toml"));
    v
}

/// Why a model could not be written into a providers file's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WithModelError {
    /// The text is not TOML (toml_edit's message, without its snippet).
    #[error("{message}")]
    NotToml {
        /// What the parser says.
        message: String,
        /// Byte range of the spot, when known.
        span: Option<std::ops::Range<usize>>,
    },
    /// No `[[provider]]` has this name.
    #[error("no [[provider]] named {0:?}")]
    NoProvider(String),
}

/// `text` (a config file) with the `model` of provider `name` set, every
/// other byte kept (comments, order, spacing): what the workbench writes
/// when a model typed in the picker is saved.
///
/// # Errors
/// The text is not TOML, or has no `[[provider]]` named `name`.
pub fn with_model(text: &str, name: &str, model: &str) -> Result<String, WithModelError> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| WithModelError::NotToml {
            message: e.message().to_owned(),
            span: e.span(),
        })?;
    let entry = doc
        .get_mut("provider")
        .and_then(toml_edit::Item::as_array_of_tables_mut)
        .and_then(|ps| {
            ps.iter_mut()
                .find(|p| p.get("name").and_then(toml_edit::Item::as_str).map(str::trim) == Some(name))
        })
        .ok_or_else(|| WithModelError::NoProvider(name.to_owned()))?;
    entry["model"] = toml_edit::value(model);
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn with_model_sets_one_providers_model_and_keeps_every_other_byte() {
        let text = "# mine\n[keys]\nsweep = [\"s\"]\n\n[[provider]]\nname = \"a\"   # first\nkind = \"openai\"\nmodel = \"gpt-4o\"\n\n[[provider]]\nname = \"b\"\nkind = \"ollama\"\n";
        let out = with_model(text, "a", "gpt-5-mini").unwrap();
        assert_eq!(out, text.replace("model = \"gpt-4o\"", "model = \"gpt-5-mini\""));
        let out = with_model(text, "b", "qwen3:4b").unwrap();
        assert_eq!(out, format!("{text}model = \"qwen3:4b\"\n"));
        let parsed = parse(&out, Path::new("c.toml")).unwrap();
        assert_eq!(parsed[1].model.as_deref(), Some("qwen3:4b"));
        assert_eq!(
            with_model(text, "c", "x").unwrap_err().to_string(),
            "no [[provider]] named \"c\""
        );
        assert!(with_model("[[provider]\n", "a", "x").is_err());
    }
}
