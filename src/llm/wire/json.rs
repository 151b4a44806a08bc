//! One JSON request and its whole answer, for the APIs that are not a
//! stream: a Models API, and the batch APIs (create, poll, list, cancel,
//! upload a file, download results). Same client, key, headers, retries
//! and timeouts as the streams; every body read is bounded and scrubbed of
//! the key before anything is kept of it.

use reqwest::Method;
use serde_json::Value;

use super::{Auth, Endpoint};
use crate::llm::{ErrorKind, LlmError, http};

/// What a request sends.
#[derive(Debug, Clone)]
pub enum Body {
    /// Nothing (GET, a cancel POST).
    Empty,
    /// JSON.
    Json(Value),
    /// A JSONL file uploaded as multipart form data (OpenAI `/files`):
    /// the form's text fields, then the file's name and bytes.
    File {
        /// Text fields (`purpose`).
        fields: Vec<(String, String)>,
        /// The file's name.
        name: String,
        /// Its bytes.
        bytes: Vec<u8>,
    },
    /// Raw bytes with a content type (Gemini's upload).
    Raw {
        /// `Content-Type`.
        content_type: String,
        /// The bytes.
        bytes: Vec<u8>,
    },
}

/// One request of a JSON API: what to send where, how to sign it, and
/// the wire's and this request's own headers.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// The method.
    pub method: Method,
    /// The URL.
    pub url: &'a str,
    /// What it sends.
    pub body: Body,
    /// How the key goes.
    pub auth: Auth,
    /// The wire's fixed headers (`anthropic-version`).
    pub wire: &'a [(&'static str, &'static str)],
    /// Headers of this request only (an upload's, a download's `accept`).
    pub extra: &'a [(String, String)],
}

impl<'a> Call<'a> {
    /// `method` `url` with `body`, signed by `auth`, no extra headers.
    pub fn new(method: Method, url: &'a str, body: Body, auth: Auth) -> Self {
        Self {
            method,
            url,
            body,
            auth,
            wire: &[],
            extra: &[],
        }
    }

    /// With the wire's fixed headers.
    #[must_use]
    pub fn wire(self, wire: &'a [(&'static str, &'static str)]) -> Self {
        Self { wire, ..self }
    }

    /// With headers of this request only.
    #[must_use]
    pub fn extra(self, extra: &'a [(String, String)]) -> Self {
        Self { extra, ..self }
    }
}

/// The largest JSON answer read whole (a batch object, a model's info).
pub const MAX_JSON_BYTES: usize = 8 << 20;

impl Endpoint {
    /// GET `url` as JSON (a Models API), with retries and the request
    /// timeouts; `Ok(None)` for a 404.
    pub async fn get_json(
        &self,
        url: &str,
        auth: Auth,
        wire: &[(&'static str, &'static str)],
    ) -> Result<Option<Value>, LlmError> {
        self.send_json(Call::new(Method::GET, url, Body::Empty, auth).wire(wire))
            .await
    }

    /// Send `call` and read the answer as JSON; `Ok(None)` for a 404.
    pub async fn send_json(&self, call: Call<'_>) -> Result<Option<Value>, LlmError> {
        let url = call.url;
        let bytes = self.send_bytes(call, MAX_JSON_BYTES).await?;
        bytes
            .map(|b| {
                serde_json::from_slice(&b)
                    .map_err(|e| LlmError::caused(ErrorKind::Stream, format!("{url}: not JSON: {e}"), e))
            })
            .transpose()
    }

    /// Send and read the value of one response header (a resumable
    /// upload's `x-goog-upload-url`).
    pub async fn send_for_header(
        &self,
        url: &str,
        body: Body,
        auth: Auth,
        extra: &[(String, String)],
        header: &str,
    ) -> Result<String, LlmError> {
        let headers = self.header_map(auth, &[], extra)?;
        let build = || {
            let r = self.client.post(url).headers(headers.clone());
            match &body {
                Body::Json(v) => r.json(v),
                _ => r,
            }
        };
        let send = http::send(build, &self.retry, self.key.as_ref(), self.timeouts.first_byte);
        let resp = tokio::time::timeout(self.timeouts.total, send)
            .await
            .map_err(|_| LlmError::new(ErrorKind::Timeout, format!("{url}: no answer in time")))??;
        resp.headers()
            .get(header)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| LlmError::new(ErrorKind::Stream, format!("{url}: no {header} in the answer")))
    }

    /// Send `call` and read the whole answer (at most `cap` bytes);
    /// `Ok(None)` for a 404.
    pub async fn send_bytes(&self, call: Call<'_>, cap: usize) -> Result<Option<Vec<u8>>, LlmError> {
        let Call {
            method,
            url,
            body,
            auth,
            wire,
            extra,
        } = call;
        let headers = self.header_map(auth, wire, extra)?;
        let key = self.key.clone();
        let build = || {
            let r = self.client.request(method.clone(), url).headers(headers.clone());
            match &body {
                Body::Empty => r,
                Body::Json(v) => r.json(v),
                Body::Raw { content_type, bytes } => r.header("content-type", content_type).body(bytes.clone()),
                Body::File { fields, name, bytes } => {
                    let mut form = reqwest::multipart::Form::new();
                    for (k, v) in fields {
                        form = form.text(k.clone(), v.clone());
                    }
                    let part = reqwest::multipart::Part::bytes(bytes.clone())
                        .file_name(name.clone())
                        .mime_str("application/jsonl")
                        .unwrap_or_else(|_| reqwest::multipart::Part::bytes(bytes.clone()));
                    r.multipart(form.part("file", part))
                }
            }
        };
        let work = async {
            let resp = match http::send(build, &self.retry, key.as_ref(), self.timeouts.first_byte).await {
                Ok(r) => r,
                Err(e) if e.status == Some(404) => return Ok(None),
                Err(e) => return Err(e),
            };
            let bytes = http::read_capped(resp, cap, self.timeouts.idle).await?;
            // A model that echoes the key must not put it in a record: every
            // body kept (a batch's results, a JSON answer) is scrubbed whole.
            Ok(Some(match key.as_ref() {
                Some(k) => k.scrub(&String::from_utf8_lossy(&bytes)).into_bytes(),
                None => bytes,
            }))
        };
        match tokio::time::timeout(self.timeouts.total, work).await {
            Ok(r) => r.map_err(|e| key.as_ref().map_or(e.clone(), |k| k.scrub_error(e))),
            Err(_) => Err(LlmError::new(
                ErrorKind::Timeout,
                format!("{url}: no whole answer in time"),
            )),
        }
    }
}
