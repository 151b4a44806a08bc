//! JSON Schema compiled once, with errors a prompt author can act on.
//!
//! Two things the plain validator does not give: a discriminated union
//! (`oneOf` whose branches carry `"type": {"const": …}`) reports the errors of
//! the branch the value's `type` selects, and a required-property error points
//! at the missing property (`/object-entity is required`). The validator is
//! built with jsonschema's default features off, so a remote `$ref` is never
//! fetched: it fails to compile instead.

use serde::Serialize;
use serde_json::Value;

pub use super::schema_error::SchemaCompileError;

/// One way a value fails its schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// JSON pointer into the value (`""` is the value itself).
    pub pointer: String,
    /// What is wrong there, phrased to follow the pointer.
    pub message: String,
    /// The union branch whose rules were applied, when the schema is a
    /// discriminated union.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(branch) = &self.branch {
            write!(f, "{branch}: ")?;
        }
        let at = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "{at} {}", self.message)
    }
}

/// Keywords that say nothing about the value (the whole-array reading in
/// `json/whole.rs` and [`RootOnly`] both skip them).
pub(crate) const ANNOTATIONS: [&str; 8] = [
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "$defs",
    "definitions",
    "examples",
];

/// A schema's whole verdict on an array or object, for a schema that asks
/// only the root's kind and an array's length (see
/// [`CompiledSchema::root_only`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootOnly {
    array: bool,
    object: bool,
    min_items: u64,
    max_items: Option<u64>,
}

impl RootOnly {
    /// Keywords beyond [`ANNOTATIONS`] that say nothing about an array
    /// or object root (`format` asserts on strings only).
    const INERT: [&str; 7] = [
        "id",
        "$anchor",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
    ];

    /// The root-only reading of a compiled (prepared) schema: only the
    /// keywords above, [`ANNOTATIONS`] and `type`/`minItems`/`maxItems`
    /// are allowed, so no `$ref` occurs.
    fn of(schema: &Value) -> Option<Self> {
        let o = match schema {
            Value::Bool(b) => {
                return Some(Self {
                    array: *b,
                    object: *b,
                    min_items: 0,
                    max_items: None,
                });
            }
            Value::Object(o) => o,
            _ => return None,
        };
        let known = |k: &str| {
            ANNOTATIONS.contains(&k) || Self::INERT.contains(&k) || matches!(k, "type" | "minItems" | "maxItems")
        };
        if !o.keys().all(|k| known(k)) {
            return None;
        }
        let (array, object) = match o.get("type") {
            None => (true, true),
            Some(Value::String(t)) => Self::kinds(std::slice::from_ref(t))?,
            Some(Value::Array(ts)) => {
                let names: Option<Vec<String>> = ts.iter().map(|t| t.as_str().map(str::to_owned)).collect();
                Self::kinds(&names?)?
            }
            Some(_) => return None,
        };
        // A bound that is not a plain count (`1.0`, `-1`) is the validator's to read.
        let bound = |k: &str| o.get(k).map(|v| v.as_u64().ok_or(())).transpose();
        Some(Self {
            array,
            object,
            min_items: bound("minItems").ok()?.unwrap_or(0),
            max_items: bound("maxItems").ok()?,
        })
    }

    /// Whether the type names admit an array and an object; `None` for a
    /// name JSON Schema does not define.
    fn kinds(names: &[String]) -> Option<(bool, bool)> {
        const NAMES: [&str; 7] = ["array", "object", "string", "number", "integer", "boolean", "null"];
        names
            .iter()
            .all(|n| NAMES.contains(&n.as_str()))
            .then(|| (names.iter().any(|n| n == "array"), names.iter().any(|n| n == "object")))
    }

    /// The schema's verdict on an array of `len` elements.
    pub fn admits_array(self, len: usize) -> bool {
        let len = u64::try_from(len).unwrap_or(u64::MAX);
        self.array && len >= self.min_items && self.max_items.is_none_or(|m| len <= m)
    }

    /// The schema's verdict on an object (any members).
    pub fn admits_object(self) -> bool {
        self.object
    }
}

struct Branch {
    tag: String,
    validator: jsonschema::Validator,
}

/// A compiled schema. Compile once per prompt and reuse for every value.
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    union: Vec<Branch>,
    source: Value,
    /// What the schema asks of a container root when it looks no deeper.
    root_only: Option<RootOnly>,
    /// Why the schema does not compile, when it is kept anyway to reject
    /// every value as TrustGraph's `validate` does (its `check_schema`
    /// raises `SchemaError` on each call).
    broken: Option<SchemaCompileError>,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Compile `schema`. A schema that is not valid JSON Schema, or that refers
    /// to anything outside itself, is an error with its pointer.
    pub fn compile(schema: &Value) -> Result<Self, SchemaCompileError> {
        Self::compile_in(schema, schema, None)
    }

    /// The schema as TrustGraph's prompt manager applies it, with Python's
    /// `jsonschema` semantics ([`super::pyschema`]): `None` when it is falsy
    /// (`false`, `{}`, `0`, `""`, `[]`, `null`: TrustGraph does not
    /// validate); a schema that does not compile rejects every value, its
    /// error kept ([`CompiledSchema::broken`]).
    pub fn compile_python(schema: &Value) -> Option<Self> {
        if !super::pyschema::is_truthy(schema) {
            return None;
        }
        let compiled = super::pyschema::prepare(schema)
            .and_then(|(prepared, draft)| Self::compile_in(&prepared, schema, Some(draft)));
        Some(compiled.unwrap_or_else(|e| Self {
            validator: jsonschema::validator_for(&Value::Bool(false)).unwrap_or_else(|_| unreachable!()),
            union: Vec::new(),
            source: schema.clone(),
            root_only: None,
            broken: Some(e),
        }))
    }

    fn compile_in(
        schema: &Value,
        source: &Value,
        python: Option<super::pyschema::PyDraft>,
    ) -> Result<Self, SchemaCompileError> {
        let validator = build(schema, python)?;
        let union = union_branches(schema)
            .into_iter()
            .filter_map(|(tag, branch)| {
                let rooted = with_root_defs(schema, branch);
                build(&rooted, python).ok().map(|validator| Branch { tag, validator })
            })
            .collect();
        Ok(Self {
            validator,
            union,
            source: source.clone(),
            root_only: RootOnly::of(schema),
            broken: None,
        })
    }

    /// Why the schema does not compile, for one compiled by
    /// [`CompiledSchema::compile_python`] that rejects every value.
    pub fn broken(&self) -> Option<&SchemaCompileError> {
        self.broken.as_ref()
    }

    /// The part of `value` whose `ValidationError` TrustGraph formats: the
    /// instance of the error nearest the root (what `best_match` prefers).
    pub fn error_instance<'v>(&self, value: &'v Value) -> &'v Value {
        let path = self
            .validator
            .iter_errors(value)
            .map(|e| e.instance_path().as_str().to_owned())
            .min_by_key(|p| p.matches('/').count());
        path.and_then(|p| value.pointer(&p)).unwrap_or(value)
    }

    /// The deepest nesting (see [`super::pyjson::nesting`]) of an
    /// instance that Python's `jsonschema` names in an error message it
    /// builds for `value` (`{instance!r}`: every keyword but `required`,
    /// `const`, `additionalProperties` and the other extras keywords, which
    /// name something else); 0 when there is none.
    pub fn repr_nesting(&self, value: &Value) -> usize {
        use jsonschema::error::ValidationErrorKind as K;
        self.validator
            .iter_errors(value)
            .filter(|e| {
                !matches!(
                    e.kind(),
                    K::AdditionalItems { .. }
                        | K::AdditionalProperties { .. }
                        | K::Constant { .. }
                        | K::Required { .. }
                        | K::UnevaluatedItems { .. }
                        | K::UnevaluatedProperties { .. }
                        | K::PropertyNames { .. }
                )
            })
            .map(|e| super::pyjson::nesting(e.instance()))
            .max()
            .unwrap_or(0)
    }

    /// What the schema asks of an array or object root when its keywords
    /// never look inside it (`{"type": "array", "maxItems": 50}`), so a
    /// value can be judged from its kind and length without its tree;
    /// `None` for any schema that looks deeper.
    pub fn root_only(&self) -> Option<RootOnly> {
        self.root_only
    }

    /// The schema as written.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// The `type` tags of a discriminated union, in schema order; empty when
    /// the schema is not one.
    pub fn union_tags(&self) -> Vec<&str> {
        self.union.iter().map(|b| b.tag.as_str()).collect()
    }

    /// True when `value` satisfies the schema. The fast path.
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Check `value`; on failure, every violation, with union errors narrowed
    /// to the branch the value's `type` selects.
    pub fn validate(&self, value: &Value) -> Result<(), Vec<Violation>> {
        if self.validator.is_valid(value) {
            return Ok(());
        }
        if let Some(e) = &self.broken {
            return Err(vec![Violation {
                pointer: String::new(),
                message: match e.remote() {
                    Some(uri) => format!(
                        "rejected whatever it is: the schema needs {uri}, which cutline never fetches; TrustGraph \
                         fetches it and validates against it, so its verdict may differ ({e})"
                    ),
                    None => format!("rejected whatever it is: TrustGraph's validate raises SchemaError ({e})"),
                },
                branch: None,
            }]);
        }
        if !self.union.is_empty() {
            return Err(self.union_violations(value));
        }
        Err(violations(&self.validator, value, None))
    }

    /// The validator's own violations of `value`, without the union's
    /// branch reading: what validating an array of such values reports for
    /// this one, before its index is put in front of each pointer.
    pub fn plain_violations(&self, value: &Value) -> Vec<Violation> {
        if self.validator.is_valid(value) {
            return Vec::new();
        }
        violations(&self.validator, value, None)
    }

    fn union_violations(&self, value: &Value) -> Vec<Violation> {
        let allowed = || self.union.iter().map(|b| b.tag.as_str()).collect::<Vec<_>>().join(", ");
        let Some(obj) = value.as_object() else {
            return vec![Violation {
                pointer: String::new(),
                message: format!("is {}, not an object", kind_of(value)),
                branch: None,
            }];
        };
        match obj.get("type") {
            None => vec![Violation {
                pointer: "/type".into(),
                message: format!("is required (one of: {})", allowed()),
                branch: None,
            }],
            Some(Value::String(tag)) => match self.union.iter().find(|b| &b.tag == tag) {
                Some(branch) => {
                    let found = violations(&branch.validator, value, Some(tag));
                    if found.is_empty() {
                        // Valid under its own branch, yet the schema rejects
                        // it: the value also matches another `oneOf` branch,
                        // or a keyword beside the union fails. The plain
                        // errors say which.
                        violations(&self.validator, value, None)
                    } else {
                        found
                    }
                }
                None => vec![Violation {
                    pointer: "/type".into(),
                    message: format!("{tag:?} is not one of: {}", allowed()),
                    branch: None,
                }],
            },
            Some(other) => vec![Violation {
                pointer: "/type".into(),
                message: format!("is {}, not a string (one of: {})", kind_of(other), allowed()),
                branch: None,
            }],
        }
    }

    /// The schema of one element of an array schema (its `items`), with the
    /// root's `$defs` carried along so local `$ref`s still resolve.
    pub fn items_schema(schema: &Value) -> Option<Value> {
        let items = schema.get("items")?;
        if !items.is_object() {
            return None;
        }
        Some(with_root_defs(schema, items))
    }
}

fn build(
    schema: &Value,
    python: Option<super::pyschema::PyDraft>,
) -> Result<jsonschema::Validator, SchemaCompileError> {
    let built = match python {
        Some(draft) => super::pykeywords::options(draft).build(schema),
        None => super::pykeywords::bounds(jsonschema::options(), super::pyschema::PyDraft::of(schema)).build(schema),
    };
    built.map_err(|e| {
        let pointer = e.instance_path().as_str().to_owned();
        let message = e.to_string();
        // jsonschema-rs words an unresolvable document "Resource '<uri>' is
        // not present in a registry and retrieving it failed: …".
        match message
            .strip_prefix("Resource '")
            .and_then(|r| r.split_once("' is not present in a registry"))
        {
            Some((uri, _)) => SchemaCompileError::needs_remote(pointer, uri),
            None => SchemaCompileError { pointer, message },
        }
    })
}

fn violations(validator: &jsonschema::Validator, value: &Value, branch: Option<&str>) -> Vec<Violation> {
    validator
        .iter_errors(value)
        .map(|e| {
            let mut pointer = e.instance_path().as_str().to_owned();
            let message = match e.kind() {
                jsonschema::error::ValidationErrorKind::Required { property } => {
                    pointer.push('/');
                    match property {
                        Value::String(s) => {
                            pointer.push_str(&s.replace('~', "~0").replace('/', "~1"));
                        }
                        other => pointer.push_str(&other.to_string()),
                    }
                    "is required".to_owned()
                }
                _ => e.to_string(),
            };
            Violation {
                pointer,
                message,
                branch: branch.map(str::to_owned),
            }
        })
        .collect()
}

/// What a JSON value is, with its article, for error messages ("an array").
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Branches of a top-level `oneOf`/`anyOf` in which every branch fixes
/// `type` to one string, resolving local `#/$defs/…` references.
fn union_branches(schema: &Value) -> Vec<(String, &Value)> {
    let Some(list) = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(list.len());
    for branch in list {
        let resolved = resolve_local(schema, branch);
        let Some(tag) = resolved
            .get("properties")
            .and_then(|p| p.get("type"))
            .and_then(type_tag)
        else {
            return Vec::new();
        };
        out.push((tag.to_owned(), resolved));
    }
    out
}

fn type_tag(prop: &Value) -> Option<&str> {
    if let Some(s) = prop.get("const").and_then(Value::as_str) {
        return Some(s);
    }
    match prop.get("enum").and_then(Value::as_array).map(Vec::as_slice) {
        Some([Value::String(s)]) => Some(s),
        _ => None,
    }
}

fn resolve_local<'a>(root: &'a Value, branch: &'a Value) -> &'a Value {
    match branch.get("$ref").and_then(Value::as_str) {
        Some(r) if r.starts_with("#/") => root.pointer(&r[1..]).unwrap_or(branch),
        _ => branch,
    }
}

fn with_root_defs(root: &Value, sub: &Value) -> Value {
    let mut out = sub.clone();
    if let (Some(obj), Some(root_obj)) = (out.as_object_mut(), root.as_object()) {
        for key in ["$defs", "definitions", "$schema"] {
            if let Some(defs) = root_obj.get(key) {
                obj.entry(key).or_insert_with(|| defs.clone());
            }
        }
    }
    out
}

/// A short description of a schema, in English as records carry it:
/// `array of {entity, definition}`, `oneOf definition | relationship`.
pub fn summary(schema: Option<&Value>) -> String {
    summary_in(schema, "en")
}

/// [`summary`] in the UI language, for people (the workbench's prompt
/// list).
pub fn summary_for_people(schema: Option<&Value>) -> String {
    summary_in(schema, &rust_i18n::locale())
}

fn summary_in(schema: Option<&Value>, locale: &str) -> String {
    let Some(s) = schema else {
        return rust_i18n::t!("tui.status.none", locale = locale).into_owned();
    };
    if let Some(items) = s.get("items") {
        let items = summary_in(Some(items), locale);
        return rust_i18n::t!("tui.pane.schema_array", locale = locale, items = items).into_owned();
    }
    if let Some(branches) = s.get("oneOf").or_else(|| s.get("anyOf")).and_then(Value::as_array) {
        let tags: Vec<String> = branches
            .iter()
            .map(|b| {
                b.pointer("/properties/type/const")
                    .and_then(Value::as_str)
                    .map_or_else(|| "…".to_owned(), str::to_owned)
            })
            .collect();
        return format!("oneOf {}", tags.join(" | "));
    }
    match s.get("properties").and_then(Value::as_object) {
        Some(props) => {
            let names: Vec<&str> = props.keys().map(String::as_str).collect();
            format!("{{{}}}", names.join(", "))
        }
        None => s.get("type").and_then(Value::as_str).unwrap_or("any").to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn union() -> CompiledSchema {
        CompiledSchema::compile(&json!({"oneOf": [
            {"type": "object", "properties": {"type": {"const": "definition"}, "entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["type", "entity", "definition"]},
            {"type": "object", "properties": {"type": {"const": "relationship"}, "subject": {"type": "string"}, "predicate": {"type": "string"}, "object": {"type": "string"}, "object-entity": {"type": "boolean"}}, "required": ["type", "subject", "predicate", "object", "object-entity"]}
        ]}))
        .unwrap()
    }

    #[test]
    fn union_reports_selected_branch() {
        let s = union();
        let v = json!({"type": "relationship", "subject": "a", "predicate": "b", "object": "c"});
        let errs = s.validate(&v).unwrap_err();
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(text, vec!["relationship: /object-entity is required"]);
    }

    #[test]
    fn union_unknown_type_lists_allowed() {
        let errs = union().validate(&json!({"type": "topic"})).unwrap_err();
        assert_eq!(
            errs[0].to_string(),
            "/type \"topic\" is not one of: definition, relationship"
        );
        let errs = union().validate(&json!({"entity": "x"})).unwrap_err();
        assert_eq!(
            errs[0].to_string(),
            "/type is required (one of: definition, relationship)"
        );
    }

    #[test]
    fn remote_ref_does_not_compile() {
        let err = CompiledSchema::compile(&json!({"$ref": "https://example.com/s.json"})).unwrap_err();
        assert!(err.message.contains("example.com"), "{err}");
    }

    #[test]
    fn bad_keyword_has_pointer() {
        let err = CompiledSchema::compile(&json!({"properties": {"a": {"type": "strin"}}})).unwrap_err();
        assert_eq!(err.pointer, "/properties/a/type");
    }
}
