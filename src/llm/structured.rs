//! Structured output (seed 003): a `response_schema` on a request, the native
//! wire path where a provider has one, prompt augmentation where it does not,
//! and the post-receive check that yields `parsed` or
//! `structured_output_invalid`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::output::schema::{CompiledSchema, SchemaCompileError};

/// How a structured request reached the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// The provider's own schema-constrained decoding.
    #[default]
    Native,
    /// Native, with a non-object root wrapped as `{"items": …}` for a wire
    /// that takes only object roots; unwrapped on receipt.
    NativeWrapped,
    /// The schema written into the prompt, then parsed and validated.
    Prompt,
    /// A JSONL answer constrained line by line by a GBNF grammar built from
    /// the per-line schema (llama.cpp).
    Grammar,
    /// No structured output: the request had no schema, or the prompt's
    /// schema is per line (jsonl), which no native path can express.
    None,
}

impl Path {
    /// The recorded word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::NativeWrapped => "native_wrapped",
            Self::Prompt => "prompt",
            Self::Grammar => "grammar",
            Self::None => "none",
        }
    }

    /// The path a recorded word names (`None` for an unknown word).
    pub fn parse(word: &str) -> Option<Self> {
        [
            Self::Native,
            Self::NativeWrapped,
            Self::Prompt,
            Self::Grammar,
            Self::None,
        ]
        .into_iter()
        .find(|p| p.as_str() == word)
    }
}

/// How the path is chosen for a provider (configurable per provider).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Native when the provider supports it, else prompt augmentation.
    #[default]
    Auto,
    /// Always the native path.
    Native,
    /// Always prompt augmentation.
    Prompt,
    /// Never structured output: a schema is not sent and not checked.
    Off,
}

/// The keywords OpenAI's strict mode accepts (its structured-outputs guide:
/// "Supported schemas"); any other keyword makes a schema non-strict.
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// Whether a schema meets OpenAI's strict-mode rules: the root is an object,
/// every object lists all its properties in `required` and sets
/// `additionalProperties: false`, and no keyword strict mode lacks
/// (`oneOf`, `allOf`, `not`, `if`, `minLength`, `uniqueItems`,
/// `patternProperties`, …) appears.
pub fn strict_compatible(schema: &Value) -> bool {
    fn walk(v: &Value) -> bool {
        let Some(obj) = v.as_object() else {
            return true;
        };
        if !obj.keys().all(|k| STRICT_KEYWORDS.contains(&k.as_str())) {
            return false;
        }
        if obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties") {
            if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
                return false;
            }
            let props = obj.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = obj
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(props) = props
                && !props.keys().all(|k| required.contains(&k.as_str()))
            {
                return false;
            }
        }
        let schemas = |k: &str| obj.get(k).into_iter();
        let maps = ["properties", "$defs", "definitions"]
            .into_iter()
            .flat_map(&schemas)
            .filter_map(Value::as_object)
            .flat_map(|m| m.values());
        let lists = schemas("anyOf").filter_map(Value::as_array).flatten();
        maps.chain(lists)
            .chain(schemas("items"))
            .chain(schemas("additionalProperties"))
            .all(walk)
    }
    schema.get("type").and_then(Value::as_str) == Some("object") && walk(schema)
}

/// A stable name for the schema (its `title`, else a short hash).
pub fn schema_name(schema: &Value) -> String {
    if let Some(t) = schema.get("title").and_then(Value::as_str) {
        let clean: String = t
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        if !clean.is_empty() {
            return clean;
        }
    }
    // FNV-1a over the canonical text: stable across runs and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in schema.to_string().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("schema_{h:016x}")
}

/// The directive added to the system prompt on the fallback path.
pub fn augment_system(system: &str, schema: &Value) -> String {
    let pretty = serde_json::to_string_pretty(schema).unwrap_or_default();
    let directive = format!(
        "Respond with only a JSON value that validates against this JSON Schema. \
         No prose, no code fences.\n\nJSON Schema:\n{pretty}"
    );
    if system.is_empty() {
        directive
    } else {
        format!("{system}\n\n{directive}")
    }
}

/// Why structured content was rejected: a record's data (its words are
/// `failure`), and an error whose cause is the schema's compile error when
/// that is why.
#[derive(Debug, Clone, Serialize, Deserialize, thiserror::Error)]
#[error("{failure}")]
pub struct StructuredOutputInvalid {
    /// The schema that was requested.
    pub schema: Value,
    /// The raw content the model produced.
    pub content: String,
    /// What failed: the parse error, or each violation with its pointer.
    pub failure: String,
    /// JSON pointer of the first violation, when validation failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The schema's compile error, when the schema did not compile
    /// (`failure` says it in words); not recorded, not part of equality.
    #[serde(skip)]
    #[source]
    pub source: Option<SchemaCompileError>,
}

impl PartialEq for StructuredOutputInvalid {
    fn eq(&self, other: &Self) -> bool {
        (&self.schema, &self.content, &self.failure, &self.pointer)
            == (&other.schema, &other.content, &other.failure, &other.pointer)
    }
}

/// [`check`] for a run on `path`: a wrapped answer (`{"items": …}`) is
/// unwrapped first, so `parsed` is the value the prompt's schema describes.
pub fn check_on(path: Path, content: &str, schema: &Value) -> Result<Value, Box<StructuredOutputInvalid>> {
    if path != Path::NativeWrapped {
        return check(content, schema);
    }
    let wrapped = wrap(schema);
    let value = check(content, &wrapped)?;
    Ok(unwrap(&value).cloned().unwrap_or(value))
}

/// Parse and validate content against the requested schema: `parsed` on
/// success. Non-transient on failure: a retry of the same prompt fails alike.
pub fn check(content: &str, schema: &Value) -> Result<Value, Box<StructuredOutputInvalid>> {
    let fail = |failure: String, pointer: Option<String>| {
        Box::new(StructuredOutputInvalid {
            schema: schema.clone(),
            content: content.to_owned(),
            failure,
            pointer,
            source: None,
        })
    };
    let value: Value = serde_json::from_str(content.trim()).map_err(|e| {
        let why = if e.is_eof() { "truncated JSON" } else { "invalid JSON" };
        fail(format!("{why}: {e}"), None)
    })?;
    let compiled = CompiledSchema::compile(schema).map_err(|e| {
        let mut invalid = fail(e.to_string(), Some(e.pointer.clone()));
        invalid.source = Some(e);
        invalid
    })?;
    match compiled.validate(&value) {
        Ok(()) => Ok(value),
        Err(errs) => {
            let pointer = errs.first().map(|e| e.pointer.clone());
            let failure = errs.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
            Err(fail(failure, pointer))
        }
    }
}

/// The property a wrapped schema puts the value under.
pub const WRAP_KEY: &str = "items";

/// `schema` as the one required property of a closed object, with its
/// `$defs` / `definitions` moved to the new root so `#/$defs/…` references
/// still resolve.
pub fn wrap(schema: &Value) -> Value {
    let mut inner = schema.clone();
    let mut root = json!({
        "type": "object",
        "properties": {},
        "required": [WRAP_KEY],
        "additionalProperties": false,
    });
    if let Some(obj) = inner.as_object_mut() {
        for key in ["$defs", "definitions"] {
            if let Some(defs) = obj.remove(key) {
                root[key] = defs;
            }
        }
        obj.remove("$schema");
    }
    root["properties"][WRAP_KEY] = inner;
    root
}

/// The value a wrapped answer holds (`None` when it is not wrapped).
pub fn unwrap(value: &Value) -> Option<&Value> {
    value.as_object().filter(|o| o.len() == 1).and_then(|o| o.get(WRAP_KEY))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_rules() {
        let ok = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
        assert!(strict_compatible(&ok));
        let missing = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
        assert!(!strict_compatible(&missing));
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert!(!strict_compatible(&open));
        assert!(!strict_compatible(&json!({"type": "array"})));
        let one_of = json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}, "required": ["a"], "additionalProperties": false});
        assert!(!strict_compatible(&one_of));
        let min_len = json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}, "required": ["a"], "additionalProperties": false});
        assert!(!strict_compatible(&min_len));
        let enum_named = json!({"type": "object", "properties": {"enum": {"type": "string", "enum": ["x"]}}, "required": ["enum"], "additionalProperties": false});
        assert!(
            strict_compatible(&enum_named),
            "a property named like a keyword is a name"
        );
    }

    #[test]
    fn check_reports_pointer() {
        let s = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        assert_eq!(check("{\"n\": 3}", &s).unwrap(), json!({"n": 3}));
        let e = check("{\"m\": 3}", &s).unwrap_err();
        assert_eq!(e.pointer.as_deref(), Some("/n"));
        assert!(check("{\"n\": ", &s).unwrap_err().failure.starts_with("truncated JSON"));
    }

    #[test]
    fn a_schema_that_does_not_compile_is_the_typed_cause_and_its_words_are_unchanged() {
        use std::error::Error as _;
        let s = json!({"type": "object", "properties": {"n": {"type": 7}}});
        let e = check("{\"n\": 3}", &s).unwrap_err();
        let compile = CompiledSchema::compile(&s).unwrap_err();
        assert_eq!(e.failure, compile.to_string());
        assert_eq!(e.pointer.as_deref(), Some(compile.pointer.as_str()));
        assert_eq!(e.to_string(), e.failure);
        let cause = e.source().and_then(|c| c.downcast_ref::<SchemaCompileError>());
        assert_eq!(cause, Some(&compile));
        // Not recorded: the record's bytes are what they were, and it reads
        // back equal.
        let json = serde_json::to_value(&*e).unwrap();
        assert_eq!(
            json,
            json!({"schema": s, "content": "{\"n\": 3}", "failure": e.failure, "pointer": compile.pointer})
        );
        assert_eq!(serde_json::from_value::<StructuredOutputInvalid>(json).unwrap(), *e);
        // A violation has no cause.
        let s = json!({"type": "object", "required": ["n"]});
        assert!(check("{}", &s).unwrap_err().source().is_none());
    }
}
