//! Writing a prompt as cutline TOML (the inverse of `load`'s TOML reader).

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::PromptConfig;

/// Serialise a prompt as cutline TOML; [`super::load_toml`] reads it back to an
/// equal config (origin aside).
///
/// TOML has no null: null variables (and nulls inside arrays) are left out.
/// Integers beyond TOML's 64-bit range are written as floats.
pub fn to_toml(p: &PromptConfig) -> String {
    let mut out = String::new();
    let mut line = |key: &str, value: String| {
        out.push_str(key);
        out.push_str(" = ");
        out.push_str(&value);
        out.push('\n');
    };
    line("id", basic(&p.id));
    if !p.description.is_empty() {
        line("description", string(&p.description));
    }
    line("response-type", basic(p.response_type.as_str()));
    if let Some(t) = &p.twin {
        line("twin", basic(t));
    }
    if !p.stop.is_empty() {
        let items: Vec<String> = p.stop.iter().map(|s| basic(s)).collect();
        line("stop", format!("[{}]", items.join(", ")));
    }
    for (key, value) in super::params::toml_lines(&p.params) {
        line(key, value);
    }
    if !p.system.is_empty() {
        line("system", string(&p.system));
    }
    line("prompt", string(&p.template));
    if let Some(schema) = &p.schema {
        let pretty = serde_json::to_string_pretty(schema).unwrap_or_else(|_| schema.to_string());
        line("schema", multiline(&format!("{pretty}\n")));
    }
    if let Some(schema) = &p.object_schema {
        let pretty = serde_json::to_string_pretty(schema).unwrap_or_else(|_| schema.to_string());
        line("object-schema", multiline(&format!("{pretty}\n")));
    }
    if !p.variables.is_empty() {
        out.push_str("\n[variables]\n");
        write_pairs(&mut out, &p.variables, &[]);
    }
    for input in &p.inputs {
        out.push_str("\n[[input]]\nname = ");
        out.push_str(&basic(&input.name));
        out.push('\n');
        write_pairs(&mut out, &input.vars, &["name"]);
    }
    out
}

fn write_pairs(out: &mut String, map: &Map<String, Value>, skip: &[&str]) {
    for (k, v) in map {
        if v.is_null() || skip.contains(&k.as_str()) {
            continue;
        }
        out.push_str(&key(k));
        out.push_str(" = ");
        out.push_str(&toml_value(v));
        out.push('\n');
    }
}

/// A bare key when TOML allows one, else a quoted key.
fn key(k: &str) -> String {
    if !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        k.to_owned()
    } else {
        basic(k)
    }
}

fn toml_value(v: &Value) -> String {
    match v {
        Value::Null => "\"\"".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            let text = n.to_string();
            let integral = !text.contains(['.', 'e', 'E']);
            if integral && n.as_i64().is_none() {
                format!("{text}.0")
            } else {
                text
            }
        }
        Value::String(s) => string(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().filter(|v| !v.is_null()).map(toml_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let pairs: Vec<String> = m
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{} = {}", key(k), toml_value(v)))
                .collect();
            if pairs.is_empty() {
                "{}".to_owned()
            } else {
                format!("{{ {} }}", pairs.join(", "))
            }
        }
    }
}

/// A TOML string: multi-line when the text has line breaks.
fn string(s: &str) -> String {
    if s.contains('\n') { multiline(s) } else { basic(s) }
}

/// A multi-line string: literal (`'''`, the text verbatim) when TOML allows,
/// else basic (`"""`) with escapes. The newline after the opening delimiter
/// is dropped by TOML, so the text's own first character is kept exactly.
fn multiline(s: &str) -> String {
    let literal_ok = !s.contains("'''")
        && !s.ends_with('\'')
        && s.chars().all(|c| c == '\t' || c == '\n' || (c >= ' ' && c != '\u{7f}'));
    if literal_ok {
        format!("'''\n{s}'''")
    } else {
        format!("\"\"\"\n{}\"\"\"", escape(s, true))
    }
}

/// A one-line basic string.
fn basic(s: &str) -> String {
    format!("\"{}\"", escape(s, false))
}

fn escape(s: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' if keep_newlines => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\t' => out.push('\t'),
            '\r' => out.push_str("\\r"),
            c if c < ' ' || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{Origin, ResponseType, SampleInput, load_toml};
    use serde_json::json;

    #[test]
    fn to_toml_round_trips_awkward_strings() {
        let mut vars = Map::new();
        vars.insert("plain".into(), json!("a"));
        vars.insert("quote's".into(), json!("ends with '"));
        vars.insert("nested".into(), json!({"a": [1, 2.5, "x\ny"], "b": {"c": true}}));
        vars.insert("big".into(), json!(1.5e300));
        let p = PromptConfig {
            params: crate::prompt::params::RunParams::default(),
            id: "x".into(),
            description: "d \"quoted\"".into(),
            system: "sys\r\nwith CR and ''' and \u{1}".into(),
            template: "\nleading newline\n{{ text }}\ntrailing '".into(),
            response_type: ResponseType::Jsonl,
            schema: Some(json!({"type": "object", "description": "it'''s", "x": 1.50})),
            object_schema: Some(json!({"type": "object"})),
            stop: vec!["\n\n".into(), "</output>".into()],
            variables: vars,
            inputs: vec![SampleInput {
                name: "n".into(),
                vars: {
                    let mut m = Map::new();
                    m.insert("text".into(), json!("multi\nline\n"));
                    m
                },
            }],
            twin: Some("y".into()),
            origin: Origin::default(),
        };
        let text = to_toml(&p);
        let (mut back, _) = load_toml("x.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        back.origin = Origin::default();
        assert_eq!(back, p, "{text}");
    }
}
