//! TrustGraph's prompt formats, in and out.
//!
//! - A single prompt: `{"prompt": "...", "response-type": "jsonl", "schema": {...}}`.
//! - A config bundle: the `prompt` config type as TrustGraph stores it, where
//!   every value is a JSON-encoded *string*: `system` (a string),
//!   `template-index` (a list of ids) and `template.<id>` (a prompt object).
//!
//! Exports write what TrustGraph's own tools write (`tg-set-prompt` encodes
//! with Python's `json.dumps`), so a bundle loaded and exported unchanged is
//! byte-for-byte the same.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::PromptConfig;

/// A TrustGraph single-prompt object `{"prompt","response-type","schema"}`
/// (plus an `object-schema` the prompt kept, so a round trip changes nothing)
/// (`schema` left out when the prompt has none).
pub fn to_trustgraph_prompt(p: &PromptConfig) -> Value {
    let mut m = Map::new();
    m.insert("prompt".into(), Value::String(p.template.clone()));
    m.insert("response-type".into(), Value::String(p.response_type.as_str().into()));
    if let Some(s) = &p.schema {
        m.insert("schema".into(), s.clone());
    }
    if let Some(s) = &p.object_schema {
        m.insert("object-schema".into(), s.clone());
    }
    Value::Object(m)
}

/// A TrustGraph config bundle of `prompts` with a shared `system`: every
/// value a JSON-encoded string, each template object as `tg-set-prompt`
/// stores it (`id`, `prompt`, `response-type`, `schema`). An empty `system`
/// is left out rather than written as `""`: merged into a live config store,
/// `"system": ""` would blank the workspace's system prompt for every
/// prompt.
pub fn to_trustgraph_bundle(prompts: &[PromptConfig], system: &str) -> Value {
    let mut m = Map::new();
    if !system.is_empty() {
        m.insert("system".into(), Value::String(encode(&Value::String(system.into()))));
    }
    let ids: Vec<Value> = prompts.iter().map(|p| Value::String(p.id.clone())).collect();
    m.insert("template-index".into(), Value::String(encode(&Value::Array(ids))));
    for p in prompts {
        m.insert(format!("template.{}", p.id), Value::String(encode(&bundle_entry(p))));
    }
    Value::Object(m)
}

/// The object stored (encoded) under `template.<id>`.
pub fn bundle_entry(p: &PromptConfig) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), Value::String(p.id.clone()));
    if let Value::Object(rest) = to_trustgraph_prompt(p) {
        m.extend(rest);
    }
    Value::Object(m)
}

/// A file `put_in_bundle` cannot write into: not a TrustGraph bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the file is not a TrustGraph bundle")]
pub struct NotABundle;

/// Put `p` into a bundle file's JSON in place, keeping its shape: the
/// `prompt` config type of a config dump or configurator `config.json`, or
/// a bare bundle; encoded strings (config store) or raw values
/// (configurator), whichever the file holds. An existing `template.<id>` is
/// replaced where it stands and every other key, the index order and
/// `system` are left as they are; a new id is appended to `template-index`
/// when the bundle has one (a 2.8 bundle without an index gets none).
/// `system` is written only when `with_system` and it differs.
pub fn put_in_bundle(root: &mut Value, p: &PromptConfig, with_system: bool) -> Result<(), NotABundle> {
    let is_bundle =
        |o: &Map<String, Value>| o.contains_key("template-index") || o.keys().any(|k| k.starts_with("template."));
    // `tg-export-workspace-config`'s shape (and `cutline tg pull`'s): the
    // bundle is the `prompt` type under `config`.
    let exported = root
        .get("config")
        .and_then(|c| c.get("prompt"))
        .and_then(Value::as_object)
        .is_some_and(is_bundle);
    let nested = root.get("prompt").and_then(Value::as_object).is_some_and(is_bundle);
    let bundle = if exported {
        root.get_mut("config").and_then(|c| c.get_mut("prompt"))
    } else if nested {
        root.get_mut("prompt")
    } else {
        Some(root)
    };
    let Some(Value::Object(bundle)) = bundle else {
        return Err(NotABundle);
    };
    let encoded = bundle
        .iter()
        .find(|(k, _)| k.starts_with("template"))
        .is_none_or(|(_, v)| v.is_string());
    let wrap = |v: Value| if encoded { Value::String(encode(&v)) } else { v };
    let read = |v: &Value| -> Option<Value> {
        if encoded {
            v.as_str().and_then(|s| serde_json::from_str(s).ok())
        } else {
            Some(v.clone())
        }
    };
    let key = format!("template.{}", p.id);
    let mut entry = bundle_entry(p);
    // An entry saved in place keeps its own shape: TrustGraph's values carry
    // no `id` (the key names the prompt), and adding one would show as a
    // change in every diff against the deployment.
    let had_id = bundle.get(&key).and_then(read).is_none_or(|v| v.get("id").is_some());
    if !had_id && let Value::Object(m) = &mut entry {
        m.remove("id");
    }
    bundle.insert(key, wrap(entry));
    if let Some(ix) = bundle.get("template-index") {
        let mut ids = read(ix).and_then(|v| v.as_array().cloned()).unwrap_or_default();
        if !ids.iter().any(|v| v.as_str() == Some(p.id.as_str())) {
            ids.push(Value::String(p.id.clone()));
            bundle.insert("template-index".into(), wrap(Value::Array(ids)));
        }
    }
    if with_system {
        let current = bundle
            .get("system")
            .and_then(read)
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| super::DEFAULT_SYSTEM.to_owned());
        if current != p.system {
            bundle.insert("system".into(), wrap(Value::String(p.system.clone())));
        }
    }
    Ok(())
}

/// JSON text as Python's `json.dumps` writes it by default (`", "` and
/// `": "` separators, non-ASCII escaped): how TrustGraph encodes config values.
pub fn encode(v: &Value) -> String {
    let mut out = String::new();
    write_py(&mut out, v);
    out
}

fn write_py(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_py_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py_str(out, k);
                out.push_str(": ");
                write_py(out, item);
            }
            out.push('}');
        }
    }
}

fn write_py_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::load::OBJECT_SCHEMA_WARNING;
    use crate::prompt::{ResponseType, SourceFormat, load_bytes};
    use serde_json::json;

    fn err(label: &str, text: &str) -> String {
        load_bytes(label, text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn python_encoding() {
        let v = json!({"a": [1, "é\n\"😀"], "b": {}});
        assert_eq!(encode(&v), r#"{"a": [1, "\u00e9\n\"\ud83d\ude00"], "b": {}}"#);
    }

    #[test]
    fn single_prompt() {
        let text = r#"{"prompt": "Hi {{text}}", "response-type": "jsonl", "schema": {"type": "object"}}"#;
        let (ps, w) = load_bytes("p/extract-definitions.json", text.as_bytes()).unwrap();
        assert!(w.is_empty());
        let p = &ps[0];
        assert_eq!(p.id, "extract-definitions");
        assert_eq!(p.response_type, ResponseType::Jsonl);
        assert_eq!(p.origin.format, SourceFormat::TrustgraphPrompt);
        assert_eq!(to_trustgraph_prompt(p), serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn single_prompt_without_schema_omits_it() {
        let (ps, _) = load_bytes("a.json", br#"{"prompt": "x"}"#).unwrap();
        assert_eq!(
            to_trustgraph_prompt(&ps[0]),
            json!({"prompt": "x", "response-type": "text"})
        );
    }

    #[test]
    fn json_syntax_error_position() {
        assert_eq!(
            err("a.json", "{\n  \"prompt\": \"x\",\n  \"response-type\" \"json\"\n}"),
            "a.json:3:19: invalid JSON: expected `:`"
        );
    }

    #[test]
    fn neither_format() {
        assert_eq!(
            err("a.json", r#"{"template": "x"}"#),
            "a.json: not a TrustGraph prompt: expected a `prompt` key (a single prompt) or `template-index` / \
             `template.<id>` keys (a config bundle)"
        );
    }

    #[test]
    fn encoded_value_error_names_key() {
        let text = "{\n  \"template-index\": \"[\\\"a\\\"]\",\n  \"template.a\": \"{\\\"prompt\\\": \\\"x\\\",}\"\n}";
        assert_eq!(
            err("b.json", text),
            "b.json:3: template.a: invalid JSON at column 16 of the encoded value: trailing comma"
        );
    }

    #[test]
    fn bundle_entry_errors_are_prefixed() {
        let entry = encode(&json!({"prompt": "x", "response-type": "xml"}));
        let text = serde_json::to_string_pretty(&json!({"template-index": "[\"a\"]", "template.a": entry})).unwrap();
        assert_eq!(
            err("b.json", &text),
            "b.json:3: template.a: unknown response-type \"xml\"; expected one of: text, json, jsonl"
        );
    }

    #[test]
    fn single_object_schema_warns() {
        let text = "{\n\"prompt\": \"x\",\n\"response-type\": \"jsonl\",\n\"object-schema\": {\"type\": \"object\"}\n}";
        let (ps, w) = load_bytes("a.json", text.as_bytes()).unwrap();
        assert_eq!(ps[0].schema, None);
        assert_eq!(ps[0].object_schema, Some(json!({"type": "object"})));
        assert_eq!(w[0].to_string(), format!("a.json:4: {OBJECT_SCHEMA_WARNING}"));
    }

    #[test]
    fn bundle_round_trip_exact() {
        let a = json!({"id": "a", "prompt": "Define {{text}}", "response-type": "jsonl", "schema": {"type": "object"}});
        let b = json!({"id": "b", "prompt": "Über {{text}}", "response-type": "text"});
        let bundle = json!({
            "system": encode(&json!("Be precise.")),
            "template-index": encode(&json!(["a", "b"])),
            "template.a": encode(&a),
            "template.b": encode(&b),
        });
        let text = serde_json::to_string_pretty(&bundle).unwrap();
        let (ps, w) = load_bytes("bundle.json", text.as_bytes()).unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0].system, "Be precise.");
        assert_eq!(ps[1].template, "Über {{text}}");
        assert_eq!(to_trustgraph_bundle(&ps, "Be precise."), bundle);
    }

    #[test]
    fn index_without_template() {
        let text = "{\"template-index\": \"[\\\"a\\\"]\"}";
        // TrustGraph 2.8.13 and older read the index and fail on it.
        let old = crate::prompt::load_bytes_for("b.json", text.as_bytes(), crate::prompt::TgLoader::Indexed)
            .unwrap_err()
            .to_string();
        assert_eq!(
            old,
            "b.json:1: template-index lists `a` but there is no `template.a` key"
        );
        // Current releases do not read it: no template, nothing to load.
        assert_eq!(err("b.json", text), "b.json: the bundle holds no templates");
    }

    #[test]
    fn unindexed_template_loaded_or_skipped_by_version() {
        let text = serde_json::to_string_pretty(&json!({
            "template-index": "[\"a\"]",
            "template.a": "{\"prompt\": \"x\"}",
            "template.b": "{\"prompt\": \"y\"}",
        }))
        .unwrap();
        let (ps, w) = load_bytes("b.json", text.as_bytes()).unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!(
            w[1].to_string(),
            "b.json:4: `template.b` is not in template-index: TrustGraph loads it (2.8.13 and older skip it; add it \
             to the index for them)"
        );
        let (ps, w) =
            crate::prompt::load_bytes_for("b.json", text.as_bytes(), crate::prompt::TgLoader::Indexed).unwrap();
        assert_eq!(ps.len(), 1);
        assert_eq!(
            w[1].to_string(),
            "b.json:4: `template.b` is not in template-index: TrustGraph 2.8.13 and older do not load it (skipped)"
        );
    }

    #[test]
    fn mixed_shapes_rejected() {
        let text = "{\"template-index\": \"[\\\"a\\\"]\",\n\"template.a\": {\"prompt\": \"x\"}}";
        assert_eq!(
            err("b.json", text),
            "b.json:2: `template.a` is raw JSON but `template-index` is a JSON-encoded string; a bundle holds \
             either the config store's encoded strings or the configurator's raw values"
        );
    }

    #[test]
    fn configurator_raw_values_with_other_types() {
        let text = "{\n\"tool\": {\"t\": {\"system\": 1}},\n\"prompt\": {\n\"system\": \"Sys {{ x }}\",\n\
                    \"template-index\": [\"b\", \"a\"],\n\"template.a\": {\"prompt\": \"A\", \"response-type\": \"text\"},\n\
                    \"template.b\": {\"prompt\": \"B\", \"response-type\": \"json\", \"schema\": {\"type\": \"array\"}}\n}}";
        let (ps, w) = load_bytes("config.json", text.as_bytes()).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let ids: Vec<&str> = ps.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["b", "a"]);
        assert_eq!(ps[0].system, "Sys {{ x }}");
        assert_eq!(ps[0].origin.format, SourceFormat::TrustgraphConfig);
        assert_eq!(ps[0].origin.indexed, Some(true));
        // Errors name the key's line after `prompt`, not the tool's `system`.
        let bad = text.replace("\"Sys {{ x }}\"", "[1]");
        assert_eq!(
            err("config.json", &bad),
            "config.json:4: system: the value is an array, expected a string"
        );
    }

    #[test]
    fn show_config_dump_with_version_line_and_no_index() {
        let inner = json!({"template.a": encode(&json!({"prompt": "A"}))});
        let text = format!(
            "Version: 12\n{}",
            serde_json::to_string_pretty(&json!({"prompt": inner})).unwrap()
        );
        let (ps, w) = load_bytes("dump.json", text.as_bytes()).unwrap();
        assert_eq!(ps[0].system, crate::prompt::DEFAULT_SYSTEM);
        assert_eq!(ps[0].origin.indexed, Some(false));
        // Current TrustGraph loads every `template.<id>`: no index needed.
        assert_eq!(
            w.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["dump.json: no `system`: TrustGraph's prompt service uses \"Be helpful.\", and so does cutline"]
        );
        // A syntax error keeps file positions (the Version line counts).
        assert_eq!(
            err("dump.json", "Version: 1\n{\"prompt\": {,}}"),
            "dump.json:2:13: invalid JSON: key must be a string"
        );
    }

    #[test]
    fn ids_are_names_not_paths() {
        let text = "{\n\"template-index\": [\"../x\"],\n\"template.../x\": {\"prompt\": \"A\"}}";
        assert_eq!(
            err("c.json", text),
            "c.json:2: template-index: \"../x\" is not a prompt id: it holds a path separator (an id is a name, \
             never a path)"
        );
        let text = "{\n\"template./x\": {\"prompt\": \"A\"}}";
        assert_eq!(
            err("c.json", text),
            "c.json:2: template./x: \"/x\" is not a prompt id: it holds a path separator (an id is a name, never \
             a path)"
        );
        assert_eq!(
            err("s.json", "{\"prompt\": \"x\",\n\"id\": \"..\"}"),
            "s.json:2: \"..\" is not a prompt id: it starts with `.` (an id is a name, never a path)"
        );
        assert_eq!(
            err("t.toml", "prompt = \"x\"\nid = \"a\\\\b\"\n"),
            "t.toml:2:6: \"a\\\\b\" is not a prompt id: it holds a path separator (an id is a name, never a path)"
        );
    }

    #[test]
    fn put_in_bundle_keeps_shape_order_and_system() {
        let mut raw = json!({"prompt": {"system": "S", "template-index": ["a", "b"],
            "template.a": {"id": "a", "prompt": "A", "response-type": "text"},
            "template.b": {"id": "b", "prompt": "B", "response-type": "text"}}, "tool": {}});
        let mut p = PromptConfig {
            id: "a".into(),
            template: "A2".into(),
            system: "S".into(),
            ..PromptConfig::default()
        };
        put_in_bundle(&mut raw, &p, true).unwrap();
        assert_eq!(
            raw["prompt"]["template.a"],
            json!({"id": "a", "prompt": "A2", "response-type": "text"})
        );
        let keys: Vec<&String> = raw["prompt"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["system", "template-index", "template.a", "template.b"]);
        p.id = "c".into();
        p.system = "T".into();
        put_in_bundle(&mut raw, &p, false).unwrap();
        assert_eq!(raw["prompt"]["template-index"], json!(["a", "b", "c"]));
        assert_eq!(raw["prompt"]["system"], "S");
        let mut enc = json!({"system": encode(&json!("S")), "template.a": encode(&json!({"prompt": "A"}))});
        put_in_bundle(&mut enc, &p, true).unwrap();
        assert_eq!(enc["system"], encode(&json!("T")));
        assert_eq!(enc["template.c"], encode(&bundle_entry(&p)));
        assert!(enc.get("template-index").is_none(), "a 2.8 bundle gets no index");
    }

    #[test]
    fn wrapped_config_dump() {
        let text = r#"{"prompt": {"template-index": "[\"a\"]", "template.a": "{\"prompt\": \"x\"}"}}"#;
        let (ps, _) = load_bytes("dump.json", text.as_bytes()).unwrap();
        assert_eq!(ps[0].id, "a");
        assert_eq!(ps[0].origin.format, SourceFormat::TrustgraphBundle);
    }
}
