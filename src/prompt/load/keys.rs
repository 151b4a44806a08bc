//! The top-level keys of a cutline TOML prompt, each read into the config
//! as it comes; an unknown key is refused with a guess at the intended one.
//! The checks that need the whole file (a `prompt` at all, the schema
//! compiling, the templates parsing) run once every key is read.

use std::fmt::Write as _;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeString, DeValue};

use super::doc::Doc;
use crate::output::schema::CompiledSchema;
use crate::prompt::loaders::{JSONL_ARRAY_WARNING, OBJECT_SCHEMA_WARNING, describes_array, stem};
use crate::prompt::render::{Part, syntax_check};
use crate::prompt::{ConfigError, Origin, PromptConfig, ResponseType, SourceFormat, Warning};

/// The top-level keys of a cutline TOML prompt, in the order
/// [`to_toml`](crate::prompt::to_toml) writes them.
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

/// A key's span and its value's span.
type KeyAt = (Range<usize>, Range<usize>);

/// One TOML prompt being read: the config so far, its warnings, and where
/// the keys checked at the end were written.
struct Reading<'a> {
    doc: Doc<'a>,
    p: PromptConfig,
    warnings: Vec<Warning>,
    prompt_at: Option<KeyAt>,
    system_at: Option<KeyAt>,
    schema_at: Option<Range<usize>>,
}

/// Load a TOML prompt whose text already passed the byte checks.
pub(super) fn load_toml_checked(label: &str, text: &str) -> Result<(PromptConfig, Vec<Warning>), ConfigError> {
    let doc = Doc { label, text };
    let root = crate::prompt::toml_check::parse(text).map_err(|e| doc.toml_error(&e))?;
    let mut r = Reading {
        doc,
        p: PromptConfig {
            id: stem(label),
            origin: Origin {
                file: label.to_owned(),
                format: SourceFormat::Toml,
                ..Origin::default()
            },
            ..PromptConfig::default()
        },
        warnings: Vec::new(),
        prompt_at: None,
        system_at: None,
        schema_at: None,
    };
    for (key, value) in root.get_ref() {
        r.key(key, value)?;
    }
    r.finish()
}

impl Reading<'_> {
    /// Read one top-level key into the config.
    fn key(&mut self, key: &Spanned<DeString<'_>>, value: &Spanned<DeValue<'_>>) -> Result<(), ConfigError> {
        let (doc, p) = (&self.doc, &mut self.p);
        let k: &str = key.get_ref();
        let kspan = key.span();
        match k {
            "id" => p.id = id(doc, value)?,
            "description" => p.description = doc.string(k, value)?,
            "response-type" => p.response_type = response_type(doc, value)?,
            "twin" => p.twin = Some(doc.string(k, value)?),
            "stop" => p.stop = doc.strings(k, value)?,
            "temperature" | "top-p" | "max-tokens" | "structured" | "effort" => {
                let v = doc.json(k, value)?;
                crate::prompt::params::set(&mut p.params, k, &v)
                    .map_err(|cause| doc.err(&value.span(), cause.to_string()))?;
            }
            "system" => {
                p.system = doc.string(k, value)?;
                self.system_at = Some((kspan, value.span()));
            }
            "prompt" => {
                p.template = doc.string(k, value)?;
                self.prompt_at = Some((kspan, value.span()));
            }
            "schema" => {
                p.schema = Some(doc.schema(k, value)?);
                self.schema_at = Some(kspan);
            }
            "object-schema" => {
                self.warnings.push(doc.warn(&kspan, OBJECT_SCHEMA_WARNING));
                let s = doc.schema(k, value)?;
                match CompiledSchema::compile(&s) {
                    Ok(_) => p.object_schema = Some(s),
                    Err(e) => self
                        .warnings
                        .push(doc.warn(&kspan, format!("`object-schema` ({e}) is left out"))),
                }
            }
            "variables" => p.variables = doc.table(k, value)?,
            "input" => p.inputs = doc.inputs(value)?,
            other => return Err(doc.err(&kspan, unknown_key(other))),
        }
        Ok(())
    }

    /// The checks on the whole prompt: `prompt` is there, the schema
    /// compiles, and both templates parse (their lines noted for messages).
    fn finish(mut self) -> Result<(PromptConfig, Vec<Warning>), ConfigError> {
        let (doc, p) = (&self.doc, &mut self.p);
        let Some((prompt_key, prompt_value)) = &self.prompt_at else {
            return Err(ConfigError::new(
                doc.label,
                "missing required key `prompt` (the prompt template)",
            ));
        };
        if let (Some(schema), Some(kspan)) = (&p.schema, &self.schema_at) {
            CompiledSchema::compile(schema).map_err(|e| doc.err(kspan, e.to_string()).because(e))?;
            if p.response_type == ResponseType::Jsonl && describes_array(schema) {
                self.warnings.push(doc.warn(kspan, JSONL_ARRAY_WARNING));
            }
        }
        syntax_check(&p.template)
            .map_err(|e| doc.template_error(Part::Prompt, prompt_key, prompt_value, &p.template, &e))?;
        let content = doc.content(prompt_value, &p.template);
        p.origin.template_line = content.verbatim.then(|| doc.line(content.start));
        if let Some((key, value)) = &self.system_at {
            syntax_check(&p.system).map_err(|e| doc.template_error(Part::System, key, value, &p.system, &e))?;
            let content = doc.content(value, &p.system);
            p.origin.system_line = content.verbatim.then(|| doc.line(content.start));
        }
        Ok((self.p, self.warnings))
    }
}

/// `id`: a non-empty string that names a prompt.
fn id(doc: &Doc<'_>, value: &Spanned<DeValue<'_>>) -> Result<String, ConfigError> {
    let id = doc.string("id", value)?;
    if id.trim().is_empty() {
        return Err(doc.err(&value.span(), "`id` must not be empty"));
    }
    crate::prompt::check_id(&id).map_err(|cause| doc.err(&value.span(), cause.to_string()))?;
    Ok(id)
}

/// `response-type`: one of the words [`ResponseType::parse`] knows.
fn response_type(doc: &Doc<'_>, value: &Spanned<DeValue<'_>>) -> Result<ResponseType, ConfigError> {
    let word = doc.string("response-type", value)?;
    ResponseType::parse(&word).ok_or_else(|| {
        doc.err(
            &value.span(),
            format!("unknown response-type {word:?}; expected one of: text, json, jsonl"),
        )
    })
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
