//! OpenAI's Responses API (`POST {base}/responses`), the only endpoint
//! some models answer on (o1-pro, o3-pro, gpt-5-pro, gpt-5-codex, the
//! deep-research models), as the openai SDK 3.57 speaks it.
//!
//! The body carries the prompt as `input`, the system prompt as
//! `instructions`, the limit as `max_output_tokens` (reasoning included),
//! structured output as `text.format` (`{type: json_schema, name, schema,
//! strict}`, flat, unlike chat's `response_format`), effort as
//! `reasoning.effort`, and `store: false`. There is no stop parameter:
//! stop sequences are applied by cutline. The stream is typed SSE events:
//! `response.output_text.delta` (the answer), reasoning summary and
//! reasoning text deltas (thinking), and one end: `response.completed`,
//! `response.incomplete` (the cut: `incomplete_details.reason`
//! `max_output_tokens` is `length`, `content_filter`, `max_messages`,
//! `steered`), `response.failed` or `error`. Event types cutline does not
//! know (tools, audio, new ones) are ignored. Usage: `input_tokens` with
//! `input_tokens_details.cached_tokens`, `output_tokens` with
//! `output_tokens_details.reasoning_tokens`.

use serde_json::{Value, json};

use crate::llm::structured;
use crate::llm::wire::{self, Decoder, Endpoint};
use crate::llm::{Event, FinishReason, LlmError, Request, Usage};

/// The URL of the endpoint.
pub fn url(endpoint: &Endpoint) -> String {
    format!("{}/responses", endpoint.base_url)
}

/// The exact JSON body sent for `req`.
pub fn body(endpoint: &Endpoint, req: &Request) -> Value {
    let p = endpoint.prepare(req);
    let mut body = json!({
        "model": endpoint.model,
        "input": p.prompt,
        "stream": true,
        "store": false,
    });
    if !p.system.is_empty() {
        body["instructions"] = json!(p.system);
    }
    if let Some(n) = p.max_tokens {
        body["max_output_tokens"] = json!(n);
    }
    if let Some(t) = p.temperature {
        body["temperature"] = wire::temperature(t);
    }
    if let Some(t) = p.top_p {
        body["top_p"] = wire::temperature(t);
    }
    if let Some(e) = req.effort {
        body["reasoning"] = json!({"effort": e.as_str()});
    }
    if let Some(schema) = p.schema {
        body["text"] = json!({"format": {
            "type": "json_schema",
            "name": structured::schema_name(schema),
            "schema": schema,
            "strict": structured::strict_compatible(schema),
        }});
    }
    body
}

/// A `response.incomplete` reason as a normalised reason.
pub fn incomplete_reason(reason: &str) -> FinishReason {
    match reason {
        "max_output_tokens" | "max_messages" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Incomplete,
    }
}

const LABEL: &str = "OpenAI Responses";

/// The events of a whole `response` object (a batch's, or a background
/// response's): its reasoning summaries and texts as thinking, its output
/// text as the answer, its status as the end; read by the stream's decoder.
pub fn whole_events(v: &Value) -> Vec<Event> {
    let mut events = Vec::new();
    let mut push = |kind: &str, delta: &str| {
        events.push((String::new(), json!({"type": kind, "delta": delta}).to_string()));
    };
    for item in v.get("output").and_then(Value::as_array).into_iter().flatten() {
        let parts = |k: &str| item.get(k).and_then(Value::as_array).into_iter().flatten();
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => {
                for p in parts("summary").chain(parts("content")) {
                    push(
                        "response.reasoning_text.delta",
                        p.get("text").and_then(Value::as_str).unwrap_or(""),
                    );
                }
            }
            Some("message") => {
                for p in parts("content") {
                    match p.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            push(
                                "response.output_text.delta",
                                p.get("text").and_then(Value::as_str).unwrap_or(""),
                            );
                        }
                        Some("refusal") => {
                            push(
                                "response.refusal.delta",
                                p.get("refusal").and_then(Value::as_str).unwrap_or(""),
                            );
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let end = match v.get("status").and_then(Value::as_str) {
        Some("incomplete") => "response.incomplete",
        Some("failed" | "cancelled") => "response.failed",
        _ => "response.completed",
    };
    let mut last = json!({"type": end, "response": v});
    if end == "response.failed" && v.get("error").is_none_or(Value::is_null) {
        last["response"]["error"] = json!({"code": "cancelled", "message": "the response was cancelled"});
    }
    events.push((String::new(), last.to_string()));
    wire::decode_whole(EventDecoder::default(), &events)
}

/// Decodes the Responses stream.
#[derive(Default)]
pub struct EventDecoder {
    reason: Option<(FinishReason, String)>,
    usage: Usage,
    refused: bool,
}

impl EventDecoder {
    fn read_usage(&mut self, u: &Value) {
        self.usage = Usage {
            prompt_tokens: wire::u32_of(u.get("input_tokens")),
            completion_tokens: wire::u32_of(u.get("output_tokens")),
            reasoning_tokens: wire::u32_of(u.pointer("/output_tokens_details/reasoning_tokens")),
            reasoning_estimated: false,
            cached_tokens: wire::u32_of(u.pointer("/input_tokens_details/cached_tokens")),
            cache_write_tokens: wire::u32_of(u.pointer("/input_tokens_details/cache_write_tokens")),
        };
    }

    fn ended(&mut self, v: &Value, reason: FinishReason, raw: String) {
        if let Some(u) = v.pointer("/response/usage").filter(|u| u.is_object()) {
            self.read_usage(u);
        }
        self.reason = Some((reason, raw));
    }
}

fn error_of(e: Option<&Value>, whole: &Value) -> LlmError {
    let code = e
        .and_then(|e| e.get("code").or_else(|| e.get("type")))
        .and_then(Value::as_str)
        .unwrap_or("");
    let msg = e
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map_or_else(|| whole.to_string(), str::to_owned);
    wire::in_stream_error(LABEL, code, &msg)
}

impl Decoder for EventDecoder {
    fn knows(&self, event: &str) -> bool {
        matches!(event, "" | "message" | "error") || event.starts_with("response.")
    }

    fn feed(&mut self, event: &str, data: &str, out: &mut Vec<Event>) -> Result<bool, LlmError> {
        if data.trim() == "[DONE]" {
            return Ok(true);
        }
        let v = wire::parse_json(LABEL, data)?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(event);
        let delta = || v.get("delta").and_then(Value::as_str).filter(|d| !d.is_empty());
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(d) = delta() {
                    self.refused |= kind == "response.refusal.delta";
                    out.push(Event::Delta {
                        text: d.to_owned(),
                        pieces: Vec::new(),
                    });
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(d) = delta() {
                    out.push(Event::Thinking { text: d.to_owned() });
                }
            }
            "response.completed" => {
                let (r, raw) = if self.refused {
                    (FinishReason::ContentFilter, "refusal")
                } else {
                    (FinishReason::Stop, "completed")
                };
                self.ended(&v, r, raw.to_owned());
                return Ok(true);
            }
            "response.incomplete" => {
                let why = v
                    .pointer("/response/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                self.ended(&v, incomplete_reason(why), format!("incomplete: {why}"));
                return Ok(true);
            }
            "response.failed" => return Err(error_of(v.pointer("/response/error"), &v)),
            "error" => return Err(error_of(Some(&v), &v)),
            // created, in_progress, output items, parts, annotations, tools,
            // audio, and whatever comes next: nothing cutline keeps.
            _ => {}
        }
        Ok(false)
    }

    fn end(&mut self, _complete: bool) -> Event {
        match self.reason.take() {
            Some((reason, raw)) => Event::Finish {
                reason,
                raw_reason: Some(raw),
                usage: self.usage,
            },
            None => Event::Error(wire::dropped(LABEL)),
        }
    }
}
