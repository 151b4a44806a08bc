//! TrustGraph's config REST API through its gateway: `POST
//! {url}api/v1/config` with an `operation` (`getvalues`, `get`, `put`,
//! `delete`) and the workspace, as TrustGraph's own `Api.config()` client
//! sends it (trustgraph-base 2.11.1). Values are strings (a prompt's value
//! is JSON text); `get` of a missing key answers `value: null`; reads carry
//! the one global `version` (put and delete answer `version: 0`).
//!
//! Every call is bounded: `Deployment::timeout` for the whole exchange and
//! [`MAX_ANSWER_BYTES`] for the body. Every error text passes through the
//! token scrub before it is kept.

use std::collections::BTreeMap;

use futures_util::StreamExt;
use serde_json::{Value, json};

use super::{Deployment, PROMPT_TYPE, TgError};

/// Largest answer the client reads (a workspace's whole `prompt` type).
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// A workspace's `prompt` type at one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The config service's global version when it was read.
    pub version: u64,
    /// Key → value string, sorted by key (as the service reloads them).
    pub values: BTreeMap<String, String>,
}

/// The config API of one deployment and workspace.
#[derive(Debug, Clone)]
pub struct ConfigClient {
    dep: Deployment,
    http: reqwest::Client,
}

impl ConfigClient {
    /// A client for `dep`; redirects to another origin are never followed,
    /// so the token never leaves the deployment.
    pub fn new(dep: Deployment) -> Self {
        let timeouts = crate::llm::Timeouts {
            connect: dep.timeout,
            ..crate::llm::Timeouts::default()
        };
        Self {
            http: crate::llm::http::client(&timeouts),
            dep,
        }
    }

    /// The deployment asked.
    pub fn deployment(&self) -> &Deployment {
        &self.dep
    }

    /// Every key and value of the workspace's `prompt` type, with the version.
    pub async fn prompts(&self) -> Result<Snapshot, TgError> {
        let answer = self
            .call(json!({"operation": "getvalues", "type": PROMPT_TYPE}))
            .await?;
        let version = self.version_of(&answer)?;
        let mut values = BTreeMap::new();
        for v in self.values_of(&answer)? {
            let (key, value) = self.entry(v)?;
            if let Some(value) = value {
                values.insert(key, value);
            }
        }
        Ok(Snapshot { version, values })
    }

    /// The values of `keys` (`None`: no such key), with the version.
    pub async fn get(&self, keys: &[String]) -> Result<(BTreeMap<String, Option<String>>, u64), TgError> {
        let keys_json: Vec<Value> = keys.iter().map(|k| json!({"type": PROMPT_TYPE, "key": k})).collect();
        let answer = self.call(json!({"operation": "get", "keys": keys_json})).await?;
        let version = self.version_of(&answer)?;
        let mut out = BTreeMap::new();
        for v in self.values_of(&answer)? {
            let (key, value) = self.entry(v)?;
            out.insert(key, value);
        }
        Ok((out, version))
    }

    /// Put `values` (key → value) in one request: one version step.
    pub async fn put(&self, values: &BTreeMap<String, String>) -> Result<(), TgError> {
        if values.is_empty() {
            return Ok(());
        }
        let list: Vec<Value> = values
            .iter()
            .map(|(k, v)| json!({"type": PROMPT_TYPE, "key": k, "value": v}))
            .collect();
        self.call(json!({"operation": "put", "values": list})).await.map(drop)
    }

    /// Delete `keys` in one request: one version step.
    pub async fn delete(&self, keys: &[String]) -> Result<(), TgError> {
        if keys.is_empty() {
            return Ok(());
        }
        let list: Vec<Value> = keys.iter().map(|k| json!({"type": PROMPT_TYPE, "key": k})).collect();
        self.call(json!({"operation": "delete", "keys": list})).await.map(drop)
    }

    fn protocol(&self, what: impl Into<String>) -> TgError {
        TgError::Protocol {
            url: self.url_label(),
            what: what.into(),
        }
    }

    /// The endpoint as an error names it, scrubbed of the token (a URL
    /// may carry it in its path).
    fn url_label(&self) -> String {
        let url = self
            .dep
            .endpoint("config")
            .map_or_else(|_| self.dep.url().to_owned(), |u| u.to_string());
        self.dep.scrub(&url)
    }

    fn version_of(&self, answer: &Value) -> Result<u64, TgError> {
        match answer.get("version") {
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                .ok_or_else(|| self.protocol(format!("`version` is {v}, not a number"))),
            None => Err(self.protocol("no `version` in the answer")),
        }
    }

    fn values_of<'a>(&self, answer: &'a Value) -> Result<&'a Vec<Value>, TgError> {
        answer
            .get("values")
            .and_then(Value::as_array)
            .ok_or_else(|| self.protocol("no `values` list in the answer"))
    }

    fn entry(&self, v: &Value) -> Result<(String, Option<String>), TgError> {
        let key = v
            .get("key")
            .and_then(Value::as_str)
            .ok_or_else(|| self.protocol("a value without its `key`"))?;
        let value = match v.get("value") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(self.protocol(format!("the value of {key:?} is {other}, not a string"))),
        };
        Ok((key.to_owned(), value))
    }

    /// One request with the workspace; the answer as JSON, or the error.
    async fn call(&self, mut body: Value) -> Result<Value, TgError> {
        body["workspace"] = Value::String(self.dep.workspace.clone());
        let url = self.dep.endpoint("config")?;
        let secs = self.dep.timeout.as_secs().max(1);
        let exchange = async {
            let mut req = self.http.post(url.clone()).json(&body);
            if let Some(t) = self.dep.token() {
                req = req.bearer_auth(t.expose());
            }
            let resp = req.send().await.map_err(|e| self.transport(e))?;
            let status = resp.status();
            let bytes = read_capped(resp).await.map_err(|e| match e {
                Capped::Transport(e) => self.transport(e),
                Capped::TooLarge => self.protocol(format!("the answer is over {MAX_ANSWER_BYTES} bytes")),
            })?;
            Ok::<_, TgError>((status, bytes))
        };
        let (status, bytes) =
            tokio::time::timeout(self.dep.timeout, exchange)
                .await
                .map_err(|_| TgError::TimedOut {
                    url: self.url_label(),
                    what: "the config API's answer",
                    secs,
                })??;
        let text = self.dep.scrub(&String::from_utf8_lossy(&bytes));
        let parsed: Option<Value> = serde_json::from_str(&text).ok();
        if !status.is_success() {
            let message = parsed
                .as_ref()
                .and_then(error_text)
                .unwrap_or_else(|| text.chars().take(300).collect());
            return Err(match status.as_u16() {
                401 | 403 => TgError::Unauthorized {
                    url: self.url_label(),
                    status: status.as_u16(),
                    message,
                },
                code => TgError::Status {
                    url: self.url_label(),
                    status: code,
                    message,
                },
            });
        }
        let answer = parsed.ok_or_else(|| self.protocol("the answer is not JSON"))?;
        if let Some(message) = error_text(&answer) {
            return Err(TgError::Service {
                service: "config",
                message,
            });
        }
        Ok(answer)
    }

    /// What a transport error says, scrubbed; reqwest's error itself kept
    /// as the source unless its text shows the token (a cause cannot be
    /// scrubbed, only dropped).
    fn transport(&self, e: reqwest::Error) -> TgError {
        let url = self.url_label();
        if e.is_timeout() {
            return TgError::TimedOut {
                url,
                what: "the connection",
                secs: self.dep.timeout.as_secs().max(1),
            };
        }
        let text = crate::llm::chain_text(&e);
        let message = self.dep.scrub(&text);
        let source = (message == text).then_some(e);
        TgError::Unreachable { url, message, source }
    }
}

/// The `error` of an answer: a string, or `{type, message}` as TrustGraph's
/// services send it.
pub(crate) fn error_text(v: &Value) -> Option<String> {
    match v.get("error")? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => {
            let message = o.get("message").and_then(Value::as_str).unwrap_or("");
            match o.get("type").and_then(Value::as_str) {
                Some(t) if !message.is_empty() => Some(format!("{t}: {message}")),
                Some(t) => Some(t.to_owned()),
                None => Some(message.to_owned()),
            }
        }
        other => Some(other.to_string()),
    }
}

enum Capped {
    Transport(reqwest::Error),
    TooLarge,
}

async fn read_capped(resp: reqwest::Response) -> Result<Vec<u8>, Capped> {
    let mut body = Vec::new();
    let mut chunks = resp.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(Capped::Transport)?;
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(Capped::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
