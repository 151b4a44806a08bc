//! The `json` response type: strict parse as TrustGraph does it, plus salvage.
//!
//! Strict: the content of the first fenced block (```` ```json … ``` ```` or a
//! bare fence), else the whole text, stripped; one `serde_json` parse; the
//! whole value validated. Anything else is an error — exactly the
//! all-or-nothing behaviour a JSON-array prompt has in production.
//!
//! Salvage runs beside it and recovers the complete elements before a cut or
//! the first syntax error, each validated against the element schema.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::position::{LineCounter, line_col, offset_of};
use super::salvage::{self, Element, Stop, StopReason};
use super::schema::{CompiledSchema, SchemaCompileError, Violation};
use super::text::py_strip_bytes;

/// Outcome of the strict parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonStatus {
    /// Parsed and valid.
    Ok,
    /// Not JSON (cut, or broken syntax).
    InvalidJson,
    /// JSON, but the schema rejects it.
    SchemaInvalid,
}

/// Where the strict parse stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParseStop {
    /// 1-based line in the response text.
    pub line: usize,
    /// 1-based column (characters) in that line.
    pub column: usize,
    /// True when the input ran out (truncation), false when syntax broke.
    pub truncated: bool,
    /// The parser's message.
    pub message: String,
}

/// One salvaged element and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SalvagedElement {
    /// 0-based position among the recovered elements.
    pub index: usize,
    /// Property of the enclosing object, for an object of arrays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// 1-based line where the element starts.
    pub line: usize,
    /// The element.
    pub value: Value,
    /// Whether it satisfies the element schema.
    pub valid: bool,
    /// The schema's complaints, when not valid.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Violation>,
}

/// Full analysis of a `json` response.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JsonAnalysis {
    /// Strict verdict.
    pub status: JsonStatus,
    /// The strict value, when it parsed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// Where and why strict parsing stopped, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ParseStop>,
    /// Schema violations of the whole value, when `schema_invalid`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// The items a strict consumer gets: the array's elements (or the
    /// elements of an object's array properties) when status is `ok`.
    pub items: Vec<Value>,
    /// Every complete element salvage recovered, valid or not.
    pub elements: Vec<SalvagedElement>,
    /// The valid salvaged elements: what salvage adds over strict.
    pub salvaged: Vec<Value>,
    /// Where salvage stopped, when the array never closed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub salvage_stop: Option<SalvageStop>,
    /// Tokens of the strict value that Python's `json.loads` accepts and
    /// JSON does not (see [`super::pyjson`]); the value has `null` / U+FFFD
    /// in their place.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_standard: Vec<String>,
}

/// Where salvage stopped and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SalvageStop {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// `eof`, `syntax` or `no_array`.
    pub reason: StopReason,
    /// The parser's message, for a syntax error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The schemas a `json` response is checked against, compiled once.
#[derive(Debug, Default)]
pub struct JsonSchemas {
    /// The whole-response schema.
    pub whole: Option<CompiledSchema>,
    /// Element schema of a top-level array.
    pub items: Option<CompiledSchema>,
    /// Element schemas of an object's array properties.
    pub by_property: HashMap<String, CompiledSchema>,
}

impl JsonSchemas {
    /// Compile the whole schema and the element schemas derived from it.
    pub fn compile(schema: Option<&Value>) -> Result<Self, SchemaCompileError> {
        let Some(schema) = schema else {
            return Ok(Self::default());
        };
        let whole = Some(CompiledSchema::compile(schema)?);
        let items = CompiledSchema::items_schema(schema)
            .map(|s| CompiledSchema::compile(&s))
            .transpose()?;
        let mut by_property = HashMap::new();
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                let rooted = match prop.get("$ref").and_then(Value::as_str) {
                    Some(r) if r.starts_with("#/") => schema.pointer(&r[1..]).unwrap_or(prop),
                    _ => prop,
                };
                if let Some(item) = CompiledSchema::items_schema(&with_defs(schema, rooted)) {
                    by_property.insert(name.clone(), CompiledSchema::compile(&item)?);
                }
            }
        }
        Ok(Self {
            whole,
            items,
            by_property,
        })
    }

    /// The schema an element under `property` must satisfy.
    pub fn element(&self, property: Option<&str>) -> Option<&CompiledSchema> {
        match property {
            Some(p) => self.by_property.get(p),
            None => self.items.as_ref(),
        }
    }
}

fn with_defs(root: &Value, sub: &Value) -> Value {
    let mut out = sub.clone();
    if let (Some(o), Some(r)) = (out.as_object_mut(), root.as_object()) {
        for key in ["$defs", "definitions"] {
            if let Some(d) = r.get(key) {
                o.entry(key).or_insert_with(|| d.clone());
            }
        }
    }
    out
}

/// The text TrustGraph would hand to `json.loads`: the content of the first
/// fenced block, else the whole text; stripped. Returns its byte range.
pub fn strict_region(text: &str) -> std::ops::Range<usize> {
    strict_region_bytes(text.as_bytes())
}

/// [`strict_region`] over bytes (the fences are ASCII, so invalid bytes
/// elsewhere do not move them).
pub fn strict_region_bytes(text: &[u8]) -> std::ops::Range<usize> {
    match fenced_block(text) {
        Some((content, _)) => strip_range(text, content.start, content.end),
        None => strip_range(text, 0, text.len()),
    }
}

/// The first fenced block as Python's `re.search(r'```(?:json)?(.*?)```',
/// text, re.DOTALL)` finds it: the content's byte range, and the end of the
/// closing fence.
pub fn fenced_block(text: &[u8]) -> Option<(std::ops::Range<usize>, usize)> {
    let open = memchr::memmem::find(text, b"```")?;
    let mut start = open + 3;
    if text[start..].starts_with(b"json") {
        start += 4;
    }
    let close = start + memchr::memmem::find(&text[start..], b"```")?;
    Some((start..close, close + 3))
}

fn strip_range(text: &[u8], start: usize, end: usize) -> std::ops::Range<usize> {
    let inner = &text[start..end];
    let stripped = py_strip_bytes(inner);
    let lead = stripped.as_ptr() as usize - inner.as_ptr() as usize;
    start + lead..start + lead + stripped.len()
}

/// The items a strict consumer of `value` gets.
pub fn items_of(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(a) => a.clone(),
        Value::Object(o) if !o.is_empty() && o.values().all(Value::is_array) => {
            o.values().filter_map(Value::as_array).flatten().cloned().collect()
        }
        other => vec![other.clone()],
    }
}

/// Analyse a `json` response: strict parse, validation, salvage.
pub fn analyse(text: &str, schemas: &JsonSchemas) -> JsonAnalysis {
    let (elements, stop) = salvage::salvage(text.as_bytes());
    analyse_with(text, schemas, elements, stop)
}

/// Analysis from salvage results already computed (the streaming analyser
/// has them as the text arrives).
pub fn analyse_with(text: &str, schemas: &JsonSchemas, elements: Vec<Element>, stop: Option<Stop>) -> JsonAnalysis {
    let bytes = text.as_bytes();
    let region = strict_region(text);
    let judged =
        |v: Value, checked: Option<&Value>| match schemas.whole.as_ref().map(|s| s.validate(checked.unwrap_or(&v))) {
            Some(Err(errs)) => (JsonStatus::SchemaInvalid, Some(v), None, errs),
            _ => (JsonStatus::Ok, Some(v), None, Vec::new()),
        };
    let mut not_standard = Vec::new();
    let strict = &bytes[region.clone()];
    let (status, value, error, violations) = match serde_json::from_slice::<Value>(strict) {
        Ok(v) => judged(v, None),
        Err(e) => match super::pyjson::with_stack(strict, || {
            super::pyjson::loads(strict).map(|p| (judged(p.value, Some(&p.checked)), p.raw))
        }) {
            Some(Ok((verdict, raw))) => {
                not_standard = raw;
                verdict
            }
            _ => {
                let at = if e.is_eof() {
                    region.end
                } else {
                    region.start + offset_of(&bytes[region.clone()], e.line(), e.column())
                };
                let (line, column) = line_col(bytes, at);
                let stop = ParseStop {
                    line,
                    column,
                    truncated: e.is_eof(),
                    message: strip_position(&e.to_string()),
                };
                (JsonStatus::InvalidJson, None, Some(stop), Vec::new())
            }
        },
    };
    let items = match (&status, &value) {
        (JsonStatus::Ok, Some(v)) => items_of(v),
        _ => Vec::new(),
    };
    let mut salvaged = Vec::new();
    let mut lines = LineCounter::new();
    let elements: Vec<SalvagedElement> = elements
        .into_iter()
        .enumerate()
        .map(|(index, el)| {
            let errors = match schemas.element(el.property.as_deref()) {
                Some(s) => s.validate(&el.value).err().unwrap_or_default(),
                None => Vec::new(),
            };
            let valid = errors.is_empty();
            if valid {
                salvaged.push(el.value.clone());
            }
            SalvagedElement {
                index,
                property: el.property.map(|p| p.to_string()),
                line: lines.line_of(bytes, el.span.start),
                value: el.value,
                valid,
                errors,
            }
        })
        .collect();
    let salvage_stop = stop.map(|s| {
        let (line, column) = line_col(bytes, s.offset);
        SalvageStop {
            line,
            column,
            reason: s.reason,
            message: s.message.map(|m| strip_position(&m)),
        }
    });
    JsonAnalysis {
        status,
        value,
        error,
        violations,
        items,
        elements,
        salvaged,
        salvage_stop,
        not_standard,
    }
}

/// serde_json appends " at line L column C" relative to the slice it saw;
/// cutline reports positions in the whole response instead.
pub fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemas() -> JsonSchemas {
        JsonSchemas::compile(Some(&json!({"type": "array", "items": {"type": "object", "properties": {"entity": {"type": "string"}}, "required": ["entity"]}}))).unwrap()
    }

    #[test]
    fn strict_ok_in_fence() {
        let a = analyse("Sure:\n```json\n[{\"entity\": \"a\"}]\n```\nbye", &schemas());
        assert_eq!(a.status, JsonStatus::Ok);
        assert_eq!(a.items, vec![json!({"entity": "a"})]);
    }

    #[test]
    fn truncated_array() {
        let text = "[\n{\"entity\": \"a\"},\n{\"entity\": 5},\n{\"entity\": \"c\"},\n{\"enti";
        let a = analyse(text, &schemas());
        assert_eq!(a.status, JsonStatus::InvalidJson);
        let e = a.error.unwrap();
        assert!(e.truncated);
        assert_eq!((e.line, e.column), (5, 7));
        assert_eq!(a.salvaged, vec![json!({"entity": "a"}), json!({"entity": "c"})]);
        assert_eq!(a.elements.len(), 3);
        assert_eq!(
            a.elements[1].errors[0].to_string(),
            "/entity 5 is not of type \"string\""
        );
    }

    #[test]
    fn broken_syntax_is_not_truncation() {
        let a = analyse("[{\"entity\": \"a\"},, {\"entity\": \"b\"}]", &schemas());
        let e = a.error.unwrap();
        assert!(!e.truncated);
        assert_eq!((e.line, e.column), (1, 18));
        assert_eq!(a.salvaged, vec![json!({"entity": "a"})]);
    }
}
