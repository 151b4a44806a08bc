//! Structural scanning of JSON text without building values.
//!
//! [`ValueSkipper`] finds where one JSON value ends, resumably: fed a growing
//! buffer, it continues from where it stopped, so a value that arrives in many
//! chunks is scanned once. Strings, escapes and brackets inside strings are
//! handled; whether the value is *valid* JSON is left to `serde_json`, which
//! parses the span once it is complete.

use memchr::memchr2;

/// Bytes JSON treats as insignificant whitespace.
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Position of the first non-whitespace byte at or after `from`.
pub fn skip_ws(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < bytes.len() && is_ws(bytes[i]) {
        i += 1;
    }
    i
}

/// Where a scan of one value stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// The value ends at this byte offset (exclusive).
    Done(usize),
    /// The buffer ended inside the value; feed more and call again.
    NeedMore,
    /// The bytes cannot start or continue a value here.
    Syntax(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Start,
    Container {
        depth: u32,
    },
    /// Inside a string; `depth` is the enclosing container depth (0: none).
    Str {
        depth: u32,
        escape: bool,
    },
    Scalar,
}

/// Resumable scan of one JSON value starting at a given offset.
#[derive(Debug, Clone)]
pub struct ValueSkipper {
    pos: usize,
    mode: Mode,
}

impl ValueSkipper {
    /// A scan of the value whose first byte is at `start` (not whitespace).
    pub fn new(start: usize) -> Self {
        Self {
            pos: start,
            mode: Mode::Start,
        }
    }

    /// True when the value is a number or literal: such a value only ends at
    /// a delimiter, so at the end of input it may still be complete.
    pub fn is_scalar(&self) -> bool {
        self.mode == Mode::Scalar
    }

    /// Continue over `bytes` (the whole buffer so far, which only grows).
    pub fn advance(&mut self, bytes: &[u8]) -> Skip {
        loop {
            if self.pos >= bytes.len() {
                return Skip::NeedMore;
            }
            match self.mode {
                Mode::Start => match bytes[self.pos] {
                    b'{' | b'[' => {
                        self.mode = Mode::Container { depth: 1 };
                        self.pos += 1;
                    }
                    b'"' => {
                        self.mode = Mode::Str {
                            depth: 0,
                            escape: false,
                        };
                        self.pos += 1;
                    }
                    b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => self.mode = Mode::Scalar,
                    _ => return Skip::Syntax(self.pos),
                },
                Mode::Str { depth, escape } => {
                    if escape {
                        self.pos += 1;
                        self.mode = Mode::Str { depth, escape: false };
                        continue;
                    }
                    match memchr2(b'"', b'\\', &bytes[self.pos..]) {
                        None => {
                            self.pos = bytes.len();
                            return Skip::NeedMore;
                        }
                        Some(off) => {
                            let at = self.pos + off;
                            self.pos = at + 1;
                            if bytes[at] == b'\\' {
                                self.mode = Mode::Str { depth, escape: true };
                            } else if depth > 0 {
                                self.mode = Mode::Container { depth };
                            } else {
                                return Skip::Done(self.pos);
                            }
                        }
                    }
                }
                Mode::Container { depth } => {
                    let rest = &bytes[self.pos..];
                    let Some(off) = rest.iter().position(|&b| matches!(b, b'"' | b'{' | b'[' | b']' | b'}')) else {
                        self.pos = bytes.len();
                        return Skip::NeedMore;
                    };
                    let at = self.pos + off;
                    self.pos = at + 1;
                    match bytes[at] {
                        b'"' => {
                            self.mode = Mode::Str { depth, escape: false };
                        }
                        b'{' | b'[' => self.mode = Mode::Container { depth: depth + 1 },
                        _ => {
                            if depth == 1 {
                                return Skip::Done(self.pos);
                            }
                            self.mode = Mode::Container { depth: depth - 1 };
                        }
                    }
                }
                Mode::Scalar => {
                    let rest = &bytes[self.pos..];
                    match rest
                        .iter()
                        .position(|&b| matches!(b, b',' | b']' | b'}' | b'"' | b'{' | b'[') || is_ws(b))
                    {
                        None => {
                            self.pos = bytes.len();
                            return Skip::NeedMore;
                        }
                        Some(off) => return Skip::Done(self.pos + off),
                    }
                }
            }
        }
    }
}

/// How many elements the top-level array or members the top-level object
/// of `b` holds, for text already known to be one valid JSON value (a
/// scalar counts 0). Counts commas at depth one outside strings: no value
/// is built, so a line of 200,000 tiny objects costs nothing per object.
pub fn top_level_len(b: &[u8]) -> usize {
    let start = skip_ws(b, 0);
    if !matches!(b.get(start), Some(b'[' | b'{'))
        || b.get(skip_ws(b, start + 1)).is_some_and(|&c| c == b']' || c == b'}')
    {
        return 0;
    }
    let (mut depth, mut commas, mut i) = (0usize, 0usize, start);
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                // Past the string: the next unescaped quote.
                i += 1;
                while let Some(j) = b.get(i..).and_then(|rest| memchr2(b'"', b'\\', rest)) {
                    i += j;
                    if b[i] == b'\\' {
                        i += 2;
                    } else {
                        break;
                    }
                }
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => commas += 1,
            _ => {}
        }
        i += 1;
    }
    commas + 1
}

#[cfg(test)]
mod len_tests {
    use super::top_level_len;

    #[test]
    fn counts_only_the_top_level() {
        for (text, n) in [
            ("[]", 0),
            (" [ ] ", 0),
            ("{}", 0),
            ("[1]", 1),
            ("[1, [2, 3], {\"a\": [4, 5]}]", 3),
            ("[\"a,b\", \"c\\\",d\", \"\\\\\"]", 3),
            ("{\"a\": 1, \"b,\": {\"c\": 2, \"d\": 3}}", 2),
            ("12", 0),
            ("\"x\"", 0),
        ] {
            assert_eq!(top_level_len(text.as_bytes()), n, "{text}");
        }
    }
}
