//! OpenAI's Responses background mode, the short-window alternative to a
//! batch: each request is its own `POST /responses` with `background:
//! true` and `background_options.completion_window` `2h` or `8h` (stored, as
//! background mode needs, and tagged in its `metadata`), then polled with
//! `GET /responses/{id}` until `completed`, `incomplete`, `failed` or
//! `cancelled`. The group of responses is one [`Submitted`] whose parts are
//! (custom id, response id), kept in the manifest like any batch.

use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};

use super::{BatchApi, Fut, Item, Limits, Outcome, Phase, Result1, Status, Submitted, Window};
use crate::llm::openai::OpenAi;
use crate::llm::wire::Auth;
use crate::llm::wire::json::{Body, Call};
use crate::llm::{ErrorKind, LlmError, responses};

/// Requests in flight at once while submitting or polling.
const PARALLEL: usize = 8;

/// Background responses on a configured provider's endpoint and key.
#[derive(Debug, Clone)]
pub struct Background {
    /// The provider (its endpoint and Responses encoder).
    pub provider: OpenAi,
    /// `2h` or `8h`.
    pub window: Window,
}

impl Background {
    async fn json(&self, method: Method, rest: &str, body: Body) -> Result<Value, LlmError> {
        let url = format!("{}/{rest}", self.provider.endpoint.base_url);
        self.provider
            .endpoint
            .send_json(Call::new(method, &url, body, Auth::Bearer))
            .await?
            .ok_or_else(|| LlmError::new(ErrorKind::BadRequest, format!("{url}: not found")))
    }

    /// Every part's response object, fetched a few at a time.
    async fn each(&self, batch: &Submitted) -> Result<Vec<(String, Value)>, LlmError> {
        let fetches: Vec<_> = batch
            .parts
            .iter()
            .map(|(custom, id)| {
                let (me, custom, id) = (self.clone(), custom.clone(), id.clone());
                async move {
                    let v = me.json(Method::GET, &format!("responses/{id}"), Body::Empty).await?;
                    Ok::<_, LlmError>((custom, v))
                }
            })
            .collect();
        futures_util::stream::iter(fetches)
            .buffer_unordered(PARALLEL)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }
}

fn ended(v: &Value) -> bool {
    matches!(
        v.get("status").and_then(Value::as_str),
        Some("completed" | "incomplete" | "failed" | "cancelled")
    )
}

impl BatchApi for Background {
    fn name(&self) -> &'static str {
        "openai responses background mode"
    }

    fn limits(&self) -> Limits {
        Limits {
            requests: 1_000,
            bytes: 64 << 20,
        }
    }

    fn line(&self, item: &Item) -> Value {
        let mut body = responses::body(&self.provider.endpoint, &item.request);
        body["stream"] = json!(false);
        body["store"] = json!(true);
        body["background"] = json!(true);
        body["background_options"] = json!({"completion_window": self.window.as_str()});
        body
    }

    fn submit(&self, items: Vec<Item>, tag: String) -> Fut<Submitted> {
        let me = self.clone();
        Box::pin(async move {
            let posts: Vec<_> = items
                .iter()
                .map(|i| {
                    let mut body = me.line(i);
                    body["metadata"] = json!({super::openai::TAG: tag, "custom_id": i.custom_id});
                    let (me, custom) = (me.clone(), i.custom_id.clone());
                    async move {
                        let r = me.json(Method::POST, "responses", Body::Json(body)).await?;
                        let id = r.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                        Ok::<_, LlmError>((custom, id))
                    }
                })
                .collect();
            let posted: Vec<Result<(String, String), LlmError>> =
                futures_util::stream::iter(posts).buffered(PARALLEL).collect().await;
            // The responses created are paid for: keep them even when a
            // later one fails (those come back as never run, and go again).
            let mut first_error = None;
            let parts: Vec<(String, String)> = posted
                .into_iter()
                .filter_map(|r| r.map_err(|e| first_error.get_or_insert(e).clone()).ok())
                .collect();
            if let (true, Some(e)) = (parts.is_empty(), first_error) {
                return Err(e);
            }
            let id = format!("background-{}", parts.first().map_or("", |p| p.1.as_str()));
            Ok(Submitted { id, parts })
        })
    }

    fn status(&self, batch: Submitted) -> Fut<Status> {
        let me = self.clone();
        Box::pin(async move {
            let all = me.each(&batch).await?;
            let done = all.iter().filter(|(_, v)| ended(v)).count() as u64;
            let failed = all
                .iter()
                .filter(|(_, v)| matches!(v.get("status").and_then(Value::as_str), Some("failed" | "cancelled")))
                .count() as u64;
            let total = all.len() as u64;
            Ok(Status {
                phase: if done == total { Phase::Ended } else { Phase::Pending },
                state: if done == total {
                    "ended".into()
                } else {
                    "in_progress".into()
                },
                done,
                failed,
                total,
                failure: None,
            })
        })
    }

    fn results(&self, batch: Submitted) -> Fut<Vec<Result1>> {
        let me = self.clone();
        Box::pin(async move {
            Ok(me
                .each(&batch)
                .await?
                .into_iter()
                .filter(|(_, v)| ended(v))
                .map(|(custom_id, v)| {
                    let outcome = match v.get("status").and_then(Value::as_str) {
                        Some("cancelled") => Outcome::Cancelled,
                        Some("failed") if v.pointer("/error/code").and_then(Value::as_str) == Some("expired") => {
                            Outcome::Expired
                        }
                        _ => Outcome::Succeeded(Box::new(super::transcript(&responses::whole_events(&v)))),
                    };
                    let outcome = match outcome {
                        Outcome::Succeeded(t) if t.error.is_some() => Outcome::Errored(
                            t.error
                                .clone()
                                .unwrap_or_else(|| LlmError::new(ErrorKind::Server, "the response failed")),
                        ),
                        o => o,
                    };
                    Result1 { custom_id, outcome }
                })
                .collect())
        })
    }

    fn cancel(&self, batch: Submitted) -> Fut<()> {
        let me = self.clone();
        Box::pin(async move {
            for (_, id) in &batch.parts {
                me.json(Method::POST, &format!("responses/{id}/cancel"), Body::Empty)
                    .await?;
            }
            Ok(())
        })
    }

    fn find(&self, _tag: String) -> Fut<Vec<String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
