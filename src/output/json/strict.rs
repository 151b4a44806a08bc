//! The strict verdict: what TrustGraph's `json.loads` and `validate` make of
//! the response, all or nothing.

use serde::de::IgnoredAny;
use serde_json::Value;

use super::{JsonSchemas, JsonStatus, ParseStop, strict_region_bytes, strip_position};
use crate::output::position::{line_col, offset_of};
use crate::output::schema::Violation;

/// The strict parse and validation of a whole response.
#[derive(Debug)]
pub(super) struct Strict {
    pub status: JsonStatus,
    pub value: Option<Value>,
    pub error: Option<ParseStop>,
    pub violations: Vec<Violation>,
    pub not_standard: Vec<String>,
}

/// Parse the strict region (see [`strict_region_bytes`]) and validate it.
/// What `serde_json` rejects and Python's `json.loads` accepts (`NaN`, lone
/// surrogates) is read as Python reads it.
pub(super) fn verdict(bytes: &[u8], schemas: &JsonSchemas) -> Strict {
    let region = strict_region_bytes(bytes);
    let strict = &bytes[region.clone()];
    let judged = |value: Value, checked: Option<&Value>, not_standard: Vec<String>| {
        let violations = match schemas.whole.as_ref().map(|s| s.validate(checked.unwrap_or(&value))) {
            Some(Err(errs)) => errs,
            _ => Vec::new(),
        };
        Strict {
            status: if violations.is_empty() {
                JsonStatus::Ok
            } else {
                JsonStatus::SchemaInvalid
            },
            value: Some(value),
            error: None,
            violations,
            not_standard,
        }
    };
    // A cut response is told without building its value: a value tree of
    // a cut 300 MB array is gigabytes, and Python's `json.loads` accepts no
    // text that JSON's grammar finds cut short.
    if let Err(e) = serde_json::from_slice::<IgnoredAny>(strict)
        && e.is_eof()
    {
        return invalid(bytes, region, &e);
    }
    match serde_json::from_slice::<Value>(strict) {
        Ok(v) => {
            let checked = crate::output::pyjson::python_checked(strict, &v);
            judged(v, checked.as_ref(), Vec::new())
        }
        Err(e) => match crate::output::pyjson::with_stack(strict, || crate::output::pyjson::loads(strict)) {
            Some(Ok(p)) => judged(p.value, Some(&p.checked), p.raw),
            _ => invalid(bytes, region, &e),
        },
    }
}

fn invalid(bytes: &[u8], region: std::ops::Range<usize>, e: &serde_json::Error) -> Strict {
    Strict {
        status: JsonStatus::InvalidJson,
        value: None,
        error: Some(parse_stop(bytes, region, e)),
        violations: Vec::new(),
        not_standard: Vec::new(),
    }
}

fn parse_stop(bytes: &[u8], region: std::ops::Range<usize>, e: &serde_json::Error) -> ParseStop {
    let at = if e.is_eof() {
        region.end
    } else {
        region.start + offset_of(&bytes[region.clone()], e.line(), e.column())
    };
    let (line, column) = line_col(bytes, at);
    ParseStop {
        line,
        column,
        truncated: e.is_eof(),
        message: strip_position(&e.to_string()),
    }
}
