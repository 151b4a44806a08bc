//! The keywords cutline's validator reads as Python's `jsonschema` 4.26
//! does (`pattern` over Python's `re`, the bounds over Python's non-finite
//! numbers, `multipleOf`'s arithmetic), and the options a schema prepared
//! by [`super::pyschema`] is compiled with: its draft, no format
//! assertions, and every draft's metaschema for a `$ref` to one.

use serde_json::{Map, Value, json};

use super::pyre::PyRegex;
use super::pyschema::{PyDraft, prepare};

/// The `pattern` keyword with Python's `re.search`.
struct PyPattern(PyRegex);

impl<'i> jsonschema::Keyword<'i> for PyPattern {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        if self.is_valid(instance) {
            Ok(())
        } else {
            Err(jsonschema::ValidationError::custom(format!(
                "{instance} does not match the pattern (Python's re.search)"
            )))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        instance.as_str().is_none_or(|s| self.0.search(s))
    }
}

/// A bounds keyword (`minimum`, `maximum`, `exclusiveMinimum`,
/// `exclusiveMaximum`) as Python compares: NaN passes every bound, ±inf
/// passes the bounds on its other side; finite numbers are left to the
/// built-in keyword (`inner`).
struct PyBound {
    inner: jsonschema::Validator,
    upper: bool,
}

impl<'i> jsonschema::Keyword<'i> for PyBound {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        if self.is_valid(instance) {
            return Ok(());
        }
        let message = match super::pyjson::sentinel(instance) {
            Some(f) => format!("{f} is out of bounds"),
            None => self
                .inner
                .iter_errors(instance)
                .next()
                .map_or_else(|| "out of bounds".to_owned(), |e| e.to_string()),
        };
        Err(jsonschema::ValidationError::custom(message))
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        match super::pyjson::sentinel(instance) {
            Some(f) if f.is_nan() => true,
            Some(f) => (f < 0.0) == self.upper,
            None => self.inner.is_valid(instance),
        }
    }
}

/// `multipleOf` as Python's `jsonschema` 4.26 computes it: a float divisor
/// divides in binary floating point (`int(q) != q`, exact `Fraction`s when
/// the quotient overflows), an integer divisor takes `instance % divisor`
/// (exact for integers, a float's remainder otherwise); NaN and ±inf are a
/// multiple of nothing, and an integer too large for a float fails a float
/// divisor (Python raises `OverflowError`, which TrustGraph counts as a
/// failed validation).
struct PyMultipleOf {
    /// The divisor as Python holds it, and whether it is a float.
    divisor: f64,
    float: bool,
    /// The built-in keyword, exact, for an integer over an integer.
    exact: jsonschema::Validator,
}

impl PyMultipleOf {
    fn new(value: &Value, draft: PyDraft) -> Result<Self, jsonschema::ValidationError<'static>> {
        let Value::Number(n) = value else {
            return Err(jsonschema::ValidationError::custom("multipleOf is not a number"));
        };
        let exact = jsonschema::options()
            .with_draft(draft_of(draft))
            .build(&json!({ "multipleOf": value }))
            .map_err(|e| jsonschema::ValidationError::custom(e.to_string()))?;
        Ok(Self {
            divisor: n.as_str().parse().unwrap_or(f64::INFINITY),
            float: is_float(n),
            exact,
        })
    }
}

fn is_float(n: &serde_json::Number) -> bool {
    n.as_str().contains(['.', 'e', 'E'])
}

/// Whether `value / divisor` is an integer, exactly (both finite, the
/// divisor not 0): with `value = a·2^p` and `divisor = b·2^r`, `a` and `b`
/// odd, it is when `b` divides `a` and `p ≥ r`.
fn exact_multiple(value: f64, divisor: f64) -> bool {
    fn odd_parts(f: f64) -> (u64, i64) {
        let bits = f.abs().to_bits();
        let exp = i64::try_from((bits >> 52) & 0x7ff).unwrap_or(0);
        let frac = bits & ((1 << 52) - 1);
        let (mantissa, power) = if exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), exp - 1075)
        };
        let zeros = mantissa.trailing_zeros();
        (mantissa >> zeros, power + i64::from(zeros))
    }
    if value == 0.0 {
        return true;
    }
    let ((odd, power), (odd_divisor, divisor_power)) = (odd_parts(value), odd_parts(divisor));
    odd % odd_divisor == 0 && power >= divisor_power
}

impl<'i> jsonschema::Keyword<'i> for PyMultipleOf {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        if self.is_valid(instance) {
            Ok(())
        } else {
            Err(jsonschema::ValidationError::custom(format!(
                "{instance} is not a multiple of {}",
                self.divisor
            )))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        let Value::Number(n) = instance else {
            return true;
        };
        if super::pyjson::sentinel(instance).is_some() {
            return false;
        }
        let x: f64 = n.as_str().parse().unwrap_or(f64::INFINITY);
        if !self.float {
            return if is_float(n) {
                self.divisor.is_finite() && x % self.divisor == 0.0
            } else {
                self.exact.is_valid(instance)
            };
        }
        if x.is_infinite() {
            return false;
        }
        let q = x / self.divisor;
        if q.is_infinite() {
            exact_multiple(x, self.divisor)
        } else {
            q.fract() == 0.0
        }
    }
}

fn draft_of(d: PyDraft) -> jsonschema::Draft {
    match d {
        PyDraft::D3 | PyDraft::D4 => jsonschema::Draft::Draft4,
        PyDraft::D6 => jsonschema::Draft::Draft6,
        PyDraft::D7 => jsonschema::Draft::Draft7,
        PyDraft::D2019 => jsonschema::Draft::Draft201909,
        PyDraft::D2020 => jsonschema::Draft::Draft202012,
    }
}

/// Every draft's metaschema, as Python's `jsonschema` bundles them, for a
/// `$ref` to one from a schema of another draft: jsonschema-rs's own
/// (drafts 4 to 2020-12) and draft 3's (the copy `jsonschema` 4.26 ships,
/// read as its draft-4 rewrite).
fn metaschemas() -> &'static jsonschema::Registry<'static> {
    static WITH_DRAFT3: std::sync::LazyLock<Option<jsonschema::Registry<'static>>> = std::sync::LazyLock::new(|| {
        let draft3: Value = serde_json::from_str(include_str!("draft3_metaschema.json")).ok()?;
        let (prepared, _) = prepare(&draft3).ok()?;
        let resource = jsonschema::Draft::Draft4.create_resource(prepared);
        referencing::SPECIFICATIONS
            .add("http://json-schema.org/draft-03/schema", resource)
            .ok()?
            .prepare()
            .ok()
    });
    WITH_DRAFT3.as_ref().unwrap_or(&referencing::SPECIFICATIONS)
}

/// Validator options with Python's semantics for `draft`: no format
/// assertions, `pattern` as Python's `re`, bounds as Python compares
/// non-finite numbers.
pub fn options(draft: PyDraft) -> jsonschema::ValidationOptions<'static> {
    let opts = jsonschema::options()
        .with_draft(draft_of(draft))
        .with_registry(metaschemas())
        .should_validate_formats(false);
    bounds(opts, draft)
        .with_keyword("multipleOf", move |_parent, value, _path| {
            Ok(Box::new(PyMultipleOf::new(value, draft)?))
        })
        .with_keyword("pattern", |_parent, value, _path| {
            let p = value
                .as_str()
                .ok_or_else(|| jsonschema::ValidationError::custom("pattern is not a string"))?;
            let regex = PyRegex::new(p).map_err(|e| jsonschema::ValidationError::custom(e.to_string()))?;
            Ok(Box::new(PyPattern(regex)))
        })
}

/// `opts` with the bounds keywords reading the non-finite sentinels as
/// Python compares ([`PyBound`]); cutline's own reading of a schema takes
/// them too, as every checked value carries the sentinels.
pub fn bounds(
    mut opts: jsonschema::ValidationOptions<'static>,
    draft: PyDraft,
) -> jsonschema::ValidationOptions<'static> {
    for (name, upper) in [
        ("minimum", false),
        ("exclusiveMinimum", false),
        ("maximum", true),
        ("exclusiveMaximum", true),
    ] {
        opts = opts.with_keyword(name, move |parent, value, _path| {
            let mut inner = Map::new();
            inner.insert(name.to_owned(), value.clone());
            // Draft 4's boolean `exclusiveMaximum` belongs to `maximum`.
            let exclusive = match name {
                "minimum" => Some("exclusiveMinimum"),
                "maximum" => Some("exclusiveMaximum"),
                _ => None,
            };
            // A boolean one is draft 4's, also inside a draft-4 document a
            // later draft's schema refers to (its metaschema).
            let mut inner_draft = draft_of(draft);
            if let Some((e, v)) = exclusive.and_then(|e| parent.get(e).filter(|v| v.is_boolean()).map(|v| (e, v))) {
                inner.insert(e.to_owned(), v.clone());
                inner_draft = jsonschema::Draft::Draft4;
            }
            if value.is_boolean() {
                inner.clear();
            }
            let inner = jsonschema::options()
                .with_draft(inner_draft)
                .build(&Value::Object(inner))
                .map_err(|e| jsonschema::ValidationError::custom(e.to_string()))?;
            Ok(Box::new(PyBound { inner, upper }))
        });
    }
    opts
}
