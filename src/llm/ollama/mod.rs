//! Ollama's native chat API.
//!
//! `POST {base}/api/chat`, answered with one JSON object per line: a
//! `message.content` piece each, then a last line with `done: true`,
//! `done_reason` (`length` when `num_predict` cut it) and the token counts
//! `prompt_eval_count` / `eval_count`. Sampling settings go in `options`;
//! structured output is `format: <schema>` (grammar-constrained). `think`
//! is what `run::plan` decided: `false` for effort none (a thinking model
//! thinks when it is absent), `"low"`/`"medium"`/`"high"`/`"max"` for an
//! effort, `true` for a thinking budget; the streamed
//! `message.thinking` is kept apart from the answer; Ollama counts thinking
//! inside `eval_count` without a figure of its own, so it is estimated.

use serde_json::{Value, json};

use super::profile::Effort;
use super::wire::{self, Auth, Decoder, Endpoint, Framing, HeaderSpec};
use super::{Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Usage};

pub mod models;
pub mod spec;

/// An Ollama server.
#[derive(Debug, Clone)]
pub struct Ollama {
    /// Where and how to send (a key is optional: sent as a bearer token).
    pub endpoint: Endpoint,
}

impl Ollama {
    /// A provider on `endpoint`.
    pub fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }

    /// The URL requests go to.
    pub fn url(&self) -> String {
        format!("{}/api/chat", self.endpoint.base_url)
    }

    /// The exact JSON body sent for `req`.
    pub fn body(&self, req: &Request) -> Value {
        let p = self.endpoint.prepare(req);
        let messages = p.chat_messages();
        let mut body = json!({
            "model": self.endpoint.model,
            "messages": messages,
            "stream": true,
        });
        let mut options = serde_json::Map::new();
        if let Some(n) = p.max_tokens {
            options.insert("num_predict".into(), json!(n));
        }
        if let Some(t) = p.temperature {
            options.insert("temperature".into(), wire::temperature(t));
        }
        if let Some(t) = p.top_p {
            options.insert("top_p".into(), wire::temperature(t));
        }
        if !p.stop.is_empty() {
            options.insert("stop".into(), json!(p.stop));
        }
        if !options.is_empty() {
            body["options"] = Value::Object(options);
        }
        if let Some(schema) = p.schema {
            body["format"] = schema.clone();
        }
        // `run::plan` sends only what `think` takes: effort none is
        // `false` (a thinking model thinks when `think` is absent), another
        // level its word, a budget `true` (Ollama has no budget).
        match (req.effort, req.thinking) {
            (Some(Effort::None), _) => body["think"] = json!(false),
            (Some(e), _) => body["think"] = json!(e.as_str()),
            (None, Some(_)) => body["think"] = json!(true),
            (None, None) => {}
        }
        body
    }
}

/// Map Ollama's `done_reason` to a normalised reason: `stop` and `length`
/// are what `/api/chat` ends a generation with; any other word (or none)
/// is `Unknown`, never a clean stop.
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        _ => FinishReason::Unknown,
    }
}

impl Provider for Ollama {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.endpoint.name.clone(),
            kind: "ollama".into(),
            model: self.endpoint.model.clone(),
            base_url: Some(self.endpoint.base_url.clone()),
        }
    }

    fn stream(&self, req: Request) -> EventStream {
        let h = HeaderSpec {
            auth: Auth::Bearer,
            wire: &[],
            request: &req.headers,
        };
        self.endpoint
            .post(self.url(), self.body(&req), h, Framing::Lines, LineDecoder::default())
    }

    fn wire(&self, req: &Request) -> Option<(String, Value)> {
        Some((self.url(), self.body(req)))
    }

    /// `/api/show`, for a model no table row knows by name
    /// (`llm::ollama::models`).
    fn describe(&self) -> Option<super::Describe> {
        models::asks(&self.endpoint.model).then(|| models::describe(self.endpoint.clone()))
    }

    /// `/api/show` decides only thinking: asked when effort or a budget is.
    fn describe_matters(&self, req: &Request) -> bool {
        req.effort.is_some() || req.thinking.is_some()
    }
}

const LABEL: &str = "Ollama";

#[derive(Default)]
struct LineDecoder {
    reason: Option<String>,
    usage: Usage,
    thinking: String,
}

impl Decoder for LineDecoder {
    fn feed(&mut self, _event: &str, data: &str, out: &mut Vec<Event>) -> Result<bool, LlmError> {
        let v = wire::parse_json(LABEL, data)?;
        if let Some(err) = v.get("error") {
            let msg = err.as_str().map_or_else(|| err.to_string(), str::to_owned);
            return Err(wire::in_stream_error(LABEL, "", &msg));
        }
        if let Some(t) = v.pointer("/message/thinking").and_then(Value::as_str)
            && !t.is_empty()
        {
            self.thinking.push_str(t);
            out.push(Event::Thinking { text: t.to_owned() });
        }
        if let Some(t) = v.pointer("/message/content").and_then(Value::as_str)
            && !t.is_empty()
        {
            out.push(Event::Delta {
                text: t.to_owned(),
                pieces: Vec::new(),
            });
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            self.reason = Some(
                v.get("done_reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            );
            let thinking = (!self.thinking.is_empty()).then(|| wire::estimate_tokens(&self.thinking));
            self.usage = Usage {
                prompt_tokens: wire::u32_of(v.get("prompt_eval_count")),
                completion_tokens: wire::u32_of(v.get("eval_count")),
                reasoning_tokens: thinking,
                reasoning_estimated: thinking.is_some(),
                ..Usage::default()
            };
            return Ok(true);
        }
        Ok(false)
    }

    fn end(&mut self, _complete: bool) -> Event {
        match &self.reason {
            Some(r) => Event::Finish {
                reason: finish_reason(r),
                raw_reason: (!r.is_empty()).then(|| r.clone()),
                usage: self.usage,
            },
            None => Event::Error(wire::dropped(LABEL)),
        }
    }
}
