//! When a closed response's verdict under the whole-response schema follows
//! from its elements' verdicts, so that `parse` never builds its value tree
//! (a tree is five to ten times the text; issue 14).
//!
//! Two shapes qualify. An array whose schema asks only what each item must
//! satisfy and how many there may be. An object of arrays whose schema asks
//! that of each array member, plus object-level rules (`required`,
//! `additionalProperties`, ...), which are checked on a skeleton: the object
//! with every array emptied, against the schema with those members' own
//! schemas set to `true`. Anything else is judged by validating the whole
//! value, and so is any shape here that fails: the validator words the
//! violations.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::output::schema::{ANNOTATIONS, CompiledSchema};

/// `minItems` and `maxItems` of an array schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LengthBounds {
    min: u64,
    max: Option<u64>,
}

impl LengthBounds {
    /// No bounds.
    pub const ANY: Self = Self { min: 0, max: None };

    /// Whether an array of `len` elements is within the bounds.
    pub fn admit(self, len: usize) -> bool {
        let len = u64::try_from(len).unwrap_or(u64::MAX);
        len >= self.min && self.max.is_none_or(|m| len <= m)
    }
}

/// The length bounds of a schema whose only constraints are on the items
/// of an array and their number; `None` for any other schema.
pub(super) fn items_and_length(schema: &Value) -> Option<LengthBounds> {
    const JUDGED: [&str; 4] = ["type", "items", "minItems", "maxItems"];
    let o = schema.as_object()?;
    let bound = |k: &str| o.get(k).map(|v| v.as_u64().ok_or(()));
    let shaped = o.get("type") == Some(&Value::from("array"))
        && o.get("items").is_none_or(Value::is_object)
        && o.keys()
            .all(|k| JUDGED.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()));
    // A bound that is not a plain count (`1.0`, `-1`) is the validator's to read.
    match (shaped, bound("minItems").transpose(), bound("maxItems").transpose()) {
        (true, Ok(min), Ok(max)) => Some(LengthBounds {
            min: min.unwrap_or(0),
            max,
        }),
        _ => None,
    }
}

/// How an object of arrays is judged from its elements.
#[derive(Debug)]
pub(super) enum ObjectRule {
    /// No schema: any object of arrays is valid.
    Any,
    /// The skeleton's schema and each array member's bounds. A member not
    /// named here is judged by the whole validator.
    Skeleton {
        schema: Box<CompiledSchema>,
        arrays: HashMap<String, LengthBounds>,
    },
}

impl ObjectRule {
    /// The rule for `schema`, when its shape allows one. A skeleton schema
    /// that does not compile (a `$ref` into a property set to `true`) leaves
    /// the object to the whole validator.
    pub fn compile(schema: &Value) -> Option<Self> {
        const JUDGED: [&str; 6] = [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "minProperties",
            "maxProperties",
        ];
        let o = schema.as_object()?;
        let props = o.get("properties").and_then(Value::as_object)?;
        if o.get("type") != Some(&Value::from("object"))
            || !o
                .keys()
                .all(|k| JUDGED.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()))
        {
            return None;
        }
        let mut arrays = HashMap::new();
        let mut skeleton_props = props.clone();
        for (name, prop) in props {
            if let Some(bounds) = items_and_length(resolve(schema, prop)) {
                arrays.insert(name.clone(), bounds);
                skeleton_props.insert(name.clone(), Value::Bool(true));
            }
        }
        let mut skeleton = o.clone();
        skeleton.insert("properties".into(), Value::Object(skeleton_props));
        let schema = CompiledSchema::compile(&Value::Object(skeleton)).ok()?;
        Some(Self::Skeleton {
            schema: Box::new(schema),
            arrays,
        })
    }

    /// Whether an object whose members are these arrays, each `(key,
    /// length, every element valid)`, in order and each key once, is valid.
    pub fn admits(&self, members: &[(&str, usize, bool)]) -> bool {
        let Self::Skeleton { schema, arrays } = self else {
            return true;
        };
        let arrays_ok = members
            .iter()
            .all(|&(key, len, elements_valid)| elements_valid && arrays.get(key).is_some_and(|b| b.admit(len)));
        let skeleton: Map<String, Value> = members
            .iter()
            .map(|&(key, ..)| (key.to_owned(), Value::Array(Vec::new())))
            .collect();
        arrays_ok && schema.is_valid(&Value::Object(skeleton))
    }
}

/// A property's schema, through a local `$ref`.
pub(super) fn resolve<'a>(root: &'a Value, prop: &'a Value) -> &'a Value {
    match prop.get("$ref").and_then(Value::as_str) {
        Some(r) if r.starts_with("#/") => root.pointer(&r[1..]).unwrap_or(prop),
        _ => prop,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(schema: &Value) -> Option<ObjectRule> {
        ObjectRule::compile(schema)
    }

    #[test]
    fn an_object_of_arrays_is_judged_by_its_members() {
        let r = rule(&json!({
            "type": "object",
            "properties": {
                "a": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "b": {"$ref": "#/$defs/b"}
            },
            "required": ["a"],
            "additionalProperties": false,
            "$defs": {"b": {"type": "array", "maxItems": 2}}
        }))
        .expect("a rule");
        assert!(r.admits(&[("a", 1, true), ("b", 2, true)]));
        assert!(!r.admits(&[("a", 1, false)]), "an invalid element");
        assert!(!r.admits(&[("a", 0, true)]), "under minItems");
        assert!(!r.admits(&[("a", 1, true), ("b", 3, true)]), "over maxItems via $ref");
        assert!(!r.admits(&[("b", 1, true)]), "required a is missing");
        assert!(!r.admits(&[("a", 1, true), ("c", 1, true)]), "c is not allowed");
    }

    #[test]
    fn other_shapes_are_left_to_the_whole_validator() {
        assert!(rule(&json!({"type": "object", "properties": {}, "allOf": [true]})).is_none());
        assert!(rule(&json!({"type": "array", "items": {}})).is_none());
        // The skeleton sets `a` to `true`, so a `$ref` into it no longer resolves.
        let into_a = json!({
            "type": "object",
            "properties": {
                "a": {"type": "array", "items": {"type": "string"}},
                "b": {"$ref": "#/properties/a/items"}
            }
        });
        assert!(rule(&into_a).is_none());
    }
}
