//! The `tg-export-workspace-config` shape: `{"source_workspace",
//! "source_version", "config": {type: {key: value}}}`, every value a
//! string as the config service holds it (a prompt's value is JSON text).
//! `cutline tg pull` writes its prompts in this shape, so the file is both
//! a prompts-directory bundle (the loader reads `config.prompt`) and what
//! TrustGraph's own import takes back. Pure: bytes in, values out.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::ConfigError;
use super::load::check::check_bytes;
use super::tg_load::parse_json;
use crate::output::schema::kind_of;

/// The `prompt` type of an export file, as raw config values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    /// `source_workspace`.
    pub workspace: Option<String>,
    /// `source_version`.
    pub version: Option<u64>,
    /// `config.prompt`: key → value string.
    pub prompts: BTreeMap<String, String>,
}

/// Read an export file's `prompt` type, every value kept as the string it
/// is (a value that is not a string is an error at its key's line; bad
/// bytes, merge-conflict markers and JSON syntax errors name their line).
pub fn read_export(label: &str, bytes: &[u8]) -> Result<Export, ConfigError> {
    let text = check_bytes(label, bytes)?;
    let root = parse_json(label, text)?;
    let Value::Object(root) = root else {
        return Err(ConfigError::new(
            label,
            format!("expected the export's JSON object, found {}", kind_of(&root)),
        ));
    };
    let config = root.get("config").and_then(Value::as_object).ok_or_else(|| {
        ConfigError::new(
            label,
            "not a TrustGraph export: no `config` object (expected {\"source_workspace\", \"source_version\", \
             \"config\": {type: {key: value}}})",
        )
    })?;
    let empty = Map::new();
    let prompt = match config.get(crate::prompt::tg_reload::PROMPT_TYPE) {
        None => &empty,
        Some(Value::Object(p)) => p,
        Some(other) => {
            return Err(at_key(
                label,
                text,
                "prompt",
                format!("`config.prompt` is {}, expected an object of keys", kind_of(other)),
            ));
        }
    };
    let mut prompts = BTreeMap::new();
    for (k, v) in prompt {
        let Value::String(s) = v else {
            return Err(at_key(
                label,
                text,
                k,
                format!(
                    "{k}: the value is {}, expected a string (the config store holds every value as text; a \
                     prompt's is JSON text)",
                    kind_of(v)
                ),
            ));
        };
        prompts.insert(k.clone(), s.clone());
    }
    let version = match root.get("source_version") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    Ok(Export {
        workspace: root.get("source_workspace").and_then(Value::as_str).map(str::to_owned),
        version,
        prompts,
    })
}

/// An export file of one workspace's `prompt` type, keys sorted, two-space
/// indented, ending in a newline.
pub fn write_export(workspace: &str, version: u64, prompts: &BTreeMap<String, String>) -> String {
    let values: Map<String, Value> = prompts
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let mut config = Map::new();
    config.insert(crate::prompt::tg_reload::PROMPT_TYPE.to_owned(), Value::Object(values));
    let mut root = Map::new();
    root.insert("source_workspace".into(), Value::String(workspace.to_owned()));
    root.insert("source_version".into(), Value::from(version));
    root.insert("config".into(), Value::Object(config));
    let mut out = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    out.push('\n');
    out
}

fn at_key(label: &str, text: &str, key: &str, cause: String) -> ConfigError {
    let needle = serde_json::to_string(key).unwrap_or_default();
    match text.find(&format!("{needle}:")).or_else(|| text.find(&needle)) {
        Some(at) => ConfigError::at_offset(label, text.as_bytes(), at, cause),
        None => ConfigError::new(label, cause),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_value_byte_for_byte() {
        let mut p = BTreeMap::new();
        p.insert("system".to_owned(), "\"Be exact.\"".to_owned());
        p.insert(
            "template.a".to_owned(),
            "{\"prompt\": \"{{ text }}\", \"response-type\": \"jsonl\"}".to_owned(),
        );
        let text = write_export("default", 7, &p);
        let back = read_export("x.json", text.as_bytes()).unwrap();
        assert_eq!(back.prompts, p);
        assert_eq!(back.version, Some(7));
        assert_eq!(back.workspace.as_deref(), Some("default"));
        let (loaded, _) = crate::prompt::load_bytes("x.json", text.as_bytes()).unwrap();
        assert_eq!(loaded[0].id, "a");
        assert_eq!(loaded[0].system, "Be exact.");
    }

    #[test]
    fn a_value_that_is_not_a_string_is_named_at_its_line() {
        let text = "{\"source_workspace\": \"w\", \"config\": {\"prompt\": {\n\"template.a\": {\"prompt\": \"x\"}}}}";
        let e = read_export("x.json", text.as_bytes()).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(
            e.message.contains("template.a: the value is an object"),
            "{}",
            e.message
        );
        let e = read_export("x.json", b"{\"config\": {}}\n<<<<<<< HEAD\n").unwrap_err();
        assert!(e.message.contains("merge conflict"), "{}", e.message);
    }
}
