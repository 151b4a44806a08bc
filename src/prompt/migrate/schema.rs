//! The schema half of a migration: an array schema becomes its per-line
//! `items`; an object of arrays becomes a `oneOf` tagged by `type`.

use serde_json::{Map, Value};

use super::{Item, Shape, Unconvertible, singular};
use crate::output::schema::kind_of;

/// The per-line schema of a JSON-array schema (its migration), or `None`
/// when part of it has no per-line form that the migration could not drop.
pub fn line_schema(schema: &Value) -> Option<Value> {
    migrate_schema(schema, &mut Vec::new()).map(|(s, _)| s)
}

const ROOT_KEEP: [&str; 4] = ["$schema", "$id", "title", "description"];
const DEFS: [&str; 2] = ["$defs", "definitions"];

fn report(out: &mut Vec<Unconvertible>, pointer: &str, message: impl Into<String>) {
    out.push(Unconvertible {
        pointer: pointer.to_owned(),
        message: message.into(),
    });
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The per-line schema and its shape, or `None` (with reports) when the
/// root has no per-line form.
pub(super) fn migrate_schema(schema: &Value, out: &mut Vec<Unconvertible>) -> Option<(Value, Shape)> {
    let Some(root) = schema.as_object() else {
        report(
            out,
            "",
            format!("the schema is {}, not an object schema", kind_of(schema)),
        );
        return None;
    };
    let ty = root.get("type").and_then(Value::as_str);
    if ty == Some("array") || (ty.is_none() && root.contains_key("items")) {
        return migrate_array(root, out);
    }
    if ty == Some("object") || root.contains_key("properties") {
        return migrate_object(root, out);
    }
    report(
        out,
        "",
        match root.get("type") {
            Some(t) => format!("the root type {t} is neither an array nor an object of arrays"),
            None => "the root schema is neither an array nor an object of arrays".to_owned(),
        },
    );
    None
}

fn migrate_array(root: &Map<String, Value>, out: &mut Vec<Unconvertible>) -> Option<(Value, Shape)> {
    let before = out.len();
    let Some(Value::Object(items)) = root.get("items") else {
        report(out, "/items", "the array has no object `items` schema to use per line");
        return None;
    };
    for (k, _) in root {
        if !(ROOT_KEEP.contains(&k.as_str()) || DEFS.contains(&k.as_str()) || k == "type" || k == "items") {
            report(
                out,
                &format!("/{}", escape(k)),
                format!("`{k}` constrains the whole array and has no per-line form; dropped"),
            );
        }
    }
    let mut new = Map::new();
    for k in ROOT_KEEP {
        if let Some(v) = root.get(k).filter(|_| !items.contains_key(k)) {
            new.insert(k.to_owned(), v.clone());
        }
    }
    new.extend(items.iter().map(|(k, v)| (k.clone(), v.clone())));
    carry_defs(root, &mut new, "/items", out);
    let mut value = Value::Object(new);
    repoint_refs(&mut value, &[("#/items", "#")], "/items", out);
    if out[before..].iter().any(|u| u.message.contains("$ref")) {
        return None;
    }
    Some((value, Shape::Items(Item::of(items))))
}

fn carry_defs(root: &Map<String, Value>, new: &mut Map<String, Value>, at: &str, out: &mut Vec<Unconvertible>) {
    for k in DEFS {
        if let Some(defs) = root.get(k) {
            if new.contains_key(k) {
                report(
                    out,
                    &format!("{at}/{k}"),
                    format!("both the root and the line schema have `{k}`; the root's were not merged"),
                );
            } else {
                new.insert(k.to_owned(), defs.clone());
            }
        }
    }
}

/// Re-point local `$ref`s by prefix; a `$ref` that cannot be re-pointed is reported.
fn repoint_refs(v: &mut Value, map: &[(&str, &str)], at: &str, out: &mut Vec<Unconvertible>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if k == "$ref"
                    && let Value::String(r) = child
                {
                    if DEFS.iter().any(|d| r.starts_with(&format!("#/{d}/"))) || !r.starts_with('#') {
                        continue;
                    }
                    let hit = map
                        .iter()
                        .find(|(old, _)| r == old || r.starts_with(&format!("{old}/")));
                    match hit {
                        Some((old, new)) => *r = format!("{new}{}", &r[old.len()..]),
                        None => report(out, at, format!("`$ref` {r:?} points outside the per-line schema")),
                    }
                } else {
                    repoint_refs(child, map, at, out);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|c| repoint_refs(c, map, at, out)),
        _ => {}
    }
}

fn migrate_object(root: &Map<String, Value>, out: &mut Vec<Unconvertible>) -> Option<(Value, Shape)> {
    let before = out.len();
    let Some(Value::Object(props)) = root.get("properties") else {
        report(out, "/properties", "the object has no properties to turn into lines");
        return None;
    };
    if props.is_empty() {
        report(out, "/properties", "the object has no properties to turn into lines");
        return None;
    }
    drop_root_constraints(root, out);
    let mut branches = Vec::new();
    let mut tags = Vec::new();
    let mut refs = Vec::new();
    for (name, prop) in props {
        let at = format!("/properties/{}", escape(name));
        let Some(items) = items_of(name, prop, &at, out) else {
            continue;
        };
        let tag = singular(name);
        let branch = tagged_branch(items, &tag);
        refs.push((format!("#{at}/items"), format!("#/oneOf/{}", branches.len())));
        branches.push(Value::Object(branch));
        tags.push((name.clone(), tag));
    }
    if out[before..]
        .iter()
        .any(|u| u.message.contains("is not an array of objects") || u.message.contains("already have a `type`"))
    {
        return None;
    }
    let mut new = Map::new();
    for k in ROOT_KEEP {
        if let Some(v) = root.get(k) {
            new.insert(k.to_owned(), v.clone());
        }
    }
    new.insert("oneOf".into(), Value::Array(branches));
    carry_defs(root, &mut new, "", out);
    let mut value = Value::Object(new);
    let map: Vec<(&str, &str)> = refs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    repoint_refs(&mut value, &map, "", out);
    if out[before..].iter().any(|u| u.message.contains("$ref")) {
        return None;
    }
    Some((value, Shape::Union(tags)))
}

/// Flag each keyword that constrains the whole object: it has no per-line
/// form and is dropped.
fn drop_root_constraints(root: &Map<String, Value>, out: &mut Vec<Unconvertible>) {
    for (k, v) in root {
        let fine = ROOT_KEEP.contains(&k.as_str())
            || DEFS.contains(&k.as_str())
            || matches!(k.as_str(), "type" | "properties" | "required")
            || (k == "additionalProperties" && *v == Value::Bool(false));
        if !fine {
            report(
                out,
                &format!("/{}", escape(k)),
                format!("`{k}` constrains the whole object and has no per-line form; dropped"),
            );
        }
    }
}

/// The items schema of property `name` (at `at`), when it is an array of
/// objects whose items can take a `type` tag; what does not carry over is
/// flagged in `out`.
fn items_of<'p>(name: &str, prop: &'p Value, at: &str, out: &mut Vec<Unconvertible>) -> Option<&'p Map<String, Value>> {
    let Some(p) = prop.as_object() else {
        report(out, at, format!("property `{name}` is not an array of objects"));
        return None;
    };
    let items = p.get("items").and_then(Value::as_object);
    let is_array = p.get("type").and_then(Value::as_str) == Some("array");
    let Some(items) = items.filter(|i| is_array && i.get("type").and_then(Value::as_str) == Some("object")) else {
        report(out, at, format!("property `{name}` is not an array of objects"));
        return None;
    };
    for k in p.keys() {
        if !matches!(k.as_str(), "type" | "items" | "description" | "title") {
            report(
                out,
                &format!("{at}/{}", escape(k)),
                format!("`{k}` constrains the array `{name}` and has no per-line form; dropped"),
            );
        }
    }
    if items.get("properties").and_then(|ps| ps.get("type")).is_some() {
        report(
            out,
            &format!("{at}/items/properties/type"),
            format!("the items of `{name}` already have a `type` property; it cannot also be the tag"),
        );
        return None;
    }
    Some(items)
}

/// The items schema of one array as a union branch: `type` first in
/// `properties` (as `{"const": tag}`) and in `required`.
fn tagged_branch(items: &Map<String, Value>, tag: &str) -> Map<String, Value> {
    let mut branch = Map::new();
    for (k, v) in items {
        match k.as_str() {
            "properties" => {
                let mut ps = Map::new();
                ps.insert("type".into(), serde_json::json!({"const": tag}));
                if let Value::Object(old) = v {
                    ps.extend(old.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                branch.insert(k.clone(), Value::Object(ps));
            }
            "required" => {
                let mut req = vec![Value::String("type".into())];
                if let Value::Array(old) = v {
                    req.extend(old.iter().cloned());
                }
                branch.insert(k.clone(), Value::Array(req));
            }
            _ => {
                branch.insert(k.clone(), v.clone());
            }
        }
    }
    if !branch.contains_key("properties") {
        branch.insert("properties".into(), serde_json::json!({"type": {"const": tag}}));
    }
    if !branch.contains_key("required") {
        branch.insert("required".into(), serde_json::json!(["type"]));
    }
    branch
}
