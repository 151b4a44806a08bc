//! ibis's filters with their Python semantics, registered in cutline's
//! template environment as `ibis_<name>` (so they never collide with
//! minijinja's own), and Python literals (what `ast.literal_eval` accepts
//! in an ibis expression) written as minijinja literals.

use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind};

/// Every filter name ibis 3.3.0 registers; any other is refused at load.
pub const FILTERS: [&str; 38] = [
    "argtest",
    "default",
    "dtformat",
    "endswith",
    "escape",
    "e",
    "esc",
    "first",
    "firsth",
    "firsth1",
    "firstp",
    "reversed",
    "index",
    "divisible_by",
    "even",
    "odd",
    "join",
    "last",
    "len",
    "lower",
    "pprint",
    "pygmentize",
    "random",
    "repr",
    "slice",
    "spaceless",
    "startswith",
    "str",
    "striptags",
    "teaser",
    "titlecase",
    "title",
    "truncatechars",
    "truncatewords",
    "upper",
    "wrap",
    "if_undefined",
    "is_defined",
];

fn py_str(v: &Value) -> String {
    let mut s = String::new();
    super::pyfmt::py_str(&mut s, v);
    s
}

fn need_str(v: &Value, filter: &str) -> Result<String, Error> {
    v.as_str().map(str::to_owned).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "ibis's `{filter}` filter needs a string (Python raises on {})",
                v.kind()
            ),
        )
    })
}

fn int(v: &Value) -> Result<i64, Error> {
    i64::try_from(v.clone()).map_err(|_| Error::new(ErrorKind::InvalidOperation, "an integer is needed"))
}

/// `seq[i]` with Python's negative indices, for strings and sequences.
fn item(seq: &Value, i: i64) -> Result<Value, Error> {
    if let Some(s) = seq.as_str() {
        let chars: Vec<char> = s.chars().collect();
        let n = i64::try_from(chars.len()).unwrap_or(i64::MAX);
        let at = if i < 0 { i + n } else { i };
        return usize::try_from(at)
            .ok()
            .and_then(|a| chars.get(a))
            .map(|c| Value::from(c.to_string()))
            .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "string index out of range"));
    }
    let items: Vec<Value> = seq
        .try_iter()
        .map_err(|_| Error::new(ErrorKind::InvalidOperation, "not a sequence"))?
        .collect();
    let n = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let at = if i < 0 { i + n } else { i };
    usize::try_from(at)
        .ok()
        .and_then(|a| items.get(a).cloned())
        .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "list index out of range"))
}

fn html_escape(s: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quotes => out.push_str("&quot;"),
            '\'' if quotes => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

fn titlecase(s: &str) -> String {
    // `[A-Za-z]+('[A-Za-z]+)?`: each match's first letter upper-cased; a
    // match goes on through at most one apostrophe between letters.
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let (mut in_word, mut apostrophe) = (false, false);
    for (i, &ch) in chars.iter().enumerate() {
        let letter = ch.is_ascii_alphabetic();
        if letter && !in_word {
            out.push(ch.to_ascii_uppercase());
            in_word = true;
            apostrophe = false;
            continue;
        }
        out.push(ch);
        if letter {
            continue;
        }
        let joins = in_word && !apostrophe && ch == '\'' && chars.get(i + 1).is_some_and(char::is_ascii_alphabetic);
        if joins {
            apostrophe = true;
        } else {
            in_word = false;
        }
    }
    out
}

/// Register ibis's filters (`ibis_<name>`) and helpers in `env`.
#[allow(
    clippy::too_many_lines,
    reason = "one registration per ibis filter, in ibis's own order; splitting would scatter the table"
)]
pub(crate) fn register(env: &mut Environment<'_>) {
    env.add_filter("ibis_iterable", |v: Value| -> Value {
        let iterable = matches!(
            v.kind(),
            ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
        );
        if v.is_true() && iterable {
            v
        } else {
            Value::from(Vec::<Value>::new())
        }
    });
    env.add_function("ibis_var", |state: &minijinja::State<'_, '_>, name: String| -> Value {
        state.lookup(&name).unwrap_or_default()
    });
    env.add_function("ibis_unsupported", |what: String| -> Result<Value, Error> {
        Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("cutline does not render ibis's `{what}` (ibis accepts it)"),
        ))
    });
    for name in [
        "dtformat",
        "firsth",
        "firsth1",
        "firstp",
        "pprint",
        "pygmentize",
        "random",
    ] {
        env.add_filter(
            format!("ibis_{name}"),
            move |_v: Value, _rest: Rest<Value>| -> Result<Value, Error> {
                Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("cutline does not render ibis's `{name}` filter (ibis accepts it)"),
                ))
            },
        );
    }
    env.add_filter("ibis_argtest", |v: Value, rest: Rest<Value>| -> String {
        std::iter::once(&v)
            .chain(rest.iter())
            .map(py_str)
            .collect::<Vec<_>>()
            .join("|")
    });
    env.add_filter(
        "ibis_default",
        |v: Value, fallback: Value| if v.is_true() { v } else { fallback },
    );
    env.add_filter("ibis_endswith", |s: Value, x: String| -> Result<bool, Error> {
        Ok(need_str(&s, "endswith")?.ends_with(&x))
    });
    env.add_filter("ibis_startswith", |s: Value, x: String| -> Result<bool, Error> {
        Ok(need_str(&s, "startswith")?.starts_with(&x))
    });
    for name in ["escape", "e", "esc"] {
        env.add_filter(
            format!("ibis_{name}"),
            |s: Value, quotes: Option<bool>| -> Result<String, Error> {
                Ok(html_escape(&need_str(&s, "escape")?, quotes.unwrap_or(true)))
            },
        );
    }
    env.add_filter("ibis_first", |v: Value| item(&v, 0));
    env.add_filter("ibis_last", |v: Value| item(&v, -1));
    env.add_filter("ibis_index", |v: Value, i: Value| item(&v, int(&i)?));
    env.add_filter("ibis_reversed", |v: Value| -> Result<Value, Error> {
        if let Some(s) = v.as_str() {
            return Ok(Value::from(
                s.chars().rev().map(|c| Value::from(c.to_string())).collect::<Vec<_>>(),
            ));
        }
        let mut items: Vec<Value> = v
            .try_iter()
            .map_err(|_| Error::new(ErrorKind::InvalidOperation, "not a sequence"))?
            .collect();
        items.reverse();
        Ok(Value::from(items))
    });
    env.add_filter("ibis_divisible_by", |n: Value, d: Value| -> Result<bool, Error> {
        let (n, d) = (int(&n)?, int(&d)?);
        Ok(d != 0 && n.rem_euclid(d) == 0)
    });
    env.add_filter("ibis_even", |n: Value| -> Result<bool, Error> {
        Ok(int(&n)?.rem_euclid(2) == 0)
    });
    env.add_filter("ibis_odd", |n: Value| -> Result<bool, Error> {
        Ok(int(&n)?.rem_euclid(2) != 0)
    });
    env.add_filter("ibis_join", |v: Value, sep: Option<String>| -> Result<String, Error> {
        let items: Vec<String> = v
            .try_iter()
            .map_err(|_| Error::new(ErrorKind::InvalidOperation, "not iterable"))?
            .map(|i| py_str(&i))
            .collect();
        Ok(items.join(&sep.unwrap_or_default()))
    });
    env.add_filter("ibis_len", |v: Value| -> Result<usize, Error> {
        if v.is_undefined() {
            return Ok(0);
        }
        if let Some(s) = v.as_str() {
            return Ok(s.chars().count());
        }
        v.len().ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!("object of type {} has no len()", v.kind()),
            )
        })
    });
    env.add_filter("ibis_lower", |s: Value| -> Result<String, Error> {
        Ok(need_str(&s, "lower")?.to_lowercase())
    });
    env.add_filter("ibis_upper", |s: Value| -> Result<String, Error> {
        Ok(need_str(&s, "upper")?.to_uppercase())
    });
    for name in ["title", "titlecase"] {
        env.add_filter(format!("ibis_{name}"), |s: Value| -> Result<String, Error> {
            Ok(titlecase(&need_str(&s, "title")?))
        });
    }
    env.add_filter("ibis_str", |v: Value| py_str(&v));
    env.add_filter("ibis_repr", |v: Value| -> String {
        let mut s = String::new();
        super::pyfmt::py_repr(&mut s, &v);
        s
    });
    env.add_filter(
        "ibis_slice",
        |v: Value, start: Value, stop: Option<Value>| -> Result<Value, Error> {
            let len = v.len().unwrap_or(0);
            let n = i64::try_from(len).unwrap_or(i64::MAX);
            let clamp = |i: i64| usize::try_from(if i < 0 { (i + n).max(0) } else { i.min(n) }).unwrap_or(0);
            let from = if start.is_none() { 0 } else { clamp(int(&start)?) };
            let to = match stop {
                Some(s) if !s.is_none() => clamp(int(&s)?),
                _ => len,
            };
            if let Some(s) = v.as_str() {
                return Ok(Value::from(
                    s.chars().skip(from).take(to.saturating_sub(from)).collect::<String>(),
                ));
            }
            let items: Vec<Value> = v
                .try_iter()
                .map_err(|_| Error::new(ErrorKind::InvalidOperation, "not a sequence"))?
                .collect();
            Ok(Value::from(items.get(from..to.max(from)).unwrap_or_default().to_vec()))
        },
    );
    env.add_filter("ibis_spaceless", |s: Value| -> Result<String, Error> {
        let s = need_str(&s, "spaceless")?;
        let re =
            fancy_regex::Regex::new(r">\s+<").map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
        Ok(re.replace_all(&s, "><").into_owned())
    });
    env.add_filter("ibis_striptags", |s: Value| -> Result<String, Error> {
        let s = need_str(&s, "striptags")?;
        let re =
            fancy_regex::Regex::new(r"<[^>]*>").map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
        Ok(re.replace_all(&s, "").into_owned())
    });
    env.add_filter(
        "ibis_teaser",
        |s: Value, delim: Option<String>| -> Result<String, Error> {
            let s = need_str(&s, "teaser")?;
            let delim = delim.unwrap_or_else(|| "<!-- more -->".to_owned());
            Ok(s.find(&delim).map(|i| s[..i].to_owned()).unwrap_or_default())
        },
    );
    env.add_filter(
        "ibis_truncatechars",
        |s: Value, n: usize, ellipsis: Option<String>| -> Result<String, Error> {
            let s = need_str(&s, "truncatechars")?;
            if s.chars().count() <= n {
                return Ok(s);
            }
            let head: String = s.chars().take(n.saturating_sub(3)).collect();
            Ok(format!(
                "{}{}",
                head.trim_end_matches([' ', '.', ',', ';', ':', '?', '!']),
                ellipsis.unwrap_or_else(|| "...".to_owned())
            ))
        },
    );
    env.add_filter(
        "ibis_truncatewords",
        |s: Value, n: usize, ellipsis: Option<String>| -> Result<String, Error> {
            let s = need_str(&s, "truncatewords")?;
            let words: Vec<&str> = s.split_whitespace().collect();
            if words.len() > n {
                Ok(format!(
                    "{}{}",
                    words[..n].join(" "),
                    ellipsis.unwrap_or_else(|| " [...]".to_owned())
                ))
            } else {
                Ok(words.join(" "))
            }
        },
    );
    env.add_filter("ibis_wrap", |s: Value, tag: String| {
        format!("<{tag}>{}</{tag}>", py_str(&s))
    });
    env.add_filter(
        "ibis_if_undefined",
        |v: Value, fallback: Value| if v.is_undefined() { fallback } else { v },
    );
    env.add_filter("ibis_is_defined", |v: Value| !v.is_undefined());
}

/// A Python literal (`ast.literal_eval`'s strings, numbers, `True`,
/// `False`, `None`, lists, tuples, dicts) written as a minijinja literal;
/// `None` when `s` is not one.
pub fn literal(s: &str) -> Option<String> {
    let chars: Vec<char> = s.trim().chars().collect();
    let mut p = Lit {
        c: &chars,
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    (p.i == chars.len()).then_some(v)
}

struct Lit<'c> {
    c: &'c [char],
    i: usize,
    /// Brackets open: past [`MAX_DEPTH`], Python's `literal_eval` gives up
    /// too (and ibis reads the text as a name, which it is not).
    depth: usize,
}

const MAX_DEPTH: usize = 100;

impl Lit<'_> {
    fn ws(&mut self) {
        while self.c.get(self.i).is_some_and(|c| c.is_whitespace()) {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Option<String> {
        self.ws();
        if self.depth > MAX_DEPTH {
            return None;
        }
        match *self.c.get(self.i)? {
            q @ ('\'' | '"') => self.string(q),
            '[' => self.items(']').map(|(v, _)| format!("[{}]", v.join(", "))),
            '(' => {
                // `(x)` is x; `(x,)` and `(x, y)` are tuples.
                let (items, tuple) = self.items(')')?;
                if items.len() == 1 && !tuple {
                    items.into_iter().next()
                } else {
                    Some(format!("[{}]", items.join(", ")))
                }
            }
            '{' => self.dict(),
            c if c.is_ascii_digit() || matches!(c, '-' | '+' | '.') => self.number(),
            _ => {
                let start = self.i;
                while self.c.get(self.i).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
                    self.i += 1;
                }
                let word: String = self.c[start..self.i].iter().collect();
                match word.as_str() {
                    "True" => Some("true".into()),
                    "False" => Some("false".into()),
                    "None" => Some("none".into()),
                    _ => None,
                }
            }
        }
    }

    fn string(&mut self, quote: char) -> Option<String> {
        self.i += 1;
        let mut s = String::new();
        loop {
            let ch = *self.c.get(self.i)?;
            self.i += 1;
            match ch {
                c if c == quote => break,
                '\n' => return None,
                '\\' => {
                    let e = *self.c.get(self.i)?;
                    self.i += 1;
                    match e {
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        'r' => s.push('\r'),
                        '0' => s.push('\0'),
                        '\\' | '\'' | '"' => s.push(e),
                        '\n' => {}
                        'x' | 'u' => {
                            let n = if e == 'x' { 2 } else { 4 };
                            let hex: String = self.c.get(self.i..self.i + n)?.iter().collect();
                            s.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                            self.i += n;
                        }
                        other => {
                            s.push('\\');
                            s.push(other);
                        }
                    }
                }
                c => s.push(c),
            }
        }
        serde_json::to_string(&s).ok()
    }

    /// Items up to `close`, and whether a comma was seen.
    fn items(&mut self, close: char) -> Option<(Vec<String>, bool)> {
        self.i += 1;
        self.depth += 1;
        let (mut out, mut comma) = (Vec::new(), false);
        loop {
            self.ws();
            if self.c.get(self.i) == Some(&close) {
                self.i += 1;
                self.depth -= 1;
                return Some((out, comma));
            }
            out.push(self.value()?);
            self.ws();
            match self.c.get(self.i)? {
                ',' => {
                    self.i += 1;
                    comma = true;
                }
                c if *c == close => {}
                _ => return None,
            }
        }
    }

    fn dict(&mut self) -> Option<String> {
        self.i += 1;
        self.depth += 1;
        let mut out = Vec::new();
        loop {
            self.ws();
            if self.c.get(self.i) == Some(&'}') {
                self.i += 1;
                self.depth -= 1;
                return Some(format!("{{{}}}", out.join(", ")));
            }
            let k = self.value()?;
            self.ws();
            if self.c.get(self.i) != Some(&':') {
                return None;
            }
            self.i += 1;
            let v = self.value()?;
            out.push(format!("{k}: {v}"));
            self.ws();
            match self.c.get(self.i)? {
                ',' => self.i += 1,
                '}' => {}
                _ => return None,
            }
        }
    }

    fn number(&mut self) -> Option<String> {
        let start = self.i;
        while self
            .c
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'))
        {
            // A sign only leads or follows an exponent.
            if matches!(self.c[self.i], '+' | '-') && self.i > start && !matches!(self.c[self.i - 1], 'e' | 'E') {
                break;
            }
            self.i += 1;
        }
        let text: String = self.c[start..self.i].iter().filter(|c| **c != '_').collect();
        let (sign, digits) = match text.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", text.strip_prefix('+').unwrap_or(&text)),
        };
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
            if let Some(d) = digits.strip_prefix(prefix) {
                return i128::from_str_radix(d, radix).ok().map(|n| format!("{sign}{n}"));
            }
        }
        if digits.chars().all(|c| c.is_ascii_digit()) && !digits.is_empty() {
            return Some(format!(
                "{sign}{}",
                digits.trim_start_matches('0').to_owned()
                    + if digits.trim_start_matches('0').is_empty() {
                        "0"
                    } else {
                        ""
                    }
            ));
        }
        let f: f64 = digits.parse().ok()?;
        f.is_finite().then(|| format!("{sign}{f:?}"))
    }
}
