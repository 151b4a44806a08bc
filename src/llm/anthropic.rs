//! Anthropic Messages API.
//!
//! `POST {base}/v1/messages` with `x-api-key` and `anthropic-version:
//! 2023-06-01`. `max_tokens` is required, so a request without one is sent
//! the configured default, else [`DEFAULT_MAX_TOKENS`]. The stream is named
//! SSE events (`message_start` with the input tokens, `content_block_delta`
//! text, `message_delta` with `stop_reason` and the output tokens,
//! `message_stop`; an `error` event mid-stream) with no `[DONE]`.
//!
//! Structured output goes either as `output_config.format` (a `json_schema`,
//! constrained decoding) or as a forced tool whose input schema is the
//! response schema: the tool input's JSON arrives as `input_json_delta`s and
//! is the response text. [`Via::Auto`] takes `output_config` when the model's
//! profile supports it and every object in the schema is closed
//! (`additionalProperties: false`, which that path requires), and the forced
//! tool otherwise. Both need an object root: `run::plan` wraps other roots.
//!
//! Extended thinking (`thinking_budget` in `cutline.toml`) sends
//! `thinking: {type: enabled, budget_tokens}`; its `thinking_delta`s are kept
//! as thinking, apart from the answer, and their tokens estimated (the API
//! counts them inside `output_tokens` without a separate figure).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::structured;
use super::wire::{self, Auth, Decoder, Endpoint, Framing, HeaderSpec};
use super::{Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Usage};

/// `max_tokens` when neither the request nor the config sets one.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The API version header value.
pub const API_VERSION: &str = "2023-06-01";

/// How the response schema reaches Claude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// `output_config` when the schema's objects are all closed, else a tool.
    #[default]
    Auto,
    /// `output_config: {format: {type: json_schema, schema}}`.
    OutputConfig,
    /// A single tool with the schema as its input, forced by `tool_choice`.
    Tool,
}

/// An Anthropic Messages endpoint.
#[derive(Debug, Clone)]
pub struct Anthropic {
    /// Where and how to send.
    pub endpoint: Endpoint,
    /// How structured output is sent.
    pub via: Via,
}

/// Whether every object schema in `schema` sets `additionalProperties: false`.
pub fn objects_closed(schema: &Value) -> bool {
    let Some(obj) = schema.as_object() else {
        return schema.as_array().is_none_or(|a| a.iter().all(objects_closed));
    };
    let is_object = obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties");
    if is_object && obj.get("additionalProperties") != Some(&Value::Bool(false)) {
        return false;
    }
    obj.values().all(objects_closed)
}

impl Anthropic {
    /// A provider on `endpoint`, structured output chosen automatically.
    pub fn new(endpoint: Endpoint) -> Self {
        Self {
            endpoint,
            via: Via::Auto,
        }
    }

    /// The URL requests go to.
    pub fn url(&self) -> String {
        format!("{}/v1/messages", self.endpoint.base_url)
    }

    fn uses_tool(&self, schema: &Value) -> bool {
        match self.via {
            Via::Tool => true,
            Via::OutputConfig => false,
            Via::Auto => !(self.endpoint.profile.output_config && objects_closed(schema)),
        }
    }

    /// The exact JSON body sent for `req`.
    pub fn body(&self, req: &Request) -> Value {
        let p = self.endpoint.prepare(req);
        let mut body = json!({
            "model": self.endpoint.model,
            "max_tokens": p.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": [{"role": "user", "content": p.prompt}],
            "stream": true,
        });
        // A continuation: the answer so far as the assistant's turn (which
        // may not end in whitespace), so Claude goes on from it.
        let prefill = req.prefill.trim_end();
        if !prefill.is_empty()
            && let Some(m) = body["messages"].as_array_mut()
        {
            m.push(json!({"role": "assistant", "content": prefill}));
        }
        if !p.system.is_empty() {
            body["system"] = json!(p.system);
        }
        if let Some(t) = p.temperature {
            body["temperature"] = wire::temperature(t);
        }
        if let Some(t) = p.top_p {
            body["top_p"] = wire::temperature(t);
        }
        if !p.stop.is_empty() {
            body["stop_sequences"] = json!(p.stop);
        }
        if let Some(budget) = self.endpoint.thinking {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        }
        if let Some(schema) = p.schema {
            if self.uses_tool(schema) {
                let name = structured::schema_name(schema);
                body["tools"] = json!([{
                    "name": name,
                    "description": "Give the response as this tool's input. Its input schema is the required shape of the response.",
                    "input_schema": schema,
                }]);
                body["tool_choice"] = json!({"type": "tool", "name": name});
            } else {
                body["output_config"] = json!({"format": {"type": "json_schema", "schema": schema}});
            }
        }
        body
    }
}

/// Map Anthropic's `stop_reason` to a normalised reason. `forced_tool`: the
/// tool call is the structured response itself, so `tool_use` means done.
pub fn finish_reason(raw: &str, forced_tool: bool) -> FinishReason {
    match raw {
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" if !forced_tool => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

impl Provider for Anthropic {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.endpoint.name.clone(),
            kind: "anthropic".into(),
            model: self.endpoint.model.clone(),
            base_url: Some(self.endpoint.base_url.clone()),
        }
    }

    fn stream(&self, req: Request) -> EventStream {
        let body = self.body(&req);
        let forced_tool = body.get("tool_choice").is_some();
        let h = HeaderSpec {
            auth: Auth::Header("x-api-key"),
            wire: &[("anthropic-version", API_VERSION)],
            request: &req.headers,
        };
        let decoder = MessageDecoder {
            forced_tool,
            ..MessageDecoder::default()
        };
        self.endpoint.post(self.url(), body, h, Framing::Sse, decoder)
    }

    /// Assistant prefill, except with extended thinking (which refuses it).
    fn prefills(&self) -> bool {
        self.endpoint.thinking.is_none()
    }
}

/// Decodes the Messages stream.
#[derive(Default)]
struct MessageDecoder {
    forced_tool: bool,
    reason: Option<String>,
    usage: Usage,
    thinking: String,
}

const LABEL: &str = "Anthropic";

impl Decoder for MessageDecoder {
    fn feed(&mut self, event: &str, data: &str, out: &mut Vec<Event>) -> Result<bool, LlmError> {
        let v = wire::parse_json(LABEL, data)?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(event);
        let text = |s: &str| Event::Delta {
            text: s.to_owned(),
            pieces: Vec::new(),
        };
        match kind {
            "message_start" => {
                let u = v.pointer("/message/usage");
                self.usage.prompt_tokens = wire::u32_of(u.and_then(|u| u.get("input_tokens")));
                self.usage.completion_tokens = wire::u32_of(u.and_then(|u| u.get("output_tokens")));
            }
            "content_block_start" => {
                if let Some(t) = v.pointer("/content_block/text").and_then(Value::as_str)
                    && !t.is_empty()
                {
                    out.push(text(t));
                }
            }
            "content_block_delta" => {
                let d = v.get("delta");
                let piece = match d.and_then(|d| d.get("type")).and_then(Value::as_str) {
                    Some("text_delta") => d.and_then(|d| d.get("text")),
                    Some("input_json_delta") => d.and_then(|d| d.get("partial_json")),
                    Some("thinking_delta") => {
                        if let Some(t) = d.and_then(|d| d.get("thinking")).and_then(Value::as_str) {
                            self.thinking.push_str(t);
                            out.push(Event::Thinking { text: t.to_owned() });
                        }
                        None
                    }
                    _ => None,
                };
                if let Some(t) = piece.and_then(Value::as_str)
                    && !t.is_empty()
                {
                    out.push(text(t));
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.reason = Some(r.to_owned());
                }
                if let Some(u) = v.get("usage") {
                    if let Some(n) = wire::u32_of(u.get("output_tokens")) {
                        self.usage.completion_tokens = Some(n);
                    }
                    if let Some(n) = wire::u32_of(u.get("input_tokens")) {
                        self.usage.prompt_tokens = Some(n);
                    }
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let e = v.get("error");
                let hint = e.and_then(|e| e.get("type")).and_then(Value::as_str).unwrap_or("");
                let msg = e
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .map_or_else(|| v.to_string(), str::to_owned);
                return Err(wire::in_stream_error(LABEL, hint, &msg));
            }
            // ping, content_block_stop, thinking blocks, future events.
            _ => {}
        }
        Ok(false)
    }

    fn end(&mut self, complete: bool) -> Event {
        if !self.thinking.is_empty() {
            self.usage.reasoning_tokens = Some(wire::estimate_tokens(&self.thinking));
            self.usage.reasoning_estimated = true;
        }
        match &self.reason {
            Some(r) => Event::Finish {
                reason: finish_reason(r, self.forced_tool),
                raw_reason: Some(r.clone()),
                usage: self.usage,
            },
            None if complete => Event::Finish {
                reason: FinishReason::Stop,
                raw_reason: None,
                usage: self.usage,
            },
            None => Event::Error(wire::dropped(LABEL)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_objects() {
        let closed = json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object", "properties": {}, "additionalProperties": false}}}, "additionalProperties": false});
        assert!(objects_closed(&closed));
        let open = json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}, "additionalProperties": false});
        assert!(!objects_closed(&open));
    }
}
