//! Python's `re`, which TrustGraph's `jsonschema` applies to `pattern`
//! (`re.search`, no flags), translated to `fancy-regex` (the backtracking
//! engine jsonschema already builds on, for lookaround and backreferences).
//!
//! What differs between the two and is translated here:
//! - `$` also matches before a final newline (`(?=\n?\z)`), `\Z` is the end
//!   of the string (`\z`);
//! - `\s` includes `\x1c`–`\x1f`; `\w` is `str.isalnum()` or `_`
//!   (`[\p{L}\p{N}_]`); `\d` is Unicode `Nd` in both;
//! - `{` that does not open a quantifier is a literal, `{,n}` is `{0,n}`;
//! - inside a class, `[`, `&&`, `--`, `~~` are literals (Rust reads nested
//!   classes and set operations there), so every literal is written as
//!   `\x{…}`;
//! - octal escapes (`\141`, `\0`), `(?P=name)` backreferences.
//!
//! What Python refuses is refused with its reason: an unknown letter escape
//! (`\p{L}`, `\z` before 3.14, `\e`), a bad range, an unterminated class.
//! A Python construct cutline cannot translate (`\N{…}`, flags other than
//! `i`, `m`, `s`) is refused too, and says so.

/// Why a pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PyReError {
    /// Python's `re.compile` refuses it (`re.error`).
    #[error("Python's re refuses the pattern: {0}")]
    Python(String),
    /// Python accepts it; cutline cannot translate it.
    #[error("cutline cannot translate this Python pattern: {0}")]
    Untranslatable(String),
}

/// A compiled Python pattern.
#[derive(Debug)]
pub struct PyRegex(fancy_regex::Regex);

impl PyRegex {
    /// Compile a Python pattern.
    pub fn new(pattern: &str) -> Result<Self, PyReError> {
        let translated = translate(pattern)?;
        fancy_regex::Regex::new(&translated)
            .map(Self)
            .map_err(|e| PyReError::Python(e.to_string()))
    }

    /// `re.search(pattern, text) is not None`. A match that runs past the
    /// engine's backtracking limit counts as no match.
    pub fn search(&self, text: &str) -> bool {
        self.0.is_match(text).unwrap_or(false)
    }
}

const WORD: &str = r"\p{L}\p{N}_";
const SPACE: &str = r"\s\x{1c}-\x{1f}";

fn lit(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let _ = write!(out, "\\x{{{:x}}}", u32::from(c));
}

/// An escape's meaning: a character, or a class (its Rust body and whether
/// it is negated), or (outside a class only) an anchor or backreference.
enum Esc {
    Char(char),
    Class(&'static str, bool),
    Raw(String),
}

/// Read the escape after the `\` at `chars[i]`; the escape and the index
/// after it.
fn escape(chars: &[char], i: usize, in_class: bool) -> Result<(Esc, usize), PyReError> {
    let Some(&c) = chars.get(i + 1) else {
        return Err(PyReError::Python("bad escape (end of pattern)".into()));
    };
    let hex = |from: usize, n: usize| -> Result<(Esc, usize), PyReError> {
        let s: String = chars
            .get(from..from + n)
            .map(|s| s.iter().collect())
            .unwrap_or_default();
        let code = (s.len() == n && s.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(&s, 16).ok())
            .flatten()
            .ok_or_else(|| PyReError::Python(format!("incomplete escape \\{c}{s}")))?;
        let ch = char::from_u32(code).ok_or_else(|| PyReError::Python(format!("bad escape \\{c}{s}")))?;
        Ok((Esc::Char(ch), from + n))
    };
    let next = i + 2;
    Ok(match c {
        'd' => (Esc::Class(r"\d", false), next),
        'D' => (Esc::Class(r"\d", true), next),
        'w' => (Esc::Class(WORD, false), next),
        'W' => (Esc::Class(WORD, true), next),
        's' => (Esc::Class(SPACE, false), next),
        'S' => (Esc::Class(SPACE, true), next),
        'a' => (Esc::Char('\x07'), next),
        'f' => (Esc::Char('\x0c'), next),
        'n' => (Esc::Char('\n'), next),
        'r' => (Esc::Char('\r'), next),
        't' => (Esc::Char('\t'), next),
        'v' => (Esc::Char('\x0b'), next),
        'b' if in_class => (Esc::Char('\x08'), next),
        'x' => hex(next, 2)?,
        'u' => hex(next, 4)?,
        'U' => hex(next, 8)?,
        'A' | 'b' | 'B' | 'Z' if !in_class => {
            let raw = match c {
                'Z' => r"\z".to_owned(),
                other => format!("\\{other}"),
            };
            (Esc::Raw(raw), next)
        }
        'N' => return Err(PyReError::Untranslatable("\\N{…} named characters".into())),
        '0'..='7'
            if c == '0'
                || (chars.get(next).is_some_and(|d| ('0'..='7').contains(d))
                    && chars.get(next + 1).is_some_and(|d| ('0'..='7').contains(d))) =>
        {
            let mut end = i + 1;
            while end < i + 4 && chars.get(end).is_some_and(|d| ('0'..='7').contains(d)) {
                end += 1;
            }
            let s: String = chars[i + 1..end].iter().collect();
            let code = u32::from_str_radix(&s, 8).unwrap_or(0);
            if code > 0o377 {
                return Err(PyReError::Python(format!(
                    "octal escape value \\{s} outside of range 0-0o377"
                )));
            }
            (Esc::Char(char::from_u32(code).unwrap_or('\0')), end)
        }
        '1'..='9' if !in_class => {
            let mut end = next;
            if chars.get(end).is_some_and(char::is_ascii_digit) {
                end += 1;
            }
            let n: String = chars[i + 1..end].iter().collect();
            (Esc::Raw(format!("\\{n}")), end)
        }
        c if c.is_ascii_alphanumeric() => return Err(PyReError::Python(format!("bad escape \\{c}"))),
        c => (Esc::Char(c), next),
    })
}

/// Translate a Python pattern to fancy-regex syntax.
pub fn translate(pattern: &str) -> Result<String, PyReError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut i = 0;
    let mut multiline = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let (esc, next) = escape(&chars, i, false)?;
                match esc {
                    Esc::Char(ch) => lit(&mut out, ch),
                    Esc::Class(body, neg) => {
                        out.push_str(if neg { "[^" } else { "[" });
                        out.push_str(body);
                        out.push(']');
                    }
                    Esc::Raw(r) => out.push_str(&r),
                }
                i = next;
            }
            '[' => i = class(&chars, i, &mut out)?,
            '$' => {
                out.push_str(if multiline { "(?m:$)" } else { r"(?=\n?\z)" });
                i += 1;
            }
            '{' => {
                let close = chars[i..].iter().position(|&c| c == '}').map(|p| i + p);
                let body: Option<String> = close.map(|e| chars[i + 1..e].iter().collect());
                let quantifier = body.as_deref().is_some_and(|b| {
                    let (lo, hi) = b.split_once(',').unwrap_or((b, b));
                    lo.chars().all(|c| c.is_ascii_digit())
                        && hi.chars().all(|c| c.is_ascii_digit())
                        && !(lo.is_empty() && hi.is_empty())
                });
                match (quantifier, body, close) {
                    (true, Some(b), Some(e)) => {
                        out.push('{');
                        if b.starts_with(',') {
                            out.push('0');
                        }
                        out.push_str(&b);
                        out.push('}');
                        i = e + 1;
                    }
                    _ => {
                        lit(&mut out, '{');
                        i += 1;
                    }
                }
            }
            '}' => {
                lit(&mut out, '}');
                i += 1;
            }
            '(' if chars.get(i + 1) == Some(&'?') => i = group(&chars, i, &mut out, &mut multiline)?,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// An extension group at `chars[i]` (`(?`); the index after what was read.
fn group(chars: &[char], i: usize, out: &mut String, multiline: &mut bool) -> Result<usize, PyReError> {
    let rest: String = chars[i + 2..].iter().take(3).collect();
    if rest.starts_with("P<") {
        out.push_str("(?P<");
        return Ok(i + 4);
    }
    if rest.starts_with("P=") {
        let end = chars[i..].iter().position(|&c| c == ')').map(|p| i + p);
        let Some(end) = end else {
            return Err(PyReError::Python("missing ), unterminated name".into()));
        };
        let name: String = chars[i + 4..end].iter().collect();
        out.push_str("\\k<");
        out.push_str(&name);
        out.push('>');
        return Ok(end + 1);
    }
    if rest.starts_with('#') {
        let end = chars[i..].iter().position(|&c| c == ')').map(|p| i + p);
        return end
            .map(|e| e + 1)
            .ok_or_else(|| PyReError::Python("missing ), unterminated comment".into()));
    }
    if rest.starts_with(':')
        || rest.starts_with('=')
        || rest.starts_with('!')
        || rest.starts_with("<=")
        || rest.starts_with("<!")
        || rest.starts_with('>')
        || rest.starts_with('(')
    {
        out.push_str("(?");
        return Ok(i + 2);
    }
    // Flags: (?imsx-imsx) or (?imsx:...).
    let mut j = i + 2;
    let mut flags = String::new();
    while let Some(&f) = chars.get(j) {
        if f == ')' || f == ':' {
            break;
        }
        if !"ims-".contains(f) {
            return Err(if "aLux".contains(f) {
                PyReError::Untranslatable(format!("the inline flag {f}"))
            } else {
                PyReError::Python(format!("unknown flag {f}"))
            });
        }
        flags.push(f);
        j += 1;
    }
    if chars.get(j) == Some(&')') && i == 0 && flags.contains('m') && !flags.contains('-') {
        *multiline = true;
    }
    out.push_str("(?");
    out.push_str(&flags);
    Ok(j)
}

/// A class at `chars[i]` (`[`), written with every literal as `\x{…}`; the
/// index after its `]`.
fn class(chars: &[char], open: usize, out: &mut String) -> Result<usize, PyReError> {
    let mut pos = open + 1;
    out.push('[');
    if chars.get(pos) == Some(&'^') {
        out.push('^');
        pos += 1;
    }
    let first = pos;
    // The previous item, when it was a single character (a range start).
    let mut prev: Option<char> = None;
    loop {
        let Some(&ch) = chars.get(pos) else {
            return Err(PyReError::Python("unterminated character set".into()));
        };
        if ch == ']' && pos > first {
            out.push(']');
            return Ok(pos + 1);
        }
        let (item, next) = if ch == '\\' {
            let (esc, next) = escape(chars, pos, true)?;
            (esc, next)
        } else {
            (Esc::Char(ch), pos + 1)
        };
        match item {
            Esc::Char('-') if prev.is_some() && chars.get(next).is_some_and(|&n| n != ']') => {
                // A range: read its end.
                let (end, after) = if chars[next] == '\\' {
                    match escape(chars, next, true)? {
                        (Esc::Char(last), after) => (last, after),
                        _ => return Err(PyReError::Python("bad character range".into())),
                    }
                } else {
                    (chars[next], next + 1)
                };
                let start = prev.take().unwrap_or('\0');
                if end < start {
                    return Err(PyReError::Python(format!("bad character range {start}-{end}")));
                }
                out.push('-');
                lit(out, end);
                pos = after;
                continue;
            }
            Esc::Char(ch) => {
                lit(out, ch);
                prev = Some(ch);
            }
            Esc::Class(body, neg) => {
                if chars.get(next) == Some(&'-') && chars.get(next + 1).is_some_and(|&n| n != ']') {
                    return Err(PyReError::Python("bad character range".into()));
                }
                if neg {
                    out.push_str("[^");
                    out.push_str(body);
                    out.push(']');
                } else {
                    out.push_str(body);
                }
                prev = None;
            }
            Esc::Raw(_) => return Err(PyReError::Python("bad escape in a character set".into())),
        }
        pos = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, t: &str) -> bool {
        PyRegex::new(p).unwrap().search(t)
    }

    #[test]
    fn python_semantics() {
        assert!(m("^a$", "a\n"));
        assert!(!m("^a$", "a\n\n"));
        assert!(!m("^a\\Z", "a\n"));
        assert!(m("^\\s$", "\u{1c}"));
        assert!(m("^\\w+$", "café²"));
        assert!(m("^[[]$", "["));
        assert!(m("a{,2}b", "aab"));
        assert!(m("a{x}", "a{x}"));
        assert!(m("(?P<x>a)(?P=x)", "aa"));
        assert!(m("\\141", "a"));
        assert!(m("^[a-]$", "-"));
    }

    #[test]
    fn refusals() {
        for p in ["\\p{L}", "a\\z", "\\e", "[", "[z-a]", "[\\d-z]"] {
            assert!(matches!(PyRegex::new(p), Err(PyReError::Python(_))), "{p}");
        }
    }
}
