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
//! outcome, numbered as in the response ([`JsonlAnalysis::tg_line_offset`]
//! gives the number TrustGraph's log uses). `json.loads` is Python's, for
//! the runtime chosen ([`TgPython`]): a line it refuses with anything but
//! `JSONDecodeError` (an integer past 4300 digits, nesting past the
//! runtime's limit) fails the whole response, as does a rejected value too
//! deep to pretty-print into the warning ([`JsonlAnalysis::raises`]). [`LineJudge`] applies these rules one
//! line at a time, so the one-shot and the streaming analysers share them.

use serde::Serialize;
use serde_json::Value;

mod judge;
mod object_schema;
mod whole;

pub use super::tg::Raises;
use judge::judge_full;
pub use judge::{judge_line_at, line_ok, utf8_warning, value_ok, value_ok_py};
pub use object_schema::{object_schema_rejects, object_schema_warning};
pub use whole::{analyse, analyse_py};

use super::schema::{CompiledSchema, Violation};
use super::text::{py_strip_bytes, skip_py_space};
use super::tg::{RaiseKind, TgPython};

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
    /// An integer literal past Python's 4300 digits: `json.loads` raises
    /// `ValueError`, which `parse_jsonl` does not catch, so the whole
    /// response fails there (see [`JsonlAnalysis::raises`]), even when the
    /// line is malformed or cut after the number.
    IntTooLong {
        /// 1-based column of the integer.
        column: usize,
        /// Its digit count.
        digits: usize,
        /// What that means, in words.
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
            Self::IntTooLong { .. } => "int_too_long",
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
    /// For a rejected value: its nesting, when it is too deep for the
    /// `pprint` of TrustGraph's warning (the whole response fails there, see
    /// [`JsonlAnalysis::raises`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub too_deep_to_log: Option<usize>,
    /// The 1-based column of the line's first invalid UTF-8 byte, when it
    /// has one: the line was judged with U+FFFD in place of the invalid
    /// bytes, as TrustGraph receives it (see [`utf8_warning`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_utf8: Option<usize>,
}

impl LineOutcome {
    /// A line skipped before `json.loads` (`empty`, `fence`).
    fn skipped(line: usize, status: LineStatus) -> Self {
        Self {
            line,
            status,
            not_standard: Vec::new(),
            too_deep_to_log: None,
            invalid_utf8: None,
        }
    }
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
            LineStatus::InvalidJson { .. } | LineStatus::TooDeep { .. } | LineStatus::IntTooLong { .. } => {
                self.invalid_json += 1;
            }
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
    /// Where TrustGraph's prompt manager raises (the first line `json.loads`
    /// raises on, else the first rejected object too deep to log): the
    /// service returns nothing for the whole response, whatever the other
    /// lines hold. Kept apart from `lines` because a streamed analysis
    /// keeps only counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raises: Option<Raises>,
    /// Response line number minus the number TrustGraph's log gives the
    /// line (it numbers the lines left after stripping the text and its
    /// opening fence).
    #[serde(skip_serializing_if = "is_zero")]
    pub tg_line_offset: usize,
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &usize) -> bool {
    *n == 0
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
        let objects = self.counts.ok + self.counts.schema_invalid;
        self.counts.add(&outcome.status);
        let parse = match outcome.status {
            LineStatus::TooDeep { depth, .. } => Some((RaiseKind::Recursion, depth)),
            LineStatus::IntTooLong { digits, .. } => Some((RaiseKind::IntDigits, digits)),
            _ => None,
        };
        if let Some((kind, depth)) = parse {
            // Every line is parsed before any is validated.
            if self.raises.is_none_or(|r| !r.during_parse()) {
                self.raises = Some(Raises {
                    line: outcome.line,
                    kind,
                    depth,
                    object: None,
                });
            }
        } else if let (None, Some(depth)) = (self.raises, outcome.too_deep_to_log) {
            self.raises = Some(Raises {
                line: outcome.line,
                kind: RaiseKind::Warning,
                depth,
                object: Some(objects),
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

/// What an `invalid_json` line's message ends with when the line is what
/// TrustGraph's fence regex left of an opening fence (the `l` of
/// ```` ```jsonl ````, a `python` tag): TrustGraph logs it as a JSON parse
/// error, and cutline says so, adding where it came from.
pub const FENCE_REMNANT: &str = " (what is left of the opening fence: TrustGraph removes ```, then `json` if it follows, \
                                 and parses the rest of the line)";

impl LineStatus {
    /// An `invalid_json` line that is what is left of an opening fence.
    pub fn is_fence_remnant(&self) -> bool {
        matches!(self, Self::InvalidJson { message, .. } if message.ends_with(FENCE_REMNANT))
    }
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
    if rest.len() < 3 || !rest.ends_with(b"```") {
        return false;
    }
    // Skipped either way (a fence line that stays one once clipped, like
    // ```` ``` ```` itself) or not.
    let clipped = py_strip_bytes(&rest[..rest.len() - 3]);
    !(rest.starts_with(b"```") && (clipped.is_empty() || clipped.starts_with(b"```")))
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
    py: TgPython,
    next_line: usize,
    items: usize,
    seen: bool,
    held: Option<Held>,
    /// The response line TrustGraph numbers 1, once known.
    tg_first: Option<usize>,
    /// The whole response is known to be valid UTF-8 (checked once, in one
    /// pass, by [`analyse_py`]), so no line is checked again.
    utf8: bool,
}

impl<'s> LineJudge<'s> {
    /// A judge checking each value against `schema`.
    pub fn new(schema: Option<&'s CompiledSchema>) -> Self {
        Self::with_python(schema, TgPython::default())
    }

    /// A judge for TrustGraph's service on the given Python.
    pub fn with_python(schema: Option<&'s CompiledSchema>, py: TgPython) -> Self {
        Self {
            schema,
            py,
            next_line: 1,
            items: 0,
            seen: false,
            held: None,
            tg_first: None,
            utf8: false,
        }
    }

    /// Response line number minus TrustGraph's number for the same line
    /// (see [`JsonlAnalysis::tg_line_offset`]).
    pub fn tg_line_offset(&self) -> usize {
        self.tg_first.map_or(0, |f| f - 1)
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
                None => emit(LineOutcome::skipped(no, LineStatus::Empty), None),
            }
            return;
        }
        if let Some(h) = self.held.take() {
            self.release(&h, false, emit);
        }
        let lead = !self.seen && content.starts_with(b"```");
        self.seen = true;
        if self.tg_first.is_none() && !(lead && py_strip_bytes(&content[lead_fence_len(content)..]).is_empty()) {
            self.tg_first = Some(no);
        }
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
    pub fn finish<F: FnMut(LineOutcome, Option<Value>)>(self, emit: &mut F) {
        self.finish_part(true, emit);
    }

    /// The end of this judge's part of the response: a held line is the
    /// last one when `last` (no non-blank line follows in later parts).
    fn finish_part<F: FnMut(LineOutcome, Option<Value>)>(mut self, last: bool, emit: &mut F) {
        if let Some(h) = self.held.take() {
            self.release(&h, last, emit);
        }
    }

    fn release<F: FnMut(LineOutcome, Option<Value>)>(&mut self, h: &Held, last: bool, emit: &mut F) {
        self.judge(h.line, &h.bytes, LinePlace { lead: h.lead, last }, h.terminated, emit);
        for k in 1..=h.blanks {
            emit(LineOutcome::skipped(h.line + k, LineStatus::Empty), None);
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
        let (text, invalid_utf8) = if self.utf8 {
            (std::borrow::Cow::Borrowed(line), None)
        } else {
            judge::as_text(line)
        };
        let j = judge_full(&text, place, terminated, self.schema, self.items, self.py);
        if j.value.is_some() {
            self.items += 1;
        }
        emit(
            LineOutcome {
                line: no,
                status: j.status,
                not_standard: j.not_standard,
                too_deep_to_log: j.too_deep_to_log,
                invalid_utf8,
            },
            j.value,
        );
    }
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
        // TrustGraph removes ```json from ```jsonl and logs the `l` left as
        // invalid JSON; its log numbers that line 1 too.
        assert_eq!(a.tg_line_offset, 0);
        assert_eq!(
            words(&a),
            [
                "invalid_json",
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
