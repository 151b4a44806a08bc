//! llama.cpp's `llama-server`, native `/completion` endpoint.
//!
//! The endpoint for base models: the rendered system and prompt are sent as
//! one completion prompt, one SSE event per token, `n_predict` as the limit
//! and `stop_type: "limit"` when it cut the output. `cache_prompt: false` and
//! temperature 0 by default so a run is reproducible. Structured output uses
//! the native `json_schema` field (grammar-constrained decoding).

use serde_json::{Value, json};

use super::http::{self, RetryPolicy};
use super::{ErrorKind, Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Timeouts, Usage};

/// A llama-server reached over HTTP.
#[derive(Debug, Clone)]
pub struct LlamaServer {
    /// Configured name.
    pub name: String,
    /// Base URL, e.g. `http://127.0.0.1:8080`.
    pub base_url: String,
    /// Model label (the server serves one model).
    pub model: String,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// Retries.
    pub retry: RetryPolicy,
    /// llama.cpp's `repeat_penalty`, when set (deterministic, so replay
    /// stays exact). Off for the local model: tried at 1.15 on Gemma 3 270M
    /// it closed the looping JSON arrays but broke the JSONL twins' lines.
    pub repeat_penalty: Option<f32>,
    client: reqwest::Client,
}

impl LlamaServer {
    /// A provider for the server at `base_url`.
    pub fn new(name: &str, base_url: &str, model: &str, timeouts: Timeouts) -> Self {
        Self {
            name: name.to_owned(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            timeouts,
            retry: RetryPolicy::default(),
            repeat_penalty: None,
            client: http::client(&timeouts),
        }
    }

    /// The exact JSON body sent for `req`.
    pub fn body(&self, req: &Request) -> Value {
        let prompt = if req.system.is_empty() {
            req.prompt.clone()
        } else {
            format!("{}\n\n{}", req.system, req.prompt)
        };
        let mut body = json!({
            "prompt": prompt,
            "n_predict": req.max_tokens.map_or(-1, i64::from),
            "temperature": req.temperature.unwrap_or(0.0),
            "stop": req.stop,
            "stream": true,
            "cache_prompt": false,
            "return_tokens": true,
        });
        if let Some(schema) = &req.response_schema {
            body["json_schema"] = schema.clone();
        }
        if let Some(p) = self.repeat_penalty {
            body["repeat_penalty"] = json!(p);
        }
        body
    }
}

/// Map llama-server's `stop_type` to a normalised reason.
pub fn finish_reason(stop_type: Option<&str>) -> FinishReason {
    match stop_type {
        Some("limit") => FinishReason::Length,
        _ => FinishReason::Stop,
    }
}

fn u32_of(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|n| u32::try_from(n).ok())
}

impl Provider for LlamaServer {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.name.clone(),
            kind: "llama_server".into(),
            model: self.model.clone(),
            base_url: Some(self.base_url.clone()),
        }
    }

    fn stream(&self, req: Request) -> EventStream {
        let url = format!("{}/completion", self.base_url);
        let body = self.body(&req);
        let client = self.client.clone();
        let retry = self.retry;
        let idle = self.timeouts.idle;
        http::spawn_stream(move |tx| async move {
            let resp = match http::send(|| client.post(&url).json(&body), &retry, None).await {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Event::Error(e)).await;
                    return;
                }
            };
            let mut reader = http::SseReader::new(resp, idle);
            let last = loop {
                let sse = match reader.next().await {
                    None => {
                        break Event::Error(LlmError::new(
                            ErrorKind::Stream,
                            "the stream ended without a final event",
                        ));
                    }
                    Some(Err(e)) => break Event::Error(e),
                    Some(Ok(sse)) => sse,
                };
                match parse_event(&sse.data) {
                    Ok((delta, finish)) => {
                        if let Some(d) = delta
                            && tx.send(d).await.is_err()
                        {
                            return;
                        }
                        if let Some(f) = finish {
                            break f;
                        }
                    }
                    Err(e) => break Event::Error(e),
                }
            };
            let _ = tx.send(last).await;
        })
    }
}

/// One `/completion` stream event: its delta and, on the last one, the finish.
pub fn parse_event(data: &str) -> Result<(Option<Event>, Option<Event>), LlmError> {
    let v: Value = serde_json::from_str(data).map_err(|_| {
        LlmError::new(
            ErrorKind::Stream,
            format!(
                "unreadable event from llama-server: {}",
                data.chars().take(200).collect::<String>()
            ),
        )
    })?;
    if let Some(err) = v.get("error") {
        return Err(LlmError::new(ErrorKind::Stream, err.to_string()));
    }
    let text = v.get("content").and_then(Value::as_str).unwrap_or("").to_owned();
    // One event per generated token (`tokens` holds its id). A token that
    // may begin a stop sequence is held back by the server: its event has
    // empty content and the text arrives with a later token. Recording the
    // empty piece keeps piece k = token k, so a replay cut at N tokens is
    // exactly what the server returns under a limit of N (it drops held text
    // at the limit too).
    let n_tokens = v.get("tokens").and_then(Value::as_array).map_or(0, Vec::len);
    let delta = if n_tokens > 0 {
        let mut pieces = vec![text.clone()];
        pieces.resize(n_tokens, String::new());
        Some(Event::Delta { pieces, text })
    } else {
        (!text.is_empty()).then(|| Event::Delta {
            pieces: vec![text.clone()],
            text,
        })
    };
    let finish = (v.get("stop").and_then(Value::as_bool) == Some(true)).then(|| {
        let stop_type = v.get("stop_type").and_then(Value::as_str);
        Event::Finish {
            reason: finish_reason(stop_type),
            raw_reason: stop_type.map(str::to_owned),
            usage: Usage {
                prompt_tokens: v.get("tokens_evaluated").and_then(u32_of),
                completion_tokens: v.get("tokens_predicted").and_then(u32_of),
            },
        }
    });
    Ok((delta, finish))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_completion_body() {
        let mut p = LlamaServer::new("local", "http://127.0.0.1:1/", "gemma", Timeouts::default());
        let req = Request {
            system: "Sys.".into(),
            prompt: "Text: x\nOutput:\n".into(),
            max_tokens: Some(64),
            stop: vec!["\n###".into()],
            temperature: Some(0.0),
            response_schema: None,
        };
        assert_eq!(
            p.body(&req),
            json!({"prompt": "Sys.\n\nText: x\nOutput:\n", "n_predict": 64, "temperature": 0.0, "stop": ["\n###"],
                   "stream": true, "cache_prompt": false, "return_tokens": true})
        );
        p.repeat_penalty = Some(1.15);
        let b = p.body(&Request {
            max_tokens: None,
            ..req
        });
        assert_eq!(b["n_predict"], -1);
        assert_eq!(b["repeat_penalty"], json!(1.15_f32));
    }

    #[test]
    fn a_held_token_is_an_empty_piece_so_pieces_stay_tokens() {
        let (d, f) = parse_event(r#"{"content":"","tokens":[107],"stop":false}"#).unwrap();
        assert_eq!(
            d,
            Some(Event::Delta {
                text: String::new(),
                pieces: vec![String::new()]
            })
        );
        assert!(f.is_none());
        let (d, _) = parse_event(r#"{"content":"\n- grape","tokens":[38824],"stop":false}"#).unwrap();
        assert_eq!(
            d,
            Some(Event::Delta {
                text: "\n- grape".into(),
                pieces: vec!["\n- grape".into()]
            })
        );
        let (d, f) = parse_event(
            r#"{"content":"","tokens":[],"stop":true,"stop_type":"limit","tokens_predicted":12,"tokens_evaluated":9}"#,
        )
        .unwrap();
        assert!(d.is_none());
        assert_eq!(
            f,
            Some(Event::Finish {
                reason: FinishReason::Length,
                raw_reason: Some("limit".into()),
                usage: Usage {
                    prompt_tokens: Some(9),
                    completion_tokens: Some(12)
                },
            })
        );
    }
}
