//! Values written as Python writes them, which is what ibis prints: a
//! template's `{{ flag }}` is `True`, `{{ none }}` is `None`, a list is
//! `['a', 1]`.

use std::fmt::Write as _;

use minijinja::value::ValueKind;

/// A value as Python's `str()` writes it, which is what ibis prints.
pub(crate) fn py_str(out: &mut String, v: &minijinja::Value) {
    match v.kind() {
        ValueKind::String => out.push_str(v.as_str().unwrap_or_default()),
        _ => py_repr(out, v),
    }
}

/// A value as Python's `repr()` writes it (inside lists and dicts).
pub(crate) fn py_repr(out: &mut String, v: &minijinja::Value) {
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if v.is_true() { "True" } else { "False" }),
        ValueKind::String => py_repr_str(out, v.as_str().unwrap_or_default()),
        ValueKind::Number if !v.is_integer() => match f64::try_from(v.clone()) {
            Ok(f) => py_float(out, f),
            Err(_) => out.push_str(&v.to_string()),
        },
        ValueKind::Seq | ValueKind::Iterable => {
            out.push('[');
            for (i, item) in v.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr(out, &item);
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push('{');
            for (i, k) in v.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr(out, &k);
                out.push_str(": ");
                py_repr(out, &v.get_item(&k).unwrap_or_default());
            }
            out.push('}');
        }
        _ => out.push_str(&v.to_string()),
    }
}

/// Python's float repr: `1.0`, `1e+20`, `1e-05`, `inf`, `nan`.
fn py_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("nan");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
    } else if f != 0.0 && (f.abs() >= 1e16 || f.abs() < 1e-4) {
        let s = format!("{f:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = exp.strip_prefix('-').map_or(("+", exp), |d| ("-", d));
        let _ = write!(out, "{mantissa}e{sign}{digits:0>2}");
    } else if f.fract() == 0.0 {
        let _ = write!(out, "{f:.1}");
    } else {
        let _ = write!(out, "{f}");
    }
}

/// Python's string repr: single quotes unless the text has `'` and no `"`.
fn py_repr_str(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}
