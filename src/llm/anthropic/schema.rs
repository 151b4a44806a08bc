//! A JSON Schema made fit for Anthropic's `output_config.format`, as the
//! Anthropic SDK's `transform_schema` makes it (anthropic 2.14,
//! `lib/_parse/_transform.py`): every object closed, `oneOf` read as
//! `anyOf`, and each keyword the constrained decoder does not take (lengths,
//! bounds, patterns, most `minItems`, unknown `format`s) moved into the
//! node's `description` as `{key: value, …}` so the model still reads it.
//! Sending such keywords is a 400. The answer is still validated against
//! the prompt's full schema, so nothing is lost by moving them. Pure.

use serde_json::{Map, Value};

/// String formats the decoder takes.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

const TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean", "null"];

/// The schema as sent, and what was moved or dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The schema for `output_config.format`.
    pub schema: Value,
    /// Each keyword moved into a description, or dropped beside a `$ref`,
    /// as `keyword at #/pointer`.
    pub moved: Vec<String>,
}

/// Why a schema cannot go to `output_config` as it is: the caller then
/// takes the forced-tool path, naming the node in its reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// A node that is not a JSON object.
    #[error("the schema at {at} is not an object")]
    NotAnObject {
        /// The node, as `#/pointer`.
        at: String,
    },
    /// A `type` that is not a single type name the decoder takes (a list,
    /// say).
    #[error("`type` {ty} at {at} is not one type the decoder takes")]
    BadType {
        /// The `type` as written.
        ty: Value,
        /// The node, as `#/pointer`.
        at: String,
    },
    /// A node the decoder could not constrain: no `type`, union, `const`
    /// or `enum`.
    #[error("the schema at {at} has no `type`, `anyOf`, `oneOf`, `allOf`, `const` or `enum`")]
    Unconstrained {
        /// The node, as `#/pointer`.
        at: String,
    },
}

/// `schema` fitted for `output_config`, or why it cannot be (a node with no
/// `type`, `anyOf`, `oneOf`, `allOf`, `const` or `enum`): the caller then
/// takes the forced-tool path.
pub fn fit(schema: &Value) -> Result<Fitted, FitError> {
    let mut moved = Vec::new();
    let schema = node(schema, "#", &mut moved)?;
    Ok(Fitted { schema, moved })
}

fn primitive(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn node(schema: &Value, at: &str, moved: &mut Vec<String>) -> Result<Value, FitError> {
    let Some(src) = schema.as_object() else {
        return Err(FitError::NotAnObject { at: at.to_owned() });
    };
    let mut rest = src.clone();
    let mut out = Map::new();
    if let Some(defs) = rest.shift_remove("$defs") {
        let mut fitted = Map::new();
        for (k, v) in defs.as_object().into_iter().flatten() {
            fitted.insert(k.clone(), node(v, &format!("{at}/$defs/{k}"), moved)?);
        }
        out.insert("$defs".into(), Value::Object(fitted));
    }
    if let Some(r) = rest.shift_remove("$ref") {
        out.insert("$ref".into(), r);
        moved.extend(rest.keys().map(|k| format!("{k} at {at} (dropped beside $ref)")));
        return Ok(Value::Object(out));
    }
    let ty = rest.shift_remove("type");
    let mut typed = ty.is_some();
    if let Some(t) = &ty {
        let ok = t.as_str().is_some_and(|t| TYPES.contains(&t));
        if !ok {
            return Err(FitError::BadType {
                ty: t.clone(),
                at: at.to_owned(),
            });
        }
    }
    for key in ["enum", "const"] {
        let keep = match rest.get(key) {
            Some(Value::Array(a)) if key == "enum" => !a.is_empty() && a.iter().all(primitive),
            Some(v) if key == "const" => primitive(v),
            _ => false,
        };
        if keep && let Some(v) = rest.shift_remove(key) {
            out.insert(key.into(), v);
            typed = false;
        }
    }
    if let Some(t) = ty.filter(|_| typed) {
        out.insert("type".into(), t);
    }
    let union = ["anyOf", "oneOf", "allOf"].into_iter().find(|k| rest.contains_key(*k));
    if let Some(k) = union
        && let Some(Value::Array(branches)) = rest.shift_remove(k)
    {
        let name = if k == "oneOf" { "anyOf" } else { k };
        let fitted = branches
            .iter()
            .enumerate()
            .map(|(i, b)| node(b, &format!("{at}/{k}/{i}"), moved))
            .collect::<Result<Vec<_>, _>>()?;
        out.insert(name.into(), Value::Array(fitted));
    } else if !out.contains_key("type") && !out.contains_key("enum") && !out.contains_key("const") {
        return Err(FitError::Unconstrained { at: at.to_owned() });
    }
    for key in ["description", "title"] {
        if let Some(v) = rest.shift_remove(key) {
            out.insert(key.into(), v);
        }
    }
    by_type(&mut rest, &mut out, at, moved)?;
    describe_leftovers(&rest, &mut out, at, moved);
    Ok(Value::Object(out))
}

/// The keywords that belong to the node's type: an object's properties, a
/// string's format, an array's items and `minItems`.
fn by_type(
    rest: &mut Map<String, Value>,
    out: &mut Map<String, Value>,
    at: &str,
    moved: &mut Vec<String>,
) -> Result<(), FitError> {
    match out.get("type").and_then(Value::as_str) {
        Some("object") => object(rest, out, at, moved)?,
        Some("string") => {
            if let Some(f) = rest.get("format").and_then(Value::as_str)
                && FORMATS.contains(&f)
                && let Some(f) = rest.shift_remove("format")
            {
                out.insert("format".into(), f);
            }
        }
        Some("array") => {
            if let Some(items) = rest.shift_remove("items") {
                out.insert("items".into(), node(&items, &format!("{at}/items"), moved)?);
            }
            if rest.get("minItems").and_then(Value::as_u64).is_some_and(|n| n <= 1)
                && let Some(n) = rest.shift_remove("minItems")
            {
                out.insert("minItems".into(), n);
            }
        }
        _ => {}
    }
    Ok(())
}

fn object(
    rest: &mut Map<String, Value>,
    out: &mut Map<String, Value>,
    at: &str,
    moved: &mut Vec<String>,
) -> Result<(), FitError> {
    if let Some(props) = rest.shift_remove("properties") {
        let mut fitted = Map::new();
        for (k, v) in props.as_object().into_iter().flatten() {
            fitted.insert(k.clone(), node(v, &format!("{at}/properties/{k}"), moved)?);
        }
        out.insert("properties".into(), Value::Object(fitted));
    }
    // Closed, whatever the schema said: the decoder takes no other.
    if let Some(a) = rest.shift_remove("additionalProperties")
        && a != Value::Bool(false)
    {
        moved.push(format!("additionalProperties at {at} (closed)"));
    }
    out.insert("additionalProperties".into(), Value::Bool(false));
    if let Some(r) = rest.shift_remove("required") {
        out.insert("required".into(), r);
    }
    Ok(())
}

/// The keywords left in `rest`, appended to the description as
/// `{key: value, …}` with Python's `str()` of each value, as the SDK does.
fn describe_leftovers(rest: &Map<String, Value>, out: &mut Map<String, Value>, at: &str, moved: &mut Vec<String>) {
    if rest.is_empty() {
        return;
    }
    let parts: Vec<String> = rest
        .iter()
        .map(|(k, v)| {
            moved.push(format!("{k} at {at}"));
            format!("{k}: {}", py_str(v))
        })
        .collect();
    let extra = format!("{{{}}}", parts.join(", "));
    let text = match out.get("description").and_then(Value::as_str) {
        Some(d) => format!("{d}\n\n{extra}"),
        None => extra,
    };
    out.insert("description".into(), Value::String(text));
}

/// Python's `str()` of a JSON value (what the SDK's f-string prints): a
/// string bare, everything else as its `repr()`.
fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let q = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::from(q);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    c if c == q => {
                        out.push('\\');
                        out.push(c);
                    }
                    c => out.push(c),
                }
            }
            out.push(q);
            out
        }
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", py_repr(&Value::String(k.clone())), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unsupported_keywords_move_into_the_description() {
        let s = json!({"type": "integer", "minimum": 1, "maximum": 10, "description": "A number"});
        let f = fit(&s).unwrap();
        assert_eq!(
            f.schema,
            json!({"type": "integer", "description": "A number\n\n{minimum: 1, maximum: 10}"})
        );
        assert_eq!(f.moved, vec!["minimum at #", "maximum at #"]);
    }

    #[test]
    fn objects_close_one_of_becomes_any_of_and_lists_keep_what_the_decoder_takes() {
        let s = json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string", "format": "email", "pattern": "^a"}, "minItems": 2, "maxItems": 5},
                "kind": {"oneOf": [{"const": "a"}, {"enum": ["b", "c"]}]},
                "at": {"type": "string", "format": "date"}
            },
            "required": ["tags"]
        });
        let f = fit(&s).unwrap();
        let p = &f.schema["properties"];
        assert_eq!(f.schema["additionalProperties"], json!(false));
        assert_eq!(
            p["tags"]["items"],
            json!({"type": "string", "format": "email", "description": "{pattern: ^a}"})
        );
        assert_eq!(p["tags"]["description"], json!("{minItems: 2, maxItems: 5}"));
        assert_eq!(p["kind"], json!({"anyOf": [{"const": "a"}, {"enum": ["b", "c"]}]}));
        assert_eq!(p["at"], json!({"type": "string", "format": "date"}));
        assert!(
            f.moved.contains(&"pattern at #/properties/tags/items".to_owned()),
            "{:?}",
            f.moved
        );
        assert!(fit(&json!({"description": "anything"})).is_err());
        assert_eq!(
            py_repr(&json!({"a": [true, null, "it's"]})),
            "{'a': [True, None, \"it's\"]}"
        );
    }
}
