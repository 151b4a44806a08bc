//! A schema read as Python's `jsonschema` 4.x reads it in TrustGraph's
//! `validate(instance, schema)`:
//! - the draft is `$schema`'s when it names one exactly (`http://` for
//!   drafts 3–7, an optional trailing `#`), else 2020-12 (an `https://`
//!   draft-07 URI and unknown dialects included);
//! - `format` is an annotation in every draft (no format checker is passed);
//! - `dependencies` means nothing in 2019-09 and 2020-12;
//! - draft 3 is rewritten into draft 4 (`required: true` in a property,
//!   `divisibleBy`, `extends`, `disallow`, schema members of a `type`
//!   union, string `dependencies`, `items: []`), which cutline's validator
//!   knows;
//! - the content keywords are never asserted; in 2019-09,
//!   `unevaluatedProperties` counts a schema-valued `additionalProperties`
//!   as Python's does (`hide_additional`);
//! - floats are the binary floats Python holds;
//! - `pattern` is Python's `re.search` ([`super::pyre`]); a pattern or a
//!   `patternProperties` key Python cannot compile fails `check_schema`, so
//!   every value is rejected; a `patternProperties` key keeps the
//!   validator's engine with Python's anchors and Unicode classes;
//! - the keywords and options are [`super::pykeywords`]'s.

use serde_json::{Map, Value, json};

use super::pyre::PyRegex;
use super::schema_error::SchemaCompileError;

/// Python's truthiness of a schema: TrustGraph validates only when the
/// prompt's schema is truthy (`if self.prompts[id].schema:`).
pub fn is_truthy(schema: &Value) -> bool {
    match schema {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_none_or(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The drafts Python's `validator_for` can pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyDraft {
    /// Draft 3 (validated as its draft-4 rewrite).
    D3,
    /// Draft 4.
    D4,
    /// Draft 6.
    D6,
    /// Draft 7.
    D7,
    /// 2019-09.
    D2019,
    /// 2020-12, also for no or an unknown `$schema`.
    D2020,
}

impl PyDraft {
    /// The draft Python picks for `schema`.
    pub fn of(schema: &Value) -> Self {
        let Some(uri) = schema.get("$schema").and_then(Value::as_str) else {
            return Self::D2020;
        };
        match uri.strip_suffix('#').unwrap_or(uri) {
            "http://json-schema.org/draft-03/schema" => Self::D3,
            "http://json-schema.org/draft-04/schema" => Self::D4,
            "http://json-schema.org/draft-06/schema" => Self::D6,
            "http://json-schema.org/draft-07/schema" => Self::D7,
            "https://json-schema.org/draft/2019-09/schema" => Self::D2019,
            _ => Self::D2020,
        }
    }

    fn uri(self) -> &'static str {
        match self {
            Self::D3 | Self::D4 => "http://json-schema.org/draft-04/schema#",
            Self::D6 => "http://json-schema.org/draft-06/schema#",
            Self::D7 => "http://json-schema.org/draft-07/schema#",
            Self::D2019 => "https://json-schema.org/draft/2019-09/schema",
            Self::D2020 => "https://json-schema.org/draft/2020-12/schema",
        }
    }
}

const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
const SCHEMA_LISTS: [&str; 5] = ["allOf", "anyOf", "oneOf", "prefixItems", "extends"];
const SCHEMA_ONES: [&str; 12] = [
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "items",
    "extends",
];

/// Visit every subschema (objects only) with its JSON pointer.
fn walk_mut(schema: &mut Value, pointer: &str, f: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
    let Value::Object(obj) = schema else {
        return;
    };
    f(obj, pointer);
    for (key, sub) in obj.iter_mut() {
        let at = format!("{pointer}/{key}");
        match sub {
            Value::Object(map) if SCHEMA_MAPS.contains(&key.as_str()) => {
                for (name, s) in map.iter_mut() {
                    walk_mut(s, &format!("{at}/{name}"), f);
                }
            }
            Value::Object(map) if key == "dependencies" => {
                for (name, s) in map.iter_mut() {
                    walk_mut(s, &format!("{at}/{name}"), f);
                }
            }
            Value::Array(list) if SCHEMA_LISTS.contains(&key.as_str()) || key == "items" => {
                for (n, s) in list.iter_mut().enumerate() {
                    walk_mut(s, &format!("{at}/{n}"), f);
                }
            }
            s if SCHEMA_ONES.contains(&key.as_str()) => walk_mut(s, &at, f),
            _ => {}
        }
    }
}

/// The schema cutline's validator gets, and its draft.
pub fn prepare(schema: &Value) -> Result<(Value, PyDraft), SchemaCompileError> {
    let draft = PyDraft::of(schema);
    let mut out = super::pyjson::python_schema_floats(schema).unwrap_or_else(|| schema.clone());
    let unevaluated = draft == PyDraft::D2019 && schema.to_string().contains("\"unevaluatedProperties\"");
    let mut refused: Option<SchemaCompileError> = None;
    walk_mut(&mut out, "", &mut |obj, pointer| {
        if refused.is_some() {
            return;
        }
        let mut check = |p: &str, at: String| {
            if let Err(e) = PyRegex::new(p) {
                refused = Some(SchemaCompileError {
                    pointer: at,
                    message: e.to_string(),
                });
            }
        };
        if let Some(Value::String(p)) = obj.get("pattern") {
            check(p, format!("{pointer}/pattern"));
        }
        if let Some(Value::Object(pp)) = obj.get("patternProperties") {
            for p in pp.keys() {
                check(p, format!("{pointer}/patternProperties"));
            }
        }
        if let Some(Value::Object(pp)) = obj.get_mut("patternProperties") {
            let keyed = std::mem::take(pp);
            *pp = keyed.into_iter().map(|(k, v)| (ecma_anchors(&k), v)).collect();
        }
        if matches!(draft, PyDraft::D2019 | PyDraft::D2020) {
            obj.remove("dependencies");
        }
        // Python's jsonschema asserts no content keyword in any draft.
        for k in ["contentMediaType", "contentEncoding", "contentSchema"] {
            obj.remove(k);
        }
        if draft == PyDraft::D3 {
            draft3_to_4(obj);
        }
        if unevaluated {
            hide_additional(obj);
        }
    });
    if let Some(e) = refused {
        return Err(e);
    }
    if let Value::Object(obj) = &mut out {
        obj.insert("$schema".into(), json!(draft.uri()));
    }
    Ok((out, draft))
}

/// A `patternProperties` key, left to the validator's ECMA-262 engine, with
/// Python's end anchors (`$` also before a final newline, `\Z` the end) and
/// Python's Unicode classes: `\w` is `str.isalnum()` or `_`, `\d` is `Nd`
/// (the engine's own are ASCII). `\W` inside a class stays ASCII.
fn ecma_anchors(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 8);
    let (mut in_class, mut chars) = (false, p.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('Z') if !in_class => out.push('$'),
                Some('w') if in_class => out.push_str(r"\p{L}\p{N}_"),
                Some('w') => out.push_str(r"[\p{L}\p{N}_]"),
                Some('W') if !in_class => out.push_str(r"[^\p{L}\p{N}_]"),
                Some('d') => out.push_str(r"\p{Nd}"),
                Some('D') => out.push_str(r"\P{Nd}"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '[' => {
                in_class = true;
                out.push(c);
            }
            ']' => {
                in_class = false;
                out.push(c);
            }
            '$' if !in_class => out.push_str("(?=\\n?$)"),
            c => out.push(c),
        }
    }
    out
}

/// Draft 3's own keywords in draft 4's words, for one schema object.
fn draft3_to_4(obj: &mut Map<String, Value>) {
    if let Some(d) = obj.remove("divisibleBy") {
        obj.insert("multipleOf".into(), d);
    }
    if let Some(e) = obj.remove("extends") {
        let list = match e {
            Value::Array(a) => a,
            one => vec![one],
        };
        obj.insert("allOf".into(), Value::Array(list));
    }
    if obj.get("required").is_some_and(Value::is_boolean) {
        obj.remove("required");
    }
    if let Some(Value::Object(props)) = obj.get("properties") {
        let required: Vec<Value> = props
            .iter()
            .filter(|(_, p)| p.get("required") == Some(&Value::Bool(true)))
            .map(|(k, _)| Value::String(k.clone()))
            .collect();
        if !required.is_empty() {
            obj.insert("required".into(), Value::Array(required));
        }
    }
    if obj.get("type") == Some(&json!("any")) {
        obj.remove("type");
    }
    // A union naming schemas: any one of its members.
    if let Some(types) = obj
        .get("type")
        .filter(|t| t.is_object() || t.as_array().is_some_and(|a| a.iter().any(Value::is_object)))
    {
        let members = draft3_members(types);
        obj.remove("type");
        push_all_of(obj, json!({ "anyOf": members }));
    }
    if let Some(d) = obj.remove("disallow") {
        push_all_of(obj, json!({ "not": { "anyOf": draft3_members(&d) } }));
    }
    // A string dependency names one property.
    if let Some(Value::Object(deps)) = obj.get_mut("dependencies") {
        for v in deps.values_mut() {
            if v.is_string() {
                *v = Value::Array(vec![v.take()]);
            }
        }
    }
    // `items: []` checks no position: what follows is `additionalItems`.
    if obj
        .get("items")
        .is_some_and(|i| i.as_array().is_some_and(Vec::is_empty))
    {
        obj.remove("items");
        match obj.remove("additionalItems") {
            Some(Value::Bool(false)) => {
                obj.insert("items".into(), json!({ "not": {} }));
            }
            Some(Value::Object(rest)) => {
                obj.insert("items".into(), Value::Object(rest));
            }
            _ => {}
        }
    }
}

/// Marks the copy [`hide_additional`] makes, so the walk leaves it be.
const HIDDEN: &str = "cutline: additionalProperties as Python's 2019-09 unevaluatedProperties counts it";

/// Python's 2019-09 `unevaluatedProperties` counts as evaluated by a
/// schema-valued `additionalProperties` only the instance's properties
/// named like the keys of that schema (`type`, `minLength`…), not every
/// additional property. So the keyword is validated where evaluation is
/// not seen (`not: {not: …}` beside the object's own `properties` and
/// `patternProperties`, which keep it meaning the same), and those names
/// are listed in `properties` as evaluated.
fn hide_additional(obj: &mut Map<String, Value>) {
    if obj.get("$comment").and_then(Value::as_str) == Some(HIDDEN) {
        return;
    }
    let Some(Value::Object(additional)) = obj.get("additionalProperties") else {
        return;
    };
    let names: Vec<String> = additional.keys().cloned().collect();
    let blank = |key: &str| -> Value {
        let keys = obj
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys());
        Value::Object(keys.map(|k| (k.clone(), json!({}))).collect())
    };
    let hidden = json!({
        "$comment": HIDDEN,
        "properties": blank("properties"),
        "patternProperties": blank("patternProperties"),
        "additionalProperties": obj.remove("additionalProperties"),
    });
    push_all_of(obj, json!({ "not": { "not": hidden } }));
    if let Value::Object(props) = obj.entry("properties").or_insert_with(|| json!({})) {
        for name in names {
            props.entry(name).or_insert_with(|| json!({}));
        }
    }
}

/// Draft 3's type union (or `disallow`) as schemas: a type name, `any`,
/// or a schema.
fn draft3_members(types: &Value) -> Vec<Value> {
    let list = match types {
        Value::Array(a) => a.clone(),
        one => vec![one.clone()],
    };
    list.into_iter()
        .map(|t| match t {
            Value::String(name) if name == "any" => json!({}),
            Value::String(name) => json!({ "type": name }),
            schema => schema,
        })
        .collect()
}

/// Add `schema` to the object's `allOf` (draft 3 has none of its own).
fn push_all_of(obj: &mut Map<String, Value>, schema: Value) {
    match obj.get_mut("allOf") {
        Some(Value::Array(list)) => list.push(schema),
        _ => {
            obj.insert("allOf".into(), Value::Array(vec![schema]));
        }
    }
}
