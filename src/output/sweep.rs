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

use super::json::{JsonSchemas, items_of, strict_region};
use super::jsonl::{LineStatus, judge_line};
use super::salvage;
use super::scan::{Skip, ValueSkipper};
use super::schema::CompiledSchema;
use super::text::py_strip_bytes;

/// Items recovered when the response is cut after `tokens` tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
    let strict = strict_spans(text, cuts, &schemas.json);
    let salvage = salvage_spans(text, &schemas.json);
    let jsonl = jsonl_spans(text, cuts, schemas.line.as_ref());
    let mut strict_c = Counter::new(&strict);
    let mut salvage_c = Counter::new(&salvage);
    let mut jsonl_c = Counter::new(&jsonl);
    cuts.iter()
        .enumerate()
        .map(|(tokens, &c)| SweepPoint {
            tokens,
            bytes: c,
            json_items: strict_c.at(c),
            salvaged_items: salvage_c.at(c),
            jsonl_items: jsonl_c.at(c),
        })
        .collect()
}

/// Evaluates a sum of interval counts at non-decreasing positions.
struct Counter {
    starts: Vec<(usize, usize)>,
    ends: Vec<(usize, usize)>,
    si: usize,
    ei: usize,
    total: usize,
}

impl Counter {
    fn new(spans: &[Span]) -> Self {
        let mut starts: Vec<(usize, usize)> = spans.iter().map(|s| (s.from, s.count)).collect();
        let mut ends: Vec<(usize, usize)> = spans.iter().map(|s| (s.to, s.count)).collect();
        // Already nearly sorted; sort_unstable is linear-ish on runs.
        starts.sort_unstable_by_key(|p| p.0);
        ends.sort_unstable_by_key(|p| p.0);
        Self {
            starts,
            ends,
            si: 0,
            ei: 0,
            total: 0,
        }
    }

    fn at(&mut self, c: usize) -> usize {
        while self.si < self.starts.len() && self.starts[self.si].0 <= c {
            self.total += self.starts[self.si].1;
            self.si += 1;
        }
        while self.ei < self.ends.len() && self.ends[self.ei].0 <= c {
            self.total -= self.ends[self.ei].1;
            self.ei += 1;
        }
        self.total
    }
}

/// Cuts strictly inside `(from, to]`.
fn cuts_in(cuts: &[usize], from: usize, to: usize) -> &[usize] {
    let a = cuts.partition_point(|&c| c <= from);
    let b = cuts.partition_point(|&c| c <= to);
    &cuts[a..b.max(a)]
}

/// Where a complete value starting at `v0` makes the prefix parse, given
/// what a prefix ending at `c` would be parsed as. Calls `count(prefix)` at
/// most once per distinct parse, and pushes the spans it counts for.
fn value_spans(
    text: &[u8],
    v0: usize,
    limit: usize,
    cuts: &[usize],
    count: &mut dyn FnMut(&[u8]) -> usize,
    out: &mut Vec<Span>,
) {
    let mut skip = ValueSkipper::new(v0);
    let end = match skip.advance(&text[..limit]) {
        Skip::Done(end) => Some(end),
        Skip::NeedMore if skip.is_scalar() => Some(limit),
        _ => None,
    };
    let Some(end) = end else { return };
    // First non-space after the value (Python's notion of space).
    let after = next_non_space(text, end, limit);
    if skip.is_scalar() {
        // A number or literal: every prefix of it may parse to a different
        // value ("12" of "123"), so judge each cut inside it.
        for &c in cuts_in(cuts, v0, end) {
            let n = count(py_strip_bytes(&text[v0..c]));
            let to = cuts
                .get(cuts.partition_point(|&x| x <= c))
                .copied()
                .unwrap_or(usize::MAX);
            if n > 0 && c < end {
                out.push(Span {
                    from: c,
                    to: to.min(end),
                    count: n,
                });
            }
        }
    }
    let n = count(&text[v0..end]);
    if n > 0 {
        out.push(Span {
            from: end,
            to: after,
            count: n,
        });
    }
}

/// The first cut past `from` whose prefix takes in a non-space byte of
/// `text[from..limit]` (one past that byte); `usize::MAX` when only spaces
/// remain to the end of the text.
fn next_non_space(text: &[u8], from: usize, limit: usize) -> usize {
    let rest = &text[from..limit];
    let stripped = py_strip_bytes(rest);
    if stripped.is_empty() {
        if limit == text.len() { usize::MAX } else { limit + 1 }
    } else {
        from + (stripped.as_ptr() as usize - rest.as_ptr() as usize) + 1
    }
}

fn strict_count(bytes: &[u8], schemas: &JsonSchemas) -> usize {
    let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
        return 0;
    };
    match &schemas.whole {
        Some(s) if !s.is_valid(&v) => 0,
        _ => items_of(&v).len(),
    }
}

fn strict_spans(text: &[u8], cuts: &[usize], schemas: &JsonSchemas) -> Vec<Span> {
    let mut out = Vec::new();
    let Ok(s) = std::str::from_utf8(text) else {
        // Lossy view keeps offsets only for valid text; an invalid response
        // has no strict parse at any cut worth reporting.
        return out;
    };
    // Fenced mode: once the closing fence is in the prefix, the fenced
    // content is what gets parsed, for every later cut.
    let mut whole_until = text.len() + 1;
    if let Some(open) = s.find("```") {
        let mut start = open + 3;
        if s[start..].starts_with("json") {
            start += 4;
        }
        if let Some(close) = s[start..].find("```") {
            let close_end = start + close + 3;
            let region = strict_region(s);
            let n = strict_count(&text[region], schemas);
            if n > 0 {
                out.push(Span {
                    from: close_end,
                    to: usize::MAX,
                    count: n,
                });
            }
            whole_until = close_end;
        }
    }
    // Whole-text mode for cuts before that: the stripped prefix must be
    // exactly one complete value.
    let lead = py_strip_bytes(text);
    if lead.is_empty() {
        return out;
    }
    let v0 = lead.as_ptr() as usize - text.as_ptr() as usize;
    let limit = text.len();
    let mut spans = Vec::new();
    value_spans(text, v0, limit, cuts, &mut |b| strict_count(b, schemas), &mut spans);
    for mut sp in spans {
        sp.to = sp.to.min(whole_until);
        if sp.from < sp.to {
            out.push(sp);
        }
    }
    out
}

fn salvage_spans(text: &[u8], schemas: &JsonSchemas) -> Vec<Span> {
    let (elements, _) = salvage::salvage(text);
    elements
        .into_iter()
        .filter(|el| {
            schemas
                .element(el.property.as_deref())
                .is_none_or(|s| s.is_valid(&el.value))
        })
        .map(|el| {
            let scalar = !matches!(text[el.span.start], b'{' | b'[' | b'"');
            Span {
                from: el.span.end + usize::from(scalar),
                to: usize::MAX,
                count: 1,
            }
        })
        .collect()
}

fn jsonl_spans(text: &[u8], cuts: &[usize], schema: Option<&CompiledSchema>) -> Vec<Span> {
    let mut out = Vec::new();
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
            // The whole line, judged once: counts from its last content byte on.
            let (status, _) = judge_line(line, nl < text.len(), schema, 0);
            if matches!(status, LineStatus::Ok { .. }) {
                out.push(Span {
                    from: ce,
                    to: usize::MAX,
                    count: 1,
                });
            }
            // A cut inside the line: the prefix may already be a complete
            // value followed by more (`{"a": 1},` cut after the brace).
            if !content.starts_with(b"```") {
                let mut partial = Vec::new();
                value_spans(
                    text,
                    cs,
                    ce,
                    cuts,
                    &mut |b| {
                        let (st, _) = judge_line(b, false, schema, 0);
                        usize::from(matches!(st, LineStatus::Ok { .. }))
                    },
                    &mut partial,
                );
                // Spans at or past the line's end duplicate the whole-line count.
                out.extend(partial.into_iter().filter(|sp| sp.from < ce).map(|mut sp| {
                    sp.to = sp.to.min(ce);
                    sp
                }));
            }
        }
        start = nl + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, jsonl};
    use serde_json::json;

    fn naive(text: &[u8], cuts: &[usize], schemas: &SweepSchemas) -> Vec<SweepPoint> {
        cuts.iter()
            .enumerate()
            .map(|(tokens, &c)| {
                let p = String::from_utf8_lossy(&text[..c]);
                let valid_utf8 = std::str::from_utf8(&text[..c]).is_ok();
                let j = json::analyse(&p, &schemas.json);
                let l = jsonl::analyse(&text[..c], schemas.line.as_ref());
                SweepPoint {
                    tokens,
                    bytes: c,
                    json_items: if valid_utf8 { j.items.len() } else { 0 },
                    salvaged_items: j.salvaged.len(),
                    jsonl_items: l.items.len(),
                }
            })
            .collect()
    }

    fn schemas() -> SweepSchemas {
        let item = json!({"type": "object", "properties": {"e": {"type": "string"}}, "required": ["e"]});
        SweepSchemas {
            json: JsonSchemas::compile(Some(&json!({"type": "array", "items": item}))).unwrap(),
            line: Some(CompiledSchema::compile(&item).unwrap()),
        }
    }

    #[test]
    fn every_byte_cut_matches_naive() {
        let s = schemas();
        for text in [
            "[\n{\"e\": \"a\"},\n{\"e\": 1},\n{\"e\": \"b\"}\n]\n",
            "```json\n[{\"e\": \"a\"}, {\"e\": \"b\"}]\n```\nThat is all.",
            "{\"e\": \"a\"}\n{\"e\": \"b\"},\n\n{\"x\": 1}\n{\"e\": \"日本\"}  \n{\"e\": \"c",
            "  123  ",
            "[1, 22, {\"e\": \"]\"}] trailing",
        ] {
            let cuts: Vec<usize> = (0..=text.len()).collect();
            assert_eq!(
                sweep(text.as_bytes(), &cuts, &s),
                naive(text.as_bytes(), &cuts, &s),
                "{text}"
            );
        }
    }
}
