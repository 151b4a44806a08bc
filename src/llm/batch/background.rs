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
use crate::llm::openai::responses;
use crate::llm::wire::Auth;
use crate::llm::wire::json::{Body, Call};
use crate::llm::{ErrorKind, LlmError};

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

    /// Every part's response object, fetched a few at a time. A response
    /// the server no longer has (404: deleted, or past its retention) is
    /// one part ended in error, never a failure of the whole group: the
    /// group's other answers are still collected, and that run goes again.
    async fn each(&self, batch: &Submitted) -> Result<Vec<(String, Value)>, LlmError> {
        let fetches: Vec<_> = batch
            .parts
            .iter()
            .map(|(custom, id)| {
                let (me, custom, id) = (self.clone(), custom.clone(), id.clone());
                async move {
                    let url = format!("{}/responses/{id}", me.provider.endpoint.base_url);
                    let v = me
                        .provider
                        .endpoint
                        .send_json(Call::new(Method::GET, &url, Body::Empty, Auth::Bearer))
                        .await?
                        .unwrap_or_else(|| gone(&id));
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

/// The response object of a response the server does not have (404): a
/// failed one, which the run's next round sends again.
fn gone(id: &str) -> Value {
    json!({"id": id, "status": "failed", "output": [], "error": {"code": "not_found",
        "message": format!("response {id} is not found (404): it is gone, so its run goes again")}})
}

/// What an ended response object comes to: its answer, or why none.
fn outcome(v: &Value) -> Outcome {
    match v.get("status").and_then(Value::as_str) {
        Some("cancelled") => Outcome::Cancelled,
        Some("failed") if v.pointer("/error/code").and_then(Value::as_str) == Some("expired") => Outcome::Expired,
        _ => {
            let t = super::transcript(&responses::whole_events(v));
            match t.error {
                Some(e) => Outcome::Errored(e),
                None => Outcome::Succeeded(Box::new(t)),
            }
        }
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
                        let r = me.json(Method::POST, "responses", Body::Json(body)).await;
                        let id = r.map(|r| r.get("id").and_then(Value::as_str).unwrap_or_default().to_owned());
                        (custom, id)
                    }
                })
                .collect();
            let posted: Vec<(String, Result<String, LlmError>)> =
                futures_util::stream::iter(posts).buffered(PARALLEL).collect().await;
            // The responses created are paid for: keep them even when
            // another create fails. Those failed ones are kept with their
            // error, to come back errored and go again.
            let (parts, refused): (Vec<_>, Vec<_>) = posted.into_iter().partition(|(_, r)| r.is_ok());
            let parts: Vec<(String, String)> = parts.into_iter().filter_map(|(c, r)| Some((c, r.ok()?))).collect();
            let refused: Vec<(String, LlmError)> =
                refused.into_iter().filter_map(|(c, r)| Some((c, r.err()?))).collect();
            if let (true, Some((_, e))) = (parts.is_empty(), refused.first()) {
                return Err(e.clone());
            }
            let id = format!("background-{}", parts.first().map_or("", |p| p.1.as_str()));
            Ok(Submitted { id, parts, refused })
        })
    }

    fn status(&self, batch: Submitted) -> Fut<Status> {
        let me = self.clone();
        Box::pin(async move {
            let all = me.each(&batch).await?;
            let refused = batch.refused.len() as u64;
            let done = all.iter().filter(|(_, v)| ended(v)).count() as u64 + refused;
            let failed = all
                .iter()
                .filter(|(_, v)| matches!(v.get("status").and_then(Value::as_str), Some("failed" | "cancelled")))
                .count() as u64
                + refused;
            let total = all.len() as u64 + refused;
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
            let answered = me.each(&batch).await?.into_iter().filter(|(_, v)| ended(v));
            let answered = answered.map(|(custom_id, v)| Result1 {
                custom_id,
                outcome: outcome(&v),
            });
            let refused = batch.refused.into_iter().map(|(custom_id, e)| Result1 {
                custom_id,
                outcome: Outcome::Errored(e),
            });
            Ok(answered.chain(refused).collect())
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
