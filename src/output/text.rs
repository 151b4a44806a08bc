//! Whitespace as Python's `str.strip()` sees it, so lines are cut exactly
//! where the TrustGraph reference cuts them.

/// Python's `str.isspace()` for one character.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `s.strip()` in Python.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// `strip()` on bytes that may not be valid UTF-8: ASCII whitespace always,
/// other Unicode whitespace when the edge is valid UTF-8.
pub fn py_strip_bytes(b: &[u8]) -> &[u8] {
    let mut start = 0;
    let mut end = b.len();
    loop {
        while start < end && (b[start].is_ascii_whitespace() || matches!(b[start], 0x0b | 0x1c..=0x1f)) {
            start += 1;
        }
        if start < end
            && b[start] >= 0x80
            && let Some(c) = first_char(&b[start..end])
            && is_py_space(c)
        {
            start += c.len_utf8();
            continue;
        }
        break;
    }
    loop {
        while end > start && (b[end - 1].is_ascii_whitespace() || matches!(b[end - 1], 0x0b | 0x1c..=0x1f)) {
            end -= 1;
        }
        if end > start
            && b[end - 1] >= 0x80
            && let Some(c) = last_char(&b[start..end])
            && is_py_space(c)
        {
            end -= c.len_utf8();
            continue;
        }
        break;
    }
    &b[start..end]
}

/// Byte length of the whitespace character (Python's notion) starting at
/// `b[i]`, or `None` when `b[i]` does not start one (a multi-byte space cut
/// short by the end of `b` is not whitespace: Python never sees half of it).
pub fn py_space_len(b: &[u8], i: usize) -> Option<usize> {
    let x = *b.get(i)?;
    if x < 0x80 {
        return (x.is_ascii_whitespace() || matches!(x, 0x0b | 0x1c..=0x1f)).then_some(1);
    }
    first_char(&b[i..]).filter(|&c| is_py_space(c)).map(char::len_utf8)
}

/// `lstrip()` start: the first byte at or after `from` that does not begin
/// a whitespace character.
pub fn skip_py_space(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(n) = py_space_len(b, i) {
        i += n;
    }
    i
}

fn first_char(b: &[u8]) -> Option<char> {
    let n = b.len().min(4);
    (1..=n).find_map(|k| std::str::from_utf8(&b[..k]).ok().and_then(|s| s.chars().next()))
}

fn last_char(b: &[u8]) -> Option<char> {
    let n = b.len().min(4);
    (1..=n).find_map(|k| {
        std::str::from_utf8(&b[b.len() - k..])
            .ok()
            .and_then(|s| s.chars().next_back())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_unicode_space() {
        assert_eq!(py_strip_bytes("\u{3000} {\"a\":1}\r\u{a0}".as_bytes()), b"{\"a\":1}");
        assert_eq!(py_strip_bytes(b"\xff x \xfe"), b"\xff x \xfe");
    }
}
