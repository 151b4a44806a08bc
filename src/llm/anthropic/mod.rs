//! Anthropic Messages API, as the anthropic SDK 2.14 speaks it.
//!
//! `POST {base}/v1/messages` with `x-api-key` and `anthropic-version:
//! 2026-10-21`. `max_tokens` is required, so a request without one is sent
//! the configured default, else [`DEFAULT_MAX_TOKENS`]. The stream is named
//! SSE events (`message_start` with the usage so far, `content_block_delta`
//! text, `message_delta` with `stop_reason` and the cumulative usage,
//! `message_stop`; an `error` event mid-stream) with no `[DONE]`.
//!
//! Every value arrives decided by `run::plan`: sampling parameters only
//! where the model takes them (current Claude takes none), thinking as
//! `{type: enabled, budget_tokens}` or `{type: adaptive}`, effort as
//! `output_config.effort`, and the schema either as `output_config.format`
//! (already fitted: `schema.rs`) or as a forced tool whose input schema it
//! is (`Request::schema_as_tool`), whose `input_json_delta`s are then the
//! response text. Usage is exact: `output_tokens_details.thinking_tokens`
//! for thinking, `cache_read_input_tokens` / `cache_creation_input_tokens`
//! for the cache; thinking is estimated from its text only when the count
//! is missing. `models.rs` reads the Models API; `schema.rs` fits a schema.

pub mod models;
pub mod schema;
pub mod spec;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::structured;
use super::wire::{self, Auth, Decoder, Endpoint, Framing, HeaderSpec};
use super::{Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Thinking, Usage};

/// `max_tokens` when neither the request nor the config sets one.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The API version header value (the anthropic SDK 2.14's).
pub const API_VERSION: &str = "2026-10-21";

/// How the response schema reaches Claude, as `structured_via` in
/// `cutline.toml` says (it sets the profile's `native`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// As the model's profile says.
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
}

impl Anthropic {
    /// A provider on `endpoint`.
    pub fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }

    /// The URL requests go to.
    pub fn url(&self) -> String {
        format!("{}/v1/messages", self.endpoint.base_url)
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
        match req.thinking {
            Some(Thinking::Budget { tokens }) => body["thinking"] = json!({"type": "enabled", "budget_tokens": tokens}),
            Some(Thinking::Adaptive) => body["thinking"] = json!({"type": "adaptive"}),
            Some(Thinking::Level { .. }) | None => {}
        }
        if let Some(e) = req.effort {
            body["output_config"] = json!({"effort": e.as_str()});
        }
        if let Some(schema) = p.schema {
            if req.schema_as_tool {
                let name = structured::schema_name(schema);
                body["tools"] = json!([{
                    "name": name,
                    "description": "Give the response as this tool's input. Its input schema is the required shape of the response.",
                    "input_schema": schema,
                }]);
                body["tool_choice"] = json!({"type": "tool", "name": name});
            } else {
                body["output_config"]["format"] = json!({"type": "json_schema", "schema": schema});
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
        "pause_turn" => FinishReason::Incomplete,
        "end_turn" | "stop_sequence" | "tool_use" => FinishReason::Stop,
        // A reason the SDK's `StopReason` does not list: never a clean stop.
        _ => FinishReason::Unknown,
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

    /// Assistant prefill, where the model takes it (its profile says).
    fn prefills(&self) -> bool {
        true
    }

    fn wire(&self, req: &Request) -> Option<(String, Value)> {
        Some((self.url(), self.body(req)))
    }

    fn batch_wire(&self) -> Option<super::BatchWire> {
        Some(super::BatchWire::Anthropic(self.clone()))
    }

    fn describe(&self) -> Option<super::Describe> {
        Some(models::describe(self.endpoint.clone()))
    }
}

/// Decodes the Messages stream.
#[derive(Default)]
struct MessageDecoder {
    forced_tool: bool,
    reason: Option<String>,
    input_tokens: Option<u32>,
    usage: Usage,
    thinking: String,
}

const LABEL: &str = "Anthropic";

/// The events of a whole `message` (a batch's result): its usage, each
/// content block as its deltas (a tool's input as the JSON it streams),
/// its stop reason; read by the stream's decoder. `forced_tool`: the
/// request sent the schema as a forced tool.
pub fn whole_events(v: &Value, forced_tool: bool) -> Vec<Event> {
    let event = |kind: &str, data: Value| (kind.to_owned(), data.to_string());
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"usage": v.get("usage").cloned().unwrap_or(Value::Null)}}),
    )];
    for (i, block) in v
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let delta = match block.get("type").and_then(Value::as_str) {
            Some("text") => json!({"type": "text_delta", "text": block.get("text").cloned().unwrap_or(Value::Null)}),
            Some("thinking") => {
                json!({"type": "thinking_delta", "thinking": block.get("thinking").cloned().unwrap_or(Value::Null)})
            }
            Some("tool_use") => {
                json!({"type": "input_json_delta", "partial_json": block.get("input").map(Value::to_string).unwrap_or_default()})
            }
            _ => continue,
        };
        events.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i, "delta": delta}),
        ));
    }
    events.push(event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": v.get("stop_reason").cloned().unwrap_or(Value::Null)}, "usage": v.get("usage").cloned().unwrap_or(Value::Null)}),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    let decoder = MessageDecoder {
        forced_tool,
        ..MessageDecoder::default()
    };
    wire::decode_whole(decoder, &events)
}

impl MessageDecoder {
    /// A usage object of `message_start` or `message_delta`: the counts it
    /// has are cumulative, so each replaces the one before.
    fn read_usage(&mut self, u: &Value) {
        let set = |slot: &mut Option<u32>, v: Option<&Value>| {
            if let Some(n) = wire::u32_of(v) {
                *slot = Some(n);
            }
        };
        set(&mut self.input_tokens, u.get("input_tokens"));
        set(&mut self.usage.completion_tokens, u.get("output_tokens"));
        set(&mut self.usage.cached_tokens, u.get("cache_read_input_tokens"));
        set(&mut self.usage.cache_write_tokens, u.get("cache_creation_input_tokens"));
        set(
            &mut self.usage.reasoning_tokens,
            u.pointer("/output_tokens_details/thinking_tokens"),
        );
    }
}

impl Decoder for MessageDecoder {
    fn knows(&self, event: &str) -> bool {
        matches!(
            event,
            "" | "message"
                | "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop"
                | "error"
        )
    }

    fn feed(&mut self, event: &str, data: &str, out: &mut Vec<Event>) -> Result<bool, LlmError> {
        let v = wire::parse_json(LABEL, data)?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(event);
        let text = |s: &str| Event::Delta {
            text: s.to_owned(),
            pieces: Vec::new(),
        };
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.read_usage(u);
                }
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
                    self.read_usage(u);
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
        // Anthropic's `input_tokens` leaves out what the cache served or
        // took: the prompt is all three.
        self.usage.prompt_tokens = self.input_tokens.map(|n| {
            n.saturating_add(self.usage.cached_tokens.unwrap_or(0))
                .saturating_add(self.usage.cache_write_tokens.unwrap_or(0))
        });
        if self.usage.reasoning_tokens.is_none() && !self.thinking.is_empty() {
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
