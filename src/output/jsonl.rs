//! The `jsonl` response type, with the TrustGraph reference's semantics for
//! which objects are kept: strip, split on `\n`, strip each line, skip empty
//! lines and lines starting with a code fence, `json.loads` each line, keep
//! the values that validate. cutline also reports *every* line's outcome.

use serde::Serialize;
use serde_json::Value;

use super::json::strip_position;
use super::schema::{CompiledSchema, Violation};
use super::text::py_strip_bytes;

/// What happened to one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum LineStatus {
    /// Parsed and valid: kept as an item.
    Ok {
        /// Index of the item among the kept items.
        item: usize,
    },
    /// Blank after stripping.
    Empty,
    /// A code fence line (```` ``` ```` with or without a tag).
    Fence,
    /// Not JSON.
    InvalidJson {
        /// 1-based column (characters) where parsing stopped.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// JSON that the per-line schema rejects.
    SchemaInvalid {
        /// Every violation, with its JSON pointer.
        errors: Vec<Violation>,
    },
    /// The final line, cut before it was complete.
    Truncated {
        /// 1-based column where the input ran out.
        column: usize,
        /// The parser's message.
        message: String,
    },
}

impl LineStatus {
    /// The status word, as serialised.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Ok { .. } => "ok",
            Self::Empty => "empty",
            Self::Fence => "fence",
            Self::InvalidJson { .. } => "invalid_json",
            Self::SchemaInvalid { .. } => "schema_invalid",
            Self::Truncated { .. } => "truncated",
        }
    }
}

/// One line's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineOutcome {
    /// 1-based line number in the response.
    pub line: usize,
    /// What happened.
    #[serde(flatten)]
    pub status: LineStatus,
}

/// Counts of line outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LineCounts {
    /// Kept items.
    pub ok: usize,
    /// Blank lines.
    pub empty: usize,
    /// Fence lines.
    pub fence: usize,
    /// Lines that are not JSON.
    pub invalid_json: usize,
    /// Lines the schema rejects.
    pub schema_invalid: usize,
    /// A cut final line.
    pub truncated: usize,
}

impl LineCounts {
    /// Count one outcome.
    pub fn add(&mut self, s: &LineStatus) {
        match s {
            LineStatus::Ok { .. } => self.ok += 1,
            LineStatus::Empty => self.empty += 1,
            LineStatus::Fence => self.fence += 1,
            LineStatus::InvalidJson { .. } => self.invalid_json += 1,
            LineStatus::SchemaInvalid { .. } => self.schema_invalid += 1,
            LineStatus::Truncated { .. } => self.truncated += 1,
        }
    }
}

/// Analysis of a whole `jsonl` response.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct JsonlAnalysis {
    /// The values the reference keeps, in order.
    pub items: Vec<Value>,
    /// Every line's outcome.
    pub lines: Vec<LineOutcome>,
    /// Outcome counts.
    pub counts: LineCounts,
}

impl JsonlAnalysis {
    /// Record one line; the value is kept when the status is `ok`.
    pub fn push(&mut self, outcome: LineOutcome, value: Option<Value>) {
        self.counts.add(&outcome.status);
        if let Some(v) = value {
            self.items.push(v);
        }
        self.lines.push(outcome);
    }
}

/// Judge one line. `line` excludes its `\n`; `terminated` says whether a
/// `\n` followed it (an unterminated final line that runs out is `truncated`).
/// `next_item` is the index the value gets if kept.
pub fn judge_line(
    line: &[u8],
    terminated: bool,
    schema: Option<&CompiledSchema>,
    next_item: usize,
) -> (LineStatus, Option<Value>) {
    let content = py_strip_bytes(line);
    if content.is_empty() {
        return (LineStatus::Empty, None);
    }
    if content.starts_with(b"```") {
        return (LineStatus::Fence, None);
    }
    match serde_json::from_slice::<Value>(content) {
        Ok(value) => match schema.map(|s| s.validate(&value)) {
            Some(Err(errors)) => (LineStatus::SchemaInvalid { errors }, None),
            _ => (LineStatus::Ok { item: next_item }, Some(value)),
        },
        Err(e) => {
            let lead = content.as_ptr() as usize - line.as_ptr() as usize;
            // Column of the byte where parsing stopped, counted in characters
            // over the original line (leading whitespace included).
            let stop = if e.is_eof() {
                lead + content.len()
            } else {
                lead + e.column().saturating_sub(1).min(content.len())
            };
            let column = super::position::line_col(line, stop).1;
            let message = strip_position(&e.to_string());
            if e.is_eof() && !terminated {
                (LineStatus::Truncated { column, message }, None)
            } else {
                (LineStatus::InvalidJson { column, message }, None)
            }
        }
    }
}

/// Analyse a whole `jsonl` response in one pass.
pub fn analyse(text: &[u8], schema: Option<&CompiledSchema>) -> JsonlAnalysis {
    let mut out = JsonlAnalysis::default();
    let mut start = 0;
    let mut line_no = 1;
    for nl in memchr::memchr_iter(b'\n', text) {
        let (status, value) = judge_line(&text[start..nl], true, schema, out.items.len());
        out.push(LineOutcome { line: line_no, status }, value);
        start = nl + 1;
        line_no += 1;
    }
    if start < text.len() {
        let (status, value) = judge_line(&text[start..], false, schema, out.items.len());
        out.push(LineOutcome { line: line_no, status }, value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> CompiledSchema {
        CompiledSchema::compile(&json!({"type": "object", "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["entity", "definition"]})).unwrap()
    }

    fn words(a: &JsonlAnalysis) -> Vec<&'static str> {
        a.lines.iter().map(|l| l.status.word()).collect()
    }

    #[test]
    fn spec_cases() {
        let text = "```jsonl\r\n{\"entity\": \"a\", \"definition\": \"x\"}\r\n\r\nnot json\n{\"entity\": \"b\"}\n{\"entity\": \"c\", \"definition\": \"y\"}\n```\n{\"entity\": \"d\", \"defin";
        let a = analyse(text.as_bytes(), Some(&schema()));
        assert_eq!(
            words(&a),
            [
                "fence",
                "ok",
                "empty",
                "invalid_json",
                "schema_invalid",
                "ok",
                "fence",
                "truncated"
            ]
        );
        assert_eq!(
            a.items,
            vec![
                json!({"entity": "a", "definition": "x"}),
                json!({"entity": "c", "definition": "y"})
            ]
        );
        match &a.lines[4].status {
            LineStatus::SchemaInvalid { errors } => {
                assert_eq!(errors[0].to_string(), "/definition is required");
            }
            other => panic!("{other:?}"),
        }
        match &a.lines[3].status {
            LineStatus::InvalidJson { column, .. } => assert_eq!(*column, 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn big_numbers_kept_exactly() {
        let a = analyse(b"{\"id\": 1234567890123456789012345, \"x\": 1.10}", None);
        assert_eq!(
            serde_json::to_string(&a.items[0]).unwrap(),
            "{\"id\":1234567890123456789012345,\"x\":1.10}"
        );
    }
}
