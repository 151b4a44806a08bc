//! One line's verdict: what `json.loads` (for the runtime) and the schema
//! make of the body TrustGraph hands it, in Python's order of failures.

use serde_json::Value;

use super::{FENCE_REMNANT, LinePlace, LineStatus, is_tag_word, line_body};
use crate::output::json::strip_position;
use crate::output::pyscan::{self, PyScan};
use crate::output::scan;
use crate::output::schema::CompiledSchema;
use crate::output::tg::TgPython;

/// A line as the text TrustGraph receives: invalid UTF-8 replaced with
/// U+FFFD (the LLM client decodes the answer before the prompt manager sees
/// it), with the 1-based column of the first invalid byte.
pub(super) fn as_text(line: &[u8]) -> (std::borrow::Cow<'_, [u8]>, Option<usize>) {
    match std::str::from_utf8(line) {
        Ok(_) => (std::borrow::Cow::Borrowed(line), None),
        Err(e) => {
            let column = crate::output::position::line_col(line, e.valid_up_to()).1;
            let text = String::from_utf8_lossy(line).into_owned().into_bytes();
            (std::borrow::Cow::Owned(text), Some(column))
        }
    }
}

/// The warning for a line judged with U+FFFD in place of invalid UTF-8
/// (the `json` path's wording), `label` naming the response.
pub fn utf8_warning(label: &str, outcome: &super::LineOutcome) -> Option<String> {
    outcome.invalid_utf8.map(|column| {
        format!(
            "{label}:{}:{column}: invalid UTF-8; replaced with U+FFFD for the JSON parse",
            outcome.line
        )
    })
}

/// Whether the reference keeps `value`: it parses, and `schema` accepts it.
/// The fast path of [`judge_line_at`]: no messages, nothing kept.
pub fn value_ok(value: &[u8], schema: Option<&CompiledSchema>) -> bool {
    value_ok_py(value, schema, TgPython::default())
}

/// [`value_ok`] on a chosen runtime.
pub fn value_ok_py(value: &[u8], schema: Option<&CompiledSchema>, py: TgPython) -> bool {
    if let Some(ok) = container_ok(value, schema, py) {
        return ok;
    }
    if let Ok(v) = serde_json::from_slice::<Value>(value)
        && !pyscan::has_long_digit_run(value)
    {
        let checked = crate::output::pyjson::python_checked(value, &v);
        return schema.is_none_or(|s| s.is_valid(checked.as_ref().unwrap_or(&v)));
    }
    if pyscan::scan(value, py.json_max_depth()) != PyScan::Ok {
        return false;
    }
    crate::output::pyjson::with_stack(value, || match serde_json::from_slice::<Value>(value) {
        Ok(v) => schema.is_none_or(|s| s.is_valid(&v)),
        Err(_) => crate::output::pyjson::loads_to(value, py.json_max_depth())
            .is_ok_and(|p| schema.is_none_or(|s| s.is_valid(&p.checked))),
    })
    .unwrap_or(false)
}

/// [`value_ok_py`] for an array or object under no schema or one that
/// never looks inside it: Python's acceptance from a scan and the schema's
/// verdict from the root's kind and length, so no value tree is built (a
/// line of 200,000 `{"a":1}` would cost ~120 MB as one; issue 37).
/// `None` when the value or the schema needs the tree.
fn container_ok(value: &[u8], schema: Option<&CompiledSchema>, py: TgPython) -> Option<bool> {
    let first = *value.get(scan::skip_ws(value, 0))?;
    if first != b'[' && first != b'{' {
        return None;
    }
    let rule = match schema {
        None => None,
        Some(s) => Some(s.root_only()?),
    };
    if pyscan::scan(value, py.json_max_depth()) != PyScan::Ok {
        return Some(false);
    }
    Some(rule.is_none_or(|r| {
        if first == b'[' {
            r.admits_array(scan::top_level_len(value))
        } else {
            r.admits_object()
        }
    }))
}

/// Whether [`judge_line_at`] would keep the line.
pub fn line_ok(line: &[u8], place: LinePlace, schema: Option<&CompiledSchema>) -> bool {
    line_body(line, place).is_ok_and(|(body, ..)| value_ok(body, schema))
}

/// Judge one line, knowing where it sits in the response.
pub fn judge_line_at(
    line: &[u8],
    place: LinePlace,
    terminated: bool,
    schema: Option<&CompiledSchema>,
    next_item: usize,
) -> (LineStatus, Option<Value>) {
    let j = judge_full(line, place, terminated, schema, next_item, TgPython::default());
    (j.status, j.value)
}

/// One line's full verdict.
pub(super) struct Judged {
    pub(super) status: LineStatus,
    pub(super) value: Option<Value>,
    pub(super) not_standard: Vec<String>,
    pub(super) too_deep_to_log: Option<usize>,
}

impl Judged {
    fn plain(status: LineStatus) -> Self {
        Self {
            status,
            value: None,
            not_standard: Vec::new(),
            too_deep_to_log: None,
        }
    }
}

/// [`judge_line_at`], plus the tokens only Python accepts and whether a
/// rejected value is too deep for TrustGraph's warning.
pub(super) fn judge_full(
    line: &[u8],
    place: LinePlace,
    terminated: bool,
    schema: Option<&CompiledSchema>,
    next_item: usize,
    py: TgPython,
) -> Judged {
    let (body, lead, clipped) = match line_body(line, place) {
        Ok(b) => b,
        Err(skipped) => return Judged::plain(skipped),
    };
    let judged = |value: Value, checked: Option<&Value>, not_standard: Vec<String>| {
        let checked = checked.unwrap_or(&value);
        match schema.map(|s| (s, s.validate(checked))) {
            Some((s, Err(errors))) => Judged {
                status: LineStatus::SchemaInvalid { errors },
                value: None,
                not_standard,
                too_deep_to_log: py.rejection_raises(checked, s),
            },
            _ => Judged {
                status: LineStatus::Ok { item: next_item },
                value: Some(value),
                not_standard,
                too_deep_to_log: None,
            },
        }
    };
    let serde = serde_json::from_slice::<Value>(body);
    let long_digits = pyscan::has_long_digit_run(body);
    // Floats are validated as the binary floats Python holds (`1e400` as
    // infinity, `1e-400` as 0.0).
    let plain = |value: Value| {
        let checked = crate::output::pyjson::python_checked(body, &value);
        judged(value, checked.as_ref(), Vec::new())
    };
    let serde = match serde {
        Ok(value) if !long_digits => return plain(value),
        other => other,
    };
    let off = body.as_ptr() as usize - line.as_ptr() as usize;
    let column_at = |at: usize| crate::output::position::line_col(line, off + at.min(body.len())).1;
    let at = match python_stop(pyscan::scan(body, py.json_max_depth()), py, column_at) {
        Python::Raises(judged) => return judged,
        Python::Refuses(at) => at,
        Python::Reads => {
            if let Ok(value) = serde {
                return plain(value);
            }
            let kept = crate::output::pyjson::with_stack(body, || {
                crate::output::pyjson::loads_to(body, py.json_max_depth())
                    .ok()
                    .map(|p| judged(p.value, Some(&p.checked), p.raw))
            });
            if let Some(Some(j)) = kept {
                return j;
            }
            body.len()
        }
    };
    invalid(line, body, &serde, at, lead && is_tag_word(body), terminated || clipped)
}

/// What Python's `json.loads` does with a line `serde_json` does not take
/// as it is.
enum Python {
    /// It reads it.
    Reads,
    /// It refuses it with a `JSONDecodeError` at this byte.
    Refuses(usize),
    /// It raises what `parse_jsonl` does not catch, so the whole response
    /// fails there: the line's verdict.
    Raises(Judged),
}

/// What Python makes of a line, from its scan.
fn python_stop(scan: PyScan, py: TgPython, column_at: impl Fn(usize) -> usize) -> Python {
    match scan {
        PyScan::Ok => Python::Reads,
        PyScan::IntDigits { at, digits } => {
            let message = format!(
                "an integer of {digits} digits: Python's json.loads raises ValueError (limit 4300 digits), which \
                 parse_jsonl does not catch, so the whole response fails there"
            );
            Python::Raises(Judged::plain(LineStatus::IntTooLong {
                column: column_at(at),
                digits,
                message,
            }))
        }
        PyScan::TooDeep { at, depth } => {
            let message = format!(
                "nesting depth {depth} is past Python {}'s limit ({}): TrustGraph's json.loads raises \
                 RecursionError, which parse_jsonl does not catch, so the whole response fails there",
                py.as_str(),
                py.json_max_depth()
            );
            Python::Raises(Judged::plain(LineStatus::TooDeep {
                column: column_at(at),
                depth,
                message,
            }))
        }
        PyScan::Decode {
            at,
            depth,
            expecting_value,
        } if py.decode_raises(depth, expecting_value) => {
            let message = format!(
                "a syntax error {depth} containers deep: on Python {} raising JSONDecodeError that deep raises \
                 RecursionError, which parse_jsonl does not catch, so the whole response fails there",
                py.as_str()
            );
            Python::Raises(Judged::plain(LineStatus::TooDeep {
                column: column_at(at),
                depth,
                message,
            }))
        }
        PyScan::Decode { at, .. } => Python::Refuses(at),
    }
}

/// A line `json.loads` refuses with `JSONDecodeError` at byte `at` of
/// `body`: `invalid_json`, or `truncated` when it ran out (`closed` when a
/// `\n` or a clipped fence ended it).
fn invalid(
    line: &[u8],
    body: &[u8],
    serde: &Result<Value, serde_json::Error>,
    at: usize,
    remnant: bool,
    closed: bool,
) -> Judged {
    let off = body.as_ptr() as usize - line.as_ptr() as usize;
    let mut message = match serde {
        Err(e) => strip_position(&e.to_string()),
        Ok(_) => "Python's json.loads refuses this line".to_owned(),
    };
    if remnant {
        message.push_str(FENCE_REMNANT);
    }
    // serde_json's stop, as cutline has always reported it (Python names
    // an unterminated string by its opening quote), else Python's.
    let (stop, eof) = match serde {
        Err(e) if e.is_eof() => (body.len(), true),
        Err(e) => (e.column().saturating_sub(1), false),
        Ok(_) => (at, at >= body.len()),
    };
    let column = crate::output::position::line_col(line, off + stop.min(body.len())).1;
    if eof && !closed {
        Judged::plain(LineStatus::Truncated { column, message })
    } else {
        Judged::plain(LineStatus::InvalidJson { column, message })
    }
}
