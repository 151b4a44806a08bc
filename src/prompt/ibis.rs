//! Templates as ibis (TrustGraph's template engine, 3.3.0) reads them.
//!
//! `ibis.Template(text)` runs when TrustGraph's `load_config` loads the
//! prompts; a template it refuses fails the whole config reload, so
//! [`ibis_check`] refuses what ibis refuses, with ibis's message. An
//! accepted template is translated ([`to_jinja`]) into the minijinja syntax
//! cutline renders with, construct by construct: ibis's language is small
//! (a name, a dotted path, a Python literal or a call with literal
//! arguments, then filters; `or`/`||` chains and `?? ::` in prints;
//! `if` with `==`, `in`, `and`, `or`, `not`; `for … in` with `{% empty %}`;
//! `with`), so the translation is exact where ibis's semantics have a
//! minijinja twin: ibis's filters are registered under `ibis_<name>`
//! (`ibis_filters.rs`), `loop.index` is 0-based as in ibis, and a `for`
//! over something falsy or not iterable takes the `empty` branch.

use fancy_regex::Regex;
use std::fmt::Write as _;
use std::sync::LazyLock;

use super::ibis_filters::{FILTERS, literal};

/// Why ibis refuses a template at load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ibis refuses this template (line {line}): {message}")]
pub struct IbisError {
    /// 1-based template line of the tag.
    pub line: usize,
    /// ibis's message.
    pub message: String,
    /// Byte range of the tag in the template, when there is one.
    pub range: Option<std::ops::Range<usize>>,
}

/// Check `template` as `ibis.Template` compiles it.
pub fn ibis_check(template: &str) -> Result<(), IbisError> {
    to_jinja(template).map(|_| ())
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Kind {
    Text,
    Print,
    EPrint,
    Instruction,
}

struct Token<'t> {
    kind: Kind,
    text: &'t str,
    line: usize,
    /// Byte range of the whole tag.
    range: std::ops::Range<usize>,
}

/// ibis's lexer: comment, escaped print, print, instruction, text.
fn tokens(t: &str) -> Result<Vec<Token<'_>>, IbisError> {
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let opens = [
        ("{#", "#}", None),
        ("{$", "$}", Some(Kind::EPrint)),
        ("{{", "}}", Some(Kind::Print)),
        ("{%", "%}", Some(Kind::Instruction)),
    ];
    while i < t.len() {
        if let Some((open, close, kind)) = opens.iter().find(|(o, ..)| t[i..].starts_with(o)) {
            let start = i + open.len();
            let Some(end) = t[start..].find(close).map(|e| start + e) else {
                let what = match kind {
                    None => "comment",
                    Some(Kind::EPrint) => "escaped-print",
                    Some(Kind::Print) => "print",
                    _ => "instruction",
                };
                return Err(IbisError {
                    line,
                    message: format!("Unclosed {what} tag."),
                    range: Some(i..i + open.len()),
                });
            };
            if let Some(kind) = kind {
                out.push(Token {
                    kind: *kind,
                    text: t[start..end].trim(),
                    line,
                    range: i..end + close.len(),
                });
            }
            line += t[i..end].matches('\n').count();
            i = end + close.len();
        } else {
            let next = i + t[i..].chars().next().map_or(1, char::len_utf8);
            let end = ["{#", "{$", "{{", "{%"]
                .iter()
                .filter_map(|o| t[next..].find(o).map(|p| next + p))
                .min()
                .unwrap_or(t.len());
            out.push(Token {
                kind: Kind::Text,
                text: &t[i..end],
                line,
                range: i..end,
            });
            line += t[i..end].matches('\n').count();
            i = end;
        }
    }
    Ok(out)
}

/// `utils.splitc`: split on `delim` outside quotes, stripped.
fn splitc(s: &str, delim: char) -> Vec<String> {
    let (mut out, mut buf, mut expecting, mut escaped) = (Vec::new(), String::new(), None, false);
    for c in s.chars() {
        if let Some(q) = expecting {
            buf.push(c);
            if c == q && !escaped {
                expecting = None;
            }
        } else if c == delim {
            out.push(std::mem::take(&mut buf));
        } else {
            buf.push(c);
            if c == '"' || c == '\'' {
                expecting = Some(c);
            }
        }
        escaped = if c == '\\' { !escaped } else { false };
    }
    out.push(buf);
    out.into_iter().map(|t| t.trim().to_owned()).collect()
}

/// `utils.splitre`: split on the delimiter patterns outside quoted strings.
fn splitre(s: &str, delims: &Regex, keep: bool) -> Vec<String> {
    let (mut out, mut buf, mut last) = (Vec::new(), String::new(), 0);
    for m in delims.find_iter(s).filter_map(Result::ok) {
        if m.as_str().starts_with(['"', '\'']) {
            buf.push_str(&s[last..m.end()]);
        } else {
            buf.push_str(&s[last..m.start()]);
            out.push(std::mem::take(&mut buf));
            if keep {
                out.push(m.as_str().to_owned());
            }
        }
        last = m.end();
    }
    buf.push_str(&s[last..]);
    out.push(buf);
    out
}

fn re(delims: &str) -> Regex {
    Regex::new(&format!(r#""(?:[^\\"]|\\.)*"|'(?:[^\\']|\\.)*'|{delims}"#)).unwrap_or_else(|_| unreachable!())
}

static TERNARY: LazyLock<Regex> = LazyLock::new(|| re(r"\?\?|\:\:"));
static OR: LazyLock<Regex> = LazyLock::new(|| re(r"\s+or\s+|\|\|"));
static AND: LazyLock<Regex> = LazyLock::new(|| re(r"\s+and\s+|&&"));
static CONDITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(not\s+)?(.+?)\s+(==|!=|<|>|<=|>=|not[ ]in|in)\s+(.+)|(not\s+)?(.+))")
        .unwrap_or_else(|_| unreachable!())
});
static FOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^for\s+(\w+(?:,\s*\w+)*)\s+in\s+(.+)").unwrap_or_else(|_| unreachable!()));
static FUNC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^([\w.]+)\((.*)\)$").unwrap_or_else(|_| unreachable!()));
static VAR: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[\w.]+$").unwrap_or_else(|_| unreachable!()));

struct Translator {
    line: usize,
    range: std::ops::Range<usize>,
    /// How many `for` blocks enclose the current token.
    loops: usize,
}

impl Translator {
    fn err(&self, message: String) -> IbisError {
        IbisError {
            line: self.line,
            message,
            range: Some(self.range.clone()),
        }
    }

    /// A dotted name as minijinja reads it; `loop.*` inside a `for` as
    /// ibis's loop record.
    fn name(&self, v: &str) -> String {
        let mut parts = v.split('.');
        let first = parts.next().unwrap_or_default();
        let rest: Vec<&str> = parts.collect();
        if self.loops > 0 && first == "loop" {
            let field = match rest.first().copied() {
                Some("index") => "loop.index0",
                Some("count") => "loop.index",
                Some("length") => "loop.length",
                Some("is_first") => "loop.first",
                Some("is_last") => "loop.last",
                _ => "ibis_undefined",
            };
            return field.to_owned();
        }
        let ident = |s: &str| s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_');
        if !ident(first)
            || rest
                .iter()
                .any(|p| p.is_empty() || !(ident(p) || p.chars().all(|c| c.is_ascii_digit())))
        {
            return "ibis_undefined".to_owned();
        }
        // A variable spelled like a minijinja keyword (`none`, `in`) is
        // looked up by name.
        if KEYWORDS.contains(&first) {
            let mut out = format!("ibis_var({first:?})");
            for p in rest {
                out.push('.');
                out.push_str(p);
            }
            return out;
        }
        v.to_owned()
    }

    /// One ibis `Expression`: a literal, a call or a name, then filters.
    fn expr(&self, e: &str) -> Result<String, IbisError> {
        let parts = splitc(e.trim(), '|');
        let primary = parts[0].as_str();
        let mut out = if let Some(lit) = literal(primary) {
            lit
        } else if let Some((name, args)) = self.call(primary)? {
            format!("{}({args})", self.name(&name))
        } else if VAR.is_match(primary).unwrap_or(false) {
            self.name(primary)
        } else {
            return Err(self.err(format!("Unparsable expression '{primary}'.")));
        };
        for f in &parts[1..] {
            let (name, args) = self.call(f)?.unwrap_or_else(|| (f.clone(), String::new()));
            if !FILTERS.contains(&name.as_str()) {
                return Err(self.err(format!("Unrecognised filter name '{name}'.")));
            }
            out = format!("({out})|ibis_{name}({args})");
        }
        Ok(out)
    }

    /// `name(args)` with literal arguments, as minijinja arguments.
    fn call(&self, e: &str) -> Result<Option<(String, String)>, IbisError> {
        let Ok(Some(c)) = FUNC.captures(e) else {
            return Ok(None);
        };
        let name = c.get(1).map_or("", |m| m.as_str()).to_owned();
        let args = splitc(c.get(2).map_or("", |m| m.as_str()), ',');
        let mut out = Vec::new();
        for a in args.iter().filter(|a| !a.is_empty()) {
            let Some(lit) = literal(a) else {
                return Err(self.err(format!(
                    "Unparsable argument '{a}'. Arguments must be valid Python literals."
                )));
            };
            out.push(lit);
        }
        Ok(Some((name, out.join(", "))))
    }

    fn print(&self, text: &str) -> Result<String, IbisError> {
        let chunks = splitre(text, &TERNARY, true);
        if chunks.len() == 5 && chunks[1] == "??" && chunks[3] == "::" {
            let (t, a, b) = (self.expr(&chunks[0])?, self.expr(&chunks[2])?, self.expr(&chunks[4])?);
            return Ok(format!("(({a}) if ({t}) else ({b}))"));
        }
        let exprs: Result<Vec<String>, _> = splitre(text, &OR, false).iter().map(|e| self.expr(e)).collect();
        Ok(exprs?.iter().map(|e| format!("({e})")).collect::<Vec<_>>().join(" or "))
    }

    fn condition(&self, c: &str) -> Result<String, IbisError> {
        let m = CONDITION
            .captures(c)
            .ok()
            .flatten()
            .ok_or_else(|| self.err(format!("Malformed condition '{c}'.")))?;
        let test = if let Some(lhs) = m.get(2) {
            let op = m.get(3).map_or("==", |o| o.as_str());
            let op = if op.starts_with("not") { "not in" } else { op };
            let rhs = m.get(4).map_or("", |r| r.as_str());
            format!("(({}) {op} ({}))", self.expr(lhs.as_str())?, self.expr(rhs)?)
        } else {
            format!("({})", self.expr(m.get(6).map_or("", |e| e.as_str()))?)
        };
        let negated = m.get(1).or_else(|| m.get(5)).is_some();
        Ok(if negated { format!("(not {test})") } else { test })
    }

    fn conditions(&self, tag: &str, text: &str) -> Result<String, IbisError> {
        let Some((_, conds)) = text
            .split_once(char::is_whitespace)
            .filter(|(_, c)| !c.trim().is_empty())
        else {
            return Err(self.err(format!("Malformed '{tag}' tag.")));
        };
        let mut ors = Vec::new();
        for block in splitre(conds.trim_start(), &OR, false) {
            let ands: Result<Vec<String>, _> = splitre(&block, &AND, false).iter().map(|c| self.condition(c)).collect();
            ors.push(format!("({})", ands?.join(" and ")));
        }
        Ok(ors.join(" or "))
    }
}

/// Words minijinja reads as keywords, not names.
const KEYWORDS: [&str; 12] = [
    "true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if",
];

const BLOCKS: [(&str, &str); 6] = [
    ("for", "endfor"),
    ("if", "endif"),
    ("with", "endwith"),
    ("block", "endblock"),
    ("spaceless", "endspaceless"),
    ("trim", "endtrim"),
];

/// Translate an ibis template into minijinja syntax, or ibis's refusal.
pub fn to_jinja(template: &str) -> Result<String, IbisError> {
    let mut out = String::with_capacity(template.len() + 32);
    let mut open: Vec<(&str, usize)> = Vec::new();
    let mut tr = Translator {
        line: 1,
        range: 0..0,
        loops: 0,
    };
    for tok in tokens(template)? {
        tr.line = tok.line;
        tr.range = tok.range.clone();
        match tok.kind {
            Kind::Text => {
                // Text holds no tag opener; `{` before one is still plain.
                out.push_str(tok.text);
            }
            Kind::Print => {
                let _ = write!(out, "{{{{ {} }}}}", tr.print(tok.text)?);
            }
            Kind::EPrint => {
                let _ = write!(out, "{{{{ ({})|ibis_escape }}}}", tr.print(tok.text)?);
            }
            Kind::Instruction => instruction(&mut tr, &tok, &mut open, &mut out)?,
        }
    }
    if let Some((word, line)) = open.last() {
        let opener = BLOCKS.iter().find(|(_, e)| e == word).map_or("", |(o, _)| *o);
        return Err(IbisError {
            range: None,
            line: *line,
            message: format!(
                "Unexpected end of template. Ibis was expecting a closing '{word}' tag to close the '{opener}' tag \
                 opened in line {line}."
            ),
        });
    }
    Ok(out)
}

fn instruction<'t>(
    tr: &mut Translator,
    tok: &Token<'t>,
    open: &mut Vec<(&'t str, usize)>,
    out: &mut String,
) -> Result<(), IbisError> {
    let keyword = tok.text.split_whitespace().next().unwrap_or("");
    let text = tok.text;
    match keyword {
        "for" => {
            let c = FOR
                .captures(text)
                .ok()
                .flatten()
                .ok_or_else(|| tr.err("Malformed 'for' tag.".into()))?;
            let vars: Vec<&str> = c.get(1).map_or("", |m| m.as_str()).split(',').map(str::trim).collect();
            let e = tr.expr(c.get(2).map_or("", |m| m.as_str()))?;
            let _ = write!(out, "{{% for {} in ({e})|ibis_iterable %}}", vars.join(", "));
            tr.loops += 1;
        }
        "empty" | "else" => out.push_str("{% else %}"),
        "if" | "elif" => {
            let c = tr.conditions(keyword, text)?;
            let _ = write!(out, "{{% {keyword} {c} %}}");
        }
        "with" => {
            let mut vars = Vec::new();
            for chunk in splitc(&text[4.min(text.len())..], '&').iter().filter(|c| !c.is_empty()) {
                let (name, e) = chunk
                    .split_once('=')
                    .ok_or_else(|| tr.err("Malformed 'with' tag.".into()))?;
                vars.push(format!("{} = {}", name.trim(), tr.expr(e.trim())?));
            }
            let _ = write!(out, "{{% with {} %}}", vars.join(", "));
        }
        "spaceless" => out.push_str("{% filter ibis_spaceless %}"),
        "trim" => out.push_str("{% filter trim %}"),
        "cycle" | "include" | "extends" | "block" => {
            let _ = write!(out, "{{{{ ibis_unsupported({keyword:?}) }}}}");
            if keyword == "block" {
                out.push_str("{% if false %}");
            }
        }
        "" => return Err(tr.err("Empty instruction tag.".into())),
        end if BLOCKS.iter().any(|(_, e)| *e == end) => {
            match open.last() {
                None => return Err(tr.err(format!("Unexpected '{end}' tag."))),
                Some((want, _)) if *want != end => {
                    return Err(tr.err(format!(
                        "Unexpected '{end}' tag. Ibis was expecting the following closing tag: '{want}'."
                    )));
                }
                Some(_) => {}
            }
            open.pop();
            let close = match end {
                "endspaceless" | "endtrim" => "endfilter",
                "endblock" => "endif",
                other => other,
            };
            if end == "endfor" {
                tr.loops -= 1;
            }
            let _ = write!(out, "{{% {close} %}}");
            return Ok(());
        }
        other => return Err(tr.err(format!("Unrecognised instruction tag '{other}'."))),
    }
    if let Some((_, end)) = BLOCKS.iter().find(|(o, _)| *o == keyword) {
        open.push((end, tok.line));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_ibis_words() {
        let e = |t: &str| ibis_check(t).unwrap_err().message;
        assert_eq!(e("{{ i + 1 }}"), "Unparsable expression 'i + 1'.");
        assert_eq!(e("{{ x|length }}"), "Unrecognised filter name 'length'.");
        assert_eq!(e("{% set x = 1 %}"), "Unrecognised instruction tag 'set'.");
        assert_eq!(e("{% if %}x{% endif %}"), "Malformed 'if' tag.");
        assert!(e("{% for i in x %}").starts_with("Unexpected end of template."));
        assert_eq!(e("{{ x }"), "Unclosed print tag.");
    }

    #[test]
    fn translations() {
        assert_eq!(
            to_jinja("{% for i in items %}{{ loop.index }}{% empty %}none{% endfor %}").unwrap(),
            "{% for i in (items)|ibis_iterable %}{{ (loop.index0) }}{% else %}none{% endfor %}"
        );
        assert_eq!(
            to_jinja("{{ a ?? b :: 'c' }}").unwrap(),
            "{{ ((b) if (a) else (\"c\")) }}"
        );
    }
}
