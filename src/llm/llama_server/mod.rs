//! llama.cpp's `llama-server`, native `/completion` endpoint.
//!
//! The endpoint for base models: the rendered system and prompt are sent as
//! one completion prompt, one SSE event per token, `n_predict` as the limit
//! and `stop_type: "limit"` when it cut the output. `cache_prompt: false`
//! (except for a continuation by token ids, which goes on from the cut
//! call's state in the slot), and the temperature `run::plan` decided (0 unless set), so a run is
//! reproducible. Structured output uses the native `json_schema` field
//! (grammar-constrained decoding).

use serde_json::{Value, json};

pub mod spec;

use super::wire::{self, Auth, Decoder, Endpoint, Framing, HeaderSpec};
use super::{ErrorKind, Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Usage};

/// A llama-server reached over HTTP, through the same [`Endpoint`] as every
/// other wire (retries, timeouts, size bound, optional `--api-key` as a
/// bearer token).
#[derive(Debug, Clone)]
pub struct LlamaServer {
    /// Where and how to send.
    pub endpoint: Endpoint,
    /// llama.cpp's `repeat_penalty`, when set (deterministic, so replay
    /// stays exact). Off for the local model: tried at 1.15 on Gemma 3 270M
    /// it closed the looping JSON arrays but broke the JSONL twins' lines.
    pub repeat_penalty: Option<f32>,
}

impl LlamaServer {
    /// A provider on `endpoint`.
    pub fn new(endpoint: Endpoint) -> Self {
        Self {
            endpoint,
            repeat_penalty: None,
        }
    }

    /// The exact JSON body sent for `req`.
    pub fn body(&self, req: &Request) -> Value {
        // A continuation's prefill follows the prompt verbatim: the model
        // goes on from the exact text it had produced.
        let lead = if req.system.is_empty() {
            req.prompt.clone()
        } else {
            format!("{}\n\n{}", req.system, req.prompt)
        };
        // With the prefill's token ids the model is handed back exactly
        // the tokens it generated (llama-server takes a mixed list of
        // strings and ids); the text would be re-tokenised, and greedy
        // decoding could then go another way.
        let prompt = if req.prefill_tokens.is_empty() {
            json!(format!("{lead}{}", req.prefill))
        } else {
            let mut mixed = vec![json!(lead)];
            mixed.extend(req.prefill_tokens.iter().map(|id| json!(id)));
            Value::Array(mixed)
        };
        let mut body = json!({
            "prompt": prompt,
            "n_predict": req.max_tokens.map_or(-1, i64::from),
        });
        if let Some(t) = req.temperature {
            body["temperature"] = wire::temperature(t);
        }
        if let Some(t) = req.top_p {
            body["top_p"] = wire::temperature(t);
        }
        body["stop"] = json!(req.stop);
        body["stream"] = json!(true);
        // A continuation reuses the cut call's state in the slot: the
        // tokens it generated were evaluated one at a time there, and
        // evaluating them again as one batch can take another branch at a
        // near-tie (measured: 6 items against the uncut run's 3 at 40
        // tokens). Every other request is evaluated from scratch, so a run
        // does not depend on what came before it.
        body["cache_prompt"] = json!(!req.prefill_tokens.is_empty());
        body["return_tokens"] = json!(true);
        if let Some(schema) = &req.response_schema {
            body["json_schema"] = schema.clone();
        }
        if let Some(g) = &req.grammar {
            body["grammar"] = json!(g);
        }
        if let Some(p) = self.repeat_penalty {
            body["repeat_penalty"] = json!(p);
        }
        body
    }
}

/// Map llama-server's `stop_type` to a normalised reason: `eos` and
/// `word` (a stop sequence) are stops, `limit` the limit; any other word
/// (`none`, or none at all) is `Unknown`, never a clean stop.
pub fn finish_reason(stop_type: Option<&str>) -> FinishReason {
    match stop_type {
        Some("eos" | "word") => FinishReason::Stop,
        Some("limit") => FinishReason::Length,
        _ => FinishReason::Unknown,
    }
}

fn u32_of(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|n| u32::try_from(n).ok())
}

impl Provider for LlamaServer {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.endpoint.name.clone(),
            kind: "llama_server".into(),
            model: self.endpoint.model.clone(),
            base_url: Some(self.endpoint.base_url.clone()),
        }
    }

    fn stream(&self, req: Request) -> EventStream {
        let url = format!("{}/completion", self.endpoint.base_url);
        let h = HeaderSpec {
            auth: Auth::Bearer,
            wire: &[],
            request: &req.headers,
        };
        self.endpoint
            .post(url, self.body(&req), h, Framing::Sse, CompletionDecoder::default())
    }

    fn prefills(&self) -> bool {
        true
    }

    fn wire(&self, req: &Request) -> Option<(String, Value)> {
        Some((format!("{}/completion", self.endpoint.base_url), self.body(req)))
    }
}

/// Decodes `/completion` events: one per token, the last with `stop: true`.
#[derive(Default)]
struct CompletionDecoder {
    finish: Option<Event>,
}

impl Decoder for CompletionDecoder {
    fn feed(&mut self, _event: &str, data: &str, out: &mut Vec<Event>) -> Result<bool, LlmError> {
        let (delta, finish) = parse_event(data)?;
        let ids = token_ids(data);
        out.extend(delta);
        if !ids.is_empty() {
            out.push(Event::Tokens { ids });
        }
        self.finish = finish;
        Ok(self.finish.is_some())
    }

    fn end(&mut self, _complete: bool) -> Event {
        self.finish.take().unwrap_or_else(|| {
            Event::Error(LlmError::new(
                ErrorKind::Stream,
                "the llama-server stream ended without a final event; the partial output is kept",
            ))
        })
    }
}

/// The token ids of one `/completion` event (`tokens`, with
/// `return_tokens`).
fn token_ids(data: &str) -> Vec<u32> {
    #[derive(serde::Deserialize)]
    struct Ids {
        #[serde(default)]
        tokens: Vec<u32>,
    }
    serde_json::from_str::<Ids>(data).map(|i| i.tokens).unwrap_or_default()
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
                ..Usage::default()
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
        let ep = Endpoint::new("local", "http://127.0.0.1:1/", "gemma");
        let mut p = LlamaServer::new(ep);
        let req = Request {
            system: "Sys.".into(),
            prompt: "Text: x\nOutput:\n".into(),
            max_tokens: Some(64),
            stop: vec!["\n###".into()],
            temperature: Some(0.0),
            ..Request::default()
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
        // A continuation hands back the model's own tokens after the text.
        let c = p.body(&Request {
            prefill: "{\"a\"".into(),
            prefill_tokens: vec![107, 38824],
            ..Request::default()
        });
        assert_eq!(c["prompt"], json!(["", 107, 38824]));
        // It reuses the cut call's state in the slot; nothing else does.
        assert_eq!(c["cache_prompt"], json!(true));
        let t = p.body(&Request {
            prompt: "P".into(),
            prefill: "{\"a\"".into(),
            ..Request::default()
        });
        assert_eq!(t["prompt"], json!("P{\"a\""));
        assert_eq!(t["cache_prompt"], json!(false));
    }

    #[test]
    fn token_ids_come_with_every_event() {
        assert_eq!(token_ids(r#"{"content":"x","tokens":[5,6],"stop":false}"#), vec![5, 6]);
        assert_eq!(token_ids(r#"{"content":"x","stop":false}"#), Vec::<u32>::new());
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
                    completion_tokens: Some(12),
                    ..Usage::default()
                },
            })
        );
    }
}
