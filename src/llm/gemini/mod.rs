//! Google Gemini API (`generativelanguage.googleapis.com`).
//!
//! `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse` with
//! `x-goog-api-key`. The body has `contents`, `systemInstruction` and
//! `generationConfig` (`maxOutputTokens`, `temperature`, `stopSequences`;
//! `responseMimeType: application/json` and `responseJsonSchema` for
//! structured output; `thinkingConfig` with `thinkingBudget` (Gemini 2.5)
//! or `thinkingLevel` (Gemini 3, never both), as `run::plan` fitted them),
//! and `continuationToken` at the top when resuming an answer Gemini left
//! incomplete. Each SSE event is a `GenerateContentResponse`; the last
//! carries `finishReason`, and the body simply ends (no `[DONE]`). Thinking
//! models count their thoughts in `usageMetadata.thoughtsTokenCount`, apart
//! from `candidatesTokenCount`, and both against `maxOutputTokens`: cutline
//! records their sum as the completion tokens and the thoughts as reasoning.
//! Parts marked `thought: true` (thought summaries) are kept as thinking.
//! `cachedContentTokenCount` is the cached part of the prompt.
//!
//! Finish reasons (google-genai 3.6): `MAX_TOKENS` is a cut; `CONTINUATION`
//! means Gemini stopped at a per-request limit of its own with a
//! `continuationToken` on the candidate to resend: the run ends
//! `incomplete` with the token kept, and `--continue` resends it.
//! `MALFORMED_RESPONSE`, `MISSING_THOUGHT_SIGNATURE`, `OTHER` and an
//! unspecified or unknown reason are failures, never a normal stop; the
//! safety family (`LANGUAGE` included) is `content_filter`.

use serde_json::{Value, json};

use super::profile::Effort;
use super::wire::{self, Auth, Decoder, Endpoint, Framing, HeaderSpec};
use super::{ErrorKind, Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Thinking, Usage};

pub mod models;
pub mod spec;

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
        match req.thinking {
            Some(Thinking::Budget { tokens }) => {
                config.insert("thinkingConfig".into(), json!({"thinkingBudget": tokens}));
            }
            Some(Thinking::Level { level }) => {
                config.insert("thinkingConfig".into(), json!({"thinkingLevel": level_word(level)}));
            }
            Some(Thinking::Adaptive) | None => {}
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
        if let Some(t) = &req.continuation_token {
            body["continuationToken"] = json!(t);
        }
        body
    }
}

/// Gemini's `thinkingLevel` for an effort.
pub fn level_word(e: Effort) -> &'static str {
    match e {
        Effort::None | Effort::Minimal => "MINIMAL",
        Effort::Low => "LOW",
        Effort::Medium => "MEDIUM",
        Effort::High => "HIGH",
        Effort::Xhigh | Effort::Max => "XHIGH",
    }
}

/// Map Gemini's `finishReason` (or a prompt's `blockReason`) to a normalised
/// reason; `Error` for one that says the answer failed, or that cutline
/// does not know (never a silent normal stop).
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "CONTINUATION" => FinishReason::Incomplete,
        "SAFETY"
        | "RECITATION"
        | "PROHIBITED_CONTENT"
        | "BLOCKLIST"
        | "SPII"
        | "LANGUAGE"
        | "ESCALATION"
        | "PUP_LIMITED_DISABLED"
        | "MODEL_ARMOR"
        | "JAILBREAK" => FinishReason::ContentFilter,
        r if r.starts_with("IMAGE_") || r == "NO_IMAGE" => FinishReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => FinishReason::ToolCalls,
        _ => FinishReason::Error,
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

    fn wire(&self, req: &Request) -> Option<(String, Value)> {
        Some((self.url(), self.body(req)))
    }

    /// The Models API, for a model no table row knows by name
    /// (`llm::gemini::models`).
    fn describe(&self) -> Option<super::Describe> {
        models::asks(&self.endpoint.model).then(|| models::describe(self.endpoint.clone()))
    }

    fn batch_wire(&self) -> Option<super::BatchWire> {
        Some(super::BatchWire::Gemini(self.clone()))
    }
}

const LABEL: &str = "Gemini";

/// The events of a whole `GenerateContentResponse` (a batch's): the same
/// shape as one streamed chunk, read by the stream's decoder.
pub fn whole_events(v: &Value) -> Vec<Event> {
    wire::decode_whole(ChunkDecoder::default(), &[(String::new(), v.to_string())])
}

#[derive(Default)]
struct ChunkDecoder {
    reason: Option<String>,
    blocked: bool,
    usage: Usage,
    continuation: Option<String>,
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
            if let Some(n) = wire::u32_of(u.get("cachedContentTokenCount")) {
                self.usage.cached_tokens = Some(n);
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
            if let Some(t) = c.get("continuationToken").and_then(Value::as_str) {
                self.continuation = Some(t.to_owned());
            }
        }
        Ok(false)
    }

    fn end(&mut self, _complete: bool) -> Event {
        let Some(r) = &self.reason else {
            return Event::Error(wire::dropped(LABEL));
        };
        let reason = if self.blocked {
            FinishReason::ContentFilter
        } else {
            finish_reason(r)
        };
        if reason == FinishReason::Error {
            return Event::Error(LlmError::new(
                ErrorKind::Stream,
                format!(
                    "Gemini ended the answer with finishReason {r}: it failed or is not known to be complete; what arrived is kept"
                ),
            ));
        }
        Event::Finish {
            reason,
            raw_reason: Some(r.clone()),
            usage: self.usage,
        }
    }

    /// The latest checkpoint, where the answer can be resumed from it:
    /// after a `CONTINUATION` finish, or when the stream ended (or broke)
    /// before any finish reason, as the SDK's `StreamContinuation` resumes
    /// from the latest mid-stream `continuationToken`.
    fn resume(&mut self) -> Option<Event> {
        let token = self.continuation.take()?;
        matches!(self.reason.as_deref(), None | Some("CONTINUATION")).then_some(Event::Resume { token })
    }
}
