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
    // serde_json reports the column of the last byte it consumed (0 when the
    // line is empty); point at that byte.
    (start + column.saturating_sub(1)).min(text.len())
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
}
