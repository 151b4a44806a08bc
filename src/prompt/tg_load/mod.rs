//! Loading TrustGraph's prompt files, in every shape a TrustGraph user holds:
//!
//! - a single prompt object (`{"prompt": "...", "response-type": ...}`);
//! - the config store's `prompt` type, every value a JSON-encoded *string*
//!   (what `tg-show-config` dumps, often with other config types beside
//!   `prompt` and a `Version: N` line first);
//! - the configurator's `config.json`, the same keys with *raw* JSON values
//!   (an object per `template.<id>`, a list for `template-index`, a string
//!   for `system`), which TrustGraph's template seeder `json.dumps` on write.
//!
//! Either bundle shape may come with `template-index` or without. Which
//! templates load is the TrustGraph version's ([`TgLoader`]): every
//! `template.<id>` 2.8.14 and later (the default; the index is not read), only
//! the indexed ids in 2.8.13 and older. Errors name the file line of the key
//! at fault.

use serde_json::{Map, Value};

use super::loaders::{OBJECT_SCHEMA_WARNING, describes_array, json_message, stem, syntax_cause};
use super::render::{Part, syntax_check};
use super::{ConfigError, Origin, PromptConfig, ResponseType, SourceFormat, Warning, check_id};
use crate::output::schema::{CompiledSchema, kind_of};

mod bundle;
use bundle::Bundle;

pub use super::tg_reload::DEFAULT_SYSTEM;

/// 1-based line of the first `"key":` in `text` at or after byte `from`
/// (best effort: JSON values carry no positions once parsed).
fn key_line(text: &str, key: &str, from: usize) -> Option<usize> {
    let needle = serde_json::to_string(key).ok()?;
    let mut from = from;
    while let Some(i) = text.get(from..).and_then(|t| t.find(&needle)) {
        let at = from + i;
        let after = text[at + needle.len()..].trim_start();
        if after.starts_with(':') {
            return Some(crate::output::position::line_col(text.as_bytes(), at).0);
        }
        from = at + needle.len();
    }
    None
}

/// Byte offset of the line after a leading `Version: N` line (as
/// `tg-show-config` prints before its JSON), else 0.
fn version_line_end(text: &str) -> usize {
    let first = text.split('\n').next().unwrap_or("");
    let rest = first.trim_end_matches('\r').strip_prefix("Version:").map(str::trim);
    match rest {
        Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => (first.len() + 1).min(text.len()),
        _ => 0,
    }
}

/// Which TrustGraph loader a bundle is read as: which `template.<id>` keys
/// its `PromptManager.load_config` loads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TgLoader {
    /// TrustGraph 2.8.14 and later (2.11.1 checked): every `template.<id>` key;
    /// `template-index` is not read.
    #[default]
    Prefix,
    /// TrustGraph 2.8.13 and older: only the ids `template-index` lists (a
    /// bundle without one loads nothing).
    Indexed,
}

/// Load a `.json` prompt file: a single prompt or a bundle in either shape,
/// bare or under a `prompt` config type, as the given TrustGraph's loader
/// reads it.
pub(crate) fn load_json_for(
    label: &str,
    text: &str,
    loader: TgLoader,
) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    // Blank out a `Version:` line instead of cutting it, so positions stay file positions.
    let skip = version_line_end(text);
    let blanked;
    let text = if skip > 0 {
        blanked = format!("{}\n{}", " ".repeat(skip - 1), &text[skip..]);
        blanked.as_str()
    } else {
        text
    };
    let root = parse_json(label, text)?;
    let Value::Object(obj) = root else {
        let offset = text.len() - text.trim_start().len();
        return Err(ConfigError::at_offset(
            label,
            text.as_bytes(),
            offset,
            format!("expected a JSON object, found {}", kind_of(&root)),
        ));
    };
    let site = Site {
        label,
        text,
        from: 0,
        entry: None,
    };
    if let Some(inner) = export_prompts(&obj) {
        let from = text.find("\"config\"").unwrap_or(0);
        let from = from + text[from..].find("\"prompt\"").unwrap_or(0);
        return bundle(label, text, from, inner, loader);
    }
    match obj.get("prompt") {
        Some(Value::String(_)) => {
            let mut warnings = Vec::new();
            let p = single(&site, &obj, &mut warnings)?;
            Ok((vec![p], warnings))
        }
        Some(Value::Object(inner)) if is_bundle(inner) => {
            let from = text.find("\"prompt\"").unwrap_or(0);
            bundle(label, text, from, inner, loader)
        }
        Some(other) => Err(site.err(
            "prompt",
            format!("`prompt` must be a string (the template), not {}", kind_of(other)),
        )),
        None if is_bundle(&obj) => bundle(label, text, 0, &obj, loader),
        None => Err(ConfigError::new(
            label,
            "not a TrustGraph prompt: expected a `prompt` key (a single prompt) or `template-index` / \
             `template.<id>` keys (a config bundle)",
        )),
    }
}

/// `text` as JSON; a syntax error names the file, line and column.
pub(crate) fn parse_json(label: &str, text: &str) -> Result<Value, ConfigError> {
    serde_json::from_str(text).map_err(|e| {
        let offset = crate::output::position::offset_of(text.as_bytes(), e.line(), e.column());
        ConfigError::at_offset(
            label,
            text.as_bytes(),
            offset,
            format!("invalid JSON: {}", json_message(&e)),
        )
    })
}

/// The `prompt` type of a `tg-export-workspace-config` file
/// (`{"source_workspace", "source_version", "config": {type: {key: value}}}`,
/// what `cutline tg pull` writes too), when `obj` is one.
fn export_prompts(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    if !obj.contains_key("source_workspace") && !obj.contains_key("source_version") {
        return None;
    }
    match obj.get("config")?.get("prompt")? {
        Value::Object(inner) if is_bundle(inner) => Some(inner),
        _ => None,
    }
}

fn is_bundle(obj: &Map<String, Value>) -> bool {
    obj.contains_key("template-index") || obj.keys().any(|k| k.starts_with("template."))
}

/// Where errors about one prompt object go: a single-prompt file names the
/// key's line; a bundle entry prefixes `template.<id>:` at that key's line.
struct Site<'a> {
    label: &'a str,
    text: &'a str,
    /// Byte offset key searches start from (the `prompt` config type's key).
    from: usize,
    entry: Option<(String, Option<usize>)>,
}

impl Site<'_> {
    fn err(&self, key: &str, cause: impl Into<String>) -> ConfigError {
        let cause = cause.into();
        match &self.entry {
            Some((name, line)) => ConfigError {
                file: self.label.to_owned(),
                line: *line,
                column: None,
                message: format!("{name}: {cause}"),
                source: None,
            },
            None => match key_line(self.text, key, self.from) {
                Some(l) => ConfigError::at(self.label, l, None, cause),
                None => ConfigError::new(self.label, cause),
            },
        }
    }

    fn warn(&self, key: &str, message: impl Into<String>) -> Warning {
        let message = message.into();
        match &self.entry {
            Some((name, line)) => Warning::new(self.label, *line, format!("{name}: {message}")),
            None => Warning::new(self.label, key_line(self.text, key, self.from), message),
        }
    }

    fn string(&self, obj: &Map<String, Value>, key: &str) -> Result<Option<String>, ConfigError> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(key, format!("`{key}` must be a string, not {}", kind_of(other)))),
        }
    }
}

/// Keys TrustGraph reads from a prompt object.
const PROMPT_KEYS: &[&str] = &["id", "prompt", "response-type", "schema", "object-schema"];
/// Extra keys cutline reads from a single-prompt file (session snapshots
/// carry them).
const SINGLE_EXTRA_KEYS: &[&str] = &["system", "stop", "description", "twin"];

/// The fields every prompt object has: template, response type, schema.
fn prompt_fields(
    site: &Site<'_>,
    obj: &Map<String, Value>,
    warnings: &mut Vec<Warning>,
) -> Result<PromptConfig, ConfigError> {
    let mut p = PromptConfig {
        template: site
            .string(obj, "prompt")?
            .ok_or_else(|| site.err("prompt", "missing required key `prompt` (the prompt template)"))?,
        ..PromptConfig::default()
    };
    if let Some(word) = site.string(obj, "response-type")? {
        p.response_type = ResponseType::parse(&word).ok_or_else(|| {
            site.err(
                "response-type",
                format!("unknown response-type {word:?}; expected one of: text, json, jsonl"),
            )
        })?;
    }
    if let Some(s) = obj.get("schema").filter(|s| !s.is_null()) {
        // TrustGraph loads it unchecked and `validate` raises on every value
        // at run time: loaded, said, and every value rejected (see `parse`).
        if let Err(e) = CompiledSchema::compile(s) {
            warnings.push(site.warn(
                "schema",
                format!("{e}; TrustGraph loads it and rejects every value at run time, and so does cutline"),
            ));
        }
        if p.response_type == ResponseType::Jsonl && describes_array(s) {
            warnings.push(site.warn("schema", super::loaders::JSONL_ARRAY_WARNING));
        }
        p.schema = Some(s.clone());
    }
    if let Some(s) = obj.get("object-schema") {
        warnings.push(site.warn("object-schema", OBJECT_SCHEMA_WARNING));
        match CompiledSchema::compile(s) {
            Ok(_) => p.object_schema = Some(s.clone()),
            Err(e) => warnings.push(site.warn("object-schema", format!("`object-schema` ({e}) is left out"))),
        }
    }
    syntax_check(&p.template).map_err(|e| site.err("prompt", syntax_cause(Part::Prompt, &e)))?;
    Ok(p)
}

fn single(site: &Site<'_>, obj: &Map<String, Value>, warnings: &mut Vec<Warning>) -> Result<PromptConfig, ConfigError> {
    let mut p = prompt_fields(site, obj, warnings)?;
    p.id = match site.string(obj, "id")? {
        Some(id) => {
            check_id(&id).map_err(|cause| site.err("id", cause.to_string()))?;
            id
        }
        None => stem(site.label),
    };
    p.system = site.string(obj, "system")?.unwrap_or_default();
    p.description = site.string(obj, "description")?.unwrap_or_default();
    p.twin = site.string(obj, "twin")?;
    if let Some(stop) = obj.get("stop") {
        let list = stop.as_array().and_then(|a| {
            a.iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        p.stop = list.ok_or_else(|| site.err("stop", "`stop` must be an array of strings"))?;
    }
    if !p.system.is_empty() {
        syntax_check(&p.system).map_err(|e| site.err("system", syntax_cause(Part::System, &e)))?;
    }
    for k in obj.keys() {
        if !PROMPT_KEYS.contains(&k.as_str()) && !SINGLE_EXTRA_KEYS.contains(&k.as_str()) {
            warnings.push(site.warn(k, format!("unknown key `{k}` (ignored)")));
        }
    }
    p.origin = Origin {
        file: site.label.to_owned(),
        format: SourceFormat::TrustgraphPrompt,
        ..Origin::default()
    };
    Ok(p)
}

/// Config store or configurator: the shape of `template.*` and
/// `template-index` values (strings or raw), which must agree.
fn shape(label: &str, text: &str, from: usize, obj: &Map<String, Value>) -> Result<bool, ConfigError> {
    let mut first: Option<(&str, bool)> = None;
    for (k, v) in obj {
        if k != "template-index" && !k.starts_with("template.") {
            continue;
        }
        let encoded = v.is_string();
        match first {
            None => first = Some((k, encoded)),
            Some((k0, e0)) if e0 != encoded => {
                let what = |e: bool| if e { "a JSON-encoded string" } else { "raw JSON" };
                return Err(ConfigError {
                    file: label.to_owned(),
                    line: key_line(text, k, from),
                    column: None,
                    message: format!(
                        "`{k}` is {} but `{k0}` is {}; a bundle holds either the config store's encoded strings \
                         or the configurator's raw values",
                        what(encoded),
                        what(e0)
                    ),
                    source: None,
                });
            }
            Some(_) => {}
        }
    }
    Ok(first.is_none_or(|(_, e)| e))
}

fn bundle(
    label: &str,
    text: &str,
    from: usize,
    obj: &Map<String, Value>,
    loader: TgLoader,
) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    let encoded = shape(label, text, from, obj)?;
    let b = Bundle {
        label,
        text,
        from,
        obj,
        encoded,
    };
    let mut warnings = Vec::new();
    let system = b.system(&mut warnings)?;
    let (index, indexed) = b.index(loader)?;
    let ids = b.loaded_ids(&index, loader);
    let mut prompts: Vec<PromptConfig> = Vec::with_capacity(ids.len());
    for id in &ids {
        if prompts.iter().any(|p| &p.id == id) {
            warnings.push(b.warn(Some("template-index"), format!("template-index lists `{id}` twice")));
        } else {
            let mut p = b.entry(id, &system, &mut warnings).map_err(|e| b.half_load(e))?;
            p.origin.indexed = Some(indexed);
            prompts.push(p);
        }
    }
    if indexed {
        b.index_warnings(&index, loader, &mut warnings);
    }
    for k in obj.keys() {
        if k != "system" && k != "template-index" && !k.starts_with("template.") {
            warnings.push(b.warn(Some(k), format!("unknown key `{k}` (ignored)")));
        }
    }
    if prompts.is_empty() {
        return Err(ConfigError::new(label, "the bundle holds no templates"));
    }
    Ok((prompts, warnings))
}
