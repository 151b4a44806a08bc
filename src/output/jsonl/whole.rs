//! A whole `jsonl` response analysed at once. Once two facts about the rest
//! of the response are known (whether a non-blank line comes before a
//! line, whether one comes after it), every line is judged on its own; so a
//! large response is cut at line ends into parts judged on the machine's
//! cores, and the parts are joined in line order. What depends on order,
//! the kept items' indices, the counts and where the reference raises, is
//! settled in the join. The outcome is the one a single pass gives (tested
//! below on every cut of crafted responses).

use std::num::NonZeroUsize;

use serde_json::Value;

use super::{JsonlAnalysis, LineJudge, LineOutcome, LineStatus};
use crate::output::schema::CompiledSchema;
use crate::output::text::py_strip_bytes;
use crate::output::tg::TgPython;

/// Smallest part worth a thread: below it, starting one costs more than
/// judging the part saves (an LLM answer is almost always one part).
const PART_MIN: usize = 256 * 1024;

/// Stack of a part's thread: the main thread's, as a single pass has
/// (values nested past serde_json's limit get their own deeper thread).
const PART_STACK: usize = 8 << 20;

/// Analyse a whole `jsonl` response, for TrustGraph on its default Python.
pub fn analyse(text: &[u8], schema: Option<&CompiledSchema>) -> JsonlAnalysis {
    analyse_py(text, schema, TgPython::default())
}

/// Analyse a whole `jsonl` response, for TrustGraph's service on the given
/// Python.
pub fn analyse_py(text: &[u8], schema: Option<&CompiledSchema>, py: TgPython) -> JsonlAnalysis {
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    analyse_in_parts(text, schema, py, cores.min(text.len() / PART_MIN).max(1))
}

/// One part of the response: bytes `start..end`, beginning at line `first_line`.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    first_line: usize,
}

/// What judging one part gave, with item indices counted from the part's
/// first kept value.
struct Judged {
    lines: Vec<LineOutcome>,
    items: Vec<Value>,
    tg_first: Option<usize>,
}

/// [`analyse_py`] with the response cut into at most `parts` parts.
fn analyse_in_parts(text: &[u8], schema: Option<&CompiledSchema>, py: TgPython, parts: usize) -> JsonlAnalysis {
    let utf8 = std::str::from_utf8(text).is_ok();
    let spans = split(text, parts);
    let judge = |span: Span, capacity: usize| judge_part(text, span, capacity, schema, py, utf8);
    // Counting lines first (memchr) spares the outcome and item vectors
    // their regrowth copies; the first part's vectors take the whole.
    let lines = memchr::memchr_iter(b'\n', text).count() + 1;
    let judged: Vec<Judged> = if spans.len() == 1 {
        vec![judge(spans[0], lines)]
    } else {
        std::thread::scope(|s| {
            let rest: Vec<_> = spans[1..]
                .iter()
                .map(|&span| {
                    let h = std::thread::Builder::new()
                        .stack_size(PART_STACK)
                        .spawn_scoped(s, move || judge(span, 0));
                    (span, h)
                })
                .collect();
            let mut judged = vec![judge(spans[0], lines)];
            for (span, h) in rest {
                // A part whose thread could not start is judged here.
                judged.push(match h {
                    Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                    Err(_) => judge(span, 0),
                });
            }
            judged
        })
    };
    join(judged)
}

/// Cut `text` into at most `parts` spans of about equal size, each ending
/// just after a `\n` (the last at the end of the text).
fn split(text: &[u8], parts: usize) -> Vec<Span> {
    let mut spans = Vec::with_capacity(parts);
    let (mut start, mut first_line) = (0, 1);
    for k in 1..parts {
        let target = (text.len() * k / parts).max(start);
        let Some(nl) = memchr::memchr(b'\n', &text[target..]) else {
            break;
        };
        let end = target + nl + 1;
        spans.push(Span { start, end, first_line });
        first_line += memchr::memchr_iter(b'\n', &text[start..end]).count();
        start = end;
    }
    spans.push(Span {
        start,
        end: text.len(),
        first_line,
    });
    spans.retain(|s| s.start < s.end || s.start == 0);
    spans
}

/// Judge one part, knowing whether a non-blank line comes before it and
/// after it in the whole response.
fn judge_part(
    text: &[u8],
    span: Span,
    capacity: usize,
    schema: Option<&CompiledSchema>,
    py: TgPython,
    utf8: bool,
) -> Judged {
    let part = &text[span.start..span.end];
    let capacity = capacity.max(memchr::memchr_iter(b'\n', part).count() + 1);
    let mut out = Judged {
        lines: Vec::with_capacity(capacity),
        items: Vec::with_capacity(capacity),
        tg_first: None,
    };
    let mut judge = LineJudge::with_python(schema, py);
    judge.next_line = span.first_line;
    judge.seen = !py_strip_bytes(&text[..span.start]).is_empty();
    judge.utf8 = utf8;
    let mut emit = |o: LineOutcome, v: Option<Value>| {
        out.lines.push(o);
        out.items.extend(v);
    };
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', part) {
        judge.line(&part[start..nl], true, &mut emit);
        start = nl + 1;
    }
    if start < part.len() {
        judge.line(&part[start..], false, &mut emit);
    }
    let tg_first = judge.tg_first;
    judge.finish_part(py_strip_bytes(&text[span.end..]).is_empty(), &mut emit);
    out.tg_first = tg_first;
    out
}

/// The parts' outcomes in line order, with items numbered across parts,
/// and the counts and the reference's raise taken over the whole.
fn join(judged: Vec<Judged>) -> JsonlAnalysis {
    let mut parts = judged.into_iter();
    let Some(first) = parts.next() else {
        return JsonlAnalysis::default();
    };
    let mut out = JsonlAnalysis {
        items: first.items,
        lines: first.lines,
        tg_line_offset: first.tg_first.map_or(0, |f| f - 1),
        ..JsonlAnalysis::default()
    };
    let mut tg_first = first.tg_first;
    for mut part in parts {
        let base = out.items.len();
        for o in &mut part.lines {
            if let LineStatus::Ok { item } = &mut o.status {
                *item += base;
            }
        }
        out.lines.append(&mut part.lines);
        out.items.append(&mut part.items);
        if tg_first.is_none() {
            tg_first = part.tg_first;
            out.tg_line_offset = tg_first.map_or(0, |f| f - 1);
        }
    }
    let lines = std::mem::take(&mut out.lines);
    for o in &lines {
        out.count(o);
    }
    out.lines = lines;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Responses where the parts' edges matter: fences first and last,
    /// lines held for a closing fence, blank runs, invalid UTF-8, lines
    /// that make the reference raise, a cut final line.
    fn responses() -> Vec<Vec<u8>> {
        let ok = r#"{"entity": "a", "definition": "x"}"#;
        let bad = r#"{"entity": "b"}"#;
        let deep = format!("{}{}", "[".repeat(1200), "]".repeat(1200));
        let long_int = format!("{{\"n\": {}}}", "7".repeat(4400));
        [
            format!("```jsonl\n{ok}\n\n{bad}\nnot json\n{ok}```\n\n"),
            format!("\n\n  \n```json {ok}\n{ok}\n```\n{ok}\n```\n\n{ok}```"),
            format!("{ok}\n{bad}\n{ok}\n{{\"entity\": \"d\", \"defin"),
            format!("```\n```\n\n\n{ok}\n{bad}\n```"),
            format!("{bad}\n{deep}\n{ok}\n{long_int}\n{ok}\n"),
            "\n\n\n\n".to_owned(),
            format!("{ok}```\n\n\n"),
            format!("{ok}\n{ok}```\n\n{ok}```\n\n{ok}\n"),
        ]
        .into_iter()
        .map(String::into_bytes)
        .chain([b"{\"entity\": \"\xff\", \"definition\": \"x\"}\n\xfe\n{}\n".to_vec()])
        .collect()
    }

    fn schema() -> CompiledSchema {
        CompiledSchema::compile(&json!({"type": "object", "required": ["entity", "definition"]})).unwrap()
    }

    #[test]
    fn parts_give_the_single_pass() {
        let schema = schema();
        for text in responses() {
            for schema in [None, Some(&schema)] {
                let one = analyse_in_parts(&text, schema, TgPython::default(), 1);
                for parts in 2..=text.len().min(40) {
                    let many = analyse_in_parts(&text, schema, TgPython::default(), parts);
                    assert_eq!(many, one, "{parts} parts of {:?}", String::from_utf8_lossy(&text));
                }
            }
        }
    }

    #[test]
    fn split_ends_parts_after_newlines() {
        let text = b"ab\ncd\n\nef";
        let spans = split(text, 3);
        let cuts: Vec<_> = spans.iter().map(|s| (s.start, s.end, s.first_line)).collect();
        assert_eq!(cuts, [(0, 6, 1), (6, 7, 3), (7, 9, 4)]);
        assert_eq!(split(b"", 4).len(), 1);
        assert_eq!(split(b"no newline", 4).len(), 1);
    }
}
