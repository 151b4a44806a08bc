//! Anthropic's Message Batches: `POST /v1/messages/batches` with each
//! request's `custom_id` and its Messages `params` (not streamed);
//! `processing_status` `in_progress` → `canceling` → `ended`, with
//! `request_counts`; once ended, the `results_url` JSONL (any order) with
//! each `result` `succeeded` (its `message`), `errored`, `canceled` or
//! `expired`. The batches carry no metadata, so a batch is found again by
//! the manifest alone.

use reqwest::Method;
use serde_json::{Value, json};

use super::{BatchApi, Fut, Item, Limits, Outcome, Phase, Result1, Status, Submitted};
use crate::llm::anthropic::{API_VERSION, Anthropic, whole_events};
use crate::llm::wire::Auth;
use crate::llm::wire::json::{Body, Call};
use crate::llm::{ErrorKind, LlmError};

const MAX_RESULTS: usize = 1 << 30;

/// Anthropic's batches on a configured provider's endpoint and key.
#[derive(Debug, Clone)]
pub struct AnthropicBatch {
    /// The provider (its endpoint and wire encoder).
    pub provider: Anthropic,
}

const AUTH: Auth = Auth::Header("x-api-key");
const WIRE: &[(&str, &str)] = &[("anthropic-version", API_VERSION)];

impl AnthropicBatch {
    fn url(&self, rest: &str) -> String {
        format!("{}/v1/messages/batches{rest}", self.provider.endpoint.base_url)
    }

    async fn json(&self, method: Method, url: &str, body: Body) -> Result<Value, LlmError> {
        self.provider
            .endpoint
            .send_json(Call::new(method, url, body, AUTH).wire(WIRE))
            .await?
            .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{url}: not found")))
    }
}

/// One line of the results file as a result.
pub fn result_of(line: &Value, forced_tool: bool) -> Option<Result1> {
    let custom_id = line.get("custom_id")?.as_str()?.to_owned();
    let r = line.get("result")?;
    let outcome = match r.get("type").and_then(Value::as_str) {
        Some("succeeded") => {
            let events = whole_events(r.get("message").unwrap_or(&Value::Null), forced_tool);
            Outcome::Succeeded(Box::new(super::transcript(&events)))
        }
        Some("expired") => Outcome::Expired,
        Some("canceled") => Outcome::Cancelled,
        _ => {
            let e = r.pointer("/error/error").or_else(|| r.get("error"));
            let kind = e.and_then(|e| e.get("type")).and_then(Value::as_str).unwrap_or("");
            let msg = e
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .map_or_else(|| r.to_string(), str::to_owned);
            Outcome::Errored(crate::llm::wire::in_stream_error("Anthropic batch", kind, &msg))
        }
    };
    Some(Result1 { custom_id, outcome })
}

impl BatchApi for AnthropicBatch {
    fn name(&self) -> &'static str {
        "anthropic message batches"
    }

    fn limits(&self) -> Limits {
        Limits {
            requests: 100_000,
            bytes: 256 << 20,
        }
    }

    fn line(&self, item: &Item) -> Value {
        let mut params = self.provider.body(&item.request);
        if let Some(o) = params.as_object_mut() {
            o.remove("stream");
        }
        json!({"custom_id": item.custom_id, "params": params})
    }

    fn submit(&self, items: Vec<Item>, _tag: String) -> Fut<Submitted> {
        let me = self.clone();
        Box::pin(async move {
            let requests: Vec<Value> = items.iter().map(|i| me.line(i)).collect();
            let b = me
                .json(Method::POST, &me.url(""), Body::Json(json!({"requests": requests})))
                .await?;
            let id = b.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            Ok(Submitted::whole(id))
        })
    }

    fn status(&self, batch: Submitted) -> Fut<Status> {
        let me = self.clone();
        Box::pin(async move {
            let b = me
                .json(Method::GET, &me.url(&format!("/{}", batch.id)), Body::Empty)
                .await?;
            let state = b
                .get("processing_status")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned();
            let count = |k: &str| {
                b.pointer(&format!("/request_counts/{k}"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            };
            let failed = count("errored") + count("canceled") + count("expired");
            let done = count("succeeded") + failed;
            Ok(Status {
                phase: if state == "ended" { Phase::Ended } else { Phase::Pending },
                state,
                done,
                failed,
                total: done + count("processing"),
                failure: None,
            })
        })
    }

    fn results(&self, batch: Submitted) -> Fut<Vec<Result1>> {
        let me = self.clone();
        Box::pin(async move {
            let b = me
                .json(Method::GET, &me.url(&format!("/{}", batch.id)), Body::Empty)
                .await?;
            let url = match b.get("results_url").and_then(Value::as_str) {
                Some(url) => url,
                // Ended with no results (none were kept, or they are gone):
                // no request has a result, so each is expired and goes
                // again, rather than the same error on every rerun.
                None if b.get("processing_status").and_then(Value::as_str) == Some("ended") => {
                    return Ok(Vec::new());
                }
                None => return Err(LlmError::new(ErrorKind::BadRequest, "the batch has no results yet")),
            };
            let url = super::same_origin(url, &me.provider.endpoint.base_url)?;
            let extra = [("accept".to_owned(), "application/binary".to_owned())];
            let bytes = me
                .provider
                .endpoint
                .send_bytes(
                    Call::new(Method::GET, &url, Body::Empty, AUTH).wire(WIRE).extra(&extra),
                    MAX_RESULTS,
                )
                .await?
                .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{url}: not found")))?;
            let mut out = Vec::new();
            for line in super::jsonl(&bytes) {
                // Whether the request forced a tool is in its own params,
                // which the result does not repeat: a `tool_use` stop with a
                // tool's input as the text is the structured answer.
                out.extend(result_of(&line?, true));
            }
            Ok(out)
        })
    }

    fn cancel(&self, batch: Submitted) -> Fut<()> {
        let me = self.clone();
        Box::pin(async move {
            me.json(Method::POST, &me.url(&format!("/{}/cancel", batch.id)), Body::Empty)
                .await
                .map(|_| ())
        })
    }

    fn find(&self, _tag: String) -> Fut<Vec<String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
