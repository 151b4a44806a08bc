//! GBNF grammars that constrain a JSONL answer on llama.cpp: lines of one
//! JSON object each, every line valid under the prompt's per-line schema by
//! construction. Truncation still cuts at most the last line.
//!
//! Written here rather than taken from a crate: llama.cpp's own converter
//! needs native linking, and the `gbnf` crate's subset drops optional
//! properties and mangles names with underscores. The subset is small and
//! documented: `type` (one or a list), `properties`, `required`,
//! `additionalProperties` (false, true, or a schema for free-form rows),
//! `minProperties` up to 1, `enum`, `const`, `minLength`/`maxLength`,
//! `items`, `anyOf`, and `oneOf` whose branches have distinct `type`
//! consts. Annotations are ignored. Any other keyword is [`Unsupported`]:
//! the run goes unconstrained and says why, rather than trusting a
//! grammar that would let an invalid line through.

use std::fmt::Write as _;

use serde_json::Value;

/// A schema keyword outside the subset, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{keyword}` at {pointer} is outside the grammar subset")]
pub struct Unsupported {
    /// The keyword (or a short description of the construct).
    pub keyword: String,
    /// JSON pointer of the schema that holds it (`#` is the root).
    pub pointer: String,
}

/// Keywords that say nothing about validity.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords the subset enforces.
const HANDLED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "enum",
    "const",
    "minLength",
    "maxLength",
    "items",
    "anyOf",
    "oneOf",
];

/// The fixed rules every grammar ends with.
const BASE: &str = r#"ws ::= " "?
string ::= "\"" char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
integer ::= "-"? ("0" | [1-9] [0-9]{0,15})
number ::= integer ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?
boolean ::= "true" | "false"
any ::= anyobject | anyarray | string | number | boolean | "null"
anyobject ::= "{" ws (string ws ":" ws any ("," ws string ws ":" ws any)*)? ws "}"
anyarray ::= "[" ws (any ("," ws any)*)? ws "]"
"#;

/// The grammar for JSONL lines valid under `line_schema`. After any
/// complete line the answer may end, or go on with one of the prompt's
/// `stop` sequences (less the newline the line already ended with), so a
/// model that ends its answer with a marker such as `\n###` still can.
pub fn jsonl(line_schema: &Value, stop: &[String]) -> Result<String, Unsupported> {
    let mut b = Builder::default();
    let line = b.value(line_schema, "#")?;
    let mut ends: Vec<String> = stop
        .iter()
        .map(|s| s.strip_prefix('\n').unwrap_or(s))
        .filter(|s| !s.is_empty())
        .map(literal)
        .collect();
    ends.dedup();
    let end = if ends.is_empty() {
        String::new()
    } else {
        format!(" ({})?", ends.join(" | "))
    };
    let mut g = format!("root ::= (line \"\\n\")*{end}\nline ::= {line}\n");
    for (name, body) in &b.rules {
        let _ = writeln!(g, "{name} ::= {body}");
    }
    g.push_str(BASE);
    Ok(g)
}

#[derive(Default)]
struct Builder {
    rules: Vec<(String, String)>,
}

fn unsupported(keyword: impl Into<String>, pointer: &str) -> Unsupported {
    Unsupported {
        keyword: keyword.into(),
        pointer: pointer.to_owned(),
    }
}

/// A GBNF string literal for `s`.
fn literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The JSON text of `v` as a GBNF literal.
fn json_literal(v: &Value) -> String {
    literal(&v.to_string())
}

fn pointer_of(base: &str, part: &str) -> String {
    format!("{base}/{}", part.replace('~', "~0").replace('/', "~1"))
}

impl Builder {
    /// Add a named rule; returns its name.
    fn rule(&mut self, hint: &str, body: String) -> String {
        let mut name: String = hint
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        name = format!("{}-{}", name.trim_matches('-'), self.rules.len());
        self.rules.push((name.clone(), body));
        name
    }

    /// The expression for a value valid under `s` (at `ptr`).
    fn value(&mut self, s: &Value, ptr: &str) -> Result<String, Unsupported> {
        let m = match s {
            Value::Bool(true) => return Ok("any".into()),
            Value::Object(m) => m,
            _ => return Err(unsupported("a schema that is not an object or true", ptr)),
        };
        if let Some(k) = m
            .keys()
            .find(|k| !ANNOTATIONS.contains(&k.as_str()) && !HANDLED.contains(&k.as_str()))
        {
            return Err(unsupported(k.clone(), ptr));
        }
        if let Some(c) = m.get("const") {
            return Ok(json_literal(c));
        }
        if let Some(e) = m.get("enum") {
            let alts: Vec<String> = e
                .as_array()
                .ok_or_else(|| unsupported("enum that is not a list", ptr))?
                .iter()
                .map(json_literal)
                .collect();
            return Ok(format!("({})", alts.join(" | ")));
        }
        if let Some(branches) = m.get("oneOf") {
            return self.branches(branches, &pointer_of(ptr, "oneOf"), true);
        }
        if let Some(branches) = m.get("anyOf") {
            return self.branches(branches, &pointer_of(ptr, "anyOf"), false);
        }
        match m.get("type") {
            Some(Value::String(t)) => self.typed(t, s, ptr),
            Some(Value::Array(ts)) => {
                let alts = ts
                    .iter()
                    .map(|t| self.typed(t.as_str().unwrap_or_default(), s, ptr))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(format!("({})", alts.join(" | ")))
            }
            None if m.contains_key("properties") || m.contains_key("additionalProperties") => {
                self.typed("object", s, ptr)
            }
            None => Ok("any".into()),
            Some(_) => Err(unsupported("type", ptr)),
        }
    }

    /// `oneOf` (branches must carry distinct `type` consts, so at most one
    /// matches) or `anyOf` (any branch).
    fn branches(&mut self, branches: &Value, ptr: &str, exclusive: bool) -> Result<String, Unsupported> {
        let list = branches
            .as_array()
            .filter(|l| !l.is_empty())
            .ok_or_else(|| unsupported("a non-empty list of branches", ptr))?;
        if exclusive {
            let mut tags: Vec<&str> = list
                .iter()
                .filter_map(|b| b.pointer("/properties/type/const").and_then(Value::as_str))
                .collect();
            tags.sort_unstable();
            tags.dedup();
            if tags.len() != list.len() {
                return Err(unsupported("oneOf without a distinct `type` const per branch", ptr));
            }
        }
        let mut alts = Vec::new();
        for (i, b) in list.iter().enumerate() {
            let body = self.value(b, &format!("{ptr}/{i}"))?;
            let hint = b
                .pointer("/properties/type/const")
                .and_then(Value::as_str)
                .unwrap_or("branch");
            alts.push(self.rule(hint, body));
        }
        Ok(format!("({})", alts.join(" | ")))
    }

    fn typed(&mut self, t: &str, s: &Value, ptr: &str) -> Result<String, Unsupported> {
        Ok(match t {
            "string" => string(s),
            "number" => "number".into(),
            "integer" => "integer".into(),
            "boolean" => "boolean".into(),
            "null" => "\"null\"".into(),
            "array" => {
                let item = match s.get("items") {
                    Some(i) => self.value(i, &pointer_of(ptr, "items"))?,
                    None => "any".into(),
                };
                let item = self.rule("item", item);
                format!("\"[\" ws ({item} (\",\" ws {item})*)? ws \"]\"")
            }
            "object" => self.object(s, ptr)?,
            other => return Err(unsupported(format!("type {other:?}"), ptr)),
        })
    }

    fn object(&mut self, s: &Value, ptr: &str) -> Result<String, Unsupported> {
        let props = s.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let min = s.get("minProperties").and_then(Value::as_u64).unwrap_or(0);
        let Some(props) = props.filter(|p| !p.is_empty()) else {
            // A free-form object: its pairs' values under
            // `additionalProperties`.
            if min > 1 || !required.is_empty() {
                return Err(unsupported("minProperties over 1 or required without properties", ptr));
            }
            let value = match s.get("additionalProperties") {
                Some(Value::Bool(false)) => return Ok("\"{\" ws \"}\"".into()),
                Some(v @ Value::Object(_)) => self.value(v, &pointer_of(ptr, "additionalProperties"))?,
                _ => "any".into(),
            };
            let pair = self.rule("pair", format!("string ws \":\" ws {value}"));
            let pairs = format!("{pair} (\",\" ws {pair})*");
            return Ok(if min == 1 {
                format!("\"{{\" ws {pairs} ws \"}}\"")
            } else {
                format!("\"{{\" ws ({pairs})? ws \"}}\"")
            });
        };
        if let Some(r) = required.iter().find(|r| !props.contains_key(**r)) {
            return Err(unsupported(format!("required {r:?} without a schema"), ptr));
        }
        // The first required property leads, so every later one, present
        // or not, starts with its comma; the rest keep their order.
        let Some(lead) = props.keys().find(|k| required.contains(&k.as_str())) else {
            return Err(unsupported("an object with no required property", ptr));
        };
        let mut body = String::from("\"{\" ws");
        let order = std::iter::once(lead).chain(props.keys().filter(|k| *k != lead));
        for (i, k) in order.enumerate() {
            let v = self.value(&props[k], &pointer_of(&pointer_of(ptr, "properties"), k))?;
            let kv = format!("{} ws \":\" ws {v}", literal(&Value::String(k.clone()).to_string()));
            let _ = match (i, required.contains(&k.as_str())) {
                (0, _) => write!(body, " {kv}"),
                (_, true) => write!(body, " \",\" ws {kv}"),
                (_, false) => write!(body, " (\",\" ws {kv})?"),
            };
        }
        body.push_str(" ws \"}\"");
        Ok(body)
    }
}

/// A JSON string within `minLength`/`maxLength` characters.
fn string(s: &Value) -> String {
    let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    let max = s.get("maxLength").and_then(Value::as_u64);
    let chars = match (min, max) {
        (0, None) => "char*".into(),
        (1, None) => "char+".into(),
        (m, None) => format!("char{{{m},}}"),
        (m, Some(x)) => format!("char{{{m},{x}}}"),
    };
    format!("\"\\\"\" {chars} \"\\\"\"")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_object_with_required_and_optional_properties() {
        let s = json!({"type": "object", "additionalProperties": false,
            "properties": {"note": {"type": "string"}, "term": {"type": "string", "minLength": 1},
                           "n": {"type": "integer"}, "kind": {"enum": ["a", "b"]}},
            "required": ["term", "n"]});
        let g = jsonl(&s, &["\n###".into(), "\n\n".into()]).unwrap();
        let head: Vec<&str> = g.lines().take(2).collect();
        assert_eq!(
            head,
            [
                r####"root ::= (line "\n")* ("###" | "\n")?"####,
                r#"line ::= "{" ws "\"term\"" ws ":" ws "\"" char+ "\"" ("," ws "\"note\"" ws ":" ws "\"" char* "\"")? "," ws "\"n\"" ws ":" ws integer ("," ws "\"kind\"" ws ":" ws ("\"a\"" | "\"b\""))? ws "}""#
            ]
        );
        assert!(g.ends_with(BASE));
    }

    #[test]
    fn a_type_union_becomes_named_branches() {
        let s = json!({"oneOf": [
            {"type": "object", "properties": {"type": {"const": "definition"}, "entity": {"type": "string"}},
             "required": ["type", "entity"]},
            {"type": "object", "properties": {"type": {"const": "relationship"}, "s": {"type": "string"}},
             "required": ["type", "s"]}
        ]});
        let g = jsonl(&s, &[]).unwrap();
        assert!(g.contains("line ::= (definition-0 | relationship-1)\n"), "{g}");
        assert!(
            g.contains(r#"definition-0 ::= "{" ws "\"type\"" ws ":" ws "\"definition\"" "," ws"#),
            "{g}"
        );
    }

    #[test]
    fn free_form_rows() {
        let s = json!({"type": "object", "minProperties": 1,
            "additionalProperties": {"type": ["string", "number", "null"]}});
        let g = jsonl(&s, &[]).unwrap();
        assert!(g.contains(r#"line ::= "{" ws pair-0 ("," ws pair-0)* ws "}""#), "{g}");
        assert!(
            g.contains(r#"pair-0 ::= string ws ":" ws ("\"" char* "\"" | number | "null")"#),
            "{g}"
        );
    }

    #[test]
    fn keywords_outside_the_subset_are_named_with_their_place() {
        let s = json!({"type": "object", "properties": {"d": {"type": "string", "pattern": "^a"}}, "required": ["d"]});
        let e = jsonl(&s, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`pattern` at #/properties/d is outside the grammar subset"
        );
        let s = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(
            jsonl(&s, &[]).unwrap_err().keyword,
            "oneOf without a distinct `type` const per branch"
        );
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(
            jsonl(&s, &[]).unwrap_err().keyword,
            "an object with no required property"
        );
    }

    #[test]
    fn literals_escape_what_gbnf_needs() {
        assert_eq!(literal("a\"b\\c\nd\u{1}é"), r#""a\"b\\c\nd\x01é""#);
        assert_eq!(json_literal(&json!("x\"y")), r#""\"x\\\"y\"""#);
    }
}
