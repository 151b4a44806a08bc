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

mod outline;
mod strict;
mod whole;

pub use outline::{Outline, OutlineView, StrictValue, outline, strict_item_count};

pub use super::position::strip_position;
use super::position::{LineCounter, line_col};
use super::salvage::{self, Salvaged, StopReason};
use super::schema::{CompiledSchema, SchemaCompileError, Violation};
use super::text::py_strip_bytes;
use whole::{LengthBounds, ObjectRule, items_and_length, resolve};

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
    /// An exception TrustGraph's service fails the whole response with
    /// (`ValueError`, `RecursionError`), set by callers that know the
    /// runtime (`run::Analysis::of`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raises: Option<crate::output::tg::JsonRaises>,
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
    /// The spans salvage skipped to resume after a broken element.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<BrokenSpan>,
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

/// Bytes salvage skipped after a broken element, to resume at the next one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrokenSpan {
    /// 1-based line where the skipped bytes start.
    pub line: usize,
    /// 1-based column there.
    pub column: usize,
    /// 1-based line of the last skipped byte that is not whitespace.
    pub end_line: usize,
    /// 1-based line and column where syntax broke, and the parser's word.
    pub error: SalvageError,
}

/// Where syntax broke inside a skipped span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SalvageError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The parser's message.
    pub message: String,
}

/// The schemas a `json` response is checked against, compiled once.
#[derive(Debug)]
pub struct JsonSchemas {
    /// The whole-response schema.
    pub whole: Option<CompiledSchema>,
    /// Element schema of a top-level array.
    pub items: Option<CompiledSchema>,
    /// Element schemas of an object's array properties.
    pub by_property: HashMap<String, CompiledSchema>,
    /// The length bounds of a whole-response schema that asks nothing else
    /// of an array but what each item must satisfy (see
    /// [`JsonSchemas::whole_by_items`]); `None` for any other schema.
    length_only: Option<LengthBounds>,
    /// How a closed object of arrays is judged from its elements (see
    /// [`JsonSchemas::whole_by_members`]); `None` when it cannot be.
    object_rule: Option<ObjectRule>,
}

impl Default for JsonSchemas {
    /// No schema: every value is valid.
    fn default() -> Self {
        Self {
            whole: None,
            items: None,
            by_property: HashMap::new(),
            length_only: Some(LengthBounds::ANY),
            object_rule: Some(ObjectRule::Any),
        }
    }
}

impl JsonSchemas {
    /// The schemas as TrustGraph's `validate` applies them (Python's
    /// `jsonschema`, see [`CompiledSchema::compile_python`]): none for a
    /// falsy schema; a schema that does not compile rejects every value.
    pub fn compile_python(schema: Option<&Value>) -> Self {
        let Some(schema) = schema.filter(|s| crate::output::pyschema::is_truthy(s)) else {
            return Self::default();
        };
        let whole = CompiledSchema::compile_python(schema);
        let broken = whole.as_ref().is_some_and(|w| w.broken().is_some());
        let items = CompiledSchema::items_schema(schema).and_then(|s| CompiledSchema::compile_python(&s));
        let mut by_property = HashMap::new();
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                if let Some(item) = CompiledSchema::items_schema(&with_defs(schema, resolve(schema, prop)))
                    .and_then(|s| CompiledSchema::compile_python(&s))
                {
                    by_property.insert(name.clone(), item);
                }
            }
        }
        Self {
            whole,
            items,
            by_property,
            // A broken schema is judged whole: it rejects every value.
            length_only: if broken { None } else { items_and_length(schema) },
            object_rule: if broken { None } else { ObjectRule::compile(schema) },
        }
    }

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
                if let Some(item) = CompiledSchema::items_schema(&with_defs(schema, resolve(schema, prop))) {
                    by_property.insert(name.clone(), CompiledSchema::compile(&item)?);
                }
            }
        }
        Ok(Self {
            whole,
            items,
            by_property,
            length_only: items_and_length(schema),
            object_rule: ObjectRule::compile(schema),
        })
    }

    /// The schema an element under `property` must satisfy.
    pub fn element(&self, property: Option<&str>) -> Option<&CompiledSchema> {
        match property {
            Some(p) => self.by_property.get(p),
            None => self.items.as_ref(),
        }
    }

    /// Whether a closed array of `len` elements is judged by its elements
    /// alone: the whole-response schema says nothing but what every item
    /// must satisfy and how many there may be (`{"type": "array", "items":
    /// …, "minItems": …, "maxItems": …}` plus annotations), and `len` is
    /// allowed. Then the array is valid exactly when each element is, and
    /// its violations are theirs. A length out of bounds is worded by the
    /// validator over the whole value, so it is not judged here.
    pub fn whole_by_items(&self, len: usize) -> bool {
        self.length_only.is_some_and(|b| b.admit(len))
    }

    /// Whether a closed object whose members are all arrays, given as
    /// `(key, length, every element valid)` in order with each key once, is
    /// valid under the whole-response schema, decided without its value
    /// tree (see `json/whole.rs`). `false` also when only validating the whole
    /// value can tell, or word why not.
    pub fn whole_by_members(&self, members: &[(&str, usize, bool)]) -> bool {
        self.object_rule.as_ref().is_some_and(|r| r.admits(members))
    }

    /// What the whole-response schema says of `value` as item `index` of
    /// an array, when [`Self::whole_by_items`]: its item violations, each
    /// pointer under `/index`, as validating the whole array reports them,
    /// without building the array.
    pub fn whole_item_violations(&self, index: usize, value: &Value) -> Vec<Violation> {
        let Some(items) = &self.items else {
            return Vec::new();
        };
        let held = crate::output::pyjson::python_floats(value);
        let mut found = items.plain_violations(held.as_ref().unwrap_or(value));
        for v in &mut found {
            v.pointer.insert_str(0, &format!("/{index}"));
        }
        found
    }

    /// What the element schema says of `value` (nothing: valid).
    pub fn element_errors(&self, property: Option<&str>, value: &Value) -> Vec<Violation> {
        match self.element(property) {
            Some(s) => {
                let held = crate::output::pyjson::python_floats(value);
                s.validate(held.as_ref().unwrap_or(value)).err().unwrap_or_default()
            }
            None => Vec::new(),
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
    analyse_with(text, schemas, salvage::salvage(text.as_bytes()))
}

/// Analysis from salvage results already computed (the streaming analyser
/// has them as the text arrives).
pub fn analyse_with(text: &str, schemas: &JsonSchemas, found: Salvaged) -> JsonAnalysis {
    let Salvaged { elements, broken, stop } = found;
    let bytes = text.as_bytes();
    let strict = strict::verdict(bytes, schemas);
    let items = match (&strict.status, &strict.value) {
        (JsonStatus::Ok, Some(v)) => items_of(v),
        _ => Vec::new(),
    };
    let mut salvaged = Vec::new();
    let mut lines = LineCounter::new();
    let elements: Vec<SalvagedElement> = elements
        .into_iter()
        .enumerate()
        .map(|(index, el)| {
            let errors = schemas.element_errors(el.property.as_deref(), &el.value);
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
    let (salvage_stop, broken) = salvage_report(bytes, stop, broken);
    JsonAnalysis {
        raises: None,
        status: strict.status,
        value: strict.value,
        error: strict.error,
        violations: strict.violations,
        items,
        elements,
        salvaged,
        salvage_stop,
        broken,
        not_standard: strict.not_standard,
    }
}

/// The last byte of `span` that is not whitespace (its start if none is).
fn last_non_ws(bytes: &[u8], span: &std::ops::Range<usize>) -> usize {
    bytes[span.clone()]
        .iter()
        .rposition(|&b| !super::scan::is_ws(b))
        .map_or(span.start, |i| span.start + i)
}

/// Where salvage stopped and what it skipped, in lines and columns.
fn salvage_report(
    bytes: &[u8],
    stop: Option<salvage::Stop>,
    broken: Vec<salvage::Broken>,
) -> (Option<SalvageStop>, Vec<BrokenSpan>) {
    let stop = stop.map(|s| {
        let (line, column) = line_col(bytes, s.offset);
        SalvageStop {
            line,
            column,
            reason: s.reason,
            message: s.message.map(|m| strip_position(&m)),
        }
    });
    let broken = broken
        .into_iter()
        .map(|b| {
            let (line, column) = line_col(bytes, b.span.start);
            let (err_line, err_column) = line_col(bytes, b.at);
            BrokenSpan {
                line,
                column,
                end_line: line_col(bytes, last_non_ws(bytes, &b.span)).0,
                error: SalvageError {
                    line: err_line,
                    column: err_column,
                    message: b.message,
                },
            }
        })
        .collect();
    (stop, broken)
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
        // Salvage resumes after the stray comma.
        assert_eq!(a.salvaged, vec![json!({"entity": "a"}), json!({"entity": "b"})]);
        assert_eq!(a.salvage_stop, None);
        let b = &a.broken[0];
        assert_eq!((b.line, b.column, b.end_line), (1, 18, 1));
        assert_eq!(b.error.message, "expected a value");
    }
}
