//! Python's `json.loads`, which TrustGraph parses responses with, where it
//! accepts more than JSON: `NaN`, `Infinity` and `-Infinity`, lone surrogate
//! escapes (`"\ud800"`), and nesting to Python's recursion limit (serde_json
//! stops at 128).
//!
//! serde_json is tried first; only a value it refuses is looked at again.
//! Machine output stays strict JSON, so such a value is written as `null`
//! (a non-finite number) or with U+FFFD (a lone surrogate), and the raw
//! tokens are listed beside it. Schema validation sees every float as the
//! binary float Python holds (`1e-400` as `0.0`), and a non-finite number
//! (and a float such as `1e400` that Python reads as infinite) as one of
//! three tiny non-integer sentinel numbers ([`NAN_SENTINEL`], …): a number,
//! not an integer, equal to nothing a schema names, a multiple of nothing,
//! equal to itself (Python's `json` hands out one `nan` object, so two NaNs
//! are not unique); the bounds keywords read them as Python compares
//! ([`super::pyschema`]).

use serde::Deserialize as _;
use serde_json::Value;

/// How deep `json.loads` nests at the top of a Python 3.11 process with the
/// default recursion limit (1000); a deeper caller gets slightly less. The
/// runtime TrustGraph's service runs on sets the limit cutline applies
/// ([`super::tg::TgPython::json_max_depth`]).
pub const PY_MAX_DEPTH: usize = 995;

/// How deep `json.loads` nests on Python 3.13, TrustGraph's default
/// runtime (its C stack limit; see [`super::tg::TgPython::json_max_depth`]).
pub const PY313_MAX_DEPTH: usize = 9994;

/// What schema validation sees for `NaN`.
pub const NAN_SENTINEL: &str = "1.2345678901234567e-298";
/// What schema validation sees for `Infinity` (`-` before it for
/// `-Infinity`).
pub const INF_SENTINEL: &str = "1.2345678901234567e-299";

/// Which non-finite number a checked number stands for, if any.
pub fn sentinel(v: &Value) -> Option<f64> {
    let f = v.as_f64()?;
    let nan: f64 = NAN_SENTINEL.parse().ok()?;
    let inf: f64 = INF_SENTINEL.parse().ok()?;
    if f.to_bits() == nan.to_bits() {
        Some(f64::NAN)
    } else if f.to_bits() == inf.to_bits() {
        Some(f64::INFINITY)
    } else if f.to_bits() == (-inf).to_bits() {
        Some(f64::NEG_INFINITY)
    } else {
        None
    }
}

/// Whether `bytes` may hold a float Python holds as a different number than
/// written (`1e400` is infinite, `1e-400` is `0.0`, `0.1000000000000000055`
/// is `0.1`): 16 or more digits in one number, or a three-digit exponent.
/// The cheap test before [`python_floats`].
pub fn may_round(bytes: &[u8]) -> bool {
    let mut run = 0;
    for (i, &c) in bytes.iter().enumerate() {
        if c.is_ascii_digit() {
            run += 1;
            if run > 15 {
                return true;
            }
            continue;
        }
        if c == b'.' {
            continue;
        }
        run = 0;
        if matches!(c, b'e' | b'E') {
            let mut j = i + 1;
            if matches!(bytes.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if bytes.get(j..j + 3).is_some_and(|d| d.iter().all(u8::is_ascii_digit)) {
                return true;
            }
        }
    }
    false
}

/// The float Python's `json.loads` holds for a number as written, when it
/// is a float (`.`, `e` or `E`; integers stay exact in Python) that may
/// differ from what is written ([`may_round`]).
fn python_float(n: &serde_json::Number) -> Option<f64> {
    let s = n.as_str();
    (s.contains(['.', 'e', 'E']) && may_round(s.as_bytes()))
        .then(|| s.parse::<f64>().ok())
        .flatten()
}

/// `value` with every float replaced by the binary float Python holds
/// (one that overflows by the infinity sentinel), when one differs from
/// what is written; `None` when none does (iterative: values nest
/// thousands deep).
pub fn python_floats(value: &Value) -> Option<Value> {
    floats_held(value, true)
}

/// A schema with every finite float replaced by the binary float Python
/// holds (`maximum: 0.30000000000000000001` is `0.3`); one that overflows
/// is left as written, which compares with every finite number as
/// infinity does.
pub fn python_schema_floats(schema: &Value) -> Option<Value> {
    floats_held(schema, false)
}

fn floats_held(value: &Value, infinite: bool) -> Option<Value> {
    let held = |n: &serde_json::Number| -> Option<serde_json::Number> {
        let f = python_float(n).filter(|f| infinite || f.is_finite())?;
        let number = if f.is_infinite() {
            let s = if f < 0.0 {
                format!("-{INF_SENTINEL}")
            } else {
                INF_SENTINEL.to_owned()
            };
            serde_json::from_str::<serde_json::Number>(&s).ok()?
        } else {
            serde_json::Number::from_f64(f)?
        };
        (number.as_str() != n.as_str()).then_some(number)
    };
    let mut found = false;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if held(n).is_some() => {
                found = true;
                break;
            }
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    if !found {
        return None;
    }
    let mut out = value.clone();
    let mut stack = vec![&mut out];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) => {
                if let Some(m) = held(n) {
                    *n = m;
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            Value::Object(o) => stack.extend(o.values_mut()),
            _ => {}
        }
    }
    Some(out)
}

/// The value schema validation sees for a value serde_json parsed from
/// `bytes`: the floats Python holds (see [`python_floats`]), or `None`
/// when that is `value` itself.
pub fn python_checked(bytes: &[u8], value: &Value) -> Option<Value> {
    // The value's own numbers decide it; the bytes only say where none can
    // differ. A flat object or array of strings (what an extraction line
    // is) has no number to look at, so neither the bytes nor a walk are read.
    if flat_without_numbers(value) {
        return None;
    }
    may_round(bytes).then(|| python_floats(value)).flatten()
}

/// Whether `value` is a scalar other than a number, or a container whose
/// members are all such scalars: no float in it can round.
fn flat_without_numbers(value: &Value) -> bool {
    let plain = |v: &Value| matches!(v, Value::Null | Value::Bool(_) | Value::String(_));
    match value {
        Value::Object(o) => o.values().all(plain),
        Value::Array(a) => a.iter().all(plain),
        v => plain(v),
    }
}

/// Non-empty containers above the deepest leaf (a scalar or an empty
/// container): what `pprint` recurses through. Iterative, for values
/// nested thousands deep.
pub fn nesting(value: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, d)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) if !a.is_empty() => Box::new(a.iter()),
            Value::Object(o) if !o.is_empty() => Box::new(o.values()),
            _ => {
                max = max.max(d);
                continue;
            }
        };
        stack.extend(children.map(|c| (c, d + 1)));
    }
    max
}

/// A value Python accepts and serde_json does not.
#[derive(Debug, Clone, PartialEq)]
pub struct PyValue {
    /// The value as written out: non-finite numbers as `null`, lone
    /// surrogates as U+FFFD.
    pub value: Value,
    /// The value schema validation sees: non-finite numbers as numbers.
    pub checked: Value,
    /// The raw tokens that are not standard JSON, in order.
    pub raw: Vec<String>,
}

/// Why Python refuses a value serde_json refused too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PyRefusal {
    /// Python refuses it as well (a `JSONDecodeError`: the line is skipped).
    Invalid,
    /// Nested past Python's limit: `json.loads` raises `RecursionError`,
    /// which TrustGraph's `parse_jsonl` does not catch, so the whole
    /// response fails there.
    TooDeep(usize),
}

/// Stack for work on values nested past serde_json's limit: parsing and
/// validating recurse once per level, and a 2 MiB thread (tokio's, a test's)
/// does not hold Python's 995 levels in a debug build.
const DEEP_STACK: usize = 256 << 20;

/// Run `f` on a thread with a stack deep enough for Python's nesting when
/// `bytes` nest past serde_json's limit (inline otherwise); `None` when no
/// such thread can be started.
pub fn with_stack<R: Send>(bytes: &[u8], f: impl FnOnce() -> R + Send) -> Option<R> {
    if max_depth(bytes) < 128 {
        return Some(f());
    }
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .stack_size(DEEP_STACK)
            .spawn_scoped(s, f)
            .ok()?;
        h.join().ok()
    })
}

/// Parse what serde_json refused as Python would on TrustGraph's default
/// runtime (3.13, nesting to [`PY313_MAX_DEPTH`]); a
/// value deeper than another runtime takes is that runtime's
/// `RecursionError`, which its callers report beside the value.
pub fn loads(bytes: &[u8]) -> Result<PyValue, PyRefusal> {
    loads_to(bytes, PY313_MAX_DEPTH)
}

/// Parse what serde_json refused as Python would, with containers allowed
/// to `max_depth`.
pub fn loads_to(bytes: &[u8], limit: usize) -> Result<PyValue, PyRefusal> {
    let depth = max_depth(bytes);
    if depth > limit {
        return Err(PyRefusal::TooDeep(depth));
    }
    let python_only = depth > 127
        || memchr::memmem::find(bytes, b"NaN").is_some()
        || memchr::memmem::find(bytes, b"Infinity").is_some()
        || memchr::memmem::find(bytes, b"\\ud").is_some()
        || memchr::memmem::find(bytes, b"\\uD").is_some();
    if !python_only {
        return Err(PyRefusal::Invalid);
    }
    let mut raw = Vec::new();
    let shown = rewrite(bytes, "null", "null", &mut raw);
    let checked = rewrite(bytes, NAN_SENTINEL, INF_SENTINEL, &mut Vec::new());
    let value = parse_deep(&shown).ok_or(PyRefusal::Invalid)?;
    let checked = parse_deep(&checked).ok_or(PyRefusal::Invalid)?;
    let checked = python_floats(&checked).unwrap_or(checked);
    Ok(PyValue { value, checked, raw })
}

/// serde_json without its recursion limit (the depth was checked first).
fn parse_deep(bytes: &[u8]) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let v = Value::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(v)
}

/// Deepest bracket nesting outside strings.
pub(crate) fn max_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// `bytes` with `NaN`/`Infinity` (outside strings) replaced by `nan` /
/// `inf` (a leading `-` kept for `-Infinity`), and lone surrogate escapes
/// inside strings by `\ufffd`; each replaced token is pushed to `raw`.
fn rewrite(bytes: &[u8], nan: &str, inf: &str, raw: &mut Vec<String>) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut i, mut in_str) = (0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_str {
            if b == b'\\' && bytes.get(i + 1) == Some(&b'u') {
                if let Some(u) = hex4(bytes, i + 2)
                    && (0xD800..0xE000).contains(&u)
                {
                    let paired = u < 0xDC00
                        && bytes.get(i + 6) == Some(&b'\\')
                        && bytes.get(i + 7) == Some(&b'u')
                        && hex4(bytes, i + 8).is_some_and(|l| (0xDC00..0xE000).contains(&l));
                    if paired {
                        out.extend_from_slice(&bytes[i..i + 12]);
                        i += 12;
                    } else {
                        raw.push(String::from_utf8_lossy(&bytes[i..i + 6]).into_owned());
                        out.extend_from_slice(b"\\ufffd");
                        i += 6;
                    }
                    continue;
                }
                out.extend_from_slice(&bytes[i..(i + 2).min(bytes.len())]);
                i += 2;
                continue;
            }
            if b == b'\\' {
                out.extend_from_slice(&bytes[i..(i + 2).min(bytes.len())]);
                i += 2;
                continue;
            }
            if b == b'"' {
                in_str = false;
            }
            out.push(b);
            i += 1;
            continue;
        }
        let rest = &bytes[i..];
        if b == b'"' {
            in_str = true;
        } else if rest.starts_with(b"NaN") {
            raw.push("NaN".into());
            out.extend_from_slice(nan.as_bytes());
            i += 3;
            continue;
        } else if rest.starts_with(b"Infinity") {
            raw.push("Infinity".into());
            out.extend_from_slice(inf.as_bytes());
            i += 8;
            continue;
        } else if rest.starts_with(b"-Infinity") {
            raw.push("-Infinity".into());
            if inf != "null" {
                out.push(b'-');
            }
            out.extend_from_slice(inf.as_bytes());
            i += 9;
            continue;
        }
        out.push(b);
        i += 1;
    }
    out
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let s = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_finite_numbers() {
        let v = loads(br#"{"c": NaN, "l": [Infinity, -Infinity], "s": "NaN"}"#).unwrap();
        assert_eq!(v.value, json!({"c": null, "l": [null, null], "s": "NaN"}));
        assert_eq!(sentinel(&v.checked["c"]).map(f64::is_nan), Some(true));
        assert_eq!(sentinel(&v.checked["l"][0]), Some(f64::INFINITY));
        assert_eq!(sentinel(&v.checked["l"][1]), Some(f64::NEG_INFINITY));
        assert_eq!(v.checked["s"], json!("NaN"));
        assert_eq!(v.raw, ["NaN", "Infinity", "-Infinity"]);
    }

    #[test]
    fn lone_surrogates_but_not_pairs() {
        let v = loads(br#"{"a": "x\ud800y", "b": "\ud83d\ude00", "c": "\udc00"}"#).unwrap();
        assert_eq!(v.value, json!({"a": "x\u{fffd}y", "b": "😀", "c": "\u{fffd}"}));
        assert_eq!(v.raw, ["\\ud800", "\\udc00"]);
    }

    #[test]
    fn depth_to_pythons_limit() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let at_limit = deep(PY_MAX_DEPTH);
        let parsed = with_stack(at_limit.as_bytes(), || loads(at_limit.as_bytes()).is_ok());
        assert_eq!(parsed, Some(true));
        // Kept, handed back and dropped on this (2 MiB test) thread.
        let a = crate::output::jsonl::analyse(at_limit.as_bytes(), None);
        assert_eq!(a.items.len(), 1);
        drop(a);
        assert_eq!(
            loads_to(deep(PY_MAX_DEPTH + 1).as_bytes(), PY_MAX_DEPTH),
            Err(PyRefusal::TooDeep(PY_MAX_DEPTH + 1))
        );
        // TrustGraph's default runtime (3.13) nests to 9994.
        let deeper = deep(5000);
        let parsed = with_stack(deeper.as_bytes(), || loads(deeper.as_bytes()).is_ok());
        assert_eq!(parsed, Some(true));
        assert_eq!(loads(deep(9995).as_bytes()), Err(PyRefusal::TooDeep(9995)));
        assert_eq!(loads(b"{\"a\": nope}"), Err(PyRefusal::Invalid));
    }
}
