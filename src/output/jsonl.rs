//! The `jsonl` response type, with the TrustGraph reference's semantics for
//! which objects are kept. The reference (`PromptManager.parse_jsonl`) does:
//!
//! 1. `text.strip()`;
//! 2. if it starts with ```` ``` ````, removes `^```(?:json|jsonl)?\s*\n?` —
//!    Python tries `json` before `jsonl`, so ```` ```jsonl ```` leaves an `l`
//!    behind, and an object on the fence line itself (```` ```json {…} ````)
//!    is kept;
//! 3. if it ends with ```` ``` ````, removes those three characters (so
//!    `{…}```` ` on the last line is kept);
//! 4. splits on `\n`, strips each line, skips empty lines and lines starting
//!    with ```` ``` ````, `json.loads` each line, keeps the values that
//!    validate.
//!
//! cutline keeps exactly those values and also reports *every* line's
//! outcome, numbered as in the response. [`LineJudge`] applies these rules one
//! line at a time, so the one-shot and the streaming analysers share them.

use serde::Serialize;
use serde_json::Value;

use super::json::strip_position;
use super::schema::{CompiledSchema, Violation};
use super::text::{py_strip_bytes, skip_py_space};

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
    /// Nested past Python's recursion limit: `json.loads` raises
    /// `RecursionError`, which TrustGraph's `parse_jsonl` does not catch, so
    /// the whole response fails there (see [`JsonlAnalysis::raises`]).
    TooDeep {
        /// 1-based column where parsing stopped.
        column: usize,
        /// The line's bracket depth.
        depth: usize,
        /// What that means, in words.
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
            Self::TooDeep { .. } => "too_deep",
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
    /// Tokens Python's `json.loads` accepts and JSON does not (`NaN`,
    /// `Infinity`, a lone `\ud800`), as written in the line; the kept value
    /// has `null` / U+FFFD in their place (see [`super::pyjson`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_standard: Vec<String>,
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
            // Not JSON to any consumer; the response-level failure is
            // `JsonlAnalysis::raises`.
            LineStatus::InvalidJson { .. } | LineStatus::TooDeep { .. } => self.invalid_json += 1,
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
    /// The first line nested past Python's limit: TrustGraph's consumer
    /// raises there and returns nothing for the whole response, whatever the
    /// other lines hold. Kept apart from `lines` because a streamed analysis
    /// keeps only counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raises: Option<Raises>,
}

/// Where TrustGraph's `parse_jsonl` raises on a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Raises {
    /// 1-based line number.
    pub line: usize,
    /// That line's bracket depth.
    pub depth: usize,
}

impl Raises {
    /// The verdict, in words, with what the lines alone would keep.
    pub fn verdict(&self, kept: usize) -> String {
        format!(
            "TrustGraph's parse_jsonl raises RecursionError at line {} (depth {}), so the whole response fails \
             and TrustGraph gets 0 items; the lines alone keep {kept}",
            self.line, self.depth
        )
    }
}

impl JsonlAnalysis {
    /// Record one line; the value is kept when the status is `ok`.
    pub fn push(&mut self, outcome: LineOutcome, value: Option<Value>) {
        self.count(&outcome);
        if let Some(v) = value {
            self.items.push(v);
        }
        self.lines.push(outcome);
    }

    /// Count one line without keeping it (a streamed analysis whose memory
    /// stays flat), noting where the reference raises.
    pub fn count(&mut self, outcome: &LineOutcome) {
        self.counts.add(&outcome.status);
        if let (None, LineStatus::TooDeep { depth, .. }) = (self.raises, &outcome.status) {
            self.raises = Some(Raises {
                line: outcome.line,
                depth: *depth,
            });
        }
    }
}

/// Where a line sits in the whole response, for the reference's fence rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinePlace {
    /// The first non-blank line of the response: a leading fence on it
    /// (```` ``` ````, an optional `json`, then whitespace) is removed first.
    pub lead: bool,
    /// The last non-blank line of the response: a trailing ```` ``` ```` is
    /// removed.
    pub last: bool,
}

/// Length of the leading fence the reference removes from `content` (a
/// stripped line starting with ```` ``` ````): the backticks, an optional
/// `json`, and the whitespace after them.
pub fn lead_fence_len(content: &[u8]) -> usize {
    let mut i = 3;
    if content[i..].starts_with(b"json") {
        i += 4;
    }
    skip_py_space(content, i)
}

/// Whether a non-blank line's verdict depends on its being the last one: it
/// ends with a fence the reference would then remove.
pub fn depends_on_last(content: &[u8], lead: bool) -> bool {
    let rest = if lead && content.starts_with(b"```") {
        &content[lead_fence_len(content)..]
    } else {
        content
    };
    rest.len() >= 3 && rest.ends_with(b"```") && !rest.starts_with(b"```")
}

/// An info-string word left on a fence line (`python`, the `l` of `jsonl`).
fn is_tag_word(b: &[u8]) -> bool {
    b.iter().all(|&c| c.is_ascii_alphanumeric() || b"_-+.#".contains(&c))
}

/// Judge one line on its own (neither the first nor the last of the
/// response). `line` excludes its `\n`; `terminated` says whether a `\n`
/// followed it (an unterminated final line that runs out is `truncated`).
/// `next_item` is the index the value gets if kept.
pub fn judge_line(
    line: &[u8],
    terminated: bool,
    schema: Option<&CompiledSchema>,
    next_item: usize,
) -> (LineStatus, Option<Value>) {
    judge_line_at(line, LinePlace::default(), terminated, schema, next_item)
}

/// What the reference hands to `json.loads` for one line: the body, whether
/// a leading fence was removed from it, and whether a trailing fence was; or
/// the status of a line it skips (`empty`, `fence`).
fn line_body(line: &[u8], place: LinePlace) -> Result<(&[u8], bool, bool), LineStatus> {
    let content = py_strip_bytes(line);
    if content.is_empty() {
        return Err(LineStatus::Empty);
    }
    let lead = place.lead && content.starts_with(b"```");
    let from = if lead { lead_fence_len(content) } else { 0 };
    let mut to = content.len();
    let clipped = place.last && to - from >= 3 && content[from..to].ends_with(b"```");
    if clipped {
        to -= 3;
    }
    let body = py_strip_bytes(&content[from..to]);
    if body.is_empty() || body.starts_with(b"```") {
        return Err(LineStatus::Fence);
    }
    Ok((body, lead, clipped))
}

/// Whether the reference keeps `value`: it parses, and `schema` accepts it.
/// The fast path of [`judge_line_at`]: no messages, nothing kept.
pub fn value_ok(value: &[u8], schema: Option<&CompiledSchema>) -> bool {
    match serde_json::from_slice::<Value>(value) {
        Ok(v) => schema.is_none_or(|s| s.is_valid(&v)),
        Err(_) => super::pyjson::with_stack(value, || {
            super::pyjson::loads(value).is_ok_and(|p| schema.is_none_or(|s| s.is_valid(&p.checked)))
        })
        .unwrap_or(false),
    }
}

/// Whether [`judge_line_at`] would keep the line.
pub fn line_ok(line: &[u8], place: LinePlace, schema: Option<&CompiledSchema>) -> bool {
    line_body(line, place).is_ok_and(|(body, ..)| value_ok(body, schema))
}

/// Judge one line, knowing where it sits in the response.
pub fn judge_line_at(
    line: &[u8],
    place: LinePlace,
    terminated: bool,
    schema: Option<&CompiledSchema>,
    next_item: usize,
) -> (LineStatus, Option<Value>) {
    let (status, value, _) = judge_full(line, place, terminated, schema, next_item);
    (status, value)
}

/// [`judge_line_at`], plus the tokens only Python accepts.
fn judge_full(
    line: &[u8],
    place: LinePlace,
    terminated: bool,
    schema: Option<&CompiledSchema>,
    next_item: usize,
) -> (LineStatus, Option<Value>, Vec<String>) {
    let (body, lead, clipped) = match line_body(line, place) {
        Ok(b) => b,
        Err(skipped) => return (skipped, None, Vec::new()),
    };
    let judged = |value: Value, checked: Option<&Value>| match schema.map(|s| s.validate(checked.unwrap_or(&value))) {
        Some(Err(errors)) => (LineStatus::SchemaInvalid { errors }, None),
        _ => (LineStatus::Ok { item: next_item }, Some(value)),
    };
    let e = match serde_json::from_slice::<Value>(body) {
        Ok(value) => {
            let (s, v) = judged(value, None);
            return (s, v, Vec::new());
        }
        Err(e) => e,
    };
    let py = super::pyjson::with_stack(body, || {
        super::pyjson::loads(body).map(|p| {
            let (s, v) = judged(p.value, Some(&p.checked));
            (s, v, p.raw)
        })
    })
    .unwrap_or(Err(super::pyjson::PyRefusal::Invalid));
    let py = match py {
        Ok(kept) => return kept,
        Err(refusal) => refusal,
    };
    let (status, value) = match e {
        _ if lead && is_tag_word(body) => (LineStatus::Fence, None),
        e => {
            let off = body.as_ptr() as usize - line.as_ptr() as usize;
            // Column of the byte where parsing stopped, counted in characters
            // over the original line (leading whitespace included).
            let stop = if e.is_eof() {
                off + body.len()
            } else {
                off + e.column().saturating_sub(1).min(body.len())
            };
            let column = super::position::line_col(line, stop).1;
            let message = match py {
                super::pyjson::PyRefusal::TooDeep(depth) => {
                    let message = format!(
                        "nesting depth {depth} is past Python's limit ({}): TrustGraph's json.loads raises \
                         RecursionError, which parse_jsonl does not catch, so the whole response fails there",
                        super::pyjson::PY_MAX_DEPTH
                    );
                    return (LineStatus::TooDeep { column, depth, message }, None, Vec::new());
                }
                super::pyjson::PyRefusal::Invalid => strip_position(&e.to_string()),
            };
            // A line closed by a fence did not run out.
            if e.is_eof() && !terminated && !clipped {
                (LineStatus::Truncated { column, message }, None)
            } else {
                (LineStatus::InvalidJson { column, message }, None)
            }
        }
    };
    (status, value, Vec::new())
}

/// A line held back until it is known whether it is the last one.
#[derive(Debug)]
struct Held {
    line: usize,
    bytes: Vec<u8>,
    lead: bool,
    terminated: bool,
    blanks: usize,
}

/// Judges a response line by line with the reference's whole-response rules
/// (leading fence on the first non-blank line, trailing fence on the last).
/// A line ending in ```` ``` ```` is held back (with the blank lines after it)
/// until a later non-blank line or the end shows whether it is the last;
/// every other line is judged at once. Outcomes come out in line order.
#[derive(Debug)]
pub struct LineJudge<'s> {
    schema: Option<&'s CompiledSchema>,
    next_line: usize,
    items: usize,
    seen: bool,
    held: Option<Held>,
}

impl<'s> LineJudge<'s> {
    /// A judge checking each value against `schema`.
    pub fn new(schema: Option<&'s CompiledSchema>) -> Self {
        Self {
            schema,
            next_line: 1,
            items: 0,
            seen: false,
            held: None,
        }
    }

    /// Values kept so far.
    pub fn items(&self) -> usize {
        self.items
    }

    /// The next line (without its `\n`; `terminated` when one followed).
    pub fn line<F: FnMut(LineOutcome, Option<Value>)>(&mut self, line: &[u8], terminated: bool, emit: &mut F) {
        let no = self.next_line;
        self.next_line += 1;
        let content = py_strip_bytes(line);
        if content.is_empty() {
            match &mut self.held {
                Some(h) => h.blanks += 1,
                None => emit(
                    LineOutcome {
                        line: no,
                        status: LineStatus::Empty,
                        not_standard: Vec::new(),
                    },
                    None,
                ),
            }
            return;
        }
        if let Some(h) = self.held.take() {
            self.release(&h, false, emit);
        }
        let lead = !self.seen && content.starts_with(b"```");
        self.seen = true;
        if depends_on_last(content, lead) {
            self.held = Some(Held {
                line: no,
                bytes: line.to_vec(),
                lead,
                terminated,
                blanks: 0,
            });
            return;
        }
        self.judge(no, line, LinePlace { lead, last: false }, terminated, emit);
    }

    /// The end of the response: release a held line as the last one.
    pub fn finish<F: FnMut(LineOutcome, Option<Value>)>(mut self, emit: &mut F) {
        if let Some(h) = self.held.take() {
            self.release(&h, true, emit);
        }
    }

    fn release<F: FnMut(LineOutcome, Option<Value>)>(&mut self, h: &Held, last: bool, emit: &mut F) {
        self.judge(h.line, &h.bytes, LinePlace { lead: h.lead, last }, h.terminated, emit);
        for k in 1..=h.blanks {
            emit(
                LineOutcome {
                    line: h.line + k,
                    status: LineStatus::Empty,
                    not_standard: Vec::new(),
                },
                None,
            );
        }
    }

    fn judge<F: FnMut(LineOutcome, Option<Value>)>(
        &mut self,
        no: usize,
        line: &[u8],
        place: LinePlace,
        terminated: bool,
        emit: &mut F,
    ) {
        let (status, value, not_standard) = judge_full(line, place, terminated, self.schema, self.items);
        if value.is_some() {
            self.items += 1;
        }
        emit(
            LineOutcome {
                line: no,
                status,
                not_standard,
            },
            value,
        );
    }
}

/// Analyse a whole `jsonl` response in one pass.
pub fn analyse(text: &[u8], schema: Option<&CompiledSchema>) -> JsonlAnalysis {
    let mut out = JsonlAnalysis::default();
    // Counting lines first (memchr) spares the outcome and item vectors
    // their regrowth copies.
    let lines = memchr::memchr_iter(b'\n', text).count() + 1;
    out.lines.reserve_exact(lines);
    out.items.reserve(lines);
    let mut judge = LineJudge::new(schema);
    let mut emit = |o: LineOutcome, v: Option<Value>| out.push(o, v);
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', text) {
        judge.line(&text[start..nl], true, &mut emit);
        start = nl + 1;
    }
    if start < text.len() {
        judge.line(&text[start..], false, &mut emit);
    }
    judge.finish(&mut emit);
    out
}

/// The lines of a JSONL analysis that `object-schema` (`ignored`) would
/// reject, with why: what TrustGraph keeps unvalidated.
pub fn object_schema_rejects(
    analysis: &JsonlAnalysis,
    ignored: &super::schema::CompiledSchema,
) -> Vec<(usize, Vec<super::schema::Violation>)> {
    analysis
        .lines
        .iter()
        .filter_map(|o| match o.status {
            LineStatus::Ok { item } => Some((o.line, ignored.validate(&analysis.items[item]).err()?)),
            _ => None,
        })
        .collect()
}

/// The warning naming the lines `object-schema` would reject.
pub fn object_schema_warning(rejects: &[(usize, Vec<super::schema::Violation>)]) -> String {
    let lines: Vec<String> = rejects.iter().map(|(l, _)| l.to_string()).collect();
    let which = if lines.is_empty() {
        "no line".to_owned()
    } else {
        format!("line(s) {}", lines.join(", "))
    };
    format!(
        "`object-schema` would reject {which}; TrustGraph ignores `object-schema` (it reads only `schema`), so \
         every parsed line is kept, here as there"
    )
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
