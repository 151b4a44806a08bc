//! Keeping an API key out of every text cutline shows or records.
//!
//! A server can echo the key verbatim, JSON-escaped (`sk\u002dlive…`, every
//! character as `\u` escapes, `/` as `\/`, `"` and `\` escaped), URL-encoded,
//! in hex, or base64-encoded (inside Basic auth, say), and a message may be
//! cut anywhere: so every form is replaced, and so is any run of twelve or
//! more characters that begins a form (what is left of a key a cut went
//! through). Escapes can also be mixed (some characters escaped, some not):
//! the text is then read as it decodes (JSON and percent escapes, hex
//! digits) and every span that decodes to the key, or to twelve or more of
//! its first characters, is replaced. A model can also echo a key in its
//! answer, split across stream chunks: [`Redactor`] holds back text that
//! could begin a form until the next chunk decides it. Pure.

use base64::Engine as _;

/// What a redacted key is replaced with.
pub const REDACTED: &str = "<redacted>";

/// The shortest prefix of a form that counts as the key when a cut went
/// through it (shorter ones are too common to be the key).
const MIN_PREFIX: usize = 12;

/// Every form the key `k` can be echoed in, longest first.
pub fn forms(k: &str) -> Vec<String> {
    if k.is_empty() {
        return Vec::new();
    }
    let mut out = vec![k.to_owned()];
    let escaped = |upper: bool| {
        k.chars()
            .map(|c| match c {
                c if c.is_ascii_alphanumeric() => c.to_string(),
                c if upper => format!("\\u{:04X}", u32::from(c)),
                c => format!("\\u{:04x}", u32::from(c)),
            })
            .collect::<String>()
    };
    // Unreserved characters kept (RFC 3986), or every non-alphanumeric one
    // encoded (some servers encode `-` too).
    let percent = |upper: bool, keep: &[u8]| {
        k.bytes()
            .map(|b| match b {
                b if b.is_ascii_alphanumeric() || keep.contains(&b) => char::from(b).to_string(),
                b if upper => format!("%{b:02X}"),
                b => format!("%{b:02x}"),
            })
            .collect::<String>()
    };
    out.extend([escaped(false), escaped(true)]);
    for upper in [false, true] {
        out.push(k.chars().map(|c| unicode_escape(c, upper)).collect());
        out.push(
            k.bytes()
                .map(|b| if upper { format!("{b:02X}") } else { format!("{b:02x}") })
                .collect(),
        );
    }
    // JSON's own escapes: `"` and `\` always, `/` optionally.
    let json = k.replace('\\', "\\\\").replace('"', "\\\"");
    out.push(json.replace('/', "\\/"));
    out.push(json);
    for keep in [&b"-_.~"[..], &b""[..]] {
        out.extend([percent(true, keep), percent(false, keep)]);
    }
    out.extend(base64_forms(k.as_bytes()));
    out.sort_by_key(|f| std::cmp::Reverse(f.len()));
    out.dedup();
    out.retain(|f| !f.is_empty());
    out
}

/// `bytes` as hex digits.
pub fn hex(bytes: &[u8], upper: bool) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = if upper {
            write!(s, "{b:02X}")
        } else {
            write!(s, "{b:02x}")
        };
        s
    })
}

fn unicode_escape(c: char, upper: bool) -> String {
    if upper {
        format!("\\u{:04X}", u32::from(c))
    } else {
        format!("\\u{:04x}", u32::from(c))
    }
}

/// The key in base64 (standard and URL-safe) at each of the three byte
/// alignments it can have inside a longer encoded string: only the
/// characters that depend on the key's bytes alone.
fn base64_forms(key: &[u8]) -> Vec<String> {
    let engines = [
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    let mut out = Vec::new();
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(key);
        let first = (offset * 8).div_ceil(6);
        let last = (bytes.len() * 8) / 6;
        for e in &engines {
            let enc = e.encode(&bytes);
            if let Some(part) = enc.get(first..last.min(enc.len()))
                && part.len() >= MIN_PREFIX
            {
                out.push(part.to_owned());
            }
        }
    }
    out
}

/// `text` with every form of every key in `keys` replaced, every cut form
/// (a run of `MIN_PREFIX` or more characters that begins one), and every
/// span whose mixed escapes or hex digits decode to the key or to
/// `MIN_PREFIX` or more of its first characters.
pub fn scrub(text: &str, keys: &[String]) -> String {
    let mut out = text.to_owned();
    for k in keys {
        // Decoded spans first: a form's cut-prefix rule would otherwise eat
        // the start of a mixed echo and leave its rest.
        out = scrub_decoded(&out, k, decode_escapes);
        out = scrub_decoded(&out, k, |t| decode_hex(t, 0));
        out = scrub_decoded(&out, k, |t| decode_hex(t, 1));
        for f in forms(k) {
            if out.contains(&f) {
                out = out.replace(&f, REDACTED);
            }
            out = scrub_prefix_runs(&out, &f);
        }
    }
    out
}

/// One decoded character and the byte span of `text` it came from.
type Unit = (char, std::ops::Range<usize>);

/// `text` read as it decodes: JSON escapes (`\uXXXX`, `\/`, `\"`, `\\`)
/// and percent escapes (`%XX`, ASCII) as the character they stand for,
/// anything else as itself.
fn decode_escapes(text: &str) -> Vec<Unit> {
    let b = text.as_bytes();
    let hex = |s: &[u8]| {
        std::str::from_utf8(s)
            .ok()
            .and_then(|s| u32::from_str_radix(s, 16).ok())
    };
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let decoded = match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'u') => b
                .get(i + 2..i + 6)
                .and_then(hex)
                .and_then(char::from_u32)
                .map(|c| (c, 6)),
            b'\\' => b
                .get(i + 1)
                .filter(|c| matches!(c, b'/' | b'"' | b'\\'))
                .map(|c| (char::from(*c), 2)),
            b'%' => b
                .get(i + 1..i + 3)
                .and_then(hex)
                .filter(|v| *v < 0x80)
                .and_then(char::from_u32)
                .map(|c| (c, 3)),
            _ => None,
        };
        let (c, len) = decoded.unwrap_or_else(|| {
            let c = text[i..].chars().next().unwrap_or('\0');
            (c, c.len_utf8())
        });
        out.push((c, i..i + len));
        i += len;
    }
    out
}

/// `text` with each pair of hex digits from `offset` on read as the ASCII
/// character it encodes (other characters as themselves).
fn decode_hex(text: &str, offset: usize) -> Vec<Unit> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let pair = (i >= offset)
            .then(|| b.get(i..i + 2))
            .flatten()
            .filter(|p| p.iter().all(u8::is_ascii_hexdigit))
            .and_then(|p| std::str::from_utf8(p).ok())
            .and_then(|p| u8::from_str_radix(p, 16).ok())
            .filter(u8::is_ascii);
        match pair {
            Some(v) => {
                out.push((char::from(v), i..i + 2));
                i += 2;
            }
            None => {
                let c = text[i..].chars().next().unwrap_or('\0');
                out.push((c, i..i + c.len_utf8()));
                i += c.len_utf8();
            }
        }
    }
    out
}

/// `text` with every run of decoded units that spells the key, or its first
/// `MIN_PREFIX` characters or more, replaced (only runs that decoded
/// something: a plain echo is the forms' job).
fn scrub_decoded(text: &str, key: &str, decode: impl Fn(&str) -> Vec<Unit>) -> String {
    let key: Vec<char> = key.chars().collect();
    let need = MIN_PREFIX.min(key.len());
    if need == 0 {
        return text.to_owned();
    }
    let units = decode(text);
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    let mut i = 0;
    while i < units.len() {
        let run = units[i..].iter().zip(&key).take_while(|((c, _), k)| c == *k).count();
        let encoded = units[i..i + run].iter().any(|(c, r)| r.len() != c.len_utf8());
        if run >= need && encoded {
            spans.push(units[i].1.start..units[i + run - 1].1.end);
            i += run;
        } else {
            i += 1;
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&text[at..span.start]);
        out.push_str(REDACTED);
        at = span.end;
    }
    out.push_str(&text[at..]);
    out
}

/// `text` with every whole form of `forms` replaced (a stream's middle: a
/// prefix there may still be completed by the next chunk).
fn scrub_whole(text: &str, forms: &[String]) -> String {
    let mut out = text.to_owned();
    for f in forms {
        if out.contains(f.as_str()) {
            out = out.replace(f.as_str(), REDACTED);
        }
    }
    out
}

/// Replace every run of `MIN_PREFIX`+ characters of `text` that is a prefix
/// of `form`.
fn scrub_prefix_runs(text: &str, form: &str) -> String {
    if form.len() < MIN_PREFIX + 1 || !form.is_char_boundary(MIN_PREFIX) {
        return text.to_owned();
    }
    let head = &form[..MIN_PREFIX];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(head) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let run = tail.bytes().zip(form.bytes()).take_while(|(a, b)| a == b).count();
        let mut run = run;
        while !tail.is_char_boundary(run) {
            run -= 1;
        }
        out.push_str(REDACTED);
        rest = &tail[run..];
    }
    out.push_str(rest);
    out
}

/// A streaming redactor: feed chunks, get them back with every form of the
/// keys replaced, even a form split across chunks.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    forms: Vec<String>,
    keys: Vec<String>,
    held: String,
}

impl Redactor {
    /// A redactor for `keys` (none: it passes text through untouched).
    pub fn new(keys: &[String]) -> Self {
        Self {
            forms: keys.iter().flat_map(|k| forms(k)).collect(),
            keys: keys.to_vec(),
            held: String::new(),
        }
    }

    /// The next chunk: what can be passed on now.
    pub fn push(&mut self, chunk: &str) -> String {
        if self.forms.is_empty() {
            return chunk.to_owned();
        }
        self.held.push_str(chunk);
        let clean = scrub_whole(&self.held, &self.forms);
        let keep = held_prefix(&clean, &self.forms);
        let out = clean[..clean.len() - keep].to_owned();
        clean[clean.len() - keep..].clone_into(&mut self.held);
        out
    }

    /// The end of the stream: what was held back, redacted.
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        let clean = scrub(&held, &self.keys);
        // A held tail is a prefix of a form: if it is long enough to
        // identify the key, it goes too.
        if self
            .forms
            .iter()
            .any(|f| clean.len() >= MIN_PREFIX.min(f.len()) && f.starts_with(&clean))
        {
            REDACTED.to_owned()
        } else {
            clean
        }
    }
}

/// Length of the longest tail of `text` that begins some form.
fn held_prefix(text: &str, forms: &[String]) -> usize {
    let longest = forms.iter().map(String::len).max().unwrap_or(0);
    (1..=text.len().min(longest))
        .rev()
        .filter(|&k| text.is_char_boundary(text.len() - k))
        .find(|&k| {
            let tail = &text[text.len() - k..];
            forms.iter().any(|f| f.len() > k && f.starts_with(tail))
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-SECRET123openaiQwErTy9876";

    fn keys() -> Vec<String> {
        vec![KEY.to_owned()]
    }

    #[test]
    fn every_echoed_form_is_replaced() {
        let escaped = "sk\\u002dtest\\u002dSECRET123openaiQwErTy9876";
        let percent = "sk-test-SECRET123openaiQwErTy9876".replace('-', "%2D");
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("user:{KEY}"));
        for echo in [KEY.to_owned(), escaped.to_owned(), percent, b64] {
            let s = scrub(&format!("bad key: {echo} (check it)"), &keys());
            assert!(!s.contains("SECRET123"), "{s}");
            assert!(s.contains(REDACTED), "{echo} -> {s}");
            assert!(s.ends_with("(check it)"), "{s}");
        }
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("user:{KEY}"));
        let s = scrub(&b64, &keys());
        // "user:" stays readable; everything that encodes the key goes.
        assert!(s.starts_with("dXNlcjp") && s.contains(REDACTED), "{s}");
        assert!(s.ends_with(&format!("{REDACTED}Y=")), "{s}");
    }

    #[test]
    fn escaped_mixed_and_hex_echoes_are_replaced() {
        let slash = "sk-ant/api03+SECRET123abc\"def\\ghi0987654";
        let keys = vec![slash.to_owned()];
        let json = slash.replace('\\', "\\\\").replace('"', "\\\"");
        let hex = hex(slash.as_bytes(), false);
        let all_u: String = slash.chars().map(|c| unicode_escape(c, false)).collect();
        let mixed = json
            .replacen('-', "\\u002d", 1)
            .replace('/', "\\/")
            .replacen('S', "%53", 1);
        for echo in [
            json.replace('/', "\\/"),
            json.clone(),
            hex.clone(),
            hex.to_uppercase(),
            all_u,
            mixed,
        ] {
            let s = scrub(&format!("{{\"message\": \"bad key {echo} here\"}}"), &keys);
            assert_eq!(s, format!("{{\"message\": \"bad key {REDACTED} here\"}}"), "{echo}");
        }
        // A hex echo cut short: what is left of it goes too.
        let s = scrub(&format!("key {}…", &hex[..40]), &keys);
        assert_eq!(s, format!("key {REDACTED}…"));
        // Hex that decodes to something else stays.
        assert_eq!(scrub("id 736b2d6f70656e ok", &keys), "id 736b2d6f70656e ok");
    }

    #[test]
    fn a_key_a_cut_went_through_is_replaced() {
        let cut = &KEY[..KEY.len() - 1];
        let s = scrub(&format!("…{cut}…"), &keys());
        assert_eq!(s, format!("…{REDACTED}…"));
        // A short common prefix alone is not the key.
        assert_eq!(scrub("sk-test-SEC", &keys()), "sk-test-SEC");
    }

    #[test]
    fn a_key_split_across_chunks_never_passes() {
        for split in 1..KEY.len() {
            let mut r = Redactor::new(&keys());
            let mut out = r.push("echo: ");
            out.push_str(&r.push(&KEY[..split]));
            out.push_str(&r.push(&KEY[split..]));
            out.push_str(&r.push(" done"));
            out.push_str(&r.finish());
            assert_eq!(out, format!("echo: {REDACTED} done"), "split at {split}");
        }
        let mut r = Redactor::new(&keys());
        let mut out = r.push("cut: ");
        out.push_str(&r.push(&KEY[..20]));
        out.push_str(&r.finish());
        assert_eq!(out, format!("cut: {REDACTED}"));
        let mut plain = Redactor::new(&[]);
        assert_eq!(plain.push("sk-anything"), "sk-anything");
    }

    #[test]
    fn ordinary_text_is_untouched() {
        let mut r = Redactor::new(&keys());
        let text = "{\"name\": \"apple\"}\n{\"name\": \"s\"}";
        let mut out = r.push(text);
        out.push_str(&r.finish());
        assert_eq!(out, text);
    }
}
