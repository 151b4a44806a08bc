//! The providers' batch APIs: half the price, a 24-hour window, and the
//! provider's machines doing the waiting. One [`BatchApi`] per provider:
//! OpenAI's `/v1/batches` over an uploaded JSONL file (chat completions or
//! the Responses API), Anthropic's Message Batches, Gemini's
//! `batchGenerateContent` (inline under 20 MB, an uploaded file above), and
//! OpenAI's Responses background mode for the 2- and 8-hour windows.
//!
//! Every request goes in as a [`Item`] with a custom id and comes back
//! matched by that id, never by position. A result is decoded by the same
//! decoder as the provider's stream (`whole_events` in each wire), so a
//! batched run's transcript is the one a streamed run of the same answer
//! would have. What the engine keeps about a batch ([`Submitted`]) is
//! plain data, written to the eval's manifest before and after each create
//! call.

pub mod anthropic;
pub mod background;
pub mod gemini;
pub mod openai;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::{BatchWire, Event, LlmError, Provider, Request, Transcript};

/// One request of a batch.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its id in the batch (`[a-zA-Z0-9_-]`, at most 64 characters).
    pub custom_id: String,
    /// The request, fitted as a streamed run's would be.
    pub request: Request,
}

/// How long the provider may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Window {
    /// The batch APIs' 24 hours.
    #[serde(rename = "24h")]
    Day,
    /// OpenAI's Responses background mode, 8 hours.
    #[serde(rename = "8h")]
    Hours8,
    /// OpenAI's Responses background mode, 2 hours.
    #[serde(rename = "2h")]
    Hours2,
}

impl Window {
    /// The word (`24h`, `8h`, `2h`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "24h",
            Self::Hours8 => "8h",
            Self::Hours2 => "2h",
        }
    }

    /// The window a word names.
    pub fn parse(word: &str) -> Option<Self> {
        [Self::Day, Self::Hours8, Self::Hours2]
            .into_iter()
            .find(|w| w.as_str() == word)
    }
}

/// How big one batch may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests in one batch.
    pub requests: usize,
    /// Bytes of one batch's input.
    pub bytes: usize,
}

/// A batch as created: its id and, for background mode, each request's own
/// id. Kept in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submitted {
    /// The provider's batch id (`batch_…`, `msgbatch_…`, `batches/…`; for
    /// background mode, a name of cutline's for the group).
    pub id: String,
    /// Background mode: (custom id, response id) of each request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<(String, String)>,
    /// Background mode: requests whose own create call failed while
    /// others passed, with the provider's error. They come back errored
    /// (and go again), not as answers that never arrived.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<(String, LlmError)>,
}

impl Submitted {
    /// A batch the provider knows by `id` alone.
    #[must_use]
    pub fn whole(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            parts: Vec::new(),
            refused: Vec::new(),
        }
    }
}

/// Where a batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Queued, validating, running or finalizing.
    Pending,
    /// Done, failed, expired or cancelled: its results can be collected.
    Ended,
}

/// A batch's state when polled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// Pending or ended.
    pub phase: Phase,
    /// The provider's own word (`in_progress`, `ended`, `BATCH_STATE_RUNNING`).
    pub state: String,
    /// Requests finished, by the provider's count.
    pub done: u64,
    /// Requests that failed, by the provider's count.
    pub failed: u64,
    /// Requests in all.
    pub total: u64,
    /// Why the batch ended without answering, when it failed as a whole
    /// (OpenAI's validation `errors`, Gemini's operation error): each of
    /// its requests is failed with these words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

impl Status {
    /// Whether the batch ended cancelled, by the provider's own word
    /// (`cancelled`, `canceling`, `BATCH_STATE_CANCELLED`): its requests
    /// without a result never ran.
    pub fn cancelled(&self) -> bool {
        let word = self.state.to_ascii_lowercase();
        word.contains("cancel")
    }
}

/// What became of one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Answered: the transcript as a stream would have given it.
    Succeeded(Box<Transcript>),
    /// The provider failed it.
    Errored(LlmError),
    /// The window ran out before it ran.
    Expired,
    /// The batch was cancelled before it ran.
    Cancelled,
}

/// One request's result, by its custom id.
#[derive(Debug, Clone, PartialEq)]
pub struct Result1 {
    /// The custom id it was sent with.
    pub custom_id: String,
    /// What became of it.
    pub outcome: Outcome,
}

/// A result future.
pub type Fut<T> = BoxFuture<'static, Result<T, LlmError>>;

/// One provider's batch API.
pub trait BatchApi: Send + Sync {
    /// The API's name for messages (`openai batches`).
    fn name(&self) -> &'static str;
    /// How big one batch may be.
    fn limits(&self) -> Limits;
    /// One request as the batch input line the API takes (what
    /// `--batch-file` writes for OpenAI).
    fn line(&self, item: &Item) -> serde_json::Value;
    /// Create a batch of `items`, tagged with `tag` where the API allows.
    fn submit(&self, items: Vec<Item>, tag: String) -> Fut<Submitted>;
    /// Where the batch is.
    fn status(&self, batch: Submitted) -> Fut<Status>;
    /// Every result of an ended batch, in any order. A request with none
    /// (a batch that failed as a whole, or one its window ran out on) is
    /// the caller's to account for, by the batch's [`Status`].
    fn results(&self, batch: Submitted) -> Fut<Vec<Result1>>;
    /// Ask the provider to cancel the batch.
    fn cancel(&self, batch: Submitted) -> Fut<()>;
    /// Batches tagged `tag` (a crash between create and the manifest's
    /// write is found here on resume); empty where the API cannot tag.
    fn find(&self, tag: String) -> Fut<Vec<String>>;
}

/// A transcript of whole-answer events (timing unknown: all at 0 ms).
pub fn transcript(events: &[Event]) -> Transcript {
    let mut t = Transcript::default();
    for e in events {
        t.push(e, 0);
    }
    t
}

/// The batch API of `provider` for `window`: OpenAI's batches (24 h) or
/// its Responses background mode (2 h, 8 h); Anthropic's and Gemini's
/// batches (24 h only). `None` when the provider has no batch API, or none
/// for that window.
pub fn api(provider: &dyn Provider, window: Window) -> Option<std::sync::Arc<dyn BatchApi>> {
    use std::sync::Arc;
    Some(match (provider.batch_wire()?, window) {
        (BatchWire::OpenAi(provider), Window::Day) => Arc::new(openai::OpenAiBatch { provider }),
        (BatchWire::OpenAi(provider), window) => Arc::new(background::Background { provider, window }),
        (BatchWire::Anthropic(provider), Window::Day) => Arc::new(anthropic::AnthropicBatch { provider }),
        (BatchWire::Gemini(provider), Window::Day) => Arc::new(gemini::GeminiBatch {
            provider,
            inline_bytes: gemini::INLINE_BYTES,
        }),
        _ => return None,
    })
}

/// The lines of an OpenAI batch input file (`eval --batch-file`, for
/// vLLM's `run-batch` or a manual upload) of requests planned for
/// `provider`, whatever wire it speaks: each encoded as an
/// OpenAI-compatible server reads it, with the provider's model. The
/// encoder is built here, beside the batch APIs, so that no caller builds
/// a provider (an OpenAI-compatible provider names no batch wire, as no
/// batch API serves it).
pub fn file_lines(provider: &dyn Provider) -> FileLines {
    let info = provider.info();
    let endpoint = super::wire::Endpoint::new(
        &info.name,
        info.base_url.as_deref().unwrap_or("http://offline"),
        &info.model,
    );
    FileLines(openai::OpenAiBatch {
        provider: super::openai::OpenAi::compatible(endpoint),
    })
}

/// The encoder [`file_lines`] gives: one request, one OpenAI batch input
/// line.
#[derive(Debug, Clone)]
pub struct FileLines(openai::OpenAiBatch);

impl FileLines {
    /// `item` as one line of the file.
    pub fn line(&self, item: &Item) -> serde_json::Value {
        self.0.line(item)
    }
}

/// A custom id for `key` (a run key): `c` and 16 hex digits of its hash,
/// within every API's rules.
pub fn custom_id(key: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("c{h:016x}")
}

/// Split `items` into batches within `limits` (each line's encoded size
/// counted), in order.
pub fn split(items: Vec<Item>, limits: Limits, size: impl Fn(&Item) -> usize) -> Vec<Vec<Item>> {
    let mut out: Vec<Vec<Item>> = Vec::new();
    let mut bytes = 0;
    for item in items {
        let n = size(&item) + 1;
        let full = out
            .last()
            .is_none_or(|b| b.len() >= limits.requests || bytes + n > limits.bytes);
        if full {
            out.push(Vec::new());
            bytes = 0;
        }
        bytes += n;
        if let Some(b) = out.last_mut() {
            b.push(item);
        }
    }
    out
}

/// `url` when it is on the same origin as `base` (scheme, host, port):
/// a results link in a body is never followed to another host with the key.
pub fn same_origin(url: &str, base: &str) -> Result<String, LlmError> {
    let parse = |u: &str| reqwest::Url::parse(u).ok().map(|u| u.origin());
    if parse(url).is_some() && parse(url) == parse(base) {
        Ok(url.to_owned())
    } else {
        Err(LlmError::new(
            super::ErrorKind::BadRequest,
            format!("the batch's results are at {url}, not on {base}: not fetched, so the key goes nowhere else"),
        ))
    }
}

/// Lines of a JSONL body, blank ones skipped.
pub fn jsonl(bytes: &[u8]) -> impl Iterator<Item = Result<serde_json::Value, LlmError>> + '_ {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| {
            serde_json::from_slice(l).map_err(|e| {
                LlmError::caused(
                    super::ErrorKind::Stream,
                    format!("a batch result line is not JSON: {e}"),
                    e,
                )
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_ids_fit_every_api() {
        let id = custom_id("extract|abc|64|openai/gpt");
        assert_eq!(id.len(), 17);
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(id, custom_id("extract|abc|128|openai/gpt"));
    }

    #[test]
    fn batches_split_by_count_and_bytes() {
        let item = |i: usize| Item {
            custom_id: format!("c{i}"),
            request: Request::default(),
        };
        let items: Vec<Item> = (0..7).map(item).collect();
        let by_count = split(
            items.clone(),
            Limits {
                requests: 3,
                bytes: 1 << 20,
            },
            |_| 10,
        );
        assert_eq!(by_count.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 1]);
        let by_bytes = split(
            items,
            Limits {
                requests: 100,
                bytes: 25,
            },
            |_| 10,
        );
        assert_eq!(by_bytes.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 2, 1]);
    }

    #[test]
    fn results_links_stay_on_the_origin() {
        assert!(same_origin("https://api.anthropic.com/v1/x", "https://api.anthropic.com").is_ok());
        assert!(same_origin("https://evil.example/v1/x", "https://api.anthropic.com").is_err());
        assert!(same_origin("http://127.0.0.1:9/x", "http://127.0.0.1:8").is_err());
    }
}
