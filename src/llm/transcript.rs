//! Everything one run produced, gathered from its events as they come
//! ([`Transcript::push`], [`collect`]).

use serde::{Deserialize, Serialize};

use super::{BatchRef, ErrorKind, Event, EventStream, FinishReason, LlmError, Usage};

/// Everything one run produced, gathered from its events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The full text received.
    pub text: String,
    /// Reasoning / thinking text, when the provider streamed any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thinking: String,
    /// Token pieces with their arrival time in ms since the request.
    pub pieces: Vec<Piece>,
    /// The generated tokens' ids, one per piece, when the server reports
    /// them (llama-server); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_ids: Vec<u32>,
    /// Why it ended (`error` when it failed).
    pub finish: Option<FinishReason>,
    /// The provider's own word.
    pub raw_reason: Option<String>,
    /// Token counts.
    pub usage: Usage,
    /// The failure, if any; `text` still holds what arrived before it.
    pub error: Option<LlmError>,
    /// Milliseconds to the first delta.
    pub first_token_ms: Option<u64>,
    /// Milliseconds for the whole run.
    pub total_ms: u64,
    /// The provider's token to resume an answer it left incomplete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
    /// The provider batch that answered, when it came back in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchRef>,
}

/// One token piece (or one delta, when the server gives no pieces).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Piece {
    /// Its text.
    pub text: String,
    /// Milliseconds since the request when it arrived.
    pub ms: u64,
    /// True when this is a whole delta, not a known token.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delta: bool,
}

impl Transcript {
    /// Fold one event in, at `ms` since the request.
    pub fn push(&mut self, event: &Event, ms: u64) {
        match event {
            Event::Delta { text, pieces } => {
                if self.first_token_ms.is_none() && !text.is_empty() {
                    self.first_token_ms = Some(ms);
                }
                self.text.push_str(text);
                if pieces.is_empty() {
                    if !text.is_empty() {
                        self.pieces.push(Piece {
                            text: text.clone(),
                            ms,
                            delta: true,
                        });
                    }
                } else {
                    self.pieces.extend(pieces.iter().map(|p| Piece {
                        text: p.clone(),
                        ms,
                        delta: false,
                    }));
                }
            }
            Event::Thinking { text } => self.thinking.push_str(text),
            Event::Resume { token } => self.continuation_token = Some(token.clone()),
            Event::Tokens { ids } => self.token_ids.extend_from_slice(ids),
            Event::Finish {
                reason,
                raw_reason,
                usage,
            } => {
                self.finish = Some(*reason);
                self.raw_reason.clone_from(raw_reason);
                self.usage = *usage;
            }
            Event::Error(e) => {
                self.finish = Some(FinishReason::Error);
                self.error = Some(e.clone());
            }
            Event::Batch(b) => self.batch = Some(b.clone()),
        }
        self.total_ms = ms;
    }

    /// True when every piece is a real token (so cuts by piece are exact).
    pub fn has_token_pieces(&self) -> bool {
        !self.pieces.is_empty() && self.pieces.iter().all(|p| !p.delta)
    }
}

/// Drive a stream to its end, calling `on_event` for each event.
pub async fn collect(mut stream: EventStream, mut on_event: impl FnMut(&Event, &Transcript)) -> Transcript {
    use futures_util::StreamExt;
    let start = std::time::Instant::now();
    let mut t = Transcript::default();
    while let Some(ev) = stream.next().await {
        let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        t.push(&ev, ms);
        on_event(&ev, &t);
        if matches!(ev, Event::Finish { .. } | Event::Error(_)) {
            break;
        }
    }
    if t.finish.is_none() {
        t.finish = Some(FinishReason::Error);
        t.error = Some(LlmError::new(
            ErrorKind::Stream,
            "the stream ended without a finish event",
        ));
    }
    t
}
