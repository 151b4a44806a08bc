//! TrustGraph's verdict on a response, for the Python runtime its prompt
//! service runs on: which exceptions fail the *whole* response, and the
//! strict-JSON (`json` response type) verdict. The rules are those of
//! trustgraph-flow's `PromptManager` ([`TRUSTGRAPH_VERSION`]; parsing is the
//! same from 2.8.11 on), measured against the released package by
//! tests/tg_parity.rs.
//!
//! Two Python limits decide whole-response failures:
//! - `json.loads` raises `RecursionError` on a container opened past the
//!   interpreter's limit. Python 3.12+ counts the C scanner's recursion
//!   against the C stack limit (about 10,000), 3.11 against the Python
//!   recursion limit (1000, less the frames above it);
//! - a value the schema rejects is pretty-printed (`pprint.pformat`, three
//!   Python frames per level) into the `ValidationError` message that
//!   `PromptManager` logs or wraps, which raises `RecursionError` about 327
//!   levels down, on either runtime.
//!
//! The depths are those `scripts/reference_tg_service.py --limits` measures
//! with the real package under `asyncio.run` at Python's default limit; the
//! service calls `invoke` a few frames deeper, which can lower the 3.11
//! figures by a level or two (3.13's `json.loads` limit is not affected by
//! Python frames).

use serde::Serialize;
use serde_json::Value;

use super::pyscan::{self, PyScan};
use super::schema::{CompiledSchema, Violation};

/// The trustgraph-flow release whose prompt manager cutline matches.
pub const TRUSTGRAPH_VERSION: &str = "2.11.1";

/// The Python TrustGraph's prompt service runs on. TrustGraph's containers
/// run 3.13, so that is the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum TgPython {
    /// Python 3.13 (TrustGraph's containers).
    #[default]
    #[serde(rename = "3.13")]
    Py313,
    /// Python 3.11.
    #[serde(rename = "3.11")]
    Py311,
}

impl TgPython {
    /// `"3.13"` / `"3.11"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Py313 => "3.13",
            Self::Py311 => "3.11",
        }
    }

    /// The deepest container `json.loads` opens without `RecursionError`.
    pub fn json_max_depth(self) -> usize {
        match self {
            Self::Py313 => super::pyjson::PY313_MAX_DEPTH,
            Self::Py311 => 979,
        }
    }

    /// The deepest nesting at which an "Expecting value" error is still a
    /// `JSONDecodeError`: on 3.13 one 9994 containers deep raises
    /// `RecursionError` instead; on 3.11 the container limit comes first.
    pub fn decode_error_max_depth(self) -> usize {
        match self {
            Self::Py313 => 9993,
            Self::Py311 => 979,
        }
    }

    /// The deepest nesting at which any other syntax error (a delimiter
    /// after a complete element, a property name, a colon, a string's) is
    /// still a `JSONDecodeError`: the C scanner calls the exception class
    /// there, and on 3.13 that call 9991 containers deep raises
    /// `RecursionError`.
    pub fn syntax_error_max_depth(self) -> usize {
        match self {
            Self::Py313 => 9990,
            Self::Py311 => 979,
        }
    }

    /// Whether a syntax error `depth` containers deep raises
    /// `RecursionError` instead of `JSONDecodeError` (see
    /// [`PyScan::Decode`]).
    pub fn decode_raises(self, depth: usize, expecting_value: bool) -> bool {
        depth
            > if expecting_value {
                self.decode_error_max_depth()
            } else {
                self.syntax_error_max_depth()
            }
    }

    /// The deepest nesting (non-empty containers above a leaf, see
    /// [`nesting`]) `pprint.pformat` formats without `RecursionError` in a
    /// rejected value's log message.
    pub fn pformat_max_nesting(self) -> usize {
        match self {
            Self::Py313 => 326,
            Self::Py311 => 324,
        }
    }
}

impl TgPython {
    /// Whether a rejected value fails the whole response: the failing
    /// instance `value` nests too deep (see [`nesting`]) for `pprint` in the
    /// message TrustGraph logs or wraps, which raises outside its `try` —
    /// unless `repr` fails first, inside `validate`, on an instance
    /// `jsonschema` names in a message it builds (`repr_depth` deep; 9992
    /// and more on 3.13), which TrustGraph catches as a failed validation.
    pub fn rejection_raises(self, value: &Value, schema: &CompiledSchema) -> Option<usize> {
        let depth = nesting(schema.error_instance(value));
        if depth <= self.pformat_max_nesting() {
            return None;
        }
        let repr_max = match self {
            Self::Py313 => 9991,
            Self::Py311 => usize::MAX,
        };
        (repr_max == usize::MAX || schema.repr_nesting(value) <= repr_max).then_some(depth)
    }
}

impl std::str::FromStr for TgPython {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "3.13" => Ok(Self::Py313),
            "3.11" => Ok(Self::Py311),
            other => Err(format!("unknown TrustGraph Python {other:?} (3.13 or 3.11)")),
        }
    }
}

/// Why TrustGraph's prompt manager raises on a whole response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RaiseKind {
    /// `json.loads` nested past the runtime's limit: `RecursionError`.
    Recursion,
    /// An integer literal past 4300 digits: `ValueError`.
    IntDigits,
    /// A rejected value too deep to pretty-print into the warning:
    /// `RecursionError` while the log message is formatted.
    Warning,
}

/// Where TrustGraph's prompt manager raises on a response: the service
/// fails the whole response there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Raises {
    /// 1-based line number in the response.
    pub line: usize,
    /// Why.
    pub kind: RaiseKind,
    /// The line's nesting depth (`recursion`, `warning`) or the integer's
    /// digit count (`int_digits`).
    pub depth: usize,
    /// For `warning`: the index of the object among those parsed, as
    /// TrustGraph numbers it in its log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<usize>,
}

impl Raises {
    /// The Python exception: `RecursionError` or `ValueError`.
    pub fn exception(&self) -> &'static str {
        match self.kind {
            RaiseKind::IntDigits => "ValueError",
            RaiseKind::Recursion | RaiseKind::Warning => "RecursionError",
        }
    }

    /// Raised while the lines are parsed (before any is validated).
    pub fn during_parse(&self) -> bool {
        !matches!(self.kind, RaiseKind::Warning)
    }

    /// The verdict, in words, with what the lines alone would keep.
    pub fn verdict(&self, kept: usize) -> String {
        let why = match self.kind {
            RaiseKind::Recursion => format!("json.loads nests {} deep", self.depth),
            RaiseKind::IntDigits => format!("an integer has {} digits (Python's limit is 4300)", self.depth),
            RaiseKind::Warning => format!(
                "the rejected value, {} deep, is too deep to pretty-print into the warning",
                self.depth
            ),
        };
        format!(
            "the service fails this whole response: {} at line {} ({why}), so TrustGraph gets 0 items; the lines \
             alone keep {kept}",
            self.exception(),
            self.line
        )
    }
}

pub use super::pyjson::nesting;

/// TrustGraph's verdict on a `json` response.
#[derive(Debug, Clone, PartialEq)]
pub enum TgJson {
    /// `invoke` returns this value.
    Kept(Value),
    /// `RuntimeError("JSON parse fail")`.
    ParseFail,
    /// `RuntimeError("Schema validation fail: …")`.
    SchemaFail(Vec<Violation>),
    /// Another exception escapes: `ValueError` or `RecursionError`.
    Raises(&'static str, String),
}

impl TgJson {
    /// `kept`, `parse`, `schema`, or the exception's name.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Kept(_) => "kept",
            Self::ParseFail => "parse",
            Self::SchemaFail(_) => "schema",
            Self::Raises(e, _) => e,
        }
    }
}

/// An exception that escapes TrustGraph's `invoke` on a `json` response
/// (not the `RuntimeError` it raises for a parse or schema failure): the
/// service fails the response with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JsonRaises {
    /// `ValueError` or `RecursionError`.
    pub exception: &'static str,
    /// Why, in words.
    pub reason: String,
}

impl JsonRaises {
    /// The verdict, in words.
    pub fn verdict(&self) -> String {
        format!(
            "the service fails this whole response: {} ({}), where cutline's own reading says what the text holds",
            self.exception, self.reason
        )
    }
}

/// Whether TrustGraph's `invoke` raises past its own `RuntimeError`s on a
/// `json` response; `rejected` says whether the schema rejects the value
/// (known to the caller), so a valid value is never parsed again.
pub fn json_raises(text: &str, schema: Option<&CompiledSchema>, py: TgPython, rejected: bool) -> Option<JsonRaises> {
    let bytes = json_region(text).as_bytes();
    let scanned = pyscan::scan(bytes, py.json_max_depth());
    let escapes = match scanned {
        PyScan::IntDigits { .. } | PyScan::TooDeep { .. } => true,
        PyScan::Decode {
            depth, expecting_value, ..
        } => py.decode_raises(depth, expecting_value),
        // Only a rejected value nested past what `pprint` formats raises;
        // the text's bracket depth (outside strings) bounds the value's, so a shallow text
        // is never parsed into a tree again (memory stays ≤ 4x the input).
        PyScan::Ok => schema.is_some() && rejected && super::pyjson::max_depth(bytes) > py.pformat_max_nesting(),
    };
    if !escapes {
        return None;
    }
    match json_verdict(text, schema, py) {
        TgJson::Raises(exception, reason) => Some(JsonRaises { exception, reason }),
        _ => None,
    }
}

/// The text `parse_json` hands to `json.loads`: the first
/// ```` ```(?:json)?(.*?)``` ```` block (dot matching newlines), stripped,
/// else the whole text stripped.
pub fn json_region(text: &str) -> &str {
    let mut from = 0;
    while let Some(open) = text[from..].find("```").map(|i| from + i) {
        let mut body = open + 3;
        if text[body..].starts_with("json") {
            // `(?:json)?` is greedy but gives the four letters back when no
            // block closes after them; one closing after them closes after
            // the bare backticks too, so trying them first is enough.
            if let Some(close) = text[body + 4..].find("```") {
                return super::text::py_strip(&text[body + 4..body + 4 + close]);
            }
        }
        if let Some(close) = text[body..].find("```") {
            body = body.min(text.len());
            return super::text::py_strip(&text[body..body + close]);
        }
        from = open + 1;
    }
    super::text::py_strip(text)
}

/// What TrustGraph's `invoke` does with a `json` response: `schema` is the
/// prompt's (`None` when it is absent or falsy, see
/// [`CompiledSchema::compile_python`]).
pub fn json_verdict(text: &str, schema: Option<&CompiledSchema>, py: TgPython) -> TgJson {
    let region = json_region(text);
    let bytes = region.as_bytes();
    match pyscan::scan(bytes, py.json_max_depth()) {
        PyScan::Ok => {}
        PyScan::Decode {
            depth, expecting_value, ..
        } if py.decode_raises(depth, expecting_value) => {
            return TgJson::Raises("RecursionError", format!("JSONDecodeError raised {depth} deep"));
        }
        PyScan::Decode { .. } => return TgJson::ParseFail,
        PyScan::IntDigits { digits, .. } => {
            return TgJson::Raises(
                "ValueError",
                format!("Exceeds the limit (4300 digits) for integer string conversion: value has {digits} digits"),
            );
        }
        PyScan::TooDeep { depth, .. } => {
            return TgJson::Raises("RecursionError", format!("json.loads nests {depth} deep"));
        }
    }
    let judged = super::pyjson::with_stack(bytes, || {
        let (value, checked) = match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => {
                let checked = super::pyjson::python_checked(bytes, &v);
                (v, checked)
            }
            Err(_) => match super::pyjson::loads_to(bytes, py.json_max_depth()) {
                Ok(p) => (p.value, Some(p.checked)),
                Err(_) => return TgJson::ParseFail,
            },
        };
        let Some(schema) = schema else {
            return TgJson::Kept(value);
        };
        let checked_ref = checked.as_ref().unwrap_or(&value);
        match schema.validate(checked_ref) {
            Ok(()) => TgJson::Kept(value),
            Err(errors) => {
                if let Some(depth) = py.rejection_raises(checked_ref, schema) {
                    TgJson::Raises(
                        "RecursionError",
                        format!("the rejected value, {depth} deep, is too deep for pprint"),
                    )
                } else {
                    TgJson::SchemaFail(errors)
                }
            }
        }
    });
    judged.unwrap_or(TgJson::ParseFail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn regions_as_parse_json_finds_them() {
        assert_eq!(json_region("```json\n[1]\n```"), "[1]");
        assert_eq!(json_region("```jsonl\n[1]\n```"), "l\n[1]");
        assert_eq!(json_region("x ```json\n[1]"), "x ```json\n[1]");
        assert_eq!(json_region("```json\n[1]\n```\n```json\n[2]\n```"), "[1]");
        assert_eq!(json_region(" [2] "), "[2]");
    }

    #[test]
    fn max_depth_bounds_nesting_and_skips_strings() {
        assert_eq!(super::super::pyjson::max_depth(br#"[[], {"a": "[[[\"{"}]"#), 2);
        for v in [json!([[]]), json!({"a": {"a": [1]}}), json!([[[[]]], []])] {
            assert!(super::super::pyjson::max_depth(v.to_string().as_bytes()) >= nesting(&v));
        }
    }

    #[test]
    fn nesting_counts_non_empty_containers() {
        assert_eq!(nesting(&json!([[]])), 1);
        assert_eq!(nesting(&json!({"a": {"a": 1}})), 2);
        assert_eq!(nesting(&json!(3)), 0);
    }
}
