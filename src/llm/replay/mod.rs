//! The replay provider: a recorded run played back, cut at any max-token
//! limit. With greedy decoding (temperature 0) a model given a limit of N
//! returns exactly the first N tokens of its unlimited answer, so replaying
//! the first N recorded pieces is what the model would say — at no cost.

use serde_json::Value;

use super::http::spawn_stream;
use super::{Event, EventStream, FinishReason, Provider, ProviderInfo, Request, Transcript, Usage};

mod matching;

pub mod spec;

pub use matching::{Asked, Difference, Place};

/// Plays back one recorded transcript.
#[derive(Debug, Clone)]
pub struct Replay {
    /// Where the recording came from (session and run).
    pub source: String,
    /// The recording.
    pub transcript: Transcript,
    /// Who answered originally.
    pub original: ProviderInfo,
    /// The request the recording answered. A request that asks anything
    /// else (another message, stop list, sampling or schema) is refused
    /// with what differs: a recording is never a stand-in for another
    /// prompt's answer. `None` only for a transcript a caller built itself.
    pub asked: Option<Asked>,
}

/// What a limit of `max_tokens` gives from a recording: the text, the
/// pieces, the finish reason, and whether the recording was long enough to
/// know (false when the limit exceeds a recording that was itself cut).
pub fn cut(t: &Transcript, max_tokens: Option<u32>) -> (Vec<String>, FinishReason, bool) {
    let total = t.pieces.len();
    let n = max_tokens.map_or(total, |m| usize::try_from(m).unwrap_or(usize::MAX));
    // A live server that produces exactly `n` tokens under a limit of `n`
    // reports the limit, even if the next token would have ended the text.
    if n <= total && max_tokens.is_some() {
        let pieces = t.pieces[..n].iter().map(|p| p.text.clone()).collect();
        return (pieces, FinishReason::Length, true);
    }
    let pieces = t.pieces.iter().map(|p| p.text.clone()).collect();
    let finish = t.finish.unwrap_or(FinishReason::Stop);
    // A recording cut by its own limit says nothing past that limit.
    let known = finish != FinishReason::Length || n == total;
    (pieces, finish, known)
}

impl Provider for Replay {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: "replay".into(),
            kind: "replay".into(),
            model: self.original.model.clone(),
            base_url: Some(self.source.clone()),
        }
    }

    /// A recording continues from any of its own prefixes that end on a
    /// token: what a greedy model would say after that prefill.
    fn prefills(&self) -> bool {
        true
    }

    fn stream(&self, req: Request) -> EventStream {
        if let Some(d) = self.asked.as_ref().and_then(|a| a.difference(&Asked::of(&req))) {
            let e = super::LlmError::new(
                super::ErrorKind::BadRequest,
                format!(
                    "replay: the recording {} answered another request: {d}; run the prompt on a model \
                     (`cutline setup local`) or play the recording on purpose with `cutline replay {}`",
                    self.source, self.source
                ),
            );
            return spawn_stream(move |tx| async move {
                let _ = tx.send(Event::Error(e)).await;
            });
        }
        // A recording is one request's answer: what a model says after
        // Gemini's continuation token is another request, never recorded
        // here, and playing the recording again would repeat it as "the rest".
        if req.continuation_token.is_some() {
            let e = super::LlmError::new(
                super::ErrorKind::BadRequest,
                format!(
                    "replay: the recording {} holds no answer to a continuation request (Gemini's \
                     continuationToken): continue the answer on the model that gave it",
                    self.source
                ),
            );
            return spawn_stream(move |tx| async move {
                let _ = tx.send(Event::Error(e)).await;
            });
        }
        let rest = if req.prefill.is_empty() {
            Some(self.transcript.clone())
        } else {
            after_prefill(&self.transcript, &req.prefill)
        };
        let Some(rest) = rest else {
            let e = super::LlmError::new(
                super::ErrorKind::BadRequest,
                format!(
                    "the recording {} does not begin with the text given to continue from",
                    self.source
                ),
            );
            return spawn_stream(move |tx| async move {
                let _ = tx.send(Event::Error(e)).await;
            });
        };
        let (pieces, reason, _) = cut(&rest, req.max_tokens);
        let prompt_tokens = self.transcript.usage.prompt_tokens;
        spawn_stream(move |tx| async move {
            let n = pieces.len();
            for p in pieces {
                let ev = Event::Delta {
                    text: p.clone(),
                    pieces: vec![p],
                };
                if tx.send(ev).await.is_err() {
                    return;
                }
            }
            let _ = tx
                .send(Event::Finish {
                    reason,
                    raw_reason: Some(format!("replay:{}", reason.as_str())),
                    usage: Usage {
                        prompt_tokens,
                        completion_tokens: u32::try_from(n).ok(),
                        ..Usage::default()
                    },
                })
                .await;
        })
    }
}

/// The part of a recording after `prefill`, when `prefill` is a prefix of
/// its text. A prefill that ends inside a token (`}\n{` is one token for
/// many vocabularies) leaves that token's remainder as the first piece.
pub fn after_prefill(t: &Transcript, prefill: &str) -> Option<Transcript> {
    let mut at = 0;
    for (k, p) in t.pieces.iter().enumerate() {
        let want = &prefill[at..];
        if want.is_empty() || (want.len() < p.text.len() && p.text.starts_with(want)) {
            let mut pieces = t.pieces[k..].to_vec();
            if let Some(first) = pieces.first_mut() {
                first.text = first.text[want.len()..].to_owned();
            }
            return Some(Transcript {
                text: t.text.get(prefill.len()..)?.to_owned(),
                pieces,
                ..t.clone()
            });
        }
        if !want.starts_with(p.text.as_str()) {
            return None;
        }
        at += p.text.len();
    }
    (at == prefill.len()).then(|| Transcript {
        text: String::new(),
        pieces: Vec::new(),
        ..t.clone()
    })
}

/// The recorded provider info, from a run's JSON (tolerant of old records).
pub fn info_of(v: &Value) -> ProviderInfo {
    serde_json::from_value(v.clone()).unwrap_or(ProviderInfo {
        name: "unknown".into(),
        kind: "unknown".into(),
        model: String::new(),
        base_url: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Piece;

    fn rec(pieces: &[&str], finish: FinishReason) -> Transcript {
        Transcript {
            text: pieces.concat(),
            pieces: pieces
                .iter()
                .map(|p| Piece {
                    text: (*p).to_owned(),
                    ms: 0,
                    delta: false,
                })
                .collect(),
            finish: Some(finish),
            ..Transcript::default()
        }
    }

    #[test]
    fn cut_at_limit() {
        let t = rec(&["{\"a\"", ":", " 1", "}"], FinishReason::Stop);
        assert_eq!(
            cut(&t, Some(2)),
            (vec!["{\"a\"".into(), ":".into()], FinishReason::Length, true)
        );
        assert_eq!(cut(&t, None).1, FinishReason::Stop);
        assert_eq!(cut(&t, Some(4)).1, FinishReason::Length);
        assert_eq!(cut(&t, Some(5)).1, FinishReason::Stop);
        let cut_rec = rec(&["a", "b"], FinishReason::Length);
        assert!(!cut(&cut_rec, Some(10)).2);
    }

    #[tokio::test]
    async fn a_continuation_request_is_refused_never_played_again() {
        use futures_util::StreamExt as _;
        let r = Replay {
            source: "demo#1".into(),
            transcript: rec(&["{\"a\"", ": 1}"], FinishReason::Incomplete),
            original: ProviderInfo {
                name: "gemini".into(),
                kind: "gemini".into(),
                model: "gemini-3-pro".into(),
                base_url: None,
            },
            asked: None,
        };
        let req = Request {
            continuation_token: Some("Q0hFQ0s".into()),
            ..Request::default()
        };
        let events: Vec<Event> = r.stream(req).collect().await;
        assert!(
            matches!(events.as_slice(), [Event::Error(e)] if e.message.starts_with("replay: the recording demo#1 holds no answer to a continuation request")),
            "{events:?}"
        );
    }
}
