//! Byte offsets to the line and column a person sees.

/// 1-based line and column (in characters) of byte `offset` in `text`.
/// An offset inside a multi-byte character counts that character.
pub fn line_col(text: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    // Count characters: every byte that is not a UTF-8 continuation byte.
    let column = before[line_start..].iter().filter(|&&b| (b & 0xC0) != 0x80).count() + 1;
    (line, column)
}

/// Byte offset of serde_json's (1-based line, 1-based byte column) in `text`.
pub fn offset_of(text: &[u8], line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match memchr::memchr(b'\n', &text[start..]) {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    // serde_json reports the column of the last byte it consumed; column 0
    // means that byte was the `\n` ending the previous line (a raw newline
    // inside a string): point at that byte.
    if column == 0 {
        return start.saturating_sub(1).min(text.len());
    }
    (start + column - 1).min(text.len())
}

/// Line numbers of increasing byte offsets in one pass (the count of `\n`
/// before each offset, plus one). Offsets must not decrease.
#[derive(Debug, Clone, Default)]
pub struct LineCounter {
    at: usize,
    line: usize,
}

impl LineCounter {
    /// A counter at the start of the text.
    pub fn new() -> Self {
        Self { at: 0, line: 1 }
    }

    /// 1-based line of byte `offset` of `text`.
    pub fn line_of(&mut self, text: &[u8], offset: usize) -> usize {
        let offset = offset.min(text.len());
        if offset < self.at {
            // Out of order: count from the start.
            *self = Self::new();
        }
        self.line += memchr::memchr_iter(b'\n', &text[self.at..offset]).count();
        self.at = offset;
        self.line
    }
}

/// serde_json appends " at line L column C" relative to the slice it saw;
/// cutline reports positions in the whole response instead.
pub fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters() {
        let t = "ab\n日本x".as_bytes();
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 3), (2, 1));
        assert_eq!(line_col(t, 9), (2, 3));
    }

    #[test]
    fn column_zero_points_at_the_newline() {
        let t = b"[\"a\nb\"]";
        let e = serde_json::from_slice::<serde_json::Value>(t).unwrap_err();
        assert_eq!((e.line(), e.column()), (2, 0));
        assert_eq!(offset_of(t, e.line(), e.column()), 3);
        assert_eq!(line_col(t, 3), (1, 4));
    }

    #[test]
    fn line_counter_matches_line_col() {
        let t = b"a\nbb\n\nccc\n";
        let mut lc = LineCounter::new();
        for off in 0..=t.len() {
            assert_eq!(lc.line_of(t, off), line_col(t, off).0);
        }
        assert_eq!(lc.line_of(t, 0), 1);
    }
}
