//! The order in which Python's `json.loads` (the C scanner, `strict=True`)
//! meets what stops it: a syntax error (`JSONDecodeError`, which TrustGraph
//! catches per line), an integer of more than 4300 digits (`ValueError`
//! from the int conversion, which it does not catch) or a container opened
//! past the interpreter's nesting limit (`RecursionError`, not caught
//! either). The scanner converts each number as it reads it, so a long
//! integer fails a line that is malformed or cut *after* it, and a syntax
//! error *before* it hides it. No value is built here: [`scan`] only says
//! which of the four happens first, so serde_json and [`super::pyjson`]
//! build values only for the lines Python accepts.

/// Python's default `sys.get_int_max_str_digits()` (3.11+).
pub const INT_MAX_STR_DIGITS: usize = 4300;

/// What stops `json.loads` first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyScan {
    /// The whole text is one value Python accepts.
    Ok,
    /// `JSONDecodeError` at this byte, raised `depth` containers deep
    /// (creating the exception there can itself raise `RecursionError`,
    /// see [`super::tg::TgPython::decode_raises`]).
    Decode {
        /// Byte offset.
        at: usize,
        /// Containers open there.
        depth: usize,
        /// "Expecting value": the C scanner signals it with `StopIteration`
        /// and the exception is made at the top; every other error
        /// (a delimiter, a property name, a string's) is made where it
        /// happens, `depth` containers down.
        expecting_value: bool,
    },
    /// `ValueError`: an integer literal of `digits` digits at this byte.
    IntDigits {
        /// Byte offset of the literal.
        at: usize,
        /// Its digit count (sign excluded).
        digits: usize,
    },
    /// `RecursionError`: a container opened at this byte, `depth` deep.
    TooDeep {
        /// Byte offset of the bracket.
        at: usize,
        /// Its nesting depth (1 for a top-level container).
        depth: usize,
    },
}

/// Whether `b` may hold an integer literal past Python's digit limit (a run
/// of more than 4300 ASCII digits): the cheap test before a full [`scan`].
pub fn has_long_digit_run(b: &[u8]) -> bool {
    if b.len() <= INT_MAX_STR_DIGITS {
        return false;
    }
    let mut run = 0;
    for &c in b {
        if c.is_ascii_digit() {
            run += 1;
            if run > INT_MAX_STR_DIGITS {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end of the string whose opening quote is at `i`, or where Python's
/// `scanstring` fails (control character, bad escape, no closing quote).
fn string(b: &[u8], i: usize) -> Result<usize, usize> {
    let mut j = i + 1;
    loop {
        match b.get(j) {
            None => return Err(i),
            Some(b'"') => return Ok(j + 1),
            Some(&c) if c < 0x20 => return Err(j),
            Some(b'\\') => match b.get(j + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                Some(b'u') => {
                    let hex = b.get(j + 2..j + 6).ok_or(j)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return Err(j);
                    }
                    j += 6;
                }
                _ => return Err(j),
            },
            Some(_) => j += 1,
        }
    }
}

/// A number at `i` as `_match_number_unicode` reads it: its end, or the
/// `ValueError` of its int conversion, or no number at all.
fn number(b: &[u8], i: usize, depth: usize) -> Result<usize, PyScan> {
    let digit = |k: usize| b.get(k).is_some_and(u8::is_ascii_digit);
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let int_start = j;
    match b.get(j) {
        Some(b'1'..=b'9') => {
            while digit(j) {
                j += 1;
            }
        }
        Some(b'0') => j += 1,
        _ => {
            return Err(PyScan::Decode {
                at: i,
                depth,
                expecting_value: true,
            });
        }
    }
    let int_digits = j - int_start;
    let mut float = false;
    // `idx < end_idx` in the C code: a '.' or 'e' must not be the last byte.
    if j + 1 < b.len() && b[j] == b'.' && digit(j + 1) {
        float = true;
        j += 2;
        while digit(j) {
            j += 1;
        }
    }
    if j + 1 < b.len() && matches!(b[j], b'e' | b'E') {
        let e = j;
        j += 1;
        if j + 1 < b.len() && matches!(b[j], b'+' | b'-') {
            j += 1;
        }
        while digit(j) {
            j += 1;
        }
        if digit(j - 1) {
            float = true;
        } else {
            j = e;
        }
    }
    if !float && int_digits > INT_MAX_STR_DIGITS {
        return Err(PyScan::IntDigits {
            at: i,
            digits: int_digits,
        });
    }
    Ok(j)
}

/// Scan `b` as `json.loads` would, with containers allowed to `max_depth`.
pub fn scan(b: &[u8], max_depth: usize) -> PyScan {
    match scan_value(b, max_depth) {
        Ok(end) => {
            let end = ws(b, end);
            if end == b.len() {
                PyScan::Ok
            } else {
                PyScan::Decode {
                    at: end,
                    depth: 0,
                    expecting_value: false,
                }
            }
        }
        Err(stop) => stop,
    }
}

fn scan_value(b: &[u8], max_depth: usize) -> Result<usize, PyScan> {
    let mut stack: Vec<u8> = Vec::new();
    let mut i = ws(b, 0);
    // Reading a value at `i`; after it, the container on top decides.
    'value: loop {
        let depth = stack.len();
        let decode = |at: usize| PyScan::Decode {
            at,
            depth,
            expecting_value: false,
        };
        let Some(&c) = b.get(i) else {
            return Err(PyScan::Decode {
                at: i,
                depth,
                expecting_value: true,
            });
        };
        match c {
            b'"' => i = string(b, i).map_err(decode)?,
            b'{' | b'[' => {
                if stack.len() >= max_depth {
                    return Err(PyScan::TooDeep {
                        at: i,
                        depth: stack.len() + 1,
                    });
                }
                stack.push(c);
                i = ws(b, i + 1);
                let close = if c == b'{' { b'}' } else { b']' };
                if b.get(i) == Some(&close) {
                    stack.pop();
                    i += 1;
                } else if c == b'{' {
                    i = key(b, i, stack.len())?;
                    continue 'value;
                } else {
                    continue 'value;
                }
            }
            _ => {
                let words: [&[u8]; 6] = [b"null", b"true", b"false", b"NaN", b"Infinity", b"-Infinity"];
                if let Some(w) = words.iter().find(|w| b[i..].starts_with(w)) {
                    i += w.len();
                } else {
                    i = number(b, i, depth)?;
                }
            }
        }
        // After a value: close containers or go on to the next member.
        loop {
            let Some(&top) = stack.last() else {
                return Ok(i);
            };
            i = ws(b, i);
            let close = if top == b'{' { b'}' } else { b']' };
            match b.get(i) {
                Some(&c) if c == close => {
                    stack.pop();
                    i += 1;
                }
                Some(b',') => {
                    i = ws(b, i + 1);
                    if top == b'{' {
                        i = key(b, i, stack.len())?;
                    }
                    continue 'value;
                }
                _ => {
                    return Err(PyScan::Decode {
                        at: i,
                        depth: stack.len(),
                        expecting_value: false,
                    });
                }
            }
        }
    }
}

/// A member's key and colon at `i`; the offset of its value.
fn key(b: &[u8], i: usize, depth: usize) -> Result<usize, PyScan> {
    let decode = |at: usize| PyScan::Decode {
        at,
        depth,
        expecting_value: false,
    };
    if b.get(i) != Some(&b'"') {
        return Err(decode(i));
    }
    let j = ws(b, string(b, i).map_err(decode)?);
    if b.get(j) != Some(&b':') {
        return Err(decode(j));
    }
    Ok(ws(b, j + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_of_failures() {
        let d = "1".repeat(4301);
        assert_eq!(
            scan(format!("[{d}]").as_bytes(), 10),
            PyScan::IntDigits { at: 1, digits: 4301 }
        );
        assert_eq!(
            scan(format!("[{d}, oops").as_bytes(), 10),
            PyScan::IntDigits { at: 1, digits: 4301 }
        );
        assert_eq!(
            scan(format!("[oops, {d}]").as_bytes(), 10),
            PyScan::Decode {
                at: 1,
                depth: 1,
                expecting_value: true
            }
        );
        assert_eq!(scan(format!("[{d}.5]").as_bytes(), 10), PyScan::Ok);
        assert_eq!(
            scan(format!("{d}.").as_bytes(), 10),
            PyScan::IntDigits { at: 0, digits: 4301 }
        );
        assert_eq!(scan(b"[[[", 2), PyScan::TooDeep { at: 2, depth: 3 });
        let decode = |at, depth, expecting_value| PyScan::Decode {
            at,
            depth,
            expecting_value,
        };
        assert_eq!(scan(b"x[[[", 2), decode(0, 0, true));
        assert_eq!(scan(br#"{"a": [NaN, -Infinity, "\ud800"]} "#, 5), PyScan::Ok);
        assert_eq!(scan(b"[1,]", 5), decode(3, 1, true));
        assert_eq!(scan(b"{\"a\": \"\t\"}", 5), decode(7, 1, false));
        assert_eq!(scan(b"01", 5), decode(1, 0, false));
        // After a complete element, a property name, a colon, a string.
        assert_eq!(scan(b"[[1 x", 5), decode(4, 2, false));
        assert_eq!(scan(b"[[1", 5), decode(3, 2, false));
        assert_eq!(scan(b"[{", 5), decode(2, 2, false));
        assert_eq!(scan(b"[{\"a\" 1", 5), decode(6, 2, false));
        assert_eq!(scan(b"[\"a", 5), decode(1, 1, false));
        assert_eq!(scan(b"[{\"a\":", 5), decode(6, 2, true));
        assert_eq!(scan(b"[[", 5), decode(2, 2, true));
    }
}
