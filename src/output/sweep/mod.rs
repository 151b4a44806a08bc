//! The truncation sweep: items recovered at every token cut, by strict JSON,
//! array salvage and JSONL, in one linear pass.
//!
//! A complete item's text never changes with later cuts, so each item is
//! parsed and validated once and turned into an interval of cuts during which
//! it counts. The counts at every cut are then a merge of sorted interval
//! ends. The result equals running the one-shot analysers on every prefix
//! (a property test checks exactly that), at a fraction of the cost.

use serde::Serialize;
use serde_json::Value;

use super::json::{JsonSchemas, fenced_block, items_of, strict_region_bytes};
use super::jsonl::{LinePlace, depends_on_last, lead_fence_len, line_ok, value_ok};
use super::salvage;
use super::scan::{Skip, ValueSkipper};
use super::schema::{CompiledSchema, SchemaCompileError};
use super::text::{py_space_len, py_strip_bytes};

/// Items recovered when the response is cut after `tokens` tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SweepPoint {
    /// The max-token limit.
    pub tokens: usize,
    /// Bytes of the response kept at that limit.
    pub bytes: usize,
    /// Items a strict JSON parse returns (0 unless the prefix is valid JSON).
    pub json_items: usize,
    /// Valid complete array elements salvage recovers.
    pub salvaged_items: usize,
    /// Valid JSONL lines.
    pub jsonl_items: usize,
}

/// The schemas the sweep checks against, compiled once.
#[derive(Debug, Default)]
pub struct SweepSchemas {
    /// Whole-response and element schemas for the JSON parsers.
    pub json: JsonSchemas,
    /// Per-line schema for JSONL.
    pub line: Option<CompiledSchema>,
}

impl SweepSchemas {
    /// Schemas for the three parsers from one item schema (a JSONL line, an
    /// array element).
    pub fn of_item(item: &Value) -> Result<Self, SchemaCompileError> {
        let whole = serde_json::json!({"type": "array", "items": item});
        Ok(Self {
            json: JsonSchemas::compile(Some(&whole))?,
            line: Some(CompiledSchema::compile(item)?),
        })
    }

    /// [`SweepSchemas::of_response`] as TrustGraph's `validate` reads the
    /// schema (Python's `jsonschema`: a falsy schema validates nothing, one
    /// that does not compile rejects every value).
    pub fn of_response_python(jsonl: bool, schema: Option<&Value>) -> Self {
        match schema {
            None => Self::default(),
            Some(item) if jsonl => {
                let whole = serde_json::json!({"type": "array", "items": item});
                Self {
                    json: JsonSchemas::compile_python(Some(&whole)),
                    line: CompiledSchema::compile_python(item),
                }
            }
            Some(whole) => Self {
                json: JsonSchemas::compile_python(Some(whole)),
                line: CompiledSchema::items_schema(whole).and_then(|s| CompiledSchema::compile_python(&s)),
            },
        }
    }

    /// Schemas from a response's schema: per line when `jsonl`, else of the
    /// whole value (its elements' schema serves JSONL), read as TrustGraph
    /// reads them ([`SweepSchemas::of_response_python`]), so the sweep's
    /// full cut keeps what `parse` keeps. Never an error: a schema that does
    /// not compile rejects every value, as in TrustGraph.
    pub fn of_response(jsonl: bool, schema: Option<&Value>) -> Result<Self, SchemaCompileError> {
        Ok(Self::of_response_python(jsonl, schema))
    }
}

/// A count that holds for cuts in `[from, to)`.
#[derive(Debug, Clone, Copy)]
struct Span {
    from: usize,
    to: usize,
    count: usize,
}

/// Items at every cut in `cuts` (sorted byte offsets into `text`; entry `k`
/// is the cut for a limit of `k` tokens).
pub fn sweep(text: &[u8], cuts: &[usize], schemas: &SweepSchemas) -> Vec<SweepPoint> {
    Sweep::new(text, Cuts::Wide(cuts), schemas)
        .points(Cuts::Wide(cuts))
        .collect()
}

/// Token cuts: sorted byte offsets into the text, entry `k` the cut for a
/// limit of `k` tokens. `Narrow` holds a long response's cuts in half the
/// memory (a text under 4 GiB; see `tokens::boundaries_u32`).
#[derive(Debug, Clone, Copy)]
pub enum Cuts<'a> {
    /// Offsets as `usize`.
    Wide(&'a [usize]),
    /// Offsets as `u32`.
    Narrow(&'a [u32]),
}

impl Cuts<'_> {
    /// How many cuts.
    pub fn len(self) -> usize {
        match self {
            Self::Wide(c) => c.len(),
            Self::Narrow(c) => c.len(),
        }
    }

    /// Whether there is none.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Cut `i`.
    fn get(self, i: usize) -> Option<usize> {
        match self {
            Self::Wide(c) => c.get(i).copied(),
            Self::Narrow(c) => c.get(i).map(|&x| x as usize),
        }
    }

    /// The number of leading cuts for which `pred` holds.
    fn partition_point(self, pred: impl Fn(usize) -> bool) -> usize {
        match self {
            Self::Wide(c) => c.partition_point(|&x| pred(x)),
            Self::Narrow(c) => c.partition_point(|&x| pred(x as usize)),
        }
    }

    /// Cuts `from..to`, in order.
    fn range(self, from: usize, to: usize) -> impl Iterator<Item = usize> {
        (from..to).filter_map(move |i| self.get(i))
    }
}

/// A sweep ready to be read: each parser's counts as sorted steps, a few
/// per item. The points are read from it in order, as many times as
/// needed, and never held: a response of N tokens costs its items' steps,
/// not N points (`cutline sweep` streams them; issue 24).
#[derive(Debug)]
pub struct Sweep {
    strict: Steps,
    salvage: Steps,
    jsonl: Steps,
}

impl Sweep {
    /// Parse and validate every item of `text` once (`cuts` as for
    /// [`sweep`]: a cut inside a number is judged on its own).
    pub fn new(text: &[u8], cuts: Cuts<'_>, schemas: &SweepSchemas) -> Self {
        Self {
            strict: Steps::new(strict_spans(text, cuts, &schemas.json)),
            salvage: salvage_steps(text, &schemas.json),
            jsonl: Steps::new(jsonl_spans(text, cuts, schemas.line.as_ref())),
        }
    }

    /// The point at every cut of `cuts` (the same cuts as [`Sweep::new`]),
    /// in order.
    pub fn points<'a>(&'a self, cuts: Cuts<'a>) -> impl Iterator<Item = SweepPoint> + 'a {
        let mut strict = self.strict.cursor();
        let mut salvage = self.salvage.cursor();
        let mut jsonl = self.jsonl.cursor();
        cuts.range(0, cuts.len())
            .enumerate()
            .map(move |(tokens, c)| SweepPoint {
                tokens,
                bytes: c,
                json_items: strict.at(c),
                salvaged_items: salvage.at(c),
                jsonl_items: jsonl.at(c),
            })
    }
}

/// A sum of interval counts as sorted starts and ends, each a [`Step`]
/// of 8 bytes; an interval open to the end of the text has no end step.
/// A dense answer has a step per item (200,000 `{"a":1}` in 1.6 MB), so a
/// step's size is what the sweep's memory grows by (issue 37).
#[derive(Debug, Default)]
struct Steps {
    starts: Vec<Step>,
    ends: Vec<Step>,
}

/// A count at a byte offset, packed: the offset in the high 40 bits (a
/// text of up to 1 TiB), the count in the low 24 (a larger count is
/// several steps at one offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Step(u64);

impl Step {
    const COUNT_BITS: u32 = 24;
    const MAX_COUNT: usize = (1 << Self::COUNT_BITS) - 1;

    fn at(self) -> usize {
        usize::try_from(self.0 >> Self::COUNT_BITS).unwrap_or(usize::MAX)
    }

    fn count(self) -> usize {
        usize::try_from(self.0 & Self::MAX_COUNT as u64).unwrap_or(0)
    }

    /// Push `count` at `at` onto `out`, split when it does not fit.
    fn push(out: &mut Vec<Step>, at: usize, mut count: usize) {
        let at = (at as u64).min((1 << (64 - Self::COUNT_BITS)) - 1);
        while count > 0 {
            let n = count.min(Self::MAX_COUNT);
            out.push(Step(at << Self::COUNT_BITS | n as u64));
            count -= n;
        }
    }
}

impl Steps {
    fn new(spans: Vec<Span>) -> Self {
        let mut steps = Self::default();
        for s in spans.iter().filter(|s| s.from < s.to && s.count > 0) {
            Step::push(&mut steps.starts, s.from, s.count);
            if s.to != usize::MAX {
                Step::push(&mut steps.ends, s.to, s.count);
            }
        }
        drop(spans);
        steps.sorted()
    }

    /// Sort both lists by offset (already nearly sorted; sort_unstable is
    /// linear-ish on runs) and give back their slack.
    fn sorted(mut self) -> Self {
        for v in [&mut self.starts, &mut self.ends] {
            v.sort_unstable();
            v.shrink_to_fit();
        }
        self
    }

    fn cursor(&self) -> Counter<'_> {
        Counter {
            steps: self,
            si: 0,
            ei: 0,
            total: 0,
        }
    }
}

/// Evaluates [`Steps`] at non-decreasing positions.
struct Counter<'a> {
    steps: &'a Steps,
    si: usize,
    ei: usize,
    total: usize,
}

impl Counter<'_> {
    fn at(&mut self, c: usize) -> usize {
        let Steps { starts, ends } = self.steps;
        while let Some(s) = starts.get(self.si).filter(|s| s.at() <= c) {
            self.total += s.count();
            self.si += 1;
        }
        while let Some(e) = ends.get(self.ei).filter(|e| e.at() <= c) {
            self.total -= e.count();
            self.ei += 1;
        }
        self.total
    }
}

/// The first cut after `c`, or `usize::MAX`.
fn next_cut(cuts: Cuts<'_>, c: usize) -> usize {
    cuts.get(cuts.partition_point(|x| x <= c)).unwrap_or(usize::MAX)
}

fn push(out: &mut Vec<Span>, from: usize, to: usize, count: usize) {
    if count > 0 && from < to {
        out.push(Span { from, to, count });
    }
}

/// The whitespace (Python's notion) from `from` on: the index of the first
/// byte that is not whitespace (`text.len()` when there is none), and the
/// cuts that fall inside a multi-byte whitespace character — such a prefix
/// ends in half a character, which is not whitespace. Each hole is the
/// range of those cuts; it starts one past the character's first byte.
fn blank_run(text: &[u8], from: usize) -> (usize, Vec<std::ops::Range<usize>>) {
    let mut holes = Vec::new();
    let mut i = from;
    while let Some(n) = py_space_len(text, i) {
        if n > 1 {
            holes.push(i + 1..i + n);
        }
        i += n;
    }
    (i, holes)
}

/// The first cut whose prefix takes in byte `a` (`usize::MAX` past the end).
fn cut_past(text: &[u8], a: usize) -> usize {
    if a >= text.len() { usize::MAX } else { a + 1 }
}

/// Push `count` for the cuts at which `text[from..c]` is only whitespace.
/// Returns the first non-space byte's index.
fn push_blank(text: &[u8], from: usize, count: usize, out: &mut Vec<Span>) -> usize {
    let (a, holes) = blank_run(text, from);
    let mut seg = from;
    for h in holes {
        push(out, seg, h.start, count);
        seg = h.end;
    }
    push(out, seg, cut_past(text, a), count);
    a
}

/// Where a value starts in the text and how far its readings reach.
#[derive(Debug, Clone, Copy)]
struct ValueAt {
    /// Its first byte.
    v0: usize,
    /// Cuts from here on are not read (unless `tail`).
    limit: usize,
    /// Read cuts past `limit` too.
    tail: bool,
    /// A value followed by ```` ``` ```` (and nothing else) also reads as
    /// the value: the JSONL reference strips a trailing fence.
    fence: bool,
}

/// Spans of cuts `c` at which the prefix `text[v0..c]` reads as one complete
/// value (stripped), for cuts before `limit` — or after it too, with `tail`.
/// `count(bytes)` judges a reading of `text[v0..x]`; it is called once for
/// the whole value and once per cut inside a number or literal (whose
/// prefixes are other numbers: `12` of `123`).
fn prefix_spans(text: &[u8], at: ValueAt, cuts: Cuts<'_>, count: &mut dyn FnMut(&[u8]) -> usize, out: &mut Vec<Span>) {
    let ValueAt { v0, limit, tail, fence } = at;
    let mut skip = ValueSkipper::new(v0);
    let (end, scalar) = match skip.advance(&text[..limit]) {
        Skip::Done(end) => (end, skip.is_scalar()),
        Skip::NeedMore if skip.is_scalar() => (limit, true),
        _ => return,
    };
    if scalar {
        let a = cuts.partition_point(|c| c <= v0);
        let b = cuts.partition_point(|c| c < end);
        for c in cuts.range(a, b.max(a)) {
            let n = count(&text[v0..c]);
            push(out, c, next_cut(cuts, c).min(end), n);
        }
    }
    if end >= limit && !tail {
        return;
    }
    let n = count(&text[v0..end]);
    if n == 0 {
        return;
    }
    let a = push_blank(text, end, n, out);
    if fence && text.len() >= a + 3 && &text[a..a + 3] == b"```" {
        push_blank(text, a + 3, n, out);
    }
}

fn strict_count(bytes: &[u8], schemas: &JsonSchemas) -> usize {
    // An array or object is judged as `parse` judges it (`json::outline`):
    // a closed array or object of arrays from its elements, so its value
    // tree (five to ten times the text) is never built. The outline reads
    // the first fenced block as TrustGraph does, which is these (stripped)
    // bytes exactly when they hold no fence.
    if matches!(bytes.first(), Some(b'[' | b'{')) && memchr::memmem::find(bytes, b"```").is_none() {
        return super::json::strict_item_count(bytes, schemas);
    }
    let count = |shown: &Value, checked: &Value| match &schemas.whole {
        Some(s) if !s.is_valid(checked) => 0,
        _ => items_of(shown).len(),
    };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => count(&v, &v),
        // What Python's json.loads accepts counts too, as in `json::analyse`.
        Err(_) => super::pyjson::with_stack(bytes, || {
            super::pyjson::loads(bytes).map_or(0, |p| count(&p.value, &p.checked))
        })
        .unwrap_or(0),
    }
}

fn strict_spans(text: &[u8], cuts: Cuts<'_>, schemas: &JsonSchemas) -> Vec<Span> {
    let mut out = Vec::new();
    // Fenced mode: once the closing fence is in the prefix, the fenced
    // content is what gets parsed, for every later cut.
    let mut whole_until = usize::MAX;
    if let Some((_, close_end)) = fenced_block(text) {
        let n = strict_count(&text[strict_region_bytes(text)], schemas);
        push(&mut out, close_end, usize::MAX, n);
        whole_until = close_end;
    }
    // Whole-text mode for cuts before that: the stripped prefix must be
    // exactly one complete value.
    let lead = py_strip_bytes(text);
    if lead.is_empty() {
        return out;
    }
    let v0 = lead.as_ptr() as usize - text.as_ptr() as usize;
    let mut spans = Vec::new();
    let mut count = |b: &[u8]| strict_count(py_strip_bytes(b), schemas);
    let at = ValueAt {
        v0,
        limit: text.len(),
        tail: true,
        fence: false,
    };
    prefix_spans(text, at, cuts, &mut count, &mut spans);
    for sp in spans {
        push(&mut out, sp.from, sp.to.min(whole_until), sp.count);
    }
    out
}

fn salvage_steps(text: &[u8], schemas: &JsonSchemas) -> Steps {
    // Each element is validated and dropped as soon as it is scanned: none
    // is kept, so memory stays flat and the cache warm; a valid one is a
    // step up where it becomes known, never down.
    let mut out = Vec::new();
    let mut count = |el: salvage::Element| {
        let valid = schemas
            .element(el.property.as_deref())
            .is_none_or(|s| s.is_valid(&el.value));
        if valid {
            Step::push(&mut out, el.known_at, 1);
        }
    };
    let mut scanner = salvage::ArrayScanner::new();
    scanner.feed_with(text, &mut count);
    // What the scan keeps only at the end of input counts too.
    scanner.finish(text, &mut count);
    Steps {
        starts: out,
        ends: Vec::new(),
    }
    .sorted()
}

/// How a line reads: where its one value ends and what follows it.
enum Reading {
    /// The value is the whole line.
    Exact,
    /// The value, then a fence ending the line (`{…}````).
    FenceAfter,
    /// The value, then something else (`{…},`).
    More,
}

fn jsonl_spans(text: &[u8], cuts: Cuts<'_>, schema: Option<&CompiledSchema>) -> Vec<Span> {
    let mut out = Vec::new();
    let mut seen = false;
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', text).chain(std::iter::once(text.len()));
    for nl in ends {
        if start > text.len() {
            break;
        }
        let line = &text[start..nl];
        let content = py_strip_bytes(line);
        if !content.is_empty() {
            let cs = start + (content.as_ptr() as usize - line.as_ptr() as usize);
            let ce = cs + content.len();
            let lead = !seen && content.starts_with(b"```");
            seen = true;
            let v0 = if lead { cs + lead_fence_len(content) } else { cs };
            let at = LineAt { line, nl, v0, ce, lead };
            line_spans(text, &at, cuts, schema, &mut out);
        }
        start = nl + 1;
    }
    out
}

/// One non-blank line of a JSONL text.
struct LineAt<'t> {
    /// The line's bytes.
    line: &'t [u8],
    /// Where the line ends (its newline, or the end of the text).
    nl: usize,
    /// Where its value starts (past a leading fence).
    v0: usize,
    /// Where its content ends.
    ce: usize,
    /// It opens with the response's leading fence.
    lead: bool,
}

/// The spans one non-blank line counts for: `text[v0..ce]` is its content
/// (past a leading fence), `nl` where the line ends.
fn line_spans(text: &[u8], at: &LineAt<'_>, cuts: Cuts<'_>, schema: Option<&CompiledSchema>, out: &mut Vec<Span>) {
    let &LineAt { nl, v0, ce, .. } = at;
    // One structural scan tells how the line can read, so the value is
    // parsed and validated at most once (numbers and literals aside).
    let mut skip = ValueSkipper::new(v0);
    let end = match skip.advance(&text[..ce]) {
        Skip::Done(end) if !skip.is_scalar() => end,
        Skip::Done(_) | Skip::NeedMore if skip.is_scalar() => {
            return scalar_line_spans(text, at, cuts, schema, out);
        }
        // Nothing here ever reads as a value.
        _ => return,
    };
    let (a, _) = blank_run(text, end);
    let reading = if a >= ce {
        Reading::Exact
    } else if a + 3 == ce && &text[a..ce] == b"```" {
        Reading::FenceAfter
    } else {
        Reading::More
    };
    if !value_ok(&text[v0..end], schema) {
        return;
    }
    let (as_last, not_last) = match reading {
        Reading::Exact => (1, 1),
        Reading::FenceAfter => (1, 0),
        Reading::More => (0, 0),
    };
    whole_line_spans(text, nl, ce, as_last, not_last, out);
    // A cut inside the line after the value: the prefix is the value and
    // blanks, or the value and a fence the reference strips from the end.
    let mut partial = Vec::new();
    let a = push_blank(text, end, 1, &mut partial);
    if text.len() >= a + 3 && &text[a..a + 3] == b"```" {
        push_blank(text, a + 3, 1, &mut partial);
    }
    for sp in partial {
        push(out, sp.from, sp.to.min(ce), sp.count);
    }
}

/// The spans of a line whose value is a number or literal: every prefix of
/// it may read as another value (`12` of `123`), so each cut inside is judged.
fn scalar_line_spans(
    text: &[u8],
    at: &LineAt<'_>,
    cuts: Cuts<'_>,
    schema: Option<&CompiledSchema>,
    out: &mut Vec<Span>,
) {
    let &LineAt { line, nl, v0, ce, lead } = at;
    let content = py_strip_bytes(line);
    let as_last = usize::from(line_ok(line, LinePlace { lead, last: true }, schema));
    let not_last = if depends_on_last(content, lead) {
        usize::from(line_ok(line, LinePlace { lead, last: false }, schema))
    } else {
        as_last
    };
    whole_line_spans(text, nl, ce, as_last, not_last, out);
    let mut partial = Vec::new();
    let mut count = |b: &[u8]| {
        usize::from(line_ok(
            b,
            LinePlace {
                lead: false,
                last: true,
            },
            schema,
        ))
    };
    let value = ValueAt {
        v0,
        limit: ce,
        tail: false,
        fence: true,
    };
    prefix_spans(text, value, cuts, &mut count, &mut partial);
    for sp in partial {
        push(out, sp.from, sp.to.min(ce), sp.count);
    }
}

/// A complete line counts from its last content byte `ce` on: `as_last`
/// while nothing but blanks follow it, `not_last` once anything does.
fn whole_line_spans(text: &[u8], nl: usize, ce: usize, as_last: usize, not_last: usize, out: &mut Vec<Span>) {
    if as_last + not_last == 0 {
        return;
    }
    let (a, holes) = blank_run(text, ce);
    let last_until = cut_past(text, a);
    let mut seg = ce;
    for h in holes {
        push(out, seg, h.start, as_last);
        // Half a space character on this line breaks the line; on a later
        // line it is a line of its own after this one.
        push(out, h.start, h.end, if h.start <= nl { 0 } else { not_last });
        seg = h.end;
    }
    push(out, seg, last_until, as_last);
    push(out, last_until, usize::MAX, not_last);
}

#[cfg(test)]
mod tests;
