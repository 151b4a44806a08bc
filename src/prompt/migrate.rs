//! Migration of a JSON-array prompt to JSONL (one object per line). Pure: a
//! `PromptConfig` in, the migrated config plus what the author must look at
//! out.
//!
//! - Schema: an array schema becomes its `items` schema; an object whose
//!   properties are arrays of objects becomes a `oneOf` of per-line objects
//!   told apart by a `type` const named from the property (singular). `$defs`
//!   move to the new root; local `$ref`s are re-pointed. Anything else is
//!   reported as [`Unconvertible`], never guessed.
//! - Template: JSON examples in array form are re-serialised one element per
//!   line (only when they parse and every element matches the schema, so no
//!   example is ever invented); output-format phrases ("a JSON array", "array
//!   of objects", …) are rewritten; every place that cannot be rewritten with
//!   confidence is a [`Flag`] with its template line.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Origin, PromptConfig, ResponseType};
use crate::output::schema::{CompiledSchema, kind_of};

/// A place in a template the author should check by hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// Which text: `prompt`, `system` or `description`.
    pub part: &'static str,
    /// 1-based line in the source template.
    pub line: usize,
    /// What could not be rewritten, and why.
    pub message: String,
}

/// A part of the schema that has no per-line form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unconvertible {
    /// JSON pointer into the source schema.
    pub pointer: String,
    /// What could not be converted.
    pub message: String,
}

/// The result of a migration.
#[derive(Debug, Clone)]
pub struct Migration {
    /// The migrated prompt (response type `jsonl`, `twin` = the source id).
    /// Its schema is `None` when the source schema could not be converted.
    pub config: PromptConfig,
    /// Template places to check by hand.
    pub flags: Vec<Flag>,
    /// Schema parts that were not converted.
    pub unconvertible: Vec<Unconvertible>,
}

/// How one line of the migrated output looks.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    /// Each line is one element of the old array.
    Items,
    /// Each line is one element of one of the old arrays, tagged with
    /// `type`: (property, tag) in schema order.
    Union(Vec<(String, String)>),
}

/// Singular of a property name: `-ies` → `-y`, `-sses` → `-ss`, `-s` → ``.
pub fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = word.strip_suffix("sses") {
        format!("{stem}ss")
    } else if let Some(stem) = word.strip_suffix('s') {
        stem.to_owned()
    } else {
        word.to_owned()
    }
}

/// Migrate a `json` prompt to `jsonl`. `id` overrides the new id (default:
/// the source id with `-jsonl`). Errors when the prompt is not a `json` prompt.
pub fn migrate(src: &PromptConfig, id: Option<&str>) -> Result<Migration, String> {
    if src.response_type != ResponseType::Json {
        return Err(format!(
            "prompt `{}` has response type `{}`; only `json` prompts are migrated",
            src.id, src.response_type
        ));
    }
    let mut unconvertible = Vec::new();
    let (schema, shape) = match &src.schema {
        None => (None, Some(Shape::Items)),
        Some(s) => match migrate_schema(s, &mut unconvertible) {
            Some((schema, shape)) => (Some(schema), Some(shape)),
            None => (None, None),
        },
    };
    let compiled = match schema.as_ref().map(CompiledSchema::compile).transpose() {
        Ok(c) => c,
        Err(e) => {
            unconvertible.push(Unconvertible {
                pointer: String::new(),
                message: e.to_string(),
            });
            return Ok(Migration {
                config: migrated_config(src, id, None, src.template.clone(), src.system.clone()),
                flags: Vec::new(),
                unconvertible,
            });
        }
    };
    let ctx = Ctx {
        shape: shape.as_ref(),
        schema: compiled.as_ref(),
    };
    let mut flags = Vec::new();
    let template = rewrite_template(&src.template, &ctx, "prompt", &mut flags);
    let system = rewrite_template(&src.system, &ctx, "system", &mut flags);
    let description = rewrite_template(&src.description, &ctx, "description", &mut flags);
    flags.sort_by_key(|f| (f.part != "prompt", f.part != "system", f.line));
    let mut config = migrated_config(src, id, schema, template, system);
    config.description = description;
    Ok(Migration {
        config,
        flags,
        unconvertible,
    })
}

fn migrated_config(
    src: &PromptConfig,
    id: Option<&str>,
    schema: Option<Value>,
    template: String,
    system: String,
) -> PromptConfig {
    PromptConfig {
        id: id.map_or_else(|| format!("{}-jsonl", src.id), str::to_owned),
        description: src.description.clone(),
        system,
        template,
        response_type: ResponseType::Jsonl,
        schema,
        object_schema: None,
        stop: src.stop.clone(),
        params: src.params,
        variables: src.variables.clone(),
        inputs: src.inputs.clone(),
        twin: Some(src.id.clone()),
        // A new prompt: it has no file until the caller writes it, so a
        // save can never overwrite the source.
        origin: Origin::default(),
    }
}

// ---------------------------------------------------------------- schema

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
fn migrate_schema(schema: &Value, out: &mut Vec<Unconvertible>) -> Option<(Value, Shape)> {
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
    Some((value, Shape::Items))
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
    let mut branches = Vec::new();
    let mut tags = Vec::new();
    let mut refs = Vec::new();
    for (name, prop) in props {
        let at = format!("/properties/{}", escape(name));
        let Some(p) = prop.as_object() else {
            report(out, &at, format!("property `{name}` is not an array of objects"));
            continue;
        };
        let items = p.get("items").and_then(Value::as_object);
        let is_array = p.get("type").and_then(Value::as_str) == Some("array");
        let Some(items) = items.filter(|i| is_array && i.get("type").and_then(Value::as_str) == Some("object")) else {
            report(out, &at, format!("property `{name}` is not an array of objects"));
            continue;
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
        let tag = singular(name);
        if items.get("properties").and_then(|ps| ps.get("type")).is_some() {
            report(
                out,
                &format!("{at}/items/properties/type"),
                format!("the items of `{name}` already have a `type` property; it cannot also be the tag"),
            );
            continue;
        }
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

// ---------------------------------------------------------------- template

struct Ctx<'a> {
    /// `None` when the schema was not converted: examples cannot be checked.
    shape: Option<&'a Shape>,
    schema: Option<&'a CompiledSchema>,
}

/// Recognised output-format phrases (ASCII, matched case-insensitively;
/// at one position the first that matches wins, so longer ones come first)
/// and their JSONL wording.
const PHRASES: [(&str, &str); 15] = [
    ("only the JSON array", ONLY_LINES),
    ("only the array", ONLY_LINES),
    ("a list of objects", REPLACEMENT),
    ("list of objects", REPLACEMENT),
    ("as one JSON array", ONE_PER_LINE),
    ("one JSON array", ONE_PER_LINE),
    ("a JSON array of objects", REPLACEMENT),
    ("an array of JSON objects", REPLACEMENT),
    ("a JSON list of objects", REPLACEMENT),
    ("JSON array of objects", REPLACEMENT),
    ("an array of objects", REPLACEMENT),
    ("array of objects", REPLACEMENT),
    ("a JSON array", REPLACEMENT),
    ("a JSON list", REPLACEMENT),
    ("JSON array", REPLACEMENT),
];
const REPLACEMENT: &str = "JSONL: one JSON object per line";
const ONLY_LINES: &str = "only the JSON lines, one object per line";
const ONE_PER_LINE: &str = "one JSON object per line (JSONL)";
const REDUNDANT: [&str; 2] = [", one object per line", ", one item per line"];
const SUSPECT: [&str; 4] = ["arrays", "array", "lists", "list"];

const UNION_PER_LINE: &str = "one JSON object per line, told apart by \"type\" (JSONL discriminated union)";

/// Length of `as one JSON object of <word> arrays` (or without `as `) at
/// the start of `rest`: an object of arrays, one line per element now.
fn object_of_arrays(rest: &[u8]) -> Option<usize> {
    let start = if ci_at(rest, 0, "as one JSON object of ") {
        "as one JSON object of ".len()
    } else if ci_at(rest, 0, "one JSON object of ") {
        "one JSON object of ".len()
    } else {
        return None;
    };
    let after = &rest[start..];
    let word = after.iter().take_while(|b| b.is_ascii_alphanumeric()).count();
    (word > 0 && ci_at(after, word, " arrays")).then_some(start + word + " arrays".len())
}

/// Length of a following ` of objects` / ` of <word> objects` that the
/// replacement already says, else 0.
fn of_objects(rest: &[u8]) -> usize {
    if !ci_at(rest, 0, " of ") {
        return 0;
    }
    let after = &rest[4..];
    if ci_at(after, 0, "objects") {
        return 4 + 7;
    }
    let word = after
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
        .count();
    if word > 0 && ci_at(after, word, " objects") {
        return 4 + word + 8;
    }
    0
}

fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count() + 1
}

fn ci_at(bytes: &[u8], i: usize, word: &str) -> bool {
    bytes.len() >= i + word.len() && bytes[i..i + word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// End of the template tag starting at `i` (`{{`, `{%`, `{#`), if it is one.
fn tag_end(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    let close: &[u8] = match bytes.get(i + 1)? {
        b'{' => b"}}",
        b'%' => b"%}",
        b'#' => b"#}",
        _ => return None,
    };
    let rest = &bytes[i + 2..];
    let at = rest.windows(2).position(|w| w == close)?;
    Some(i + 2 + at + 2)
}

/// End (exclusive) of the balanced `[…]` / `{…}` starting at `i`, skipping strings.
fn balanced_end(bytes: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut esc = false;
    for (j, &b) in bytes.iter().enumerate().skip(i) {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn json_like(bytes: &[u8], i: usize) -> bool {
    let next = bytes[i + 1..].iter().find(|b| !b.is_ascii_whitespace());
    matches!(next, Some(b'{' | b'[' | b'"' | b']'))
}

/// One element as a line: compact, with `", "` / `": "` separators when
/// `spaced`, and `type` first when `tag` is given.
fn line_json(v: &Value, tag: Option<&str>, spaced: bool) -> String {
    let mut s = String::new();
    match (v, tag) {
        (Value::Object(m), Some(t)) => {
            let mut tagged = Map::new();
            tagged.insert("type".into(), Value::String(t.to_owned()));
            tagged.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
            write_json(&mut s, &Value::Object(tagged), spaced);
        }
        _ => write_json(&mut s, v, spaced),
    }
    s
}

fn write_json(s: &mut String, v: &Value, spaced: bool) {
    let (comma, colon) = if spaced { (", ", ": ") } else { (",", ":") };
    match v {
        Value::Array(a) => {
            s.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    s.push_str(comma);
                }
                write_json(s, e, spaced);
            }
            s.push(']');
        }
        Value::Object(m) => {
            s.push('{');
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    s.push_str(comma);
                }
                s.push_str(&serde_json::to_string(k).unwrap_or_default());
                s.push_str(colon);
                write_json(s, e, spaced);
            }
            s.push('}');
        }
        other => s.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

/// What to do with one bracketed span of the template.
enum Span {
    /// Replace with these lines.
    Lines(Vec<String>),
    /// Leave as is, with a flag message.
    Flag(String),
    /// Not an example: leave as is and look inside no further.
    Skip,
}

fn judge_array(text: &str, ctx: &Ctx<'_>) -> Span {
    let has_tags = text.contains("{{") || text.contains("{%");
    let Ok(Value::Array(elements)) = serde_json::from_str::<Value>(text) else {
        return Span::Flag(if has_tags {
            "array example holds template syntax and cannot be parsed; rewrite it as one object per line by hand".into()
        } else {
            "array example does not parse as JSON; rewrite it as one object per line by hand".into()
        });
    };
    let spaced = text.contains("\": ") || text.contains(", \"");
    match ctx.shape {
        None => Span::Flag("the schema was not converted, so this array example was not checked or rewritten".into()),
        Some(Shape::Union(_)) => {
            Span::Flag("bare array example in a prompt whose lines are tagged by `type`; rewrite it by hand".into())
        }
        Some(Shape::Items) => {
            if elements.is_empty() {
                return Span::Flag("empty array example: in JSONL that is no lines at all; rewrite it by hand".into());
            }
            let ok = elements
                .iter()
                .all(|e| ctx.schema.map_or(e.is_object(), |s| s.is_valid(e)));
            if !ok {
                return Span::Flag("array example has elements that do not match the schema; left as is".into());
            }
            Span::Lines(elements.iter().map(|e| line_json(e, None, spaced)).collect())
        }
    }
}

fn judge_object(text: &str, ctx: &Ctx<'_>) -> Span {
    let Some(Shape::Union(tags)) = ctx.shape else {
        return Span::Skip;
    };
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) else {
        if text.contains('[') {
            return Span::Flag(
                "object example does not parse as JSON; rewrite it as one object per line by hand".into(),
            );
        }
        return Span::Skip;
    };
    if !obj.keys().any(|k| tags.iter().any(|(p, _)| p == k)) {
        return Span::Skip;
    }
    let spaced = text.contains("\": ") || text.contains(", \"");
    let mut lines = Vec::new();
    for (k, v) in &obj {
        let Some((_, tag)) = tags.iter().find(|(p, _)| p == k) else {
            return Span::Flag(format!(
                "object example has the key `{k}`, which is not one of the arrays; left as is"
            ));
        };
        let Value::Array(elements) = v else {
            return Span::Flag(format!("object example's `{k}` is not an array; left as is"));
        };
        for e in elements {
            let line = line_json(e, Some(tag), spaced);
            let tagged: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if !ctx.schema.is_none_or(|s| s.is_valid(&tagged)) {
                return Span::Flag(format!(
                    "object example has `{k}` elements that do not match the schema; left as is"
                ));
            }
            lines.push(line);
        }
    }
    if lines.is_empty() {
        return Span::Flag(
            "object example has no elements: in JSONL that is no lines at all; rewrite it by hand".into(),
        );
    }
    Span::Lines(lines)
}

/// Rewrite one template; flags carry `part` and the source line.
fn rewrite_template(text: &str, ctx: &Ctx<'_>, part: &'static str, flags: &mut Vec<Flag>) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut prose_start = 0;
    let mut i = 0;
    let mut flag = |offset: usize, message: String| {
        flags.push(Flag {
            part,
            line: line_of(text, offset),
            message,
        });
    };
    let mut pending: Vec<(usize, usize, Option<Vec<String>>)> = Vec::new();
    while i < bytes.len() {
        if let Some(end) = tag_end(bytes, i) {
            i = end;
            continue;
        }
        let b = bytes[i];
        if b != b'[' && b != b'{' {
            i += 1;
            continue;
        }
        let Some(end) = balanced_end(bytes, i) else {
            if b == b'[' && json_like(bytes, i) {
                flag(
                    i,
                    "array example is never closed; rewrite it as one object per line by hand".into(),
                );
            }
            i += 1;
            continue;
        };
        let span = &text[i..end];
        let verdict = if b == b'[' {
            if json_like(bytes, i) || span.contains("{{") {
                judge_array(span, ctx)
            } else {
                Span::Skip
            }
        } else {
            judge_object(span, ctx)
        };
        match verdict {
            Span::Lines(lines) => {
                pending.push((i, end, Some(lines)));
                i = end;
            }
            Span::Flag(m) => {
                flag(i, m);
                pending.push((i, end, None));
                i = end;
            }
            Span::Skip if b == b'[' => i = end,
            Span::Skip => i += 1,
        }
    }
    for (start, end, lines) in pending {
        out.push_str(&rewrite_prose(text, prose_start, start, &mut flag));
        match lines {
            Some(l) => out.push_str(&l.join("\n")),
            None => out.push_str(&text[start..end]),
        }
        prose_start = end;
    }
    out.push_str(&rewrite_prose(text, prose_start, text.len(), &mut flag));
    out
}

/// Rewrite output-format phrases in `text[from..to]`; flag suspect words
/// left over.
fn rewrite_prose(text: &str, from: usize, to: usize, flag: &mut impl FnMut(usize, String)) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = from;
    let mut i = from;
    let boundary = |j: usize| j >= bytes.len() || !bytes[j].is_ascii_alphanumeric();
    while i < to {
        if let Some(end) = tag_end(bytes, i).filter(|&e| e <= to) {
            i = end;
            continue;
        }
        if i > 0 && !boundary(i - 1) {
            i += 1;
            continue;
        }
        if let Some(len) = object_of_arrays(&bytes[i..to]) {
            out.push_str(&text[copied..i]);
            out.push_str(UNION_PER_LINE);
            copied = i + len;
            i = copied;
            continue;
        }
        if let Some((p, replacement)) = PHRASES
            .iter()
            .find(|(p, _)| i + p.len() <= to && ci_at(bytes, i, p) && boundary(i + p.len()))
        {
            out.push_str(&text[copied..i]);
            out.push_str(replacement);
            let mut end = i + p.len();
            end += of_objects(&bytes[end..to]);
            if let Some(r) = REDUNDANT.iter().find(|r| end + r.len() <= to && ci_at(bytes, end, r)) {
                end += r.len();
            }
            copied = end;
            i = end;
            continue;
        }
        if let Some(w) = SUSPECT
            .iter()
            .find(|w| i + w.len() <= to && ci_at(bytes, i, w) && boundary(i + w.len()))
        {
            flag(
                i,
                format!(
                    "`{}` not rewritten: say here by hand that the answer is one JSON object per line (JSONL)",
                    &text[i..i + w.len()]
                ),
            );
            i += w.len();
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..to]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singulars() {
        assert_eq!(singular("definitions"), "definition");
        assert_eq!(singular("relationships"), "relationship");
        assert_eq!(singular("entities"), "entity");
        assert_eq!(singular("attributes"), "attribute");
        assert_eq!(singular("classes"), "class");
        assert_eq!(singular("addresses"), "address");
        assert_eq!(singular("data"), "data");
    }

    #[test]
    fn phrases_absorb_what_the_replacement_already_says() {
        let mut flags = Vec::new();
        let mut flag = |at: usize, m: String| flags.push((at, m));
        let text = "Answer with a JSON array of row objects, one row per line. A json list, one item per line.";
        assert_eq!(
            rewrite_prose(text, 0, text.len(), &mut flag),
            "Answer with JSONL: one JSON object per line, one row per line. JSONL: one JSON object per line."
        );
        assert!(flags.is_empty());
    }

    #[test]
    fn boundary_chars() {
        assert_eq!(line_of("a\nb\nc", 4), 3);
        assert_eq!(balanced_end(br#"x["]",{}]y"#, 1), Some(9));
        assert_eq!(tag_end(b"a{{ x }}b", 1), Some(8));
    }
}
