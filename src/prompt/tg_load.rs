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

/// The system prompt TrustGraph's `PromptManager` uses when the bundle has
/// none (or one it cannot decode).
pub const DEFAULT_SYSTEM: &str = "Be helpful.";

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
                cause: format!("{name}: {cause}"),
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

/// A config bundle being read: errors name the bundle key's line.
struct Bundle<'a> {
    label: &'a str,
    text: &'a str,
    from: usize,
    obj: &'a Map<String, Value>,
    /// Config store (values are JSON-encoded strings) or configurator (raw).
    encoded: bool,
}

impl Bundle<'_> {
    /// The ids this TrustGraph loads: the index's (2.8.13 and older), or
    /// every `template.<id>` key (current releases; the index is not
    /// read), the indexed ones first in the index's order.
    fn loaded_ids(&self, index: &[String], loader: TgLoader) -> Vec<String> {
        match loader {
            TgLoader::Indexed => index.to_vec(),
            TgLoader::Prefix => {
                let mut all: Vec<String> = index
                    .iter()
                    .filter(|i| self.templates().any(|t| t == i.as_str()))
                    .cloned()
                    .collect();
                all.extend(
                    self.templates()
                        .filter(|t| !all.iter().any(|a| a == t))
                        .map(str::to_owned)
                        .collect::<Vec<_>>(),
                );
                all
            }
        }
    }

    /// Where the index and the templates disagree, and what each loader
    /// makes of it.
    fn index_warnings(&self, index: &[String], loader: TgLoader, warnings: &mut Vec<Warning>) {
        if loader == TgLoader::Prefix {
            for id in index.iter().filter(|i| !self.templates().any(|t| t == i.as_str())) {
                warnings.push(self.warn(
                    Some("template-index"),
                    format!(
                        "template-index lists `{id}` but there is no `template.{id}` key: TrustGraph does not read \
                         the index (2.8.13 and older fail to load this bundle)"
                    ),
                ));
            }
        }
        for t in self.templates() {
            if !index.iter().any(|i| i == t) {
                let key = format!("template.{t}");
                let message = match loader {
                    TgLoader::Indexed => {
                        format!(
                            "`{key}` is not in template-index: TrustGraph 2.8.13 and older do not load it (skipped)"
                        )
                    }
                    TgLoader::Prefix => format!(
                        "`{key}` is not in template-index: TrustGraph loads it (2.8.13 and older skip it; add it to \
                         the index for them)"
                    ),
                };
                warnings.push(self.warn(Some(&key), message));
            }
        }
    }

    fn line(&self, key: &str) -> Option<usize> {
        key_line(self.text, key, self.from)
    }

    fn err(&self, key: &str, cause: String) -> ConfigError {
        ConfigError {
            file: self.label.to_owned(),
            line: self.line(key),
            column: None,
            cause,
        }
    }

    fn warn(&self, key: Option<&str>, message: String) -> Warning {
        Warning::new(self.label, key.and_then(|k| self.line(k)), message)
    }

    /// A value as TrustGraph's loader sees it: decoded from its string in
    /// the config-store shape, as is in the configurator's.
    fn value(&self, key: &str, v: &Value) -> Result<Value, ConfigError> {
        if !self.encoded {
            return Ok(v.clone());
        }
        let Value::String(s) = v else {
            return Err(self.err(
                key,
                format!(
                    "{key}: expected a JSON-encoded string (in this bundle the values are encoded, as the \
                     config store holds them), found {}",
                    kind_of(v)
                ),
            ));
        };
        serde_json::from_str(s).map_err(|e| {
            let offset = crate::output::position::offset_of(s.as_bytes(), e.line(), e.column());
            let (line, column) = crate::output::position::line_col(s.as_bytes(), offset);
            let place = if line > 1 {
                format!("line {line} column {column}")
            } else {
                format!("column {column}")
            };
            self.err(
                key,
                format!(
                    "{key}: invalid JSON at {place} of the encoded value: {}",
                    json_message(&e)
                ),
            )
        })
    }

    /// The shared system template: TrustGraph's default when absent.
    fn system(&self, warnings: &mut Vec<Warning>) -> Result<String, ConfigError> {
        // A config-store `system` that is not JSON (plain text written without
        // its quotes): TrustGraph's `json.loads` fails and it silently uses
        // its default; so does cutline, saying so.
        if let Some(Value::String(raw)) = self.obj.get("system").filter(|_| self.encoded)
            && serde_json::from_str::<Value>(raw).is_err()
        {
            warnings.push(self.warn(
                Some("system"),
                format!(
                    "system: THE VALUE IS NOT JSON, so TrustGraph's prompt service silently uses {DEFAULT_SYSTEM:?} \
                     instead of it (and so does cutline); store it as a JSON string, quotes included: {}",
                    serde_json::to_string(raw).unwrap_or_default()
                ),
            ));
            return Ok(DEFAULT_SYSTEM.to_owned());
        }
        let system = match self.obj.get("system") {
            None => {
                warnings.push(self.warn(
                    None,
                    format!("no `system`: TrustGraph's prompt service uses {DEFAULT_SYSTEM:?}, and so does cutline"),
                ));
                return Ok(DEFAULT_SYSTEM.to_owned());
            }
            Some(v) => match self.value("system", v)? {
                Value::String(s) => s,
                other => {
                    return Err(self.err(
                        "system",
                        format!("system: the value is {}, expected a string", kind_of(&other)),
                    ));
                }
            },
        };
        syntax_check(&system).map_err(|e| self.err("system", format!("system: {}", syntax_cause(Part::System, &e))))?;
        Ok(system)
    }

    /// The ids to load: `template-index`, or every `template.<id>` without one.
    fn index(&self, loader: TgLoader) -> Result<(Vec<String>, bool), ConfigError> {
        let Some(v) = self.obj.get("template-index") else {
            if loader == TgLoader::Indexed {
                return Err(ConfigError::new(
                    self.label,
                    "no `template-index`: TrustGraph 2.8.13 and older load only the ids the index lists, so none \
                     from this bundle",
                ));
            }
            return Ok((self.templates().map(str::to_owned).collect(), false));
        };
        let decoded = self.value("template-index", v)?;
        let ids = decoded.as_array().and_then(|a| {
            a.iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        let ids = ids.ok_or_else(|| {
            self.err(
                "template-index",
                format!(
                    "template-index: the value is {}, expected a list of template ids",
                    kind_of(&decoded)
                ),
            )
        })?;
        for id in &ids {
            check_id(id).map_err(|cause| self.err("template-index", format!("template-index: {cause}")))?;
        }
        Ok((ids, true))
    }

    /// `e` (a template that does not load) with what TrustGraph 2.11.1 makes
    /// of this workspace when ibis refuses it: the prompts whose keys sort
    /// before it serve, it and the later ones fail.
    fn half_load(&self, mut e: ConfigError) -> ConfigError {
        let values: std::collections::BTreeMap<String, String> = self
            .obj
            .iter()
            .filter(|(k, _)| *k == "system" || k.starts_with("template."))
            .map(|(k, v)| {
                let raw = match v {
                    Value::String(s) if self.encoded => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), raw)
            })
            .collect();
        if let super::tg_reload::Reload::HalfLoaded {
            key, serving, failing, ..
        } = super::tg_reload::reload(&values).reload
            && e.cause.starts_with(&format!("{key}:"))
        {
            let list = super::tg_reload::list_or_none;
            e.cause = format!(
                "{}; TrustGraph would half-load this workspace: {} would serve, {} would fail with KeyError until \
                 it is fixed",
                e.cause,
                list(&serving),
                list(&failing)
            );
        }
        e
    }

    fn templates(&self) -> impl Iterator<Item = &str> {
        self.obj.keys().filter_map(|k| k.strip_prefix("template."))
    }

    /// The prompt under `template.<id>`.
    fn entry(&self, id: &str, system: &str, warnings: &mut Vec<Warning>) -> Result<PromptConfig, ConfigError> {
        let key = format!("template.{id}");
        let Some(v) = self.obj.get(&key) else {
            return Err(self.err(
                "template-index",
                format!("template-index lists `{id}` but there is no `{key}` key"),
            ));
        };
        check_id(id).map_err(|cause| self.err(&key, format!("{key}: {cause}")))?;
        let decoded = self.value(&key, v)?;
        let site = Site {
            label: self.label,
            text: self.text,
            from: self.from,
            entry: Some((key.clone(), self.line(&key))),
        };
        let Value::Object(entry) = decoded else {
            return Err(site.err(
                "",
                format!("the value is {}, expected a prompt object", kind_of(&decoded)),
            ));
        };
        let mut p = prompt_fields(&site, &entry, warnings)?;
        for k in entry.keys() {
            if !PROMPT_KEYS.contains(&k.as_str()) {
                warnings.push(site.warn(k, format!("unknown key `{k}` (ignored)")));
            }
        }
        id.clone_into(&mut p.id);
        system.clone_into(&mut p.system);
        p.origin = Origin {
            file: self.label.to_owned(),
            format: if self.encoded {
                SourceFormat::TrustgraphBundle
            } else {
                SourceFormat::TrustgraphConfig
            },
            ..Origin::default()
        };
        Ok(p)
    }
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
                    cause: format!(
                        "`{k}` is {} but `{k0}` is {}; a bundle holds either the config store's encoded strings \
                         or the configurator's raw values",
                        what(encoded),
                        what(e0)
                    ),
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
