//! Text for people on a terminal, safe to print: the one sanitiser the
//! workbench draws with and the headless commands print with (`--output
//! pretty`, `warning:` and `error:` lines on stderr). A model's answer or a
//! provider's error body may carry escape sequences (an OSC 52 clipboard
//! write, clear screen, an OSC 8 link); every control character is shown as
//! U+FFFD instead, so none reaches the terminal. So are the characters that
//! move or reorder what a person reads without being controls: the bidi
//! overrides, embeddings, isolates and marks (U+202E makes `exe.txt` read
//! `txt.exe`) and the line and paragraph separators U+2028 / U+2029 (a
//! line break a terminal may take and the screen's line count does not).
//! Machine output (JSONL, the envelope) keeps the bytes, JSON-escaped.

use std::borrow::Cow;

/// Columns a tab stands for.
pub const TAB: &str = "    ";

/// Whether `c` is never printed as it is: a control character, a bidi
/// control, or a line or paragraph separator.
pub fn hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}'
        )
}

/// One line safe to draw: tabs become spaces, a trailing `\r` goes, and
/// other [`hostile`] characters (ESC, BEL, the C1 controls such as CSI
/// U+009B, a `\n` inside, U+202E, U+2028) become `�`.
pub fn clean(s: &str) -> Cow<'_, str> {
    let s = s.strip_suffix('\r').unwrap_or(s);
    if !s.chars().any(hostile) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str(TAB),
            c if hostile(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Text of many lines safe to print: each line as [`clean`] makes it, the
/// line breaks kept (`\r\n` becomes `\n`).
pub fn clean_text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| hostile(c) && c != '\n') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&clean(line));
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_visible_and_lines_stay() {
        let hostile = "a\u{1b}]52;c;aGk=\u{7}b\r\n\u{1b}[2J\u{9b}1m\tc\rd\n";
        assert_eq!(
            clean_text(hostile),
            "a\u{FFFD}]52;c;aGk=\u{FFFD}b\n\u{FFFD}[2J\u{FFFD}1m    c\u{FFFD}d\n"
        );
        assert!(matches!(clean_text("plain\nlines ✓\n"), Cow::Borrowed(_)));
        assert_eq!(clean("x\ny"), "x\u{FFFD}y");
    }
}
