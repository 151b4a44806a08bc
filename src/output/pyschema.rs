//! A schema read as Python's `jsonschema` 4.x reads it in TrustGraph's
//! `validate(instance, schema)`:
//! - the draft is `$schema`'s when it names one exactly (`http://` for
//!   drafts 3–7, an optional trailing `#`), else 2020-12 (an `https://`
//!   draft-07 URI and unknown dialects included);
//! - `format` is an annotation in every draft (no format checker is passed);
//! - `dependencies` means nothing in 2019-09 and 2020-12;
//! - draft 3 is rewritten into draft 4 (`required: true` in a property,
//!   `divisibleBy`, `extends`), which cutline's validator knows;
//! - `pattern` is Python's `re.search` ([`super::pyre`]); a pattern or a
//!   `patternProperties` key Python cannot compile fails `check_schema`, so
//!   every value is rejected.

use serde_json::{Map, Value, json};

use super::pyre::PyRegex;
use super::schema_error::SchemaCompileError;

/// Python's truthiness of a schema: TrustGraph validates only when the
/// prompt's schema is truthy (`if self.prompts[id].schema:`).
pub fn is_truthy(schema: &Value) -> bool {
    match schema {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_none_or(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The drafts Python's `validator_for` can pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyDraft {
    /// Draft 3 (validated as its draft-4 rewrite).
    D3,
    /// Draft 4.
    D4,
    /// Draft 6.
    D6,
    /// Draft 7.
    D7,
    /// 2019-09.
    D2019,
    /// 2020-12, also for no or an unknown `$schema`.
    D2020,
}

impl PyDraft {
    /// The draft Python picks for `schema`.
    pub fn of(schema: &Value) -> Self {
        let Some(uri) = schema.get("$schema").and_then(Value::as_str) else {
            return Self::D2020;
        };
        match uri.strip_suffix('#').unwrap_or(uri) {
            "http://json-schema.org/draft-03/schema" => Self::D3,
            "http://json-schema.org/draft-04/schema" => Self::D4,
            "http://json-schema.org/draft-06/schema" => Self::D6,
            "http://json-schema.org/draft-07/schema" => Self::D7,
            "https://json-schema.org/draft/2019-09/schema" => Self::D2019,
            _ => Self::D2020,
        }
    }

    fn uri(self) -> &'static str {
        match self {
            Self::D3 | Self::D4 => "http://json-schema.org/draft-04/schema#",
            Self::D6 => "http://json-schema.org/draft-06/schema#",
            Self::D7 => "http://json-schema.org/draft-07/schema#",
            Self::D2019 => "https://json-schema.org/draft/2019-09/schema",
            Self::D2020 => "https://json-schema.org/draft/2020-12/schema",
        }
    }
}

const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
const SCHEMA_LISTS: [&str; 5] = ["allOf", "anyOf", "oneOf", "prefixItems", "extends"];
const SCHEMA_ONES: [&str; 12] = [
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "items",
    "extends",
];

/// Visit every subschema (objects only) with its JSON pointer.
fn walk_mut(schema: &mut Value, pointer: &str, f: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
    let Value::Object(obj) = schema else {
        return;
    };
    f(obj, pointer);
    for (key, sub) in obj.iter_mut() {
        let at = format!("{pointer}/{key}");
        match sub {
            Value::Object(map) if SCHEMA_MAPS.contains(&key.as_str()) => {
                for (name, s) in map.iter_mut() {
                    walk_mut(s, &format!("{at}/{name}"), f);
                }
            }
            Value::Object(map) if key == "dependencies" => {
                for (name, s) in map.iter_mut() {
                    walk_mut(s, &format!("{at}/{name}"), f);
                }
            }
            Value::Array(list) if SCHEMA_LISTS.contains(&key.as_str()) || key == "items" => {
                for (n, s) in list.iter_mut().enumerate() {
                    walk_mut(s, &format!("{at}/{n}"), f);
                }
            }
            s if SCHEMA_ONES.contains(&key.as_str()) => walk_mut(s, &at, f),
            _ => {}
        }
    }
}

/// The schema cutline's validator gets, and its draft.
pub fn prepare(schema: &Value) -> Result<(Value, PyDraft), SchemaCompileError> {
    let draft = PyDraft::of(schema);
    let mut out = super::pyjson::python_schema_floats(schema).unwrap_or_else(|| schema.clone());
    let unevaluated = draft == PyDraft::D2019 && schema.to_string().contains("\"unevaluatedProperties\"");
    let mut refused: Option<SchemaCompileError> = None;
    walk_mut(&mut out, "", &mut |obj, pointer| {
        if refused.is_some() {
            return;
        }
        let mut check = |p: &str, at: String| {
            if let Err(e) = PyRegex::new(p) {
                refused = Some(SchemaCompileError {
                    pointer: at,
                    message: e.to_string(),
                });
            }
        };
        if let Some(Value::String(p)) = obj.get("pattern") {
            check(p, format!("{pointer}/pattern"));
        }
        if let Some(Value::Object(pp)) = obj.get("patternProperties") {
            for p in pp.keys() {
                check(p, format!("{pointer}/patternProperties"));
            }
        }
        if let Some(Value::Object(pp)) = obj.get_mut("patternProperties") {
            let keyed = std::mem::take(pp);
            *pp = keyed.into_iter().map(|(k, v)| (ecma_anchors(&k), v)).collect();
        }
        if matches!(draft, PyDraft::D2019 | PyDraft::D2020) {
            obj.remove("dependencies");
        }
        // Python's jsonschema asserts no content keyword in any draft.
        for k in ["contentMediaType", "contentEncoding", "contentSchema"] {
            obj.remove(k);
        }
        if draft == PyDraft::D3 {
            draft3_to_4(obj);
        }
        if unevaluated {
            hide_additional(obj);
        }
    });
    if let Some(e) = refused {
        return Err(e);
    }
    if let Value::Object(obj) = &mut out {
        obj.insert("$schema".into(), json!(draft.uri()));
    }
    Ok((out, draft))
}

/// A `patternProperties` key, left to the validator's ECMA-262 engine, with
/// Python's end anchors (`$` also before a final newline, `\Z` the end) and
/// Python's Unicode classes: `\w` is `str.isalnum()` or `_`, `\d` is `Nd`
/// (the engine's own are ASCII). `\W` inside a class stays ASCII.
fn ecma_anchors(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 8);
    let (mut in_class, mut chars) = (false, p.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('Z') if !in_class => out.push('$'),
                Some('w') if in_class => out.push_str(r"\p{L}\p{N}_"),
                Some('w') => out.push_str(r"[\p{L}\p{N}_]"),
                Some('W') if !in_class => out.push_str(r"[^\p{L}\p{N}_]"),
                Some('d') => out.push_str(r"\p{Nd}"),
                Some('D') => out.push_str(r"\P{Nd}"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '[' => {
                in_class = true;
                out.push(c);
            }
            ']' => {
                in_class = false;
                out.push(c);
            }
            '$' if !in_class => out.push_str("(?=\\n?$)"),
            c => out.push(c),
        }
    }
    out
}

/// Draft 3's own keywords in draft 4's words, for one schema object.
fn draft3_to_4(obj: &mut Map<String, Value>) {
    if let Some(d) = obj.remove("divisibleBy") {
        obj.insert("multipleOf".into(), d);
    }
    if let Some(e) = obj.remove("extends") {
        let list = match e {
            Value::Array(a) => a,
            one => vec![one],
        };
        obj.insert("allOf".into(), Value::Array(list));
    }
    if obj.get("required").is_some_and(Value::is_boolean) {
        obj.remove("required");
    }
    if let Some(Value::Object(props)) = obj.get("properties") {
        let required: Vec<Value> = props
            .iter()
            .filter(|(_, p)| p.get("required") == Some(&Value::Bool(true)))
            .map(|(k, _)| Value::String(k.clone()))
            .collect();
        if !required.is_empty() {
            obj.insert("required".into(), Value::Array(required));
        }
    }
    if obj.get("type") == Some(&json!("any")) {
        obj.remove("type");
    }
    // A union naming schemas: any one of its members.
    if let Some(types) = obj
        .get("type")
        .filter(|t| t.is_object() || t.as_array().is_some_and(|a| a.iter().any(Value::is_object)))
    {
        let members = draft3_members(types);
        obj.remove("type");
        push_all_of(obj, json!({ "anyOf": members }));
    }
    if let Some(d) = obj.remove("disallow") {
        push_all_of(obj, json!({ "not": { "anyOf": draft3_members(&d) } }));
    }
    // A string dependency names one property.
    if let Some(Value::Object(deps)) = obj.get_mut("dependencies") {
        for v in deps.values_mut() {
            if v.is_string() {
                *v = Value::Array(vec![v.take()]);
            }
        }
    }
    // `items: []` checks no position: what follows is `additionalItems`.
    if obj
        .get("items")
        .is_some_and(|i| i.as_array().is_some_and(Vec::is_empty))
    {
        obj.remove("items");
        match obj.remove("additionalItems") {
            Some(Value::Bool(false)) => {
                obj.insert("items".into(), json!({ "not": {} }));
            }
            Some(Value::Object(rest)) => {
                obj.insert("items".into(), Value::Object(rest));
            }
            _ => {}
        }
    }
}

/// Marks the copy [`hide_additional`] makes, so the walk leaves it be.
const HIDDEN: &str = "cutline: additionalProperties as Python's 2019-09 unevaluatedProperties counts it";

/// Python's 2019-09 `unevaluatedProperties` counts as evaluated by a
/// schema-valued `additionalProperties` only the instance's properties
/// named like the keys of that schema (`type`, `minLength`…), not every
/// additional property. So the keyword is validated where evaluation is
/// not seen (`not: {not: …}` beside the object's own `properties` and
/// `patternProperties`, which keep it meaning the same), and those names
/// are listed in `properties` as evaluated.
fn hide_additional(obj: &mut Map<String, Value>) {
    if obj.get("$comment").and_then(Value::as_str) == Some(HIDDEN) {
        return;
    }
    let Some(Value::Object(additional)) = obj.get("additionalProperties") else {
        return;
    };
    let names: Vec<String> = additional.keys().cloned().collect();
    let blank = |key: &str| -> Value {
        let keys = obj
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys());
        Value::Object(keys.map(|k| (k.clone(), json!({}))).collect())
    };
    let hidden = json!({
        "$comment": HIDDEN,
        "properties": blank("properties"),
        "patternProperties": blank("patternProperties"),
        "additionalProperties": obj.remove("additionalProperties"),
    });
    push_all_of(obj, json!({ "not": { "not": hidden } }));
    if let Value::Object(props) = obj.entry("properties").or_insert_with(|| json!({})) {
        for name in names {
            props.entry(name).or_insert_with(|| json!({}));
        }
    }
}

/// Draft 3's type union (or `disallow`) as schemas: a type name, `any`,
/// or a schema.
fn draft3_members(types: &Value) -> Vec<Value> {
    let list = match types {
        Value::Array(a) => a.clone(),
        one => vec![one.clone()],
    };
    list.into_iter()
        .map(|t| match t {
            Value::String(name) if name == "any" => json!({}),
            Value::String(name) => json!({ "type": name }),
            schema => schema,
        })
        .collect()
}

/// Add `schema` to the object's `allOf` (draft 3 has none of its own).
fn push_all_of(obj: &mut Map<String, Value>, schema: Value) {
    match obj.get_mut("allOf") {
        Some(Value::Array(list)) => list.push(schema),
        _ => {
            obj.insert("allOf".into(), Value::Array(vec![schema]));
        }
    }
}

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
