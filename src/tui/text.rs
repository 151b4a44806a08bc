//! Text for the terminal: display widths (CJK and emoji take two columns),
//! control characters made visible, clipping to a width without ever
//! splitting a character, and line indexes so only visible lines are drawn.

use unicode_width::UnicodeWidthChar;

use crate::term::TAB;
/// The one sanitiser, shared with the headless commands (`crate::term`).
pub use crate::term::clean;

/// Display width of one character as drawn by [`clean`] (tabs are four
/// columns, what it shows as `�` one).
pub fn char_width(c: char) -> usize {
    match c {
        '\t' => TAB.len(),
        c if crate::term::hostile(c) => 1,
        c => c.width().unwrap_or(0),
    }
}

/// Display width of `s` in terminal columns.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// `s` cleaned and clipped to at most `max` columns; a clipped line ends in
/// `…`. A wide character that would straddle the edge is left out whole.
pub fn clip(s: &str, max: usize) -> String {
    let s = clean(s);
    if width(&s) <= max {
        return s.into_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = char_width(c);
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `s` clipped and padded with spaces to exactly `w` columns.
pub fn pad(s: &str, w: usize) -> String {
    let mut out = clip(s, w);
    let have = width(&out);
    out.extend(std::iter::repeat_n(' ', w.saturating_sub(have)));
    out
}

/// The largest char boundary of `s` at or below byte `i` (a cut inside a
/// multi-byte character falls back to the character's start).
pub fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Start offsets of the lines of `text` (always at least one: `0`).
pub fn line_starts(text: &str) -> Vec<usize> {
    let mut v = vec![0];
    extend_line_starts(&mut v, text, 0);
    v
}

/// Add the starts of lines that begin in `text[from..]` (after appending).
pub fn extend_line_starts(starts: &mut Vec<usize>, text: &str, from: usize) {
    starts.extend(memchr::memchr_iter(b'\n', &text.as_bytes()[from..]).map(|i| from + i + 1));
}

/// Line `i` of `text` (without its `\n`) given its line starts.
pub fn line_at<'t>(text: &'t str, starts: &[usize], i: usize) -> &'t str {
    let Some(&start) = starts.get(i) else { return "" };
    let end = starts.get(i + 1).map_or(text.len(), |&n| n - 1);
    &text[start..end.max(start)]
}

/// A count as `usize` → `u16` for layout, saturating.
pub fn u16_of(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// A count as `f64` for charts (exact up to 2^32).
pub fn f64_of(n: usize) -> f64 {
    u32::try_from(n).map_or(f64::from(u32::MAX), f64::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_clipping() {
        assert_eq!(width("日本語"), 6);
        assert_eq!(width("a😀b"), 4);
        assert_eq!(clip("日本語です", 5), "日本…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "ab…");
        assert_eq!(clip("a\tb\x1b[2J", 20), "a    b\u{FFFD}[2J");
        assert_eq!(pad("日本", 5), "日本 ");
    }

    #[test]
    fn boundaries_never_split_a_char() {
        let s = "a日b";
        assert_eq!(floor_boundary(s, 2), 1);
        assert_eq!(floor_boundary(s, 4), 4);
        assert_eq!(floor_boundary(s, 99), s.len());
    }

    #[test]
    fn line_index() {
        let t = "ab\ncd\n\nx";
        let s = line_starts(t);
        assert_eq!(s, vec![0, 3, 6, 7]);
        assert_eq!(line_at(t, &s, 1), "cd");
        assert_eq!(line_at(t, &s, 2), "");
        assert_eq!(line_at(t, &s, 3), "x");
        let mut t2 = String::from("ab");
        let mut s2 = line_starts(&t2);
        t2.push_str("\ncd\n");
        extend_line_starts(&mut s2, &t2, 2);
        assert_eq!(s2, vec![0, 3, 6]);
        assert_eq!(line_at(&t2, &s2, 2), "");
    }
}
