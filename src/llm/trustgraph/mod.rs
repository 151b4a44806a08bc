//! A TrustGraph deployment's own prompt service as a provider: the prompt
//! goes by id with its variables (`Request::service`), the deployment
//! renders its live template, calls its model and streams the model's raw
//! text back, which cutline then analyses as TrustGraph's non-streaming
//! path would judge it.
//!
//! The stream is TrustGraph's WebSocket API (`{url}api/v1/socket`, as
//! trustgraph-base 2.11.1's socket client speaks it): an auth frame first
//! (`{"type": "auth", "token"}` → `auth-ok` | `auth-failed`), then one
//! request `{"id", "workspace", "flow", "service": "prompt", "request":
//! {"id", "variables", "streaming": true}}` answered by messages `{"id",
//! "response": {"text", "end_of_stream", "in_token", "out_token",
//! "model"}, "complete"}` or `{"id", "error"}`. Streaming is the only way
//! to the raw answer: the REST call answers a `json`/`jsonl` prompt with
//! TrustGraph's parsed `object`.
//!
//! Nothing of the request is decided here: sampling, the max-token limit
//! and structured output are the deployment's (`run::plan` records them
//! as not sent). An answer that ends with no text and no error is the
//! gateway swallowing a failure (since 2.10.6 it ends the stream without
//! one), and is named as such.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Map, Value, json};
use tokio_tungstenite::tungstenite::Message;

pub mod spec;

use super::http::key::ApiKey;
use super::http::spawn_stream;
use super::{ErrorKind, Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Timeouts, Usage};

/// The kind's word in records.
pub const KIND: &str = "trustgraph";

/// A deployment's prompt service, as configured.
#[derive(Debug, Clone)]
pub struct TrustGraph {
    /// The provider's name in `cutline.toml`.
    pub name: String,
    /// The gateway's base URL (`http(s)://host:port/`).
    pub base_url: String,
    /// The bearer token, when the gateway wants one.
    pub token: Option<ApiKey>,
    /// The workspace.
    pub workspace: String,
    /// The flow whose prompt service answers.
    pub flow: String,
    /// Connect, idle and total bounds.
    pub timeouts: Timeouts,
}

impl TrustGraph {
    /// The WebSocket URL of the gateway.
    pub fn socket_url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = base
            .strip_prefix("https://")
            .map(|r| format!("wss://{r}"))
            .or_else(|| base.strip_prefix("http://").map(|r| format!("ws://{r}")))
            .unwrap_or_else(|| base.to_owned());
        format!("{base}/api/v1/socket")
    }

    /// The request frame for `req` (its prompt id and variables).
    pub fn frame(&self, req: &Request, id: &str) -> Result<Value, LlmError> {
        let Some(service) = &req.service else {
            return Err(LlmError::new(
                ErrorKind::BadRequest,
                "a TrustGraph deployment is asked for a prompt by id; this request carries none",
            ));
        };
        Ok(json!({
            "id": id,
            "workspace": self.workspace,
            "flow": self.flow,
            "service": "prompt",
            "request": {"id": service.id, "variables": Value::Object(service.variables.clone()), "streaming": true},
        }))
    }

    fn scrub(&self, text: &str) -> String {
        self.token.as_ref().map_or_else(|| text.to_owned(), |t| t.scrub(text))
    }

    fn err(&self, kind: ErrorKind, message: &str) -> LlmError {
        LlmError::new(
            kind,
            format!("TrustGraph {}: {}", self.socket_url(), self.scrub(message)),
        )
    }

    /// [`Self::err`] keeping `cause` as its source, unless the cause's
    /// text shows the token the message hides (then the text alone).
    fn err_caused(
        &self,
        kind: ErrorKind,
        message: &str,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> LlmError {
        let mut e = self.err(kind, message);
        if !self.token.as_ref().is_some_and(|t| t.shows_in(&cause)) {
            e.source = Some(std::sync::Arc::new(cause));
        }
        e
    }
}

impl Provider for TrustGraph {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.name.clone(),
            kind: KIND.into(),
            model: format!("{}/{}", self.workspace, self.flow),
            base_url: Some(self.base_url.clone()),
        }
    }

    fn renders_itself(&self) -> bool {
        true
    }

    fn stream(&self, req: Request) -> EventStream {
        let me = self.clone();
        spawn_stream(move |tx| async move {
            let total = me.timeouts.total;
            let events = tokio::time::timeout(total, converse(&me, &req)).await;
            let events = events.unwrap_or_else(|_| {
                vec![Event::Error(me.err(
                    ErrorKind::Timeout,
                    &format!("the answer took longer than {} s", total.as_secs()),
                ))]
            });
            for e in events {
                if tx.send(e).await.is_err() {
                    return;
                }
            }
        })
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Connect, authenticate, ask, and read the answer to its end; the events
/// in order (what arrived before a failure is kept).
async fn converse(tg: &TrustGraph, req: &Request) -> Vec<Event> {
    let mut events = Vec::new();
    let frame = match tg.frame(req, "cutline-1") {
        Ok(f) => f,
        Err(e) => return vec![Event::Error(e)],
    };
    let mut ws = match connect(tg).await {
        Ok(ws) => ws,
        Err(e) => return vec![Event::Error(e)],
    };
    if let Err(e) = ws.send(Message::text(frame.to_string())).await {
        return vec![Event::Error(tg.err_caused(
            ErrorKind::Stream,
            &format!("sending the request: {e}"),
            e,
        ))];
    }
    let mut got_text = false;
    loop {
        let msg = match next_json(tg, &mut ws, tg.timeouts.idle).await {
            Ok(m) => m,
            Err(e) => {
                events.push(Event::Error(e));
                break;
            }
        };
        if msg
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|id| id != "cutline-1")
        {
            continue;
        }
        if let Some(e) = error_of(&msg) {
            events.push(Event::Error(
                tg.err(ErrorKind::Server, &format!("the prompt service failed: {e}")),
            ));
            break;
        }
        let resp = msg.get("response").cloned().unwrap_or(Value::Null);
        if let Some(text) = resp.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            got_text = true;
            events.push(Event::Delta {
                text: text.to_owned(),
                pieces: Vec::new(),
            });
        }
        let done = resp.get("end_of_stream").and_then(Value::as_bool).unwrap_or(false)
            || msg.get("complete").and_then(Value::as_bool).unwrap_or(false);
        if done {
            events.push(finish(tg, &resp, got_text));
            break;
        }
    }
    let _ = ws.close(None).await;
    events
}

/// The end of an answer: its usage, or the swallowed failure it is when
/// nothing came.
fn finish(tg: &TrustGraph, resp: &Value, got_text: bool) -> Event {
    if !got_text {
        return Event::Error(tg.err(
            ErrorKind::Server,
            "the deployment ended the answer with no text and no error: TrustGraph's gateway swallows a failing \
             prompt call (since 2.10.6), so the prompt service or its model failed — its log says why",
        ));
    }
    let count = |k: &str| resp.get(k).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
    Event::Finish {
        // TrustGraph's prompt service passes on no finish reason: whether
        // the model stopped or its limit cut it is not known, so never a
        // clean stop.
        reason: FinishReason::Unknown,
        raw_reason: Some("end_of_stream (TrustGraph reports no finish reason)".to_owned()),
        usage: Usage {
            prompt_tokens: count("in_token"),
            completion_tokens: count("out_token"),
            ..Usage::default()
        },
    }
}

async fn connect(tg: &TrustGraph) -> Result<Socket, LlmError> {
    let url = tg.socket_url();
    let (mut ws, _) = tokio::time::timeout(tg.timeouts.connect, tokio_tungstenite::connect_async(url.as_str()))
        .await
        .map_err(|_| {
            tg.err(
                ErrorKind::Timeout,
                &format!("no connection within {} s", tg.timeouts.connect.as_secs()),
            )
        })?
        .map_err(|e| tg.err_caused(ErrorKind::Connect, &format!("cannot connect: {e}"), e))?;
    let token = tg.token.as_ref().map_or("", ApiKey::expose);
    ws.send(Message::text(json!({"type": "auth", "token": token}).to_string()))
        .await
        .map_err(|e| tg.err_caused(ErrorKind::Connect, &format!("sending the auth frame: {e}"), e))?;
    let answer = next_json(tg, &mut ws, tg.timeouts.first_byte).await?;
    match answer.get("type").and_then(Value::as_str) {
        Some("auth-ok") => Ok(ws),
        Some("auth-failed") => Err(tg.err(
            ErrorKind::Auth,
            &format!(
                "the gateway refused the token: {} (set the provider's api_key_env variable to the token)",
                answer
                    .get("error")
                    .map_or_else(|| "no reason given".to_owned(), Value::to_string)
            ),
        )),
        _ => Err(tg.err(
            ErrorKind::Stream,
            &format!("unexpected answer to the auth frame: {answer}"),
        )),
    }
}

/// The next JSON text frame, within `wait`.
async fn next_json(tg: &TrustGraph, ws: &mut Socket, wait: Duration) -> Result<Value, LlmError> {
    loop {
        let next = tokio::time::timeout(wait, ws.next())
            .await
            .map_err(|_| tg.err(ErrorKind::Timeout, &format!("nothing arrived for {} s", wait.as_secs())))?;
        let msg = match next {
            None => {
                return Err(tg.err(
                    ErrorKind::Stream,
                    "the gateway closed the connection before the answer ended",
                ));
            }
            Some(Err(e)) => return Err(tg.err_caused(ErrorKind::Stream, &format!("the connection broke: {e}"), e)),
            Some(Ok(m)) => m,
        };
        let text = match msg {
            Message::Text(t) => t.to_string(),
            Message::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
            Message::Close(_) => {
                return Err(tg.err(
                    ErrorKind::Stream,
                    "the gateway closed the connection before the answer ended",
                ));
            }
            _ => continue,
        };
        return serde_json::from_str(&text)
            .map_err(|e| tg.err(ErrorKind::Stream, &format!("a frame that is not JSON ({e})")));
    }
}

/// The error a gateway message carries, as `type: message`.
pub fn error_of(msg: &Value) -> Option<String> {
    let e = msg
        .get("error")
        .or_else(|| msg.get("response").and_then(|r| r.get("error")))?;
    match e {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => Some(
            match (
                o.get("type").and_then(Value::as_str),
                o.get("message").and_then(Value::as_str),
            ) {
                (Some(t), Some(m)) => format!("{t}: {m}"),
                (None, Some(m)) => m.to_owned(),
                (Some(t), None) => t.to_owned(),
                (None, None) => e.to_string(),
            },
        ),
        other => Some(other.to_string()),
    }
}

/// A prompt asked of a service that renders it itself: its id and the
/// variables it is rendered with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServicePrompt {
    /// The prompt's id in the deployment.
    pub id: String,
    /// Its variables, any JSON.
    pub variables: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tg() -> TrustGraph {
        TrustGraph {
            name: "prod".into(),
            base_url: "https://tg.example:8443/".into(),
            token: None,
            workspace: "w".into(),
            flow: "default".into(),
            timeouts: Timeouts::default(),
        }
    }

    #[test]
    fn the_request_frame_names_the_prompt_its_variables_and_asks_to_stream() {
        let t = tg();
        assert_eq!(t.socket_url(), "wss://tg.example:8443/api/v1/socket");
        let mut variables = Map::new();
        variables.insert("text".into(), json!("Marie Curie"));
        let req = Request {
            service: Some(ServicePrompt {
                id: "extract-definitions".into(),
                variables,
            }),
            ..Request::default()
        };
        assert_eq!(
            t.frame(&req, "cutline-1").unwrap(),
            json!({"id": "cutline-1", "workspace": "w", "flow": "default", "service": "prompt",
                "request": {"id": "extract-definitions", "variables": {"text": "Marie Curie"}, "streaming": true}})
        );
        assert!(t.frame(&Request::default(), "x").is_err());
    }

    #[test]
    fn an_end_with_nothing_is_a_swallowed_failure() {
        match finish(&tg(), &json!({"end_of_stream": true}), false) {
            Event::Error(e) => assert!(e.message.contains("swallows a failing prompt call"), "{}", e.message),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            error_of(&json!({"error": {"type": "llm-error", "message": "boom"}})).as_deref(),
            Some("llm-error: boom")
        );
    }
}
