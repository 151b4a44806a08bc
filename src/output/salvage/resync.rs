//! Where to resume after a broken element.
//!
//! After a syntax error the scanner cannot trust its idea of depth or of
//! being inside a string, so it looks for the next place that starts an
//! element of the same array by layout rather than by nesting:
//!
//! - when the elements start their own lines (the usual pretty-printed
//!   answer), the next line indented exactly as they are whose first byte
//!   opens an element; a raw newline is never inside a JSON string, so a
//!   line start is always outside one;
//! - when they follow one another on a line, the next opening bracket right
//!   after a `,` (or after a `}` / `]`, for a missing comma).
//!
//! A candidate must then parse as a whole value, share a key with the
//! array's earlier objects (a nested object rarely does), and be followed by
//! `,` or `]`; the scanner checks those.

use serde_json::Value;

use crate::output::scan::is_ws;

/// How the array's elements are laid out, as far as the scan has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// Each element starts its own line, after this many bytes of indent.
    Lines(usize),
    /// Elements follow one another on a line.
    Inline,
}

/// The search's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// A candidate element starts here.
    At(usize),
    /// None before the end of the buffer; search again from here once more
    /// bytes arrived.
    NeedMore(usize),
}

/// The indent of an element starting at `at`, when it is the first thing on
/// its line. Looks back over spaces and tabs only, so the cost is the
/// indent's length.
pub(super) fn line_indent(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    (i == 0 || matches!(bytes[i - 1], b'\n' | b'\r')).then_some(at - i)
}

/// The next element start at or after `from` that opens with `opener`.
pub(super) fn next_start(bytes: &[u8], from: usize, layout: Layout, opener: u8) -> Found {
    match layout {
        Layout::Lines(indent) => next_line_start(bytes, from, indent, opener),
        Layout::Inline => next_inline_start(bytes, from, opener),
    }
}

fn next_line_start(bytes: &[u8], mut from: usize, indent: usize, opener: u8) -> Found {
    // `from` itself may start the element (after a missing comma).
    if bytes.get(from) == Some(&opener) && line_indent(bytes, from) == Some(indent) {
        return Found::At(from);
    }
    while let Some(off) = memchr::memchr(b'\n', bytes.get(from..).unwrap_or_default()) {
        let nl = from + off;
        let mut at = nl + 1;
        while at < bytes.len() && matches!(bytes[at], b' ' | b'\t') {
            at += 1;
        }
        if at == bytes.len() {
            // The line's indent may still grow: look at it again.
            return Found::NeedMore(nl);
        }
        if at - (nl + 1) == indent && bytes[at] == opener {
            return Found::At(at);
        }
        from = nl + 1;
    }
    Found::NeedMore(bytes.len().max(from))
}

fn next_inline_start(bytes: &[u8], mut from: usize, opener: u8) -> Found {
    while let Some(off) = memchr::memchr(opener, bytes.get(from..).unwrap_or_default()) {
        let at = from + off;
        let mut before = at;
        while before > 0 && is_ws(bytes[before - 1]) {
            before -= 1;
        }
        if before > 0 && matches!(bytes[before - 1], b',' | b'}' | b']') {
            return Found::At(at);
        }
        from = at + 1;
    }
    Found::NeedMore(bytes.len().max(from))
}

/// Whether a candidate looks like a sibling of the array's earlier objects:
/// it shares a key with them. With none kept yet, any object with a key
/// does (`{}` is too easily part of a string: `"a, {}, b"`).
pub(super) fn looks_like_sibling(candidate: &Value, keys: Option<&[String]>) -> bool {
    match (candidate, keys) {
        (Value::Object(m), Some(keys)) => m.keys().any(|k| keys.iter().any(|seen| seen == k)),
        (Value::Object(m), None) => !m.is_empty(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_start_needs_the_same_indent() {
        let t = b"[\n  {\"a\": 1,\n    {\"n\": 2},\n  {\"a\": 3}\n]";
        assert_eq!(next_start(t, 5, Layout::Lines(2), b'{'), Found::At(29));
        assert_eq!(&t[29..37], b"{\"a\": 3}");
    }

    #[test]
    fn an_unfinished_indent_waits() {
        let t = b"[\n  {\"a\": 1,\n  ";
        assert_eq!(next_start(t, 5, Layout::Lines(2), b'{'), Found::NeedMore(12));
    }

    #[test]
    fn inline_start_follows_a_comma_or_a_close() {
        let t = br#"[{"a" 1}, {"a": 2} {"a": 3}]"#;
        assert_eq!(next_start(t, 2, Layout::Inline, b'{'), Found::At(10));
        assert_eq!(next_start(t, 11, Layout::Inline, b'{'), Found::At(19));
        assert_eq!(next_start(t, 20, Layout::Inline, b'{'), Found::NeedMore(t.len()));
    }

    #[test]
    fn indent_of_an_element() {
        assert_eq!(line_indent(b"[\n  {", 4), Some(2));
        assert_eq!(line_indent(b"[{", 1), None);
        assert_eq!(line_indent(b"{", 0), Some(0));
    }
}
