//! Google Gemini API (`generativelanguage.googleapis.com`).
//!
//! `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse` with
//! `x-goog-api-key`. The body has `contents`, `systemInstruction` and
//! `generationConfig` (`maxOutputTokens`, `temperature`, `stopSequences`;
//! `responseMimeType: application/json` and `responseJsonSchema` for
//! structured output; `thinkingConfig.thinkingBudget` when `thinking_budget`
//! is configured). Each SSE event is a `GenerateContentResponse`; the last
//! carries `finishReason`, and the body simply ends (no `[DONE]`). Thinking
//! models count their thoughts in `usageMetadata.thoughtsTokenCount`, apart
//! from `candidatesTokenCount`, and both against `maxOutputTokens`: cutline
//! records their sum as the completion tokens and the thoughts as reasoning.
//! Parts marked `thought: true` (thought summaries) are kept as thinking.

use serde_json::{Value, json};

use super::wire::{self, Auth, Decoder, Endpoint, Framing, HeaderSpec};
use super::{Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Usage};

/// A Gemini endpoint.
#[derive(Debug, Clone)]
pub struct Gemini {
    /// Where and how to send.
    pub endpoint: Endpoint,
}

impl Gemini {
    /// A provider on `endpoint`.
    pub fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }

    /// The URL requests go to (`models/` in the configured model is optional).
    pub fn url(&self) -> String {
        let model = self.endpoint.model.trim_start_matches("models/");
        format!(
            "{}/v1beta/models/{model}:streamGenerateContent?alt=sse",
            self.endpoint.base_url
        )
    }

    /// The exact JSON body sent for `req`.
    pub fn body(&self, req: &Request) -> Value {
        let p = self.endpoint.prepare(req);
        let mut body = json!({
            "contents": [{"role": "user", "parts": [{"text": p.prompt}]}],
        });
        if !p.system.is_empty() {
            body["systemInstruction"] = json!({"parts": [{"text": p.system}]});
        }
        let mut config = serde_json::Map::new();
        if let Some(n) = p.max_tokens {
            config.insert("maxOutputTokens".into(), json!(n));
        }
        if let Some(t) = p.temperature {
            config.insert("temperature".into(), wire::temperature(t));
        }
        if let Some(t) = p.top_p {
            config.insert("topP".into(), wire::temperature(t));
        }
        if let Some(budget) = self.endpoint.thinking {
            config.insert("thinkingConfig".into(), json!({"thinkingBudget": budget}));
        }
        if !p.stop.is_empty() {
            config.insert("stopSequences".into(), json!(p.stop));
        }
        if let Some(schema) = p.schema {
            config.insert("responseMimeType".into(), json!("application/json"));
            config.insert("responseJsonSchema".into(), schema.clone());
        }
        if !config.is_empty() {
            body["generationConfig"] = Value::Object(config);
        }
        body
    }
}

/// Map Gemini's `finishReason` (or a prompt's `blockReason`) to a normalised
/// reason.
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "PROHIBITED_CONTENT" | "BLOCKLIST" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" => FinishReason::ToolCalls,
        _ => FinishReason::Stop,
    }
}

impl Provider for Gemini {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.endpoint.name.clone(),
            kind: "gemini".into(),
            model: self.endpoint.model.clone(),
            base_url: Some(self.endpoint.base_url.clone()),
        }
    }

    fn stream(&self, req: Request) -> EventStream {
        let h = HeaderSpec {
            auth: Auth::Header("x-goog-api-key"),
            wire: &[],
            request: &req.headers,
        };
        self.endpoint
            .post(self.url(), self.body(&req), h, Framing::Sse, ChunkDecoder::default())
    }
}

const LABEL: &str = "Gemini";

#[derive(Default)]
struct ChunkDecoder {
    reason: Option<String>,
    blocked: bool,
    usage: Usage,
}

impl Decoder for ChunkDecoder {
    fn feed(&mut self, _event: &str, data: &str, out: &mut Vec<Event>) -> Result<bool, LlmError> {
        let v = wire::parse_json(LABEL, data)?;
        if let Some(err) = v.get("error") {
            let hint = err.get("status").and_then(Value::as_str).unwrap_or("");
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| err.to_string(), str::to_owned);
            return Err(wire::in_stream_error(LABEL, hint, &msg));
        }
        if let Some(u) = v.get("usageMetadata") {
            if let Some(n) = wire::u32_of(u.get("promptTokenCount")) {
                self.usage.prompt_tokens = Some(n);
            }
            let thoughts = wire::u32_of(u.get("thoughtsTokenCount"));
            if let Some(n) = wire::u32_of(u.get("candidatesTokenCount")) {
                self.usage.completion_tokens = Some(n.saturating_add(thoughts.unwrap_or(0)));
            } else if let Some(t) = thoughts {
                self.usage.completion_tokens = Some(t);
            }
            if thoughts.is_some() {
                self.usage.reasoning_tokens = thoughts;
            }
        }
        if let Some(r) = v.pointer("/promptFeedback/blockReason").and_then(Value::as_str) {
            self.reason = Some(r.to_owned());
            self.blocked = true;
        }
        if let Some(c) = v.get("candidates").and_then(Value::as_array).and_then(|c| c.first()) {
            let parts = c.pointer("/content/parts").and_then(Value::as_array);
            for part in parts.into_iter().flatten() {
                if part.get("thought").and_then(Value::as_bool) == Some(true) {
                    if let Some(t) = part.get("text").and_then(Value::as_str) {
                        out.push(Event::Thinking { text: t.to_owned() });
                    }
                    continue;
                }
                if let Some(t) = part.get("text").and_then(Value::as_str)
                    && !t.is_empty()
                {
                    out.push(Event::Delta {
                        text: t.to_owned(),
                        pieces: Vec::new(),
                    });
                }
            }
            if let Some(r) = c.get("finishReason").and_then(Value::as_str) {
                self.reason = Some(r.to_owned());
            }
        }
        Ok(false)
    }

    fn end(&mut self, _complete: bool) -> Event {
        match &self.reason {
            Some(r) => Event::Finish {
                reason: if self.blocked {
                    FinishReason::ContentFilter
                } else {
                    finish_reason(r)
                },
                raw_reason: Some(r.clone()),
                usage: self.usage,
            },
            None => Event::Error(wire::dropped(LABEL)),
        }
    }
}
