//! One TOML file's positions, and readers of its values that refuse a
//! wrong type at the value's line and column. A string's content maps back
//! to the file only when it is verbatim there, so errors inside a schema or
//! template point into the file when they can and at the key when not.

use std::ops::Range;

use serde_json::{Map, Value};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::prompt::loaders::{json_message, syntax_cause};
use crate::prompt::render::{Part, SyntaxError};
use crate::prompt::{ConfigError, SampleInput, Warning};

/// Positions in one TOML file, for messages.
pub(super) struct Doc<'a> {
    pub(super) label: &'a str,
    pub(super) text: &'a str,
}

/// Where a string value's content starts, and whether its content is the
/// source text verbatim (a literal string, or a basic one without escapes):
/// only then do lines and columns inside it map to the file.
pub(super) struct Content {
    pub(super) start: usize,
    pub(super) verbatim: bool,
}

impl Doc<'_> {
    /// The 1-based line of byte `offset`.
    pub(super) fn line(&self, offset: usize) -> usize {
        crate::output::position::line_col(self.text.as_bytes(), offset).0
    }

    /// An error at the start of `span`.
    pub(super) fn err(&self, span: &Range<usize>, cause: impl Into<String>) -> ConfigError {
        ConfigError::at_offset(self.label, self.text.as_bytes(), span.start, cause)
    }

    /// A warning at the line of `span`.
    pub(super) fn warn(&self, span: &Range<usize>, message: impl Into<String>) -> Warning {
        Warning::new(self.label, Some(self.line(span.start)), message)
    }

    /// A TOML syntax error, at its position when the parser gives one.
    pub(super) fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let cause = format!("TOML syntax error: {}", e.message().trim_end());
        match e.span() {
            Some(span) => self.err(&span, cause),
            None => ConfigError::new(self.label, cause),
        }
    }

    /// Where the string `value` written at `span` starts, and whether it is verbatim.
    pub(super) fn content(&self, span: &Range<usize>, value: &str) -> Content {
        let raw = self.text.get(span.clone()).unwrap_or("");
        let mut start = span.start;
        if raw.starts_with("\"\"\"") || raw.starts_with("'''") {
            start += 3;
            let rest = &raw[3..];
            if rest.starts_with("\r\n") {
                start += 2;
            } else if rest.starts_with('\n') {
                start += 1;
            }
        } else if raw.starts_with('"') || raw.starts_with('\'') {
            start += 1;
        }
        let verbatim = self.text.get(start..start + value.len()) == Some(value);
        Content { start, verbatim }
    }

    /// `key`'s value as a string.
    pub(super) fn string(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<String, ConfigError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.err(&v.span(), format!("`{key}` must be a string, not {}", other.type_str()))),
        }
    }

    /// `key`'s value as an array of strings.
    pub(super) fn strings(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Vec<String>, ConfigError> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(
                &v.span(),
                format!("`{key}` must be an array of strings, not {}", v.get_ref().type_str()),
            ));
        };
        items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::String(s) => Ok(s.to_string()),
                other => Err(self.err(
                    &item.span(),
                    format!("`{key}` must be an array of strings; found {}", other.type_str()),
                )),
            })
            .collect()
    }

    /// `key`'s value as a table, in JSON.
    pub(super) fn table(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Map<String, Value>, ConfigError> {
        match v.get_ref() {
            DeValue::Table(t) => self.table_json(key, t),
            other => Err(self.err(&v.span(), format!("`{key}` must be a table, not {}", other.type_str()))),
        }
    }

    /// A TOML table as a JSON object; `key` prefixes the paths in messages.
    fn table_json(&self, key: &str, t: &DeTable<'_>) -> Result<Map<String, Value>, ConfigError> {
        let mut out = Map::new();
        for (k, v) in t {
            let path = format!("{key}.{}", k.get_ref());
            out.insert(k.get_ref().to_string(), self.json(&path, v)?);
        }
        Ok(out)
    }

    /// A TOML value as JSON. TOML has no null; JSON has no NaN or infinity.
    pub(super) fn json(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Value, ConfigError> {
        Ok(match v.get_ref() {
            DeValue::String(s) => Value::String(s.to_string()),
            DeValue::Boolean(b) => Value::Bool(*b),
            DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix())
                .ok()
                .and_then(|n| serde_json::from_str(&n.to_string()).ok())
                .ok_or_else(|| self.err(&v.span(), format!("`{key}`: integer out of range")))?,
            DeValue::Float(f) => float_json(f.as_str()).ok_or_else(|| {
                self.err(
                    &v.span(),
                    format!("`{key}`: {} cannot be represented in JSON", f.as_str()),
                )
            })?,
            DeValue::Datetime(d) => Value::String(d.to_string()),
            DeValue::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.json(&format!("{key}[{i}]"), item))
                    .collect::<Result<_, _>>()?,
            ),
            DeValue::Table(t) => Value::Object(self.table_json(key, t)?),
        })
    }

    /// `schema`: a JSON string (its errors mapped to the file) or a table.
    pub(super) fn schema(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Value, ConfigError> {
        match v.get_ref() {
            DeValue::String(s) => serde_json::from_str(s).map_err(|e| {
                let msg = json_message(&e);
                let content = self.content(&v.span(), s);
                if content.verbatim {
                    let inner = crate::output::position::offset_of(s.as_bytes(), e.line(), e.column());
                    ConfigError::at_offset(
                        self.label,
                        self.text.as_bytes(),
                        content.start + inner,
                        format!("`{key}` is not valid JSON: {msg}"),
                    )
                } else {
                    self.err(
                        &v.span(),
                        format!(
                            "`{key}` is not valid JSON: {msg} (line {} column {} of the string)",
                            e.line(),
                            e.column()
                        ),
                    )
                }
            }),
            DeValue::Table(t) => Ok(Value::Object(self.table_json(key, t)?)),
            other => Err(self.err(
                &v.span(),
                format!("`{key}` must be a JSON string or a table, not {}", other.type_str()),
            )),
        }
    }

    /// `[[input]]`: sample inputs, each with a unique `name`.
    pub(super) fn inputs(&self, v: &Spanned<DeValue<'_>>) -> Result<Vec<SampleInput>, ConfigError> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(
                &v.span(),
                format!(
                    "`input` must be an array of tables ([[input]]), not {}",
                    v.get_ref().type_str()
                ),
            ));
        };
        let mut out: Vec<SampleInput> = Vec::with_capacity(items.len());
        for item in &**items {
            let DeValue::Table(t) = item.get_ref() else {
                return Err(self.err(
                    &item.span(),
                    format!(
                        "`input` must be an array of tables ([[input]]); found {}",
                        item.get_ref().type_str()
                    ),
                ));
            };
            let mut name = None;
            let mut vars = Map::new();
            for (k, val) in t {
                if k.get_ref() == "name" {
                    let n = self.string("name", val)?;
                    if out.iter().any(|i| i.name == n) {
                        return Err(self.err(&val.span(), format!("duplicate input name {n:?}")));
                    }
                    name = Some(n);
                } else {
                    let path = format!("input.{}", k.get_ref());
                    vars.insert(k.get_ref().to_string(), self.json(&path, val)?);
                }
            }
            let Some(name) = name else {
                return Err(self.err(&item.span(), "[[input]] needs a `name`"));
            };
            out.push(SampleInput { name, vars });
        }
        Ok(out)
    }

    /// A template syntax error at its file position when the template's text
    /// is verbatim in the file, else at the key's line.
    pub(super) fn template_error(
        &self,
        part: Part,
        key_span: &Range<usize>,
        value_span: &Range<usize>,
        source: &str,
        e: &SyntaxError,
    ) -> ConfigError {
        let cause = syntax_cause(part, e);
        let content = self.content(value_span, source);
        if content.verbatim {
            if let Some(r) = &e.range {
                return ConfigError::at_offset(self.label, self.text.as_bytes(), content.start + r.start, cause);
            }
            if let Some(n) = e.line {
                return ConfigError::at(self.label, self.line(content.start) + n - 1, None, cause);
            }
        }
        ConfigError::at(self.label, self.line(key_span.start), None, cause)
    }
}

/// A TOML float's text as a JSON number; `None` for infinity and NaN, which
/// JSON lacks.
fn float_json(raw: &str) -> Option<Value> {
    let text: String = raw.chars().filter(|&c| c != '_').collect();
    let text = text.strip_prefix('+').unwrap_or(&text);
    if text.contains("inf") || text.contains("nan") {
        return None;
    }
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_number)
        .or_else(|| {
            text.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        })
}
