//! Gemini's Batch Mode: `POST {base}/v1beta/models/{model}:batchGenerateContent`
//! with the requests inline (each with `metadata.key` = its custom id)
//! while they stay under 20 MB, else as a JSONL file (`{"key", "request"}`
//! lines) uploaded by the resumable upload protocol; the batch is tagged by
//! its `displayName`. States `BATCH_STATE_PENDING` → `RUNNING` →
//! `SUCCEEDED`, or `FAILED` / `CANCELLED` / `EXPIRED`; results inline
//! (`inlinedResponses`, each with its `metadata`) or in a responses file
//! (`{"key", "response" | "error"}` lines), matched by key.

use reqwest::Method;
use serde_json::{Value, json};

use super::{BatchApi, Fut, Item, Limits, Outcome, Phase, Result1, Status, Submitted};
use crate::llm::gemini::{Gemini, whole_events};
use crate::llm::wire::Auth;
use crate::llm::wire::json::{Body, Call};
use crate::llm::{ErrorKind, LlmError};

/// Inline requests stay under this many bytes.
pub const INLINE_BYTES: usize = 20 << 20;

const MAX_RESULTS: usize = 1 << 30;
const AUTH: Auth = Auth::Header("x-goog-api-key");

/// Gemini's batches on a configured provider's endpoint and key.
#[derive(Debug, Clone)]
pub struct GeminiBatch {
    /// The provider (its endpoint and wire encoder).
    pub provider: Gemini,
    /// Requests go inline while their bodies stay under this many bytes
    /// ([`INLINE_BYTES`]), else as an uploaded file.
    pub inline_bytes: usize,
}

impl GeminiBatch {
    fn base(&self) -> &str {
        &self.provider.endpoint.base_url
    }

    fn model(&self) -> String {
        self.provider.endpoint.model.trim_start_matches("models/").to_owned()
    }

    async fn json(&self, method: Method, url: &str, body: Body, extra: &[(String, String)]) -> Result<Value, LlmError> {
        self.provider
            .endpoint
            .send_json(Call::new(method, url, body, AUTH).extra(extra))
            .await?
            .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{url}: not found")))
    }

    /// The batch's operation. Once the batch has ended it holds every
    /// inline response (the requests went in under 20 MB, the answers can
    /// be larger), so it is read under the results' cap, not a JSON call's.
    async fn operation(&self, name: &str) -> Result<Value, LlmError> {
        let url = format!("{}/v1beta/{name}", self.base());
        let bytes = self
            .provider
            .endpoint
            .send_bytes(Call::new(Method::GET, &url, Body::Empty, AUTH), MAX_RESULTS)
            .await?
            .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{url}: not found")))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| LlmError::caused(ErrorKind::Stream, format!("{url}: not JSON: {e}"), e))
    }

    /// Upload `bytes` as a JSONL file; its name (`files/…`).
    async fn upload(&self, bytes: Vec<u8>, tag: &str) -> Result<String, LlmError> {
        let start = format!("{}/upload/v1beta/files", self.base());
        let h = |k: &str, v: String| (k.to_owned(), v);
        let extra = [
            h("x-goog-upload-protocol", "resumable".into()),
            h("x-goog-upload-command", "start".into()),
            h("x-goog-upload-header-content-length", bytes.len().to_string()),
            h("x-goog-upload-header-content-type", "application/jsonl".into()),
        ];
        let body = Body::Json(json!({"file": {"display_name": tag}}));
        let to = self
            .provider
            .endpoint
            .send_for_header(&start, body, AUTH, &extra, "x-goog-upload-url")
            .await?;
        let to = super::same_origin(&to, self.base())?;
        let extra = [
            h("x-goog-upload-command", "upload, finalize".into()),
            h("x-goog-upload-offset", "0".into()),
        ];
        let body = Body::Raw {
            content_type: "application/jsonl".into(),
            bytes,
        };
        let f = self.json(Method::POST, &to, body, &extra).await?;
        f.pointer("/file/name")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| LlmError::new(ErrorKind::Stream, "the upload answered no file name"))
    }
}

/// The batch object, whether the answer is the long-running operation
/// (its `metadata`) or the batch itself.
fn batch_of(v: &Value) -> &Value {
    v.get("metadata").filter(|m| m.get("state").is_some()).unwrap_or(v)
}

/// A result from a response (or error) and its key.
fn result_of(key: &str, response: Option<&Value>, error: Option<&Value>) -> Result1 {
    let outcome = match (response, error) {
        (Some(r), _) if !r.is_null() => Outcome::Succeeded(Box::new(super::transcript(&whole_events(r)))),
        (_, e) => {
            let msg = e
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .map_or_else(|| e.map_or_else(String::new, Value::to_string), str::to_owned);
            let status = e.and_then(|e| e.get("status")).and_then(Value::as_str).unwrap_or("");
            Outcome::Errored(crate::llm::wire::in_stream_error("Gemini batch", status, &msg))
        }
    };
    Result1 {
        custom_id: key.to_owned(),
        outcome,
    }
}

impl BatchApi for GeminiBatch {
    fn name(&self) -> &'static str {
        "gemini batch mode"
    }

    fn limits(&self) -> Limits {
        Limits {
            requests: 1_000_000,
            bytes: 2 << 30,
        }
    }

    fn line(&self, item: &Item) -> Value {
        json!({"key": item.custom_id, "request": self.provider.body(&item.request)})
    }

    fn submit(&self, items: Vec<Item>, tag: String) -> Fut<Submitted> {
        let me = self.clone();
        Box::pin(async move {
            let inline: Vec<Value> = items
                .iter()
                .map(|i| json!({"request": me.provider.body(&i.request), "metadata": {"key": i.custom_id}}))
                .collect();
            let size: usize = inline.iter().map(|v| v.to_string().len()).sum();
            let input = if size < me.inline_bytes {
                json!({"requests": {"requests": inline}})
            } else {
                let mut file = Vec::new();
                for i in &items {
                    file.extend(me.line(i).to_string().into_bytes());
                    file.push(b'\n');
                }
                json!({"fileName": me.upload(file, &tag).await?})
            };
            let url = format!("{}/v1beta/models/{}:batchGenerateContent", me.base(), me.model());
            let body = json!({"batch": {"displayName": tag, "inputConfig": input}});
            let op = me.json(Method::POST, &url, Body::Json(body), &[]).await?;
            let id = op
                .get("name")
                .or_else(|| batch_of(&op).get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            Ok(Submitted::whole(id))
        })
    }

    fn status(&self, batch: Submitted) -> Fut<Status> {
        let me = self.clone();
        Box::pin(async move {
            let v = me.operation(&batch.id).await?;
            let b = batch_of(&v);
            let state = b
                .get("state")
                .and_then(Value::as_str)
                .unwrap_or("BATCH_STATE_UNSPECIFIED")
                .to_owned();
            let ended = matches!(
                state
                    .trim_start_matches("BATCH_STATE_")
                    .trim_start_matches("JOB_STATE_"),
                "SUCCEEDED" | "FAILED" | "CANCELLED" | "EXPIRED"
            );
            let stat = |k: &str| {
                b.pointer(&format!("/batchStats/{k}"))
                    .and_then(|n| n.as_u64().or_else(|| n.as_str().and_then(|s| s.parse().ok())))
                    .unwrap_or(0)
            };
            let failed = stat("failedRequestCount");
            let failure = state.ends_with("_FAILED").then(|| {
                v.pointer("/error/message")
                    .or_else(|| b.pointer("/error/message"))
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
                    .to_owned()
            });
            Ok(Status {
                phase: if ended { Phase::Ended } else { Phase::Pending },
                state,
                done: stat("successfulRequestCount") + failed,
                failed,
                total: stat("requestCount"),
                failure,
            })
        })
    }

    fn results(&self, batch: Submitted) -> Fut<Vec<Result1>> {
        let me = self.clone();
        Box::pin(async move {
            let v = me.operation(&batch.id).await?;
            let out = batch_of(&v).get("output").or_else(|| v.pointer("/response/output"));
            let inline = out
                .and_then(|o| o.pointer("/inlinedResponses/inlinedResponses"))
                .and_then(Value::as_array);
            if let Some(rs) = inline {
                return Ok(rs
                    .iter()
                    .filter_map(|r| {
                        let key = r.pointer("/metadata/key").and_then(Value::as_str)?;
                        Some(result_of(key, r.get("response"), r.get("error")))
                    })
                    .collect());
            }
            let Some(file) = out.and_then(|o| o.get("responsesFile")).and_then(Value::as_str) else {
                return Ok(Vec::new());
            };
            let url = format!("{}/download/v1beta/{file}:download?alt=media", me.base());
            let bytes = me
                .provider
                .endpoint
                .send_bytes(Call::new(Method::GET, &url, Body::Empty, AUTH), MAX_RESULTS)
                .await?
                .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{url}: not found")))?;
            let mut results = Vec::new();
            for line in super::jsonl(&bytes) {
                let line = line?;
                if let Some(key) = line.get("key").and_then(Value::as_str) {
                    results.push(result_of(key, line.get("response"), line.get("error")));
                }
            }
            Ok(results)
        })
    }

    fn cancel(&self, batch: Submitted) -> Fut<()> {
        let me = self.clone();
        Box::pin(async move {
            let url = format!("{}/v1beta/{}:cancel", me.base(), batch.id);
            me.json(Method::POST, &url, Body::Empty, &[]).await.map(|_| ())
        })
    }

    fn find(&self, tag: String) -> Fut<Vec<String>> {
        let me = self.clone();
        Box::pin(async move {
            let url = format!("{}/v1beta/batches?pageSize=100", me.base());
            let page = me.json(Method::GET, &url, Body::Empty, &[]).await?;
            let list = page
                .get("operations")
                .or_else(|| page.get("batches"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Ok(list
                .iter()
                .filter(|op| batch_of(op).get("displayName").and_then(Value::as_str) == Some(tag.as_str()))
                .filter_map(|op| op.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect())
        })
    }
}
