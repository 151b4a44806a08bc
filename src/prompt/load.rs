//! Loading prompt configs from bytes, and writing cutline TOML back.
//!
//! Bad input is the normal case for a config loader, so every refusal names
//! the file, line and column: invalid UTF-8, a byte-order mark, unresolved
//! merge-conflict markers (checked before parsing, since they make any parser
//! say something confusing), TOML syntax, unknown keys and values, JSON inside
//! the TOML, schemas that do not compile and templates that do not parse.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;

use serde_json::{Map, Value};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::render::{Part, SyntaxError, syntax_check};
pub use super::toml_out::to_toml;
use super::{ConfigError, Origin, PromptConfig, ResponseType, SampleInput, SourceFormat, Warning};
use crate::output::schema::CompiledSchema;

/// The top-level keys of a cutline TOML prompt, in the order [`to_toml`]
/// writes them.
pub const TOML_KEYS: &[&str] = &[
    "id",
    "description",
    "response-type",
    "twin",
    "stop",
    "temperature",
    "top-p",
    "max-tokens",
    "structured",
    "effort",
    "system",
    "prompt",
    "schema",
    "object-schema",
    "variables",
    "input",
];

/// The cause of the error for a file that starts with a byte-order mark.
pub const BOM_CAUSE: &str = "file starts with a UTF-8 byte-order mark (BOM); save it without one";

/// The warning for `object-schema` (TOML or TrustGraph JSON).
pub const OBJECT_SCHEMA_WARNING: &str = "`object-schema` is ignored by TrustGraph's loader (it reads only \
     `schema`), so no line is validated against it there, nor here; results list the lines it would reject; \
     rename it to `schema` to have them rejected (`migrate` writes `schema`)";

/// Load every prompt in a file's bytes (a bundle holds many).
///
/// The format comes from `label`'s extension: `.toml` is cutline's own
/// format, `.json` a TrustGraph single prompt (it has `prompt`) or config
/// bundle (it has `template-index` or `template.<id>` keys).
pub fn load_bytes(label: &str, bytes: &[u8]) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    load_bytes_for(label, bytes, super::tg_load::TgLoader::default())
}

/// [`load_bytes`], reading a TrustGraph bundle as the given TrustGraph's
/// loader does (every `template.<id>`, or only the indexed ids).
pub fn load_bytes_for(
    label: &str,
    bytes: &[u8],
    loader: super::tg_load::TgLoader,
) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    let text = check_bytes(label, bytes)?;
    match extension(label).as_deref() {
        Some("toml") => load_toml_checked(label, text).map(|(p, w)| (vec![p], w)),
        Some("json") => super::tg_load::load_json_for(label, text, loader),
        Some(ext) => Err(ConfigError::new(
            label,
            format!("unsupported file type `.{ext}`; expected .toml (cutline) or .json (TrustGraph)"),
        )),
        None => Err(ConfigError::new(
            label,
            "no file extension; expected .toml (cutline) or .json (TrustGraph)",
        )),
    }
}

/// Load one cutline TOML prompt.
pub fn load_toml(label: &str, text: &str) -> Result<(PromptConfig, Vec<Warning>), ConfigError> {
    check_text(label, text)?;
    load_toml_checked(label, text)
}

/// Lower-cased extension of `label`.
fn extension(label: &str) -> Option<String> {
    Path::new(label)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// The file stem of `label`: the default prompt id.
pub(crate) fn stem(label: &str) -> String {
    Path::new(label)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(label)
        .to_owned()
}

/// UTF-8, then the text checks.
pub(crate) fn check_bytes<'a>(label: &str, bytes: &'a [u8]) -> Result<&'a str, ConfigError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ConfigError::at_offset(label, bytes, e.valid_up_to(), "invalid UTF-8"))?;
    check_text(label, text)?;
    Ok(text)
}

/// A leading byte-order mark, then git merge-conflict markers.
pub(crate) fn check_text(label: &str, text: &str) -> Result<(), ConfigError> {
    if text.starts_with('\u{feff}') {
        return Err(ConfigError::at(label, 1, Some(1), BOM_CAUSE));
    }
    if let Some((line, marker)) = conflict_marker(text) {
        return Err(ConfigError::at(
            label,
            line,
            Some(1),
            format!("unresolved git merge conflict marker `{marker}`; resolve the conflict first"),
        ));
    }
    Ok(())
}

/// Line and marker of the first merge-conflict marker. A lone `=======` line
/// counts only when the file also has a `<<<<<<< `/`>>>>>>> `/`||||||| `
/// line: alone it is more likely a Markdown heading underline in a prompt.
fn conflict_marker(text: &str) -> Option<(usize, &'static str)> {
    let mut first_sep = None;
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let marker = ["<<<<<<<", ">>>>>>>", "|||||||"].into_iter().find(|m| {
            line.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        });
        if let Some(m) = marker {
            return Some(match first_sep {
                Some(sep) => (sep, "======="),
                None => (i + 1, m),
            });
        }
        if line == "=======" && first_sep.is_none() {
            first_sep = Some(i + 1);
        }
    }
    None
}

/// Positions in one TOML file, for messages.
struct Doc<'a> {
    label: &'a str,
    text: &'a str,
}

/// Where a string value's content starts, and whether its content is the
/// source text verbatim (a literal string, or a basic one without escapes):
/// only then do lines and columns inside it map to the file.
struct Content {
    start: usize,
    verbatim: bool,
}

impl Doc<'_> {
    fn line(&self, offset: usize) -> usize {
        crate::output::position::line_col(self.text.as_bytes(), offset).0
    }

    fn err(&self, span: &Range<usize>, cause: impl Into<String>) -> ConfigError {
        ConfigError::at_offset(self.label, self.text.as_bytes(), span.start, cause)
    }

    fn warn(&self, span: &Range<usize>, message: impl Into<String>) -> Warning {
        Warning::new(self.label, Some(self.line(span.start)), message)
    }

    fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let cause = format!("TOML syntax error: {}", e.message().trim_end());
        match e.span() {
            Some(span) => self.err(&span, cause),
            None => ConfigError::new(self.label, cause),
        }
    }

    fn content(&self, span: &Range<usize>, value: &str) -> Content {
        let raw = self.text.get(span.clone()).unwrap_or("");
        let mut start = span.start;
        if raw.starts_with("\"\"\"") || raw.starts_with("'''") {
            start += 3;
            let rest = &raw[3..];
            if rest.starts_with("\r\n") {
                start += 2;
            } else if rest.starts_with('\n') {
                start += 1;
            }
        } else if raw.starts_with('"') || raw.starts_with('\'') {
            start += 1;
        }
        let verbatim = self.text.get(start..start + value.len()) == Some(value);
        Content { start, verbatim }
    }

    fn string(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<String, ConfigError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.err(&v.span(), format!("`{key}` must be a string, not {}", other.type_str()))),
        }
    }

    fn strings(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Vec<String>, ConfigError> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(
                &v.span(),
                format!("`{key}` must be an array of strings, not {}", v.get_ref().type_str()),
            ));
        };
        items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::String(s) => Ok(s.to_string()),
                other => Err(self.err(
                    &item.span(),
                    format!("`{key}` must be an array of strings; found {}", other.type_str()),
                )),
            })
            .collect()
    }

    fn table(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Map<String, Value>, ConfigError> {
        match v.get_ref() {
            DeValue::Table(t) => self.table_json(key, t),
            other => Err(self.err(&v.span(), format!("`{key}` must be a table, not {}", other.type_str()))),
        }
    }

    fn table_json(&self, key: &str, t: &DeTable<'_>) -> Result<Map<String, Value>, ConfigError> {
        let mut out = Map::new();
        for (k, v) in t {
            let path = format!("{key}.{}", k.get_ref());
            out.insert(k.get_ref().to_string(), self.json(&path, v)?);
        }
        Ok(out)
    }

    /// A TOML value as JSON. TOML has no null; JSON has no NaN or infinity.
    fn json(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Value, ConfigError> {
        Ok(match v.get_ref() {
            DeValue::String(s) => Value::String(s.to_string()),
            DeValue::Boolean(b) => Value::Bool(*b),
            DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix())
                .ok()
                .and_then(|n| serde_json::from_str(&n.to_string()).ok())
                .ok_or_else(|| self.err(&v.span(), format!("`{key}`: integer out of range")))?,
            DeValue::Float(f) => {
                let text: String = f.as_str().chars().filter(|&c| c != '_').collect();
                let text = text.strip_prefix('+').unwrap_or(&text);
                let parsed = if text.contains("inf") || text.contains("nan") {
                    None
                } else {
                    serde_json::from_str::<Value>(text)
                        .ok()
                        .filter(Value::is_number)
                        .or_else(|| {
                            text.parse::<f64>()
                                .ok()
                                .and_then(serde_json::Number::from_f64)
                                .map(Value::Number)
                        })
                };
                parsed.ok_or_else(|| {
                    self.err(
                        &v.span(),
                        format!("`{key}`: {} cannot be represented in JSON", f.as_str()),
                    )
                })?
            }
            DeValue::Datetime(d) => Value::String(d.to_string()),
            DeValue::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.json(&format!("{key}[{i}]"), item))
                    .collect::<Result<_, _>>()?,
            ),
            DeValue::Table(t) => Value::Object(self.table_json(key, t)?),
        })
    }

    /// `schema`: a JSON string (its errors mapped to the file) or a table.
    fn schema(&self, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Value, ConfigError> {
        match v.get_ref() {
            DeValue::String(s) => serde_json::from_str(s).map_err(|e| {
                let msg = json_message(&e);
                let content = self.content(&v.span(), s);
                if content.verbatim {
                    let inner = crate::output::position::offset_of(s.as_bytes(), e.line(), e.column());
                    ConfigError::at_offset(
                        self.label,
                        self.text.as_bytes(),
                        content.start + inner,
                        format!("`{key}` is not valid JSON: {msg}"),
                    )
                } else {
                    self.err(
                        &v.span(),
                        format!(
                            "`{key}` is not valid JSON: {msg} (line {} column {} of the string)",
                            e.line(),
                            e.column()
                        ),
                    )
                }
            }),
            DeValue::Table(t) => Ok(Value::Object(self.table_json(key, t)?)),
            other => Err(self.err(
                &v.span(),
                format!("`{key}` must be a JSON string or a table, not {}", other.type_str()),
            )),
        }
    }

    fn inputs(&self, v: &Spanned<DeValue<'_>>) -> Result<Vec<SampleInput>, ConfigError> {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(
                &v.span(),
                format!(
                    "`input` must be an array of tables ([[input]]), not {}",
                    v.get_ref().type_str()
                ),
            ));
        };
        let mut out: Vec<SampleInput> = Vec::with_capacity(items.len());
        for item in &**items {
            let DeValue::Table(t) = item.get_ref() else {
                return Err(self.err(
                    &item.span(),
                    format!(
                        "`input` must be an array of tables ([[input]]); found {}",
                        item.get_ref().type_str()
                    ),
                ));
            };
            let mut name = None;
            let mut vars = Map::new();
            for (k, val) in t {
                if k.get_ref() == "name" {
                    let n = self.string("name", val)?;
                    if out.iter().any(|i| i.name == n) {
                        return Err(self.err(&val.span(), format!("duplicate input name {n:?}")));
                    }
                    name = Some(n);
                } else {
                    let path = format!("input.{}", k.get_ref());
                    vars.insert(k.get_ref().to_string(), self.json(&path, val)?);
                }
            }
            let Some(name) = name else {
                return Err(self.err(&item.span(), "[[input]] needs a `name`"));
            };
            out.push(SampleInput { name, vars });
        }
        Ok(out)
    }

    /// A template syntax error at its file position when the template's text
    /// is verbatim in the file, else at the key's line.
    fn template_error(
        &self,
        part: Part,
        key_span: &Range<usize>,
        value_span: &Range<usize>,
        source: &str,
        e: &SyntaxError,
    ) -> ConfigError {
        let cause = syntax_cause(part, e);
        let content = self.content(value_span, source);
        if content.verbatim {
            if let Some(r) = &e.range {
                return ConfigError::at_offset(self.label, self.text.as_bytes(), content.start + r.start, cause);
            }
            if let Some(n) = e.line {
                return ConfigError::at(self.label, self.line(content.start) + n - 1, None, cause);
            }
        }
        ConfigError::at(self.label, self.line(key_span.start), None, cause)
    }
}

/// "template syntax error: … (template line N)".
pub(crate) fn syntax_cause(part: Part, e: &SyntaxError) -> String {
    let what = match part {
        Part::Prompt => "template",
        Part::System => "system template",
    };
    match e.line {
        Some(n) => format!("{what} syntax error: {} ({what} line {n})", e.detail),
        None => format!("{what} syntax error: {}", e.detail),
    }
}

/// serde_json's message without its " at line L column C" suffix.
pub(crate) fn json_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// The message for an unknown top-level key, with a guess at the intended one.
fn unknown_key(key: &str) -> String {
    let norm = key.to_ascii_lowercase().replace('_', "-");
    let guess = match norm.as_str() {
        "inputs" | "sample" | "samples" | "examples" => Some("input"),
        "terms" | "variable" | "vars" => Some("variables"),
        "template" | "user" => Some("prompt"),
        "response" | "responsetype" | "type" => Some("response-type"),
        "stops" | "stop-sequences" => Some("stop"),
        "json-schema" | "schemas" => Some("schema"),
        other => TOML_KEYS.iter().copied().find(|k| *k == other),
    };
    let mut msg = format!("unknown key `{key}`; expected one of: {}", TOML_KEYS.join(", "));
    if let Some(g) = guess {
        let _ = write!(msg, " (did you mean `{g}`?)");
    }
    msg
}

/// Does `schema` describe an array (a likely mistake for `jsonl`, whose
/// schema applies to each line)?
pub(crate) fn describes_array(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("array")
}

/// The warning for a `jsonl` prompt whose schema describes an array.
pub(crate) const JSONL_ARRAY_WARNING: &str =
    "response-type is jsonl but the schema describes an array; for jsonl the schema applies to each line's object";

fn load_toml_checked(label: &str, text: &str) -> Result<(PromptConfig, Vec<Warning>), ConfigError> {
    let doc = Doc { label, text };
    let root = super::toml_check::parse(text).map_err(|e| doc.toml_error(&e))?;
    let mut p = PromptConfig {
        id: stem(label),
        origin: Origin {
            file: label.to_owned(),
            format: SourceFormat::Toml,
            ..Origin::default()
        },
        ..PromptConfig::default()
    };
    let mut warnings = Vec::new();
    let mut prompt_at: Option<(Range<usize>, Range<usize>)> = None;
    let mut system_at: Option<(Range<usize>, Range<usize>)> = None;
    let mut schema_at: Option<(String, Range<usize>)> = None;
    for (key, value) in root.get_ref() {
        let k: &str = key.get_ref();
        let kspan = key.span();
        match k {
            "id" => {
                p.id = doc.string(k, value)?;
                if p.id.trim().is_empty() {
                    return Err(doc.err(&value.span(), "`id` must not be empty"));
                }
                super::check_id(&p.id).map_err(|cause| doc.err(&value.span(), cause))?;
            }
            "description" => p.description = doc.string(k, value)?,
            "response-type" => {
                let word = doc.string(k, value)?;
                p.response_type = ResponseType::parse(&word).ok_or_else(|| {
                    doc.err(
                        &value.span(),
                        format!("unknown response-type {word:?}; expected one of: text, json, jsonl"),
                    )
                })?;
            }
            "twin" => p.twin = Some(doc.string(k, value)?),
            "stop" => p.stop = doc.strings(k, value)?,
            "temperature" | "top-p" | "max-tokens" | "structured" | "effort" => {
                let v = doc.json(k, value)?;
                super::params::set(&mut p.params, k, &v).map_err(|cause| doc.err(&value.span(), cause))?;
            }
            "system" => {
                p.system = doc.string(k, value)?;
                system_at = Some((kspan, value.span()));
            }
            "prompt" => {
                p.template = doc.string(k, value)?;
                prompt_at = Some((kspan, value.span()));
            }
            "schema" => {
                p.schema = Some(doc.schema(k, value)?);
                schema_at = Some((k.to_owned(), kspan));
            }
            "object-schema" => {
                warnings.push(doc.warn(&kspan, OBJECT_SCHEMA_WARNING));
                let s = doc.schema(k, value)?;
                match CompiledSchema::compile(&s) {
                    Ok(_) => p.object_schema = Some(s),
                    Err(e) => warnings.push(doc.warn(&kspan, format!("`object-schema` ({e}) is left out"))),
                }
            }
            "variables" => p.variables = doc.table(k, value)?,
            "input" => p.inputs = doc.inputs(value)?,
            other => return Err(doc.err(&kspan, unknown_key(other))),
        }
    }
    let Some((prompt_key, prompt_value)) = prompt_at else {
        return Err(ConfigError::new(
            label,
            "missing required key `prompt` (the prompt template)",
        ));
    };
    if let (Some(schema), Some((_, kspan))) = (&p.schema, &schema_at) {
        CompiledSchema::compile(schema).map_err(|e| doc.err(kspan, e.to_string()))?;
        if p.response_type == ResponseType::Jsonl && describes_array(schema) {
            warnings.push(doc.warn(kspan, JSONL_ARRAY_WARNING));
        }
    }
    syntax_check(&p.template)
        .map_err(|e| doc.template_error(Part::Prompt, &prompt_key, &prompt_value, &p.template, &e))?;
    let content = doc.content(&prompt_value, &p.template);
    p.origin.template_line = content.verbatim.then(|| doc.line(content.start));
    if let Some((key, value)) = &system_at {
        syntax_check(&p.system).map_err(|e| doc.template_error(Part::System, key, value, &p.system, &e))?;
        let content = doc.content(value, &p.system);
        p.origin.system_line = content.verbatim.then(|| doc.line(content.start));
    }
    Ok((p, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(label: &str, text: &str) -> String {
        load_bytes(label, text.as_bytes()).unwrap_err().to_string()
    }

    const MINIMAL: &str = "prompt = \"Hi {{ text }}\"\n";

    #[test]
    fn minimal_toml_defaults() {
        let (ps, w) = load_bytes("dir/extract.toml", MINIMAL.as_bytes()).unwrap();
        assert!(w.is_empty());
        let p = &ps[0];
        assert_eq!(p.id, "extract");
        assert_eq!(p.response_type, ResponseType::Text);
        assert_eq!(p.template, "Hi {{ text }}");
        assert_eq!(p.origin.file, "dir/extract.toml");
        assert_eq!(p.origin.template_line, Some(1));
    }

    #[test]
    fn invalid_utf8_position() {
        let e = load_bytes("a.toml", b"prompt = \"x\"\nid = \"\xff\"\n").unwrap_err();
        assert_eq!(e.to_string(), "a.toml:2:7: invalid UTF-8");
    }

    #[test]
    fn bom_rejected() {
        assert_eq!(
            err("a.toml", "\u{feff}prompt = \"x\"\n"),
            format!("a.toml:1:1: {BOM_CAUSE}")
        );
    }

    #[test]
    fn conflict_markers() {
        let text = "prompt = \"\"\"\nhello\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> 82edf2d (x)\n\"\"\"\n";
        assert_eq!(
            err("a.toml", text),
            "a.toml:3:1: unresolved git merge conflict marker `<<<<<<<`; resolve the conflict first"
        );
        let text = "a\n=======\nb\n>>>>>>> theirs\n";
        assert_eq!(
            err("a.json", text),
            "a.json:2:1: unresolved git merge conflict marker `=======`; resolve the conflict first"
        );
        // A lone underline is Markdown, not a conflict.
        let ok = "prompt = \"\"\"\nTitle\n=======\n{{ text }}\"\"\"\n";
        assert!(load_bytes("a.toml", ok.as_bytes()).is_ok());
    }

    #[test]
    fn unknown_extension() {
        assert_eq!(
            err("a.yaml", "x"),
            "a.yaml: unsupported file type `.yaml`; expected .toml (cutline) or .json (TrustGraph)"
        );
    }

    #[test]
    fn toml_syntax_error_position() {
        assert_eq!(
            err("a.toml", "prompt = \"x\"\nstop = [\"a\",\n"),
            "a.toml:2:13: TOML syntax error: unclosed array, expected `]`"
        );
    }

    #[test]
    fn unknown_key_named_with_guess() {
        let e = err("a.toml", "prompt = \"x\"\nresponse_type = \"json\"\n");
        assert!(
            e.starts_with("a.toml:2:1: unknown key `response_type`; expected one of: id, description,"),
            "{e}"
        );
        assert!(e.ends_with("(did you mean `response-type`?)"), "{e}");
    }

    #[test]
    fn unknown_response_type() {
        assert_eq!(
            err("a.toml", "prompt = \"x\"\nresponse-type = \"xml\"\n"),
            "a.toml:2:17: unknown response-type \"xml\"; expected one of: text, json, jsonl"
        );
    }

    #[test]
    fn missing_prompt() {
        assert_eq!(
            err("a.toml", "id = \"x\"\n"),
            "a.toml: missing required key `prompt` (the prompt template)"
        );
    }

    #[test]
    fn wrong_types() {
        assert_eq!(
            err("a.toml", "prompt = 3\n"),
            "a.toml:1:10: `prompt` must be a string, not integer"
        );
        assert_eq!(
            err("a.toml", "prompt = \"x\"\nstop = [\"a\", 1]\n"),
            "a.toml:2:14: `stop` must be an array of strings; found integer"
        );
    }

    #[test]
    fn schema_json_error_maps_to_file() {
        let text = "prompt = \"x\"\nschema = '''\n{\n  \"type\": \"object\",\n  \"required\": [\"a\",]\n}\n'''\n";
        assert_eq!(
            err("a.toml", text),
            "a.toml:5:20: `schema` is not valid JSON: trailing comma"
        );
    }

    #[test]
    fn schema_compile_error_at_key() {
        let text = "prompt = \"x\"\n\nschema = '{\"properties\": {\"a\": {\"type\": \"strin\"}}}'\n";
        let e = err("a.toml", text);
        assert!(
            e.starts_with("a.toml:3:1: schema does not compile at /properties/a/type: "),
            "{e}"
        );
    }

    #[test]
    fn remote_ref_rejected() {
        let text = "prompt = \"x\"\nschema = '{\"$ref\": \"https://example.com/s.json\"}'\n";
        let e = err("a.toml", text);
        assert!(e.starts_with("a.toml:2:1: schema does not compile at "), "{e}");
    }

    #[test]
    fn schema_as_table() {
        let text = "prompt = \"x\"\nresponse-type = \"jsonl\"\n[schema]\ntype = \"object\"\nrequired = [\"a\"]\n";
        let (ps, _) = load_bytes("a.toml", text.as_bytes()).unwrap();
        assert_eq!(ps[0].schema, Some(json!({"type": "object", "required": ["a"]})));
    }

    #[test]
    fn object_schema_alias_warns() {
        let text = "prompt = \"x\"\nresponse-type = \"jsonl\"\nobject-schema = '{\"type\": \"object\"}'\n";
        let (ps, w) = load_bytes("a.toml", text.as_bytes()).unwrap();
        assert_eq!(ps[0].schema, None);
        assert_eq!(ps[0].object_schema, Some(json!({"type": "object"})));
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].to_string(), format!("a.toml:3: {OBJECT_SCHEMA_WARNING}"));
        let both = format!("{text}schema = '{{}}'\n");
        let (ps, _) = load_bytes("a.toml", both.as_bytes()).unwrap();
        assert_eq!(
            (ps[0].schema.clone(), ps[0].object_schema.clone()),
            (Some(json!({})), Some(json!({"type": "object"})))
        );
        let bad = text.replace("\"object\"", "\"objekt\"");
        let (ps, w) = load_bytes("a.toml", bad.as_bytes()).unwrap();
        assert_eq!(ps[0].object_schema, None);
        assert!(
            w[1].to_string()
                .starts_with("a.toml:3: `object-schema` (schema does not compile at /type: "),
            "{w:?}"
        );
    }

    #[test]
    fn template_syntax_error_line() {
        let text = "id = \"t\"\nprompt = \"\"\"\nline one\nline two {% endfor %}\nline three\n\"\"\"\n";
        assert_eq!(
            err("a.toml", text),
            "a.toml:4:10: template syntax error: ibis refuses it, so TrustGraph's whole prompt config fails to load: \
             Unexpected 'endfor' tag. (template line 2)"
        );
        // Escapes break the line mapping: the key's line, and the template line.
        let text = "id = \"t\"\nprompt = \"one\\ntwo {% endfor %}\"\n";
        assert_eq!(
            err("a.toml", text),
            "a.toml:2: template syntax error: ibis refuses it, so TrustGraph's whole prompt config fails to load: \
             Unexpected 'endfor' tag. (template line 2)"
        );
    }

    #[test]
    fn inputs_and_variables() {
        let text = "prompt = \"{{ lang }} {{ text }}\"\n[variables]\nlang = \"English\"\nn = 0x10\nf = 1_000.5\n\n[[input]]\nname = \"a\"\ntext = \"one\"\n\n[[input]]\nname = \"b\"\ntext = \"two\"\n";
        let (ps, _) = load_bytes("a.toml", text.as_bytes()).unwrap();
        let p = &ps[0];
        assert_eq!(
            Value::Object(p.variables.clone()),
            json!({"lang": "English", "n": 16, "f": 1000.5})
        );
        assert_eq!(p.inputs.len(), 2);
        assert_eq!(p.inputs[1].name, "b");
        assert_eq!(p.inputs[1].vars["text"], "two");
        let dup = "prompt = \"x\"\n[[input]]\nname = \"a\"\n[[input]]\nname = \"a\"\n";
        assert_eq!(err("a.toml", dup), "a.toml:5:8: duplicate input name \"a\"");
        let unnamed = "prompt = \"x\"\n[[input]]\ntext = \"a\"\n";
        let e = err("a.toml", unnamed);
        assert!(e.ends_with(": [[input]] needs a `name`"), "{e}");
    }

    #[test]
    fn float_nan_rejected() {
        let e = err("a.toml", "prompt = \"x\"\n[variables]\nx = nan\n");
        assert_eq!(e, "a.toml:3:5: `variables.x`: nan cannot be represented in JSON");
    }
}
