//! One bundle of TrustGraph prompts (config store or configurator shape):
//! which templates this TrustGraph version loads, and each one read into a
//! prompt with errors at the line of its key.

use serde_json::{Map, Value};

use super::{DEFAULT_SYSTEM, PROMPT_KEYS, Site, TgLoader, key_line, prompt_fields};
use crate::output::schema::kind_of;
use crate::prompt::loaders::{json_message, syntax_cause};
use crate::prompt::render::{Part, syntax_check};
use crate::prompt::{ConfigError, Origin, PromptConfig, SourceFormat, Warning, check_id};

/// A config bundle being read: errors name the bundle key's line.
pub(super) struct Bundle<'a> {
    pub(super) label: &'a str,
    pub(super) text: &'a str,
    pub(super) from: usize,
    pub(super) obj: &'a Map<String, Value>,
    /// Config store (values are JSON-encoded strings) or configurator (raw).
    pub(super) encoded: bool,
}

impl Bundle<'_> {
    /// The ids this TrustGraph loads: the index's (2.8.13 and older), or
    /// every `template.<id>` key (current releases; the index is not
    /// read), the indexed ones first in the index's order.
    pub(super) fn loaded_ids(&self, index: &[String], loader: TgLoader) -> Vec<String> {
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
    pub(super) fn index_warnings(&self, index: &[String], loader: TgLoader, warnings: &mut Vec<Warning>) {
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

    pub(super) fn line(&self, key: &str) -> Option<usize> {
        key_line(self.text, key, self.from)
    }

    pub(super) fn err(&self, key: &str, cause: String) -> ConfigError {
        ConfigError {
            file: self.label.to_owned(),
            line: self.line(key),
            column: None,
            message: cause,
            source: None,
        }
    }

    pub(super) fn warn(&self, key: Option<&str>, message: String) -> Warning {
        Warning::new(self.label, key.and_then(|k| self.line(k)), message)
    }

    /// A value as TrustGraph's loader sees it: decoded from its string in
    /// the config-store shape, as is in the configurator's.
    pub(super) fn value(&self, key: &str, v: &Value) -> Result<Value, ConfigError> {
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
    pub(super) fn system(&self, warnings: &mut Vec<Warning>) -> Result<String, ConfigError> {
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
    pub(super) fn index(&self, loader: TgLoader) -> Result<(Vec<String>, bool), ConfigError> {
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
    pub(super) fn half_load(&self, mut e: ConfigError) -> ConfigError {
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
        if let crate::prompt::tg_reload::Reload::HalfLoaded {
            key, serving, failing, ..
        } = crate::prompt::tg_reload::reload(&values).reload
            && e.message.starts_with(&format!("{key}:"))
        {
            let list = crate::prompt::tg_reload::list_or_none;
            e.message = format!(
                "{}; TrustGraph would half-load this workspace: {} would serve, {} would fail with KeyError until \
                 it is fixed",
                e.message,
                list(&serving),
                list(&failing)
            );
        }
        e
    }

    pub(super) fn templates(&self) -> impl Iterator<Item = &str> {
        self.obj.keys().filter_map(|k| k.strip_prefix("template."))
    }

    /// The prompt under `template.<id>`.
    pub(super) fn entry(
        &self,
        id: &str,
        system: &str,
        warnings: &mut Vec<Warning>,
    ) -> Result<PromptConfig, ConfigError> {
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
