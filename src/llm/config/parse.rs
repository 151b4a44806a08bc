//! One providers file's text read into entries: unknown keys, a key
//! written into the file, values out of range and options for the wrong
//! kind are refused at their line and column.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::{Kind, ProviderConfig, ProvidersFileError};
use crate::llm::anthropic::Via;
use crate::llm::profile::{self, Api, Effort};
use crate::llm::structured::Mode;
use crate::llm::wire::Headers;

/// A providers file as TOML has it; other tables are left to their readers.
#[derive(Deserialize)]
struct File {
    #[serde(default)]
    provider: Vec<Spanned<Raw>>,
}

/// One `[[provider]]` entry as written, with the spans its messages point at.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Spanned<String>,
    kind: Kind,
    base_url: Option<Spanned<String>>,
    model: Option<String>,
    api_key_env: Option<Spanned<String>>,
    api_key: Option<Spanned<serde::de::IgnoredAny>>,
    max_tokens: Option<u32>,
    temperature: Option<Spanned<f32>>,
    top_p: Option<Spanned<f32>>,
    stop: Option<Vec<String>>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    structured: Mode,
    thinking_budget: Option<u32>,
    effort: Option<Effort>,
    api: Option<Spanned<Api>>,
    #[serde(default)]
    profile: profile::Overrides,
    structured_via: Option<Spanned<Via>>,
    max_retries: Option<u32>,
    retry_base_secs: Option<Spanned<f64>>,
    retry_max_wait_secs: Option<Spanned<f64>>,
    connect_timeout_secs: Option<Spanned<f64>>,
    idle_timeout_secs: Option<Spanned<f64>>,
    first_byte_timeout_secs: Option<Spanned<f64>>,
    total_timeout_secs: Option<Spanned<f64>>,
    workspace: Option<Spanned<String>>,
    flow: Option<Spanned<String>>,
}

impl Raw {
    /// The checked entry as a config, defined at `origin` in `path`.
    fn into_config(self, name: String, origin: String, path: &Path) -> ProviderConfig {
        ProviderConfig {
            name,
            kind: self.kind,
            base_url: self.base_url.map(|u| u.into_inner().trim_end_matches('/').to_owned()),
            model: self.model,
            api_key_env: self.api_key_env.map(Spanned::into_inner),
            max_tokens: self.max_tokens,
            temperature: self.temperature.map(Spanned::into_inner),
            top_p: self.top_p.map(Spanned::into_inner),
            stop: self.stop,
            headers: Headers(self.headers.into_iter().collect()),
            structured: self.structured,
            thinking_budget: self.thinking_budget,
            effort: self.effort,
            api: self.api.map(Spanned::into_inner),
            profile: self.profile,
            structured_via: self.structured_via.map(Spanned::into_inner),
            max_retries: self.max_retries,
            retry_base_secs: self.retry_base_secs.map(Spanned::into_inner),
            retry_max_wait_secs: self.retry_max_wait_secs.map(Spanned::into_inner),
            connect_timeout_secs: self.connect_timeout_secs.map(Spanned::into_inner),
            idle_timeout_secs: self.idle_timeout_secs.map(Spanned::into_inner),
            first_byte_timeout_secs: self.first_byte_timeout_secs.map(Spanned::into_inner),
            total_timeout_secs: self.total_timeout_secs.map(Spanned::into_inner),
            workspace: self.workspace.map(Spanned::into_inner),
            flow: self.flow.map(Spanned::into_inner),
            origin: Some(origin),
            file: Some(path.to_owned()),
        }
    }
}

/// The 1-based line and column (in characters) of byte `offset`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Whether `s` can name an environment variable (and so is not a key).
pub(super) fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parse one config file's text; `path` is for messages.
pub fn parse(text: &str, path: &Path) -> Result<Vec<ProviderConfig>, ProvidersFileError> {
    let err_at = |offset: Option<usize>, message: String| ProvidersFileError {
        path: path.to_owned(),
        at: offset.map(|o| line_col(text, o)),
        message,
        source: None,
    };
    // The error's own Display quotes the offending line, which could hold a
    // secret: only its message and position are used.
    let file: File = toml::from_str(text).map_err(|e| err_at(e.span().map(|s| s.start), e.message().to_owned()))?;
    let mut out: Vec<ProviderConfig> = Vec::new();
    for entry in file.provider {
        let at = entry.span().start;
        let raw = entry.into_inner();
        let name = raw.name.get_ref().trim().to_owned();
        let name_at = Some(raw.name.span().start);
        if name.is_empty() {
            return Err(err_at(name_at, "a provider needs a non-empty `name`".into()));
        }
        if out.iter().any(|p| p.name == name) {
            return Err(err_at(
                name_at,
                format!("provider {name:?} is defined twice in this file"),
            ));
        }
        if let Some((offset, message)) = check(&raw, &name, at) {
            return Err(err_at(Some(offset), message));
        }
        let (line, col) = line_col(text, at);
        out.push(raw.into_config(name, format!("{}:{line}:{col}", path.display()), path));
    }
    Ok(out)
}

/// What is wrong with one entry, and where (byte offset); `at` is the
/// entry's own offset. The first problem found, in the order written here.
fn check(raw: &Raw, name: &str, at: usize) -> Option<(usize, String)> {
    check_key(raw, name)
        .or_else(|| check_endpoint(raw, name, at))
        .or_else(|| check_kind_options(raw, name, at))
        .or_else(|| check_ranges(raw, name))
        .or_else(|| check_durations(raw, name))
}

/// A key written into the file, or `api_key_env` holding what looks like one.
fn check_key(raw: &Raw, name: &str) -> Option<(usize, String)> {
    if let Some(k) = &raw.api_key {
        return Some((
            k.span().start,
            format!(
                "provider {name:?}: API keys do not go in config files; export the key in an \
                 environment variable and name that variable with `api_key_env`"
            ),
        ));
    }
    if let Some(env) = raw.api_key_env.as_ref().filter(|e| !is_env_name(e.get_ref())) {
        return Some((
            env.span().start,
            format!(
                "provider {name:?}: `api_key_env` must be the NAME of an environment variable \
                 (like OPENAI_API_KEY), not the key itself"
            ),
        ));
    }
    None
}

/// A model and base URL where the kind needs them, and a usable URL.
fn check_endpoint(raw: &Raw, name: &str, at: usize) -> Option<(usize, String)> {
    if raw.kind.needs_model() && raw.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
        return Some((
            at,
            format!("provider {name:?} (kind {}) needs a `model`", raw.kind.as_str()),
        ));
    }
    match &raw.base_url {
        Some(u) => {
            let ok = reqwest::Url::parse(u.get_ref()).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
            if !ok {
                return Some((
                    u.span().start,
                    format!("provider {name:?}: `base_url` must be an http:// or https:// URL"),
                ));
            }
        }
        // A kind built from its entry with no URL of its own to default to.
        None if raw.kind.spec().base_url.is_none() && raw.kind.spec().build.is_some() => {
            return Some((
                at,
                format!(
                    "provider {name:?} (kind {}) needs a `base_url`, e.g. http://127.0.0.1:8080/v1",
                    raw.kind.as_str()
                ),
            ));
        }
        None => {}
    }
    None
}

/// Options the entry's kind does not take: a kind-specific key is taken by
/// the kinds whose spec lists it (`ProviderSpec::options`); a kind chosen
/// with `--provider` (no `build`) takes no headers and no key.
fn check_kind_options(raw: &Raw, name: &str, at: usize) -> Option<(usize, String)> {
    let spec = raw.kind.spec();
    let given = [
        ("api", "`api` applies", raw.api.as_ref().map(|a| a.span().start)),
        (
            "structured_via",
            "`structured_via` applies",
            raw.structured_via.as_ref().map(|v| v.span().start),
        ),
        (
            "workspace",
            "`workspace` and `flow` apply",
            raw.workspace.as_ref().or(raw.flow.as_ref()).map(|v| v.span().start),
        ),
    ];
    for (key, says, at) in given {
        if let Some(at) = at.filter(|_| !spec.options.contains(&key)) {
            return Some((at, format!("provider {name:?}: {says} to {} only", takers(key))));
        }
    }
    if spec.build.is_none() {
        let unsupported = if raw.headers.is_empty() { None } else { Some("headers") };
        if let Some(what) = unsupported.or(raw.api_key_env.as_ref().map(|_| "api_key_env")) {
            return Some((
                at,
                format!(
                    "provider {name:?}: `{what}` is not supported for kind {}",
                    spec.kind.as_str()
                ),
            ));
        }
    }
    None
}

/// The kinds that take `key`, for a message: `kind anthropic`, `kinds
/// openai and openai-compatible`.
fn takers(key: &str) -> String {
    let words: Vec<&str> = crate::llm::PROVIDERS
        .iter()
        .filter(|s| s.options.contains(&key))
        .map(|s| s.kind.as_str())
        .collect();
    match words.as_slice() {
        [one] => format!("kind {one}"),
        [rest @ .., last] => format!("kinds {} and {last}", rest.join(", ")),
        [] => "no kind".to_owned(),
    }
}

/// `temperature` and `top_p` outside their ranges.
fn check_ranges(raw: &Raw, name: &str) -> Option<(usize, String)> {
    if let Some(t) = raw.temperature.as_ref().filter(|t| !(0.0..=2.0).contains(t.get_ref())) {
        return Some((
            t.span().start,
            format!("provider {name:?}: `temperature` must be between 0 and 2"),
        ));
    }
    if let Some(t) = raw.top_p.as_ref().filter(|t| !(0.0..=1.0).contains(t.get_ref())) {
        return Some((
            t.span().start,
            format!("provider {name:?}: `top_p` must be between 0 and 1"),
        ));
    }
    None
}

/// A retry or timeout setting that is not a positive number of seconds.
fn check_durations(raw: &Raw, name: &str) -> Option<(usize, String)> {
    for (key, v) in [
        ("retry_base_secs", &raw.retry_base_secs),
        ("retry_max_wait_secs", &raw.retry_max_wait_secs),
        ("connect_timeout_secs", &raw.connect_timeout_secs),
        ("idle_timeout_secs", &raw.idle_timeout_secs),
        ("first_byte_timeout_secs", &raw.first_byte_timeout_secs),
        ("total_timeout_secs", &raw.total_timeout_secs),
    ] {
        if let Some(v) = v
            .as_ref()
            .filter(|v| !(v.get_ref().is_finite() && *v.get_ref() > 0.0 && *v.get_ref() < 86_400.0))
        {
            return Some((
                v.span().start,
                format!("provider {name:?}: `{key}` must be a positive number of seconds"),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars() {
        assert_eq!(line_col("ab\ncdé\nx", 0), (1, 1));
        assert_eq!(line_col("ab\ncdé\nx", 3), (2, 1));
        assert_eq!(line_col("ab\ncdé\nx", 8), (3, 1));
    }

    #[test]
    fn env_names() {
        assert!(is_env_name("OPENAI_API_KEY"));
        assert!(is_env_name("_x1"));
        assert!(!is_env_name("sk-abc"));
        assert!(!is_env_name("1A"));
        assert!(!is_env_name(""));
    }
}
