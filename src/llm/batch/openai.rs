//! OpenAI's Batch API: the requests as a JSONL file uploaded to `/files`
//! (purpose `batch`), one batch per endpoint (`/v1/chat/completions` or
//! `/v1/responses`) over it with a 24-hour window and the manifest entry's
//! tag in its `metadata`; `validating` → `in_progress` → `finalizing` →
//! `completed`, or `failed` / `expired` / `cancelled`. The output file has
//! one line per answered request, the error file one per failed or expired
//! one; lines come in any order and are matched by `custom_id`.

use reqwest::Method;
use serde_json::{Value, json};

use super::{BatchApi, Fut, Item, Limits, Outcome, Phase, Result1, Status, Submitted};
use crate::llm::openai::OpenAi;
use crate::llm::openai::responses;
use crate::llm::profile::Api;
use crate::llm::wire::Auth;
use crate::llm::wire::json::{Body, Call};
use crate::llm::{ErrorKind, LlmError, http};

/// The metadata key a batch is tagged with.
pub const TAG: &str = "cutline_session";

/// The largest output or error file read (OpenAI's input cap is 200 MB).
const MAX_FILE: usize = 512 << 20;

/// OpenAI's batches on a configured provider's endpoint and key.
#[derive(Debug, Clone)]
pub struct OpenAiBatch {
    /// The provider (its endpoint and wire encoders).
    pub provider: OpenAi,
}

fn path(api: Api) -> &'static str {
    match api {
        Api::Chat => "/v1/chat/completions",
        Api::Responses => "/v1/responses",
    }
}

impl OpenAiBatch {
    fn url(&self, rest: &str) -> String {
        format!("{}/{rest}", self.provider.endpoint.base_url)
    }

    async fn json(&self, method: Method, rest: &str, body: Body) -> Result<Value, LlmError> {
        let url = self.url(rest);
        self.provider
            .endpoint
            .send_json(Call::new(method, &url, body, Auth::Bearer))
            .await?
            .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{url}: not found")))
    }

    async fn file(&self, id: &str) -> Result<Vec<u8>, LlmError> {
        let url = self.url(&format!("files/{id}/content"));
        self.provider
            .endpoint
            .send_bytes(Call::new(Method::GET, &url, Body::Empty, Auth::Bearer), MAX_FILE)
            .await?
            .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{url}: not found")))
    }
}

/// A failed batch's own errors (its input did not validate), each as
/// `line N: message (code)`; `unknown` when it gave none.
fn whole_failure(b: &Value) -> String {
    let data = b.pointer("/errors/data").and_then(Value::as_array);
    let words: Vec<String> = data
        .into_iter()
        .flatten()
        .map(|e| {
            let msg = e.get("message").and_then(Value::as_str).unwrap_or("(no message)");
            let code = e
                .get("code")
                .and_then(Value::as_str)
                .map_or_else(String::new, |c| format!(" ({c})"));
            match e.get("line").and_then(Value::as_u64) {
                Some(n) => format!("line {n}: {msg}{code}"),
                None => format!("{msg}{code}"),
            }
        })
        .collect();
    if words.is_empty() {
        "unknown".to_owned()
    } else {
        words.join("; ")
    }
}

/// One line of an output or error file as a result.
pub fn result_of(line: &Value) -> Option<Result1> {
    let custom_id = line.get("custom_id")?.as_str()?.to_owned();
    let code = line.pointer("/error/code").and_then(Value::as_str);
    if code == Some("batch_expired") {
        return Some(Result1 {
            custom_id,
            outcome: Outcome::Expired,
        });
    }
    if code == Some("batch_cancelled") {
        return Some(Result1 {
            custom_id,
            outcome: Outcome::Cancelled,
        });
    }
    let status = line.pointer("/response/status_code").and_then(Value::as_u64);
    let body = line.pointer("/response/body").cloned().unwrap_or(Value::Null);
    let outcome = match status {
        Some(200) => {
            let events = if body.get("object").and_then(Value::as_str) == Some("response") {
                responses::whole_events(&body)
            } else {
                crate::llm::openai::whole_events(&body, false)
            };
            Outcome::Succeeded(Box::new(super::transcript(&events)))
        }
        Some(s) => {
            let status = reqwest::StatusCode::from_u16(u16::try_from(s).unwrap_or(500))
                .unwrap_or(reqwest::StatusCode::INTERNAL_SERVER_ERROR);
            Outcome::Errored(http::status_error(status, &body.to_string(), None, 1))
        }
        None => Outcome::Errored(LlmError::new(
            ErrorKind::Server,
            format!(
                "the batch failed this request: {}",
                line.get("error").map_or_else(|| line.to_string(), Value::to_string)
            ),
        )),
    };
    Some(Result1 { custom_id, outcome })
}

impl BatchApi for OpenAiBatch {
    fn name(&self) -> &'static str {
        "openai batches"
    }

    fn limits(&self) -> Limits {
        Limits {
            requests: 50_000,
            bytes: 200 << 20,
        }
    }

    fn line(&self, item: &Item) -> Value {
        let (_, mut body) = self.provider.request(&item.request);
        if let Some(o) = body.as_object_mut() {
            o.remove("stream");
            o.remove("stream_options");
        }
        json!({"custom_id": item.custom_id, "method": "POST", "url": path(item.request.api), "body": body})
    }

    fn submit(&self, items: Vec<Item>, tag: String) -> Fut<Submitted> {
        let me = self.clone();
        Box::pin(async move {
            let api = items.first().map_or(Api::Chat, |i| i.request.api);
            let mut file = Vec::new();
            for i in &items {
                file.extend(me.line(i).to_string().into_bytes());
                file.push(b'\n');
            }
            let up = me
                .json(
                    Method::POST,
                    "files",
                    Body::File {
                        fields: vec![("purpose".into(), "batch".into())],
                        name: "cutline-batch.jsonl".into(),
                        bytes: file,
                    },
                )
                .await?;
            let file_id = up.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            let b = me
                .json(
                    Method::POST,
                    "batches",
                    Body::Json(json!({
                        "input_file_id": file_id,
                        "endpoint": path(api),
                        "completion_window": "24h",
                        "metadata": {TAG: tag},
                    })),
                )
                .await?;
            let id = b.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            Ok(Submitted::whole(id))
        })
    }

    fn status(&self, batch: Submitted) -> Fut<Status> {
        let me = self.clone();
        Box::pin(async move {
            let b = me
                .json(Method::GET, &format!("batches/{}", batch.id), Body::Empty)
                .await?;
            let state = b.get("status").and_then(Value::as_str).unwrap_or("unknown").to_owned();
            let phase = if matches!(state.as_str(), "completed" | "failed" | "expired" | "cancelled") {
                Phase::Ended
            } else {
                Phase::Pending
            };
            let count = |k: &str| {
                b.pointer(&format!("/request_counts/{k}"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            };
            let failure = (state == "failed").then(|| whole_failure(&b));
            Ok(Status {
                phase,
                state,
                done: count("completed"),
                failed: count("failed"),
                total: count("total"),
                failure,
            })
        })
    }

    fn results(&self, batch: Submitted) -> Fut<Vec<Result1>> {
        let me = self.clone();
        Box::pin(async move {
            let b = me
                .json(Method::GET, &format!("batches/{}", batch.id), Body::Empty)
                .await?;
            let mut out = Vec::new();
            for key in ["output_file_id", "error_file_id"] {
                let Some(fid) = b.get(key).and_then(Value::as_str).filter(|f| !f.is_empty()) else {
                    continue;
                };
                for line in super::jsonl(&me.file(fid).await?) {
                    out.extend(result_of(&line?));
                }
            }
            Ok(out)
        })
    }

    fn cancel(&self, batch: Submitted) -> Fut<()> {
        let me = self.clone();
        Box::pin(async move {
            me.json(Method::POST, &format!("batches/{}/cancel", batch.id), Body::Empty)
                .await
                .map(|_| ())
        })
    }

    fn find(&self, tag: String) -> Fut<Vec<String>> {
        let me = self.clone();
        Box::pin(async move {
            let mut found = Vec::new();
            let mut after: Option<String> = None;
            // The list has no filter: read the newest pages only.
            for _ in 0..5 {
                let q = after.as_ref().map_or_else(
                    || "batches?limit=100".to_owned(),
                    |a| format!("batches?limit=100&after={a}"),
                );
                let page = me.json(Method::GET, &q, Body::Empty).await?;
                let data = page.get("data").and_then(Value::as_array).cloned().unwrap_or_default();
                for b in &data {
                    if b.pointer(&format!("/metadata/{TAG}")).and_then(Value::as_str) == Some(tag.as_str())
                        && let Some(id) = b.get("id").and_then(Value::as_str)
                    {
                        found.push(id.to_owned());
                    }
                }
                after = data
                    .last()
                    .and_then(|b| b.get("id"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if page.get("has_more").and_then(Value::as_bool) != Some(true) || after.is_none() {
                    break;
                }
            }
            Ok(found)
        })
    }
}
