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

use super::load::{OBJECT_SCHEMA_WARNING, describes_array, json_message, stem, syntax_cause};
use super::render::{Part, syntax_check};
use super::{ConfigError, Origin, PromptConfig, ResponseType, SourceFormat, Warning};
use crate::output::schema::{CompiledSchema, kind_of};

/// A TrustGraph single-prompt object `{"prompt","response-type","schema"}`
/// (`schema` left out when the prompt has none).
pub fn to_trustgraph_prompt(p: &PromptConfig) -> Value {
    let mut m = Map::new();
    m.insert("prompt".into(), Value::String(p.template.clone()));
    m.insert("response-type".into(), Value::String(p.response_type.as_str().into()));
    if let Some(s) = &p.schema {
        m.insert("schema".into(), s.clone());
    }
    Value::Object(m)
}

/// A TrustGraph config bundle of `prompts` with a shared `system`: every
/// value a JSON-encoded string, each template object as `tg-set-prompt`
/// stores it (`id`, `prompt`, `response-type`, `schema`).
pub fn to_trustgraph_bundle(prompts: &[PromptConfig], system: &str) -> Value {
    let mut m = Map::new();
    m.insert("system".into(), Value::String(encode(&Value::String(system.into()))));
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

/// 1-based line of the first `"key":` in `text` (best effort: JSON values
/// carry no positions once parsed).
fn key_line(text: &str, key: &str) -> Option<usize> {
    let needle = serde_json::to_string(key).ok()?;
    let mut from = 0;
    while let Some(i) = text.get(from..).and_then(|t| t.find(&needle)) {
        let at = from + i;
        let after = text[at + needle.len()..].trim_start();
        if after.starts_with(':') {
            return Some(crate::output::position::line_col(text.as_bytes(), at).0);
        }
        from = at + needle.len();
    }
    None
}

/// Load a `.json` prompt file: a single prompt or a config bundle (also one
/// wrapped as `{"prompt": {…bundle…}}`, as a config dump has it).
pub(crate) fn load_json(label: &str, text: &str) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        let offset = crate::output::position::offset_of(text.as_bytes(), e.line(), e.column());
        ConfigError::at_offset(
            label,
            text.as_bytes(),
            offset,
            format!("invalid JSON: {}", json_message(&e)),
        )
    })?;
    let Value::Object(obj) = root else {
        let offset = text.len() - text.trim_start().len();
        return Err(ConfigError::at_offset(
            label,
            text.as_bytes(),
            offset,
            format!("expected a JSON object, found {}", kind_of(&root)),
        ));
    };
    let site = Site {
        label,
        text,
        entry: None,
    };
    match obj.get("prompt") {
        Some(Value::String(_)) => {
            let mut warnings = Vec::new();
            let p = single(&site, &obj, &mut warnings)?;
            Ok((vec![p], warnings))
        }
        Some(Value::Object(inner)) if is_bundle(inner) => bundle(label, text, inner),
        Some(other) => Err(site.err(
            "prompt",
            format!("`prompt` must be a string (the template), not {}", kind_of(other)),
        )),
        None if is_bundle(&obj) => bundle(label, text, &obj),
        None => Err(ConfigError::new(
            label,
            "not a TrustGraph prompt: expected a `prompt` key (a single prompt) or `template-index` / \
             `template.<id>` keys (a config bundle)",
        )),
    }
}

fn is_bundle(obj: &Map<String, Value>) -> bool {
    obj.contains_key("template-index") || obj.keys().any(|k| k.starts_with("template."))
}

/// Where errors about one prompt object go: a single-prompt file names the
/// key's line; a bundle entry prefixes `template.<id>:` at that key's line
/// (inside the encoded string there are no file positions).
struct Site<'a> {
    label: &'a str,
    text: &'a str,
    entry: Option<(String, Option<usize>)>,
}

impl Site<'_> {
    fn err(&self, key: &str, cause: impl Into<String>) -> ConfigError {
        let cause = cause.into();
        match &self.entry {
            Some((name, line)) => ConfigError {
                file: self.label.to_owned(),
                line: *line,
                column: None,
                cause: format!("{name}: {cause}"),
            },
            None => match key_line(self.text, key) {
                Some(l) => ConfigError::at(self.label, l, None, cause),
                None => ConfigError::new(self.label, cause),
            },
        }
    }

    fn warn(&self, key: &str, message: impl Into<String>) -> Warning {
        let message = message.into();
        match &self.entry {
            Some((name, line)) => Warning::new(self.label, *line, format!("{name}: {message}")),
            None => Warning::new(self.label, key_line(self.text, key), message),
        }
    }

    fn string(&self, obj: &Map<String, Value>, key: &str) -> Result<Option<String>, ConfigError> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(key, format!("`{key}` must be a string, not {}", kind_of(other)))),
        }
    }
}

/// Keys TrustGraph reads from a prompt object.
const PROMPT_KEYS: &[&str] = &["id", "prompt", "response-type", "schema", "object-schema"];
/// Extra keys cutline reads from a single-prompt file (session snapshots
/// carry them).
const SINGLE_EXTRA_KEYS: &[&str] = &["system", "stop", "description", "twin"];

/// The fields every prompt object has: template, response type, schema.
fn prompt_fields(
    site: &Site<'_>,
    obj: &Map<String, Value>,
    warnings: &mut Vec<Warning>,
) -> Result<PromptConfig, ConfigError> {
    let mut p = PromptConfig {
        template: site
            .string(obj, "prompt")?
            .ok_or_else(|| site.err("prompt", "missing required key `prompt` (the prompt template)"))?,
        ..PromptConfig::default()
    };
    if let Some(word) = site.string(obj, "response-type")? {
        p.response_type = ResponseType::parse(&word).ok_or_else(|| {
            site.err(
                "response-type",
                format!("unknown response-type {word:?}; expected one of: text, json, jsonl"),
            )
        })?;
    }
    let schema = match (obj.get("schema"), obj.get("object-schema")) {
        (Some(s), None) if !s.is_null() => Some(("schema", s)),
        (None | Some(Value::Null), Some(s)) => {
            warnings.push(site.warn("object-schema", OBJECT_SCHEMA_WARNING));
            (!s.is_null()).then_some(("object-schema", s))
        }
        (Some(_), Some(_)) => {
            return Err(site.err(
                "object-schema",
                "both `schema` and `object-schema` are set; keep only `schema`",
            ));
        }
        _ => None,
    };
    if let Some((key, s)) = schema {
        CompiledSchema::compile(s).map_err(|e| site.err(key, e.to_string()))?;
        if p.response_type == ResponseType::Jsonl && describes_array(s) {
            warnings.push(site.warn(key, super::load::JSONL_ARRAY_WARNING));
        }
        p.schema = Some(s.clone());
    }
    syntax_check(&p.template).map_err(|e| site.err("prompt", syntax_cause(Part::Prompt, &e)))?;
    Ok(p)
}

fn single(site: &Site<'_>, obj: &Map<String, Value>, warnings: &mut Vec<Warning>) -> Result<PromptConfig, ConfigError> {
    let mut p = prompt_fields(site, obj, warnings)?;
    p.id = site.string(obj, "id")?.unwrap_or_else(|| stem(site.label));
    p.system = site.string(obj, "system")?.unwrap_or_default();
    p.description = site.string(obj, "description")?.unwrap_or_default();
    p.twin = site.string(obj, "twin")?;
    if let Some(stop) = obj.get("stop") {
        let list = stop.as_array().and_then(|a| {
            a.iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        p.stop = list.ok_or_else(|| site.err("stop", "`stop` must be an array of strings"))?;
    }
    if !p.system.is_empty() {
        syntax_check(&p.system).map_err(|e| site.err("system", syntax_cause(Part::System, &e)))?;
    }
    for k in obj.keys() {
        if !PROMPT_KEYS.contains(&k.as_str()) && !SINGLE_EXTRA_KEYS.contains(&k.as_str()) {
            warnings.push(site.warn(k, format!("unknown key `{k}` (ignored)")));
        }
    }
    p.origin = Origin {
        file: site.label.to_owned(),
        format: SourceFormat::TrustgraphPrompt,
        ..Origin::default()
    };
    Ok(p)
}

/// Decode a bundle value: a string holding JSON.
fn decode(label: &str, text: &str, key: &str, v: &Value) -> Result<Value, ConfigError> {
    let at = |cause: String| match key_line(text, key) {
        Some(l) => ConfigError::at(label, l, None, format!("{key}: {cause}")),
        None => ConfigError::new(label, format!("{key}: {cause}")),
    };
    let Value::String(s) = v else {
        return Err(at(format!(
            "expected a JSON-encoded string (TrustGraph stores every config value as a string), found {}",
            kind_of(v)
        )));
    };
    serde_json::from_str(s).map_err(|e| {
        let offset = crate::output::position::offset_of(s.as_bytes(), e.line(), e.column());
        let (line, column) = crate::output::position::line_col(s.as_bytes(), offset);
        let place = if line > 1 {
            format!("line {line} column {column}")
        } else {
            format!("column {column}")
        };
        at(format!(
            "invalid JSON at {place} of the encoded value: {}",
            json_message(&e)
        ))
    })
}

/// A config bundle being read: errors name the bundle key's line.
struct Bundle<'a> {
    label: &'a str,
    text: &'a str,
    obj: &'a Map<String, Value>,
}

impl Bundle<'_> {
    fn err(&self, key: &str, cause: String) -> ConfigError {
        ConfigError {
            file: self.label.to_owned(),
            line: key_line(self.text, key),
            column: None,
            cause,
        }
    }

    fn warn(&self, key: Option<&str>, message: String) -> Warning {
        Warning::new(self.label, key.and_then(|k| key_line(self.text, k)), message)
    }

    /// The decoded shared system template (empty when absent).
    fn system(&self) -> Result<String, ConfigError> {
        let system = match self.obj.get("system") {
            None => return Ok(String::new()),
            Some(v) => match decode(self.label, self.text, "system", v)? {
                Value::String(s) => s,
                other => {
                    return Err(self.err(
                        "system",
                        format!("system: the encoded value is {}, expected a string", kind_of(&other)),
                    ));
                }
            },
        };
        syntax_check(&system).map_err(|e| self.err("system", format!("system: {}", syntax_cause(Part::System, &e))))?;
        Ok(system)
    }

    /// The ids to load: `template-index`, or every `template.<id>` without one.
    fn index(&self, warnings: &mut Vec<Warning>) -> Result<Vec<String>, ConfigError> {
        let Some(v) = self.obj.get("template-index") else {
            warnings.push(
                self.warn(
                    None,
                    "no `template-index`: TrustGraph loads no templates without one; cutline loads every \
                 `template.<id>`"
                        .to_owned(),
                ),
            );
            return Ok(self.templates().map(str::to_owned).collect());
        };
        let decoded = decode(self.label, self.text, "template-index", v)?;
        let ids = decoded.as_array().and_then(|a| {
            a.iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        ids.ok_or_else(|| {
            self.err(
                "template-index",
                format!(
                    "template-index: the encoded value is {}, expected a list of template ids",
                    kind_of(&decoded)
                ),
            )
        })
    }

    fn templates(&self) -> impl Iterator<Item = &str> {
        self.obj.keys().filter_map(|k| k.strip_prefix("template."))
    }

    /// The prompt under `template.<id>`.
    fn entry(&self, id: &str, system: &str, warnings: &mut Vec<Warning>) -> Result<PromptConfig, ConfigError> {
        let key = format!("template.{id}");
        let Some(v) = self.obj.get(&key) else {
            return Err(self.err(
                "template-index",
                format!("template-index lists `{id}` but there is no `{key}` key"),
            ));
        };
        let decoded = decode(self.label, self.text, &key, v)?;
        let site = Site {
            label: self.label,
            text: self.text,
            entry: Some((key.clone(), key_line(self.text, &key))),
        };
        let Value::Object(entry) = decoded else {
            return Err(site.err(
                "",
                format!("the encoded value is {}, expected a prompt object", kind_of(&decoded)),
            ));
        };
        let mut p = prompt_fields(&site, &entry, warnings)?;
        for k in entry.keys() {
            if !PROMPT_KEYS.contains(&k.as_str()) {
                warnings.push(site.warn(k, format!("unknown key `{k}` (ignored)")));
            }
        }
        id.clone_into(&mut p.id);
        system.clone_into(&mut p.system);
        p.origin = Origin {
            file: self.label.to_owned(),
            format: SourceFormat::TrustgraphBundle,
            ..Origin::default()
        };
        Ok(p)
    }
}

fn bundle(label: &str, text: &str, obj: &Map<String, Value>) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    let b = Bundle { label, text, obj };
    let mut warnings = Vec::new();
    let system = b.system()?;
    let index = b.index(&mut warnings)?;
    let mut prompts: Vec<PromptConfig> = Vec::with_capacity(index.len());
    for id in &index {
        if prompts.iter().any(|p| &p.id == id) {
            warnings.push(b.warn(Some("template-index"), format!("template-index lists `{id}` twice")));
        } else {
            prompts.push(b.entry(id, &system, &mut warnings)?);
        }
    }
    for t in b.templates() {
        if !index.iter().any(|i| i == t) {
            let key = format!("template.{t}");
            let message = format!("`{key}` is not in template-index: TrustGraph does not load it (skipped)");
            warnings.push(b.warn(Some(&key), message));
        }
    }
    for k in obj.keys() {
        if k != "system" && k != "template-index" && !k.starts_with("template.") {
            warnings.push(b.warn(Some(k), format!("unknown key `{k}` (ignored)")));
        }
    }
    if prompts.is_empty() {
        return Err(ConfigError::new(label, "the bundle holds no templates"));
    }
    Ok((prompts, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::load_bytes;
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
        assert_eq!(ps[0].schema, Some(json!({"type": "object"})));
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
        assert_eq!(
            err("b.json", text),
            "b.json:1: template-index lists `a` but there is no `template.a` key"
        );
    }

    #[test]
    fn unindexed_template_skipped_with_warning() {
        let text = serde_json::to_string_pretty(&json!({
            "template-index": "[\"a\"]",
            "template.a": "{\"prompt\": \"x\"}",
            "template.b": "{\"prompt\": \"y\"}",
        }))
        .unwrap();
        let (ps, w) = load_bytes("b.json", text.as_bytes()).unwrap();
        assert_eq!(ps.len(), 1);
        assert_eq!(
            w[0].to_string(),
            "b.json:4: `template.b` is not in template-index: TrustGraph does not load it (skipped)"
        );
    }

    #[test]
    fn bundle_value_must_be_string() {
        let text = "{\"template-index\": \"[\\\"a\\\"]\",\n\"template.a\": {\"prompt\": \"x\"}}";
        assert_eq!(
            err("b.json", text),
            "b.json:2: template.a: expected a JSON-encoded string (TrustGraph stores every config value as a string), \
             found an object"
        );
    }

    #[test]
    fn wrapped_config_dump() {
        let text = r#"{"prompt": {"template-index": "[\"a\"]", "template.a": "{\"prompt\": \"x\"}"}}"#;
        let (ps, _) = load_bytes("dump.json", text.as_bytes()).unwrap();
        assert_eq!(ps[0].id, "a");
        assert_eq!(ps[0].origin.format, SourceFormat::TrustgraphBundle);
    }
}
