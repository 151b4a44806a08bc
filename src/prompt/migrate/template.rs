//! The template half of a migration: array examples re-serialised one
//! element per line, output-format phrases reworded, the rest flagged.

use serde_json::{Map, Value};

use super::{Flag, Item, Shape};
use crate::output::schema::CompiledSchema;

pub(super) struct Ctx<'a> {
    /// `None` when the schema was not converted: examples cannot be checked.
    pub shape: Option<&'a Shape>,
    pub schema: Option<&'a CompiledSchema>,
}

impl Ctx<'_> {
    /// The noun of one line: what the array's elements are; a tagged
    /// union's lines are always objects.
    fn noun(&self) -> &'static str {
        match self.shape {
            Some(Shape::Items(item)) => item.noun(),
            _ => Item::Object.noun(),
        }
    }
}

/// Recognised output-format phrases (ASCII, matched case-insensitively;
/// at one position the first that matches wins, so longer ones come first)
/// and their JSONL wording.
const PHRASES: [(&str, Wording); 15] = [
    ("only the JSON array", Wording::OnlyLines),
    ("only the array", Wording::OnlyLines),
    ("a list of objects", Wording::Jsonl),
    ("list of objects", Wording::Jsonl),
    ("as one JSON array", Wording::OnePerLine),
    ("one JSON array", Wording::OnePerLine),
    ("a JSON array of objects", Wording::Jsonl),
    ("an array of JSON objects", Wording::Jsonl),
    ("a JSON list of objects", Wording::Jsonl),
    ("JSON array of objects", Wording::Jsonl),
    ("an array of objects", Wording::Jsonl),
    ("array of objects", Wording::Jsonl),
    ("a JSON array", Wording::Jsonl),
    ("a JSON list", Wording::Jsonl),
    ("JSON array", Wording::Jsonl),
];

/// The JSONL wording a phrase becomes, naming what one line holds.
#[derive(Debug, Clone, Copy)]
enum Wording {
    /// `JSONL: one JSON object per line`
    Jsonl,
    /// `only the JSON lines, one object per line`
    OnlyLines,
    /// `one JSON object per line (JSONL)`
    OnePerLine,
}

impl Wording {
    fn text(self, noun: &str) -> String {
        match self {
            Self::Jsonl => format!("JSONL: one JSON {noun} per line"),
            Self::OnlyLines => format!("only the JSON lines, one {noun} per line"),
            Self::OnePerLine => format!("one JSON {noun} per line (JSONL)"),
        }
    }
}

const REDUNDANT: [&str; 2] = [", one object per line", ", one item per line"];
const SUSPECT: [&str; 4] = ["arrays", "array", "lists", "list"];

const UNION_PER_LINE: &str = "one JSON object per line, told apart by \"type\" (JSONL discriminated union)";

/// Length of `as one JSON object of <word> arrays` (or without `as `) at
/// the start of `rest`: an object of arrays, one line per element now.
fn object_of_arrays(rest: &[u8]) -> Option<usize> {
    let start = if ci_at(rest, 0, "as one JSON object of ") {
        "as one JSON object of ".len()
    } else if ci_at(rest, 0, "one JSON object of ") {
        "one JSON object of ".len()
    } else {
        return None;
    };
    let after = &rest[start..];
    let word = after.iter().take_while(|b| b.is_ascii_alphanumeric()).count();
    (word > 0 && ci_at(after, word, " arrays")).then_some(start + word + " arrays".len())
}

/// Length of a following ` of objects` / ` of <word> objects` that the
/// replacement already says, else 0.
fn of_objects(rest: &[u8]) -> usize {
    if !ci_at(rest, 0, " of ") {
        return 0;
    }
    let after = &rest[4..];
    if ci_at(after, 0, "objects") {
        return 4 + 7;
    }
    let word = after
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
        .count();
    if word > 0 && ci_at(after, word, " objects") {
        return 4 + word + 8;
    }
    0
}

pub(super) fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count() + 1
}

fn ci_at(bytes: &[u8], i: usize, word: &str) -> bool {
    bytes.len() >= i + word.len() && bytes[i..i + word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// End of the template tag starting at `i` (`{{`, `{%`, `{#`), if it is one.
pub(super) fn tag_end(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    let close: &[u8] = match bytes.get(i + 1)? {
        b'{' => b"}}",
        b'%' => b"%}",
        b'#' => b"#}",
        _ => return None,
    };
    let rest = &bytes[i + 2..];
    let at = rest.windows(2).position(|w| w == close)?;
    Some(i + 2 + at + 2)
}

/// End (exclusive) of the balanced `[…]` / `{…}` starting at `i`, skipping strings.
pub(super) fn balanced_end(bytes: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut esc = false;
    for (j, &b) in bytes.iter().enumerate().skip(i) {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn json_like(bytes: &[u8], i: usize) -> bool {
    let next = bytes[i + 1..].iter().find(|b| !b.is_ascii_whitespace());
    matches!(next, Some(b'{' | b'[' | b'"' | b']'))
}

/// One element as a line: compact, with `", "` / `": "` separators when
/// `spaced`, and `type` first when `tag` is given.
fn line_json(v: &Value, tag: Option<&str>, spaced: bool) -> String {
    let mut s = String::new();
    match (v, tag) {
        (Value::Object(m), Some(t)) => {
            let mut tagged = Map::new();
            tagged.insert("type".into(), Value::String(t.to_owned()));
            tagged.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
            write_json(&mut s, &Value::Object(tagged), spaced);
        }
        _ => write_json(&mut s, v, spaced),
    }
    s
}

fn write_json(s: &mut String, v: &Value, spaced: bool) {
    let (comma, colon) = if spaced { (", ", ": ") } else { (",", ":") };
    match v {
        Value::Array(a) => {
            s.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    s.push_str(comma);
                }
                write_json(s, e, spaced);
            }
            s.push(']');
        }
        Value::Object(m) => {
            s.push('{');
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    s.push_str(comma);
                }
                s.push_str(&serde_json::to_string(k).unwrap_or_default());
                s.push_str(colon);
                write_json(s, e, spaced);
            }
            s.push('}');
        }
        other => s.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

/// What to do with one bracketed span of the template.
enum Span {
    /// Replace with these lines.
    Lines(Vec<String>),
    /// Leave as is, with a flag message.
    Flag(String),
    /// Not an example: leave as is and look inside no further.
    Skip,
}

fn judge_array(text: &str, ctx: &Ctx<'_>) -> Span {
    let has_tags = text.contains("{{") || text.contains("{%");
    let Ok(Value::Array(elements)) = serde_json::from_str::<Value>(text) else {
        return Span::Flag(if has_tags {
            "array example holds template syntax and cannot be parsed; rewrite it as one object per line by hand".into()
        } else {
            "array example does not parse as JSON; rewrite it as one object per line by hand".into()
        });
    };
    let spaced = text.contains("\": ") || text.contains(", \"");
    match ctx.shape {
        None => Span::Flag("the schema was not converted, so this array example was not checked or rewritten".into()),
        Some(Shape::Union(_)) => {
            Span::Flag("bare array example in a prompt whose lines are tagged by `type`; rewrite it by hand".into())
        }
        Some(Shape::Items(_)) => {
            if elements.is_empty() {
                return Span::Flag("empty array example: in JSONL that is no lines at all; rewrite it by hand".into());
            }
            let ok = elements
                .iter()
                .all(|e| ctx.schema.map_or(e.is_object(), |s| s.is_valid(e)));
            if !ok {
                return Span::Flag("array example has elements that do not match the schema; left as is".into());
            }
            Span::Lines(elements.iter().map(|e| line_json(e, None, spaced)).collect())
        }
    }
}

fn judge_object(text: &str, ctx: &Ctx<'_>) -> Span {
    let Some(Shape::Union(tags)) = ctx.shape else {
        return Span::Skip;
    };
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) else {
        if text.contains('[') {
            return Span::Flag(
                "object example does not parse as JSON; rewrite it as one object per line by hand".into(),
            );
        }
        return Span::Skip;
    };
    if !obj.keys().any(|k| tags.iter().any(|(p, _)| p == k)) {
        return Span::Skip;
    }
    let spaced = text.contains("\": ") || text.contains(", \"");
    let mut lines = Vec::new();
    for (k, v) in &obj {
        let Some((_, tag)) = tags.iter().find(|(p, _)| p == k) else {
            return Span::Flag(format!(
                "object example has the key `{k}`, which is not one of the arrays; left as is"
            ));
        };
        let Value::Array(elements) = v else {
            return Span::Flag(format!("object example's `{k}` is not an array; left as is"));
        };
        for e in elements {
            let line = line_json(e, Some(tag), spaced);
            let tagged: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if !ctx.schema.is_none_or(|s| s.is_valid(&tagged)) {
                return Span::Flag(format!(
                    "object example has `{k}` elements that do not match the schema; left as is"
                ));
            }
            lines.push(line);
        }
    }
    if lines.is_empty() {
        return Span::Flag(
            "object example has no elements: in JSONL that is no lines at all; rewrite it by hand".into(),
        );
    }
    Span::Lines(lines)
}

/// Rewrite one template; flags carry `part` and the source line.
pub(super) fn rewrite_template(text: &str, ctx: &Ctx<'_>, part: &'static str, flags: &mut Vec<Flag>) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut prose_start = 0;
    let mut i = 0;
    let mut flag = |offset: usize, message: String| {
        flags.push(Flag {
            part,
            line: line_of(text, offset),
            message,
        });
    };
    let mut pending: Vec<(usize, usize, Option<Vec<String>>)> = Vec::new();
    while i < bytes.len() {
        if let Some(end) = tag_end(bytes, i) {
            i = end;
            continue;
        }
        let b = bytes[i];
        if b != b'[' && b != b'{' {
            i += 1;
            continue;
        }
        let Some(end) = balanced_end(bytes, i) else {
            if b == b'[' && json_like(bytes, i) {
                flag(
                    i,
                    "array example is never closed; rewrite it as one object per line by hand".into(),
                );
            }
            i += 1;
            continue;
        };
        let span = &text[i..end];
        let verdict = if b == b'[' {
            if json_like(bytes, i) || span.contains("{{") {
                judge_array(span, ctx)
            } else {
                Span::Skip
            }
        } else {
            judge_object(span, ctx)
        };
        match verdict {
            Span::Lines(lines) => {
                pending.push((i, end, Some(lines)));
                i = end;
            }
            Span::Flag(m) => {
                flag(i, m);
                pending.push((i, end, None));
                i = end;
            }
            Span::Skip if b == b'[' => i = end,
            Span::Skip => i += 1,
        }
    }
    for (start, end, lines) in pending {
        out.push_str(&rewrite_prose(text, prose_start, start, ctx.noun(), &mut flag));
        match lines {
            Some(l) => out.push_str(&l.join("\n")),
            None => out.push_str(&text[start..end]),
        }
        prose_start = end;
    }
    out.push_str(&rewrite_prose(text, prose_start, text.len(), ctx.noun(), &mut flag));
    out
}

/// Rewrite output-format phrases in `text[from..to]`; flag suspect words
/// left over.
pub(super) fn rewrite_prose(
    text: &str,
    from: usize,
    to: usize,
    noun: &str,
    flag: &mut impl FnMut(usize, String),
) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = from;
    let mut i = from;
    let boundary = |j: usize| j >= bytes.len() || !bytes[j].is_ascii_alphanumeric();
    while i < to {
        if let Some(end) = tag_end(bytes, i).filter(|&e| e <= to) {
            i = end;
            continue;
        }
        if i > 0 && !boundary(i - 1) {
            i += 1;
            continue;
        }
        if let Some(len) = object_of_arrays(&bytes[i..to]) {
            out.push_str(&text[copied..i]);
            out.push_str(UNION_PER_LINE);
            copied = i + len;
            i = copied;
            continue;
        }
        if let Some((p, replacement)) = PHRASES
            .iter()
            .find(|(p, _)| i + p.len() <= to && ci_at(bytes, i, p) && boundary(i + p.len()))
        {
            out.push_str(&text[copied..i]);
            out.push_str(&replacement.text(noun));
            let mut end = i + p.len();
            end += of_objects(&bytes[end..to]);
            if let Some(r) = REDUNDANT.iter().find(|r| end + r.len() <= to && ci_at(bytes, end, r)) {
                end += r.len();
            }
            copied = end;
            i = end;
            continue;
        }
        if let Some(w) = SUSPECT
            .iter()
            .find(|w| i + w.len() <= to && ci_at(bytes, i, w) && boundary(i + w.len()))
        {
            flag(
                i,
                format!(
                    "`{}` not rewritten: say here by hand that the answer is one JSON {noun} per line (JSONL)",
                    &text[i..i + w.len()]
                ),
            );
            i += w.len();
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..to]);
    out
}
