//! What TrustGraph's prompt service makes of a workspace's whole `prompt`
//! config when it reloads it (trustgraph-flow 2.11.1,
//! `PromptManager.load_config`, run on every config change).
//!
//! The loader is not all-or-nothing, and that is what makes a bad push
//! dangerous in a live deployment:
//! - `system` is `json.loads`-ed; a value that is not JSON (plain text) or
//!   is missing silently becomes `"Be helpful."`;
//! - every `template.<id>` value is `json.loads`-ed and read with `.get`
//!   first, in the config's key order: a value that is not JSON, or not a
//!   JSON object, raises before anything is replaced, so the reload fails
//!   and the service keeps serving the config it had;
//! - then the new prompts replace the old ones, the system template is
//!   compiled (a failure there keeps the old compiled templates beside the
//!   new prompts), and the templates are compiled one by one with
//!   `ibis.Template`: the first one ibis refuses ends the loop, so the
//!   prompts before it serve their new text and it and every later one fail
//!   with `KeyError` until the key is fixed.
//!
//! [`reload`] reads a `prompt` type's key → value strings in the order the
//! config service hands them over (sorted by key) and says which prompts
//! would serve and which would not, and why. Pure: values in, outcome out.

use std::collections::BTreeMap;

use serde_json::Value;

use super::check_id;
use super::ibis::ibis_check;

/// The system prompt TrustGraph's `PromptManager` uses when the bundle has
/// none (or one it cannot decode).
pub const DEFAULT_SYSTEM: &str = "Be helpful.";
use crate::output::schema::kind_of;

/// The config type TrustGraph's prompt service reads.
pub const PROMPT_TYPE: &str = "prompt";
/// The config key of the shared system template.
pub const SYSTEM_KEY: &str = "system";
/// The prefix of a prompt's config key.
pub const TEMPLATE_PREFIX: &str = "template.";

/// How the service would take a reload of this `prompt` config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reload {
    /// Every prompt loads and serves.
    Clean,
    /// `json.loads` (or `.get`) raises on a template's value before anything
    /// is replaced: the service logs "Configuration reload failed" and goes
    /// on serving the config it had before this change.
    Refused {
        /// The key whose value raised.
        key: String,
        /// Why, as the loader would fail.
        cause: String,
    },
    /// The system template is not a string ibis compiles: the new prompts
    /// replace the old ones but the compiled templates stay the old ones,
    /// so new and renamed prompts fail with `KeyError`.
    SystemBroken {
        /// Why.
        cause: String,
    },
    /// ibis refuses a template: the prompts before it (in key order) serve
    /// their new text, it and every later one fail with `KeyError`.
    HalfLoaded {
        /// The key ibis refused.
        key: String,
        /// ibis's message.
        cause: String,
        /// Prompt ids that still serve.
        serving: Vec<String>,
        /// Prompt ids that fail until the key is fixed (the refused one first).
        failing: Vec<String>,
    },
}

/// A workspace's `prompt` config as the service would load it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReloadReport {
    /// The whole reload's fate.
    pub reload: Reload,
    /// The system the service would render with.
    pub system: SystemValue,
    /// Problems that do not stop the reload but are almost surely mistakes
    /// (a `template.<id>` whose id is not a name, an unknown response type,
    /// a template that is not a string), each with its key.
    pub warnings: Vec<(String, String)>,
}

/// What becomes of the `system` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemValue {
    /// A JSON string: that text.
    Decoded(String),
    /// No `system` key: TrustGraph's default.
    Missing,
    /// Not JSON (plain text written without its quotes): silently TrustGraph's
    /// default, the text is never used.
    NotJson(String),
    /// JSON, but not a string (a number, an object): the system template
    /// fails to compile.
    NotAString(String),
}

impl SystemValue {
    /// The system text the service renders with, when it can.
    pub fn effective(&self) -> Option<&str> {
        match self {
            Self::Decoded(s) => Some(s),
            Self::Missing | Self::NotJson(_) => Some(DEFAULT_SYSTEM),
            Self::NotAString(_) => None,
        }
    }
}

impl ReloadReport {
    /// Whether a push that leads to this config is one cutline refuses:
    /// anything but a clean reload, or a `system` that silently turns into
    /// the default.
    pub fn refusals(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        match &self.system {
            SystemValue::NotJson(raw) => out.push((
                SYSTEM_KEY.to_owned(),
                format!(
                    "the value is not JSON ({}): TrustGraph would silently use {DEFAULT_SYSTEM:?} instead; a system \
                     is stored as a JSON string, quotes included",
                    preview(raw)
                ),
            )),
            SystemValue::NotAString(_) | SystemValue::Decoded(_) | SystemValue::Missing => {}
        }
        match &self.reload {
            Reload::Clean => {}
            Reload::Refused { key, cause } => out.push((
                key.clone(),
                format!("{cause}: TrustGraph's reload fails and the service keeps its previous prompts"),
            )),
            Reload::SystemBroken { cause } => out.push((
                SYSTEM_KEY.to_owned(),
                format!("{cause}: new prompts would fail with KeyError until it is fixed"),
            )),
            Reload::HalfLoaded {
                key,
                cause,
                serving,
                failing,
            } => out.push((
                key.clone(),
                format!(
                    "ibis refuses the template ({cause}): the workspace would half-load — {} would serve, {} would \
                     fail with KeyError until the key is fixed",
                    list_or_none(serving),
                    list_or_none(failing)
                ),
            )),
        }
        out
    }
}

/// Ids joined for a sentence, or `none`.
pub(crate) fn list_or_none(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".to_owned()
    } else {
        ids.join(", ")
    }
}

fn preview(raw: &str) -> String {
    let mut s: String = raw.chars().take(40).collect();
    if s.len() < raw.len() {
        s.push('…');
    }
    format!("{s:?}")
}

/// TrustGraph's reload of a `prompt` config (key → value string, in the
/// config service's order, which is sorted by key).
pub fn reload(config: &BTreeMap<String, String>) -> ReloadReport {
    let system = system_value(config.get(SYSTEM_KEY).map(String::as_str));
    let mut warnings = Vec::new();
    // First pass: every template value decoded and read as an object, before
    // anything is replaced (a raise here fails the whole reload).
    let mut templates: Vec<(&str, Option<String>)> = Vec::new();
    for (key, raw) in config {
        let Some(id) = key.strip_prefix(TEMPLATE_PREFIX) else {
            continue;
        };
        let decoded: Value = match serde_json::from_str(raw) {
            Ok(v) => v,
            Err(e) => {
                return ReloadReport {
                    reload: Reload::Refused {
                        key: key.clone(),
                        cause: format!("the value is not JSON ({e})"),
                    },
                    system,
                    warnings,
                };
            }
        };
        let Value::Object(obj) = decoded else {
            return ReloadReport {
                reload: Reload::Refused {
                    key: key.clone(),
                    cause: format!("the value is {}, not a JSON object", kind_of(&decoded)),
                },
                system,
                warnings,
            };
        };
        if let Err(e) = check_id(id) {
            warnings.push((key.clone(), e.to_string()));
        }
        if let Some(rt) = obj.get("response-type")
            && !matches!(rt.as_str(), Some("text" | "json" | "jsonl"))
        {
            warnings.push((
                key.clone(),
                format!("response-type {rt} is none of text, json, jsonl: every call of it fails"),
            ));
        }
        templates.push((id, obj.get("prompt").and_then(Value::as_str).map(str::to_owned)));
    }
    if let SystemValue::NotAString(what) = &system {
        return ReloadReport {
            reload: Reload::SystemBroken {
                cause: format!("system is {what}, not a string"),
            },
            system,
            warnings,
        };
    }
    if let Some(Err(e)) = system.effective().map(ibis_check) {
        return ReloadReport {
            reload: Reload::SystemBroken {
                cause: format!("ibis refuses the system template: {}", e.message),
            },
            system,
            warnings,
        };
    }
    let reload = compile_in_order(&templates);
    ReloadReport {
        reload,
        system,
        warnings,
    }
}

/// ibis compiles the templates one by one; the first refusal ends the loop.
fn compile_in_order(templates: &[(&str, Option<String>)]) -> Reload {
    for (i, (id, text)) in templates.iter().enumerate() {
        let cause = match text {
            None => Some("`prompt` is missing or not a string".to_owned()),
            Some(t) => ibis_check(t).err().map(|e| format!("line {}: {}", e.line, e.message)),
        };
        if let Some(cause) = cause {
            return Reload::HalfLoaded {
                key: format!("{TEMPLATE_PREFIX}{id}"),
                cause,
                serving: templates[..i].iter().map(|(id, _)| (*id).to_owned()).collect(),
                failing: templates[i..].iter().map(|(id, _)| (*id).to_owned()).collect(),
            };
        }
    }
    Reload::Clean
}

fn system_value(raw: Option<&str>) -> SystemValue {
    let Some(raw) = raw else {
        return SystemValue::Missing;
    };
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::String(s)) => SystemValue::Decoded(s),
        Ok(other) => SystemValue::NotAString(kind_of(&other).to_owned()),
        Err(_) => SystemValue::NotJson(raw.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    fn tpl(text: &str) -> String {
        serde_json::json!({"prompt": text, "response-type": "jsonl"}).to_string()
    }

    #[test]
    fn a_clean_workspace_serves_everything() {
        let c = cfg(&[("system", "\"Be exact.\""), ("template.a", &tpl("{{ text }}"))]);
        let r = reload(&c);
        assert_eq!(r.reload, Reload::Clean);
        assert_eq!(r.system, SystemValue::Decoded("Be exact.".into()));
        assert!(r.refusals().is_empty());
    }

    #[test]
    fn plain_text_system_silently_becomes_the_default_and_is_refused() {
        let c = cfg(&[("system", "You are a careful extractor."), ("template.a", &tpl("x"))]);
        let r = reload(&c);
        assert_eq!(r.system.effective(), Some("Be helpful."));
        let refusals = r.refusals();
        assert_eq!(refusals.len(), 1);
        assert_eq!(refusals[0].0, "system");
        assert!(refusals[0].1.contains("\"Be helpful.\""), "{}", refusals[0].1);
    }

    #[test]
    fn an_ibis_refusal_half_loads_in_key_order() {
        let c = cfg(&[
            ("template.a", &tpl("ok {{ x }}")),
            ("template.b", &tpl("{% for x in y %}never closed")),
            ("template.c", &tpl("fine")),
        ]);
        match reload(&c).reload {
            Reload::HalfLoaded {
                key, serving, failing, ..
            } => {
                assert_eq!(key, "template.b");
                assert_eq!(serving, vec!["a".to_owned()]);
                assert_eq!(failing, vec!["b".to_owned(), "c".to_owned()]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_value_that_is_not_json_fails_the_whole_reload() {
        let c = cfg(&[("template.a", &tpl("ok")), ("template.b", "{\"prompt\": ")]);
        assert!(matches!(reload(&c).reload, Reload::Refused { key, .. } if key == "template.b"));
        let c = cfg(&[("template.a", "\"just a string\"")]);
        assert!(matches!(reload(&c).reload, Reload::Refused { cause, .. } if cause.contains("a string")));
    }

    #[test]
    fn a_system_that_is_not_a_string_breaks_the_system_template() {
        let c = cfg(&[("system", "42"), ("template.a", &tpl("ok"))]);
        assert!(matches!(reload(&c).reload, Reload::SystemBroken { .. }));
    }
}
