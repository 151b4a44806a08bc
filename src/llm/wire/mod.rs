//! What the HTTP providers share: the resolved endpoint (URL, model, key,
//! extra headers, defaults, retries, timeouts), the API key holder that never
//! shows its value, and the driver that sends one request through
//! [`http::send`] and turns an SSE or NDJSON body into [`Event`]s with a
//! per-provider [`Decoder`].
//!
//! Every error a provider emits passes through [`ApiKey::scrub`], so a server
//! that echoes the key back cannot leak it into a message or a session.

pub mod json;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::http::{self, RetryPolicy};
use super::profile::Profile;
use super::{ErrorKind, Event, EventStream, LlmError, Request, Timeouts};

pub use super::http::key::ApiKey;

/// Extra request headers from the config. `Debug` shows the names only: a
/// value may be a credential.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers(pub Vec<(String, String)>);

impl Headers {
    /// The value of header `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(k, _)| k)).finish()
    }
}

/// How the key travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer KEY` (OpenAI, compatible servers, Ollama).
    Bearer,
    /// A header of its own holding the bare key (`x-api-key`, `x-goog-api-key`).
    Header(&'static str),
}

/// The resolved settings of one HTTP provider.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Configured name.
    pub name: String,
    /// Base URL without a trailing slash.
    pub base_url: String,
    /// Model id.
    pub model: String,
    /// The key, when the provider has one.
    pub key: Option<ApiKey>,
    /// Extra headers sent with every request.
    pub headers: Headers,
    /// What the model accepts (the seed and configured profile; a run's
    /// own fitted values are in its `Request`).
    pub profile: Profile,
    /// Retries for 429/529 and 5xx.
    pub retry: RetryPolicy,
    timeouts: Timeouts,
    client: reqwest::Client,
}

impl Endpoint {
    /// An endpoint with default retries, timeouts, no key, and the given
    /// profile.
    pub fn new(name: &str, base_url: &str, model: &str, profile: Profile) -> Self {
        let timeouts = Timeouts::default();
        Self {
            name: name.to_owned(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            key: None,
            headers: Headers::default(),
            profile,
            retry: RetryPolicy::default(),
            client: http::client(&timeouts),
            timeouts,
        }
    }

    /// The timeouts in force.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// Replace the timeouts (rebuilds the client for the connect timeout).
    pub fn set_timeouts(&mut self, t: Timeouts) {
        self.timeouts = t;
        self.client = http::client(&t);
    }

    /// The request's parts as the wire encoders read them. Every value is
    /// already decided (`run::plan` applies the precedence and the profile),
    /// so nothing is filled in here.
    pub fn prepare<'a>(&self, req: &'a Request) -> Prepared<'a> {
        Prepared {
            system: &req.system,
            prompt: &req.prompt,
            max_tokens: req.max_tokens,
            temperature: req.temperature,
            top_p: req.top_p,
            stop: &req.stop,
            schema: req.response_schema.as_ref(),
        }
    }

    /// The headers of every request: the wire's own (`extra`), the
    /// configured ones, then `request`'s (each replacing a header of the same
    /// name), then the key as `auth` says (marked sensitive, so it is never
    /// logged).
    pub fn header_map(
        &self,
        auth: Auth,
        extra: &[(&'static str, &'static str)],
        request: &[(String, String)],
    ) -> Result<HeaderMap, LlmError> {
        let mut map = HeaderMap::new();
        for (k, v) in extra {
            map.insert(*k, HeaderValue::from_static(v));
        }
        for (k, v) in self.headers.0.iter().chain(request) {
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
                LlmError::new(
                    ErrorKind::BadRequest,
                    format!("provider {:?}: {k:?} is not a valid header name", self.name),
                )
            })?;
            let mut value = HeaderValue::from_str(v).map_err(|_| {
                LlmError::new(
                    ErrorKind::BadRequest,
                    format!(
                        "provider {:?}: the value of header {k:?} is not a valid header value",
                        self.name
                    ),
                )
            })?;
            value.set_sensitive(true);
            map.insert(name, value);
        }
        if let Some(key) = &self.key {
            let bad = || {
                LlmError::new(
                    ErrorKind::Auth,
                    format!(
                        "provider {:?}: the key in ${} is not a valid header value (a stray newline?)",
                        self.name,
                        key.env()
                    ),
                )
            };
            let (name, text) = match auth {
                Auth::Bearer => (reqwest::header::AUTHORIZATION, format!("Bearer {}", key.expose())),
                Auth::Header(h) => (HeaderName::from_static(h), key.expose().to_owned()),
            };
            let mut value = HeaderValue::from_str(&text).map_err(|_| bad())?;
            value.set_sensitive(true);
            map.insert(name, value);
        }
        Ok(map)
    }

    /// Post `body` to `url` with the headers of [`Self::header_map`] and
    /// decode the answer with `decoder`; a header that cannot be sent is the
    /// stream's one error event.
    pub fn post<D: Decoder>(
        &self,
        url: String,
        body: Value,
        h: HeaderSpec<'_>,
        framing: Framing,
        decoder: D,
    ) -> EventStream {
        match self.header_map(h.auth, h.wire, h.request) {
            Ok(headers) => self.stream(url, body, headers, framing, decoder),
            Err(e) => http::spawn_stream(move |tx| async move {
                let _ = tx.send(Event::Error(e)).await;
            }),
        }
    }

    /// Send `body` to `url` and decode the answer with `decoder`.
    pub fn stream<D: Decoder>(
        &self,
        url: String,
        body: Value,
        headers: HeaderMap,
        framing: Framing,
        decoder: D,
    ) -> EventStream {
        let client = self.client.clone();
        let retry = self.retry;
        let idle = self.timeouts.idle;
        let first_byte = self.timeouts.first_byte;
        let total = self.timeouts.total;
        let key = self.key.clone();
        http::spawn_stream(move |tx| async move {
            // Every wait of the request, retries and stream included, is
            // bounded by `total`: what arrived before it stands.
            let guard = tx.clone();
            let work = async move {
                let scrub = |e: LlmError| match &key {
                    Some(k) => k.scrub_error(e),
                    None => e,
                };
                let send = http::send(
                    || client.post(&url).headers(headers.clone()).json(&body),
                    &retry,
                    key.as_ref(),
                    first_byte,
                );
                let resp = match send.await {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Event::Error(scrub(e))).await;
                        return;
                    }
                };
                let mut reader = match framing {
                    Framing::Sse => Reader::Sse(http::SseReader::new(resp, idle)),
                    Framing::Lines => Reader::Lines(http::LineReader::new(resp, idle)),
                };
                let mut decoder = decoder;
                // A model that echoes the key (asked to, say) must not put it
                // in a record either: text and thinking pass a redactor.
                let mut redactors = Redactors {
                    text: key.as_ref().map(ApiKey::redactor),
                    thinking: key.as_ref().map(ApiKey::redactor),
                };
                let Some(last) = decode(&mut reader, &mut decoder, &tx, &mut redactors).await else {
                    return;
                };
                if redactors.flush(&tx).await.is_none() {
                    return;
                }
                // Every other field kept from a response (the finish reason,
                // a continuation token, an error's words) is scrubbed whole.
                let fields = |ev: Event| match &key {
                    Some(k) => scrub_fields(ev, k),
                    None => ev,
                };
                if let Some(resume) = decoder.resume().filter(|_| matches!(last, Event::Finish { .. }))
                    && tx.send(fields(resume)).await.is_err()
                {
                    return;
                }
                let _ = tx.send(fields(last)).await;
            };
            if tokio::time::timeout(total, work).await.is_err() {
                let e = LlmError::new(
                    ErrorKind::Timeout,
                    format!(
                        "the request took longer than {:.0} s (`total_timeout_secs` in cutline.toml); what arrived is kept",
                        total.as_secs_f64()
                    ),
                );
                let _ = guard.send(Event::Error(e)).await;
            }
        })
    }
}

/// The redactors a stream's text and thinking pass (none without a key).
struct Redactors {
    text: Option<super::redact::Redactor>,
    thinking: Option<super::redact::Redactor>,
}

impl Redactors {
    /// Send what the redactors held back (a tail that could begin a key);
    /// `None` when the consumer went away.
    async fn flush(mut self, tx: &tokio::sync::mpsc::Sender<Event>) -> Option<()> {
        for (r, thinking) in [(self.text.as_mut(), false), (self.thinking.as_mut(), true)] {
            let held = r.map(super::redact::Redactor::finish).unwrap_or_default();
            if held.is_empty() {
                continue;
            }
            let ev = if thinking {
                Event::Thinking { text: held }
            } else {
                Event::Delta {
                    text: held,
                    pieces: Vec::new(),
                }
            };
            tx.send(ev).await.ok()?;
        }
        Some(())
    }
}

/// Read `reader` through `decoder`, sending each event (redacted) as it
/// comes, until the stream ends; the last event (the finish or the error),
/// or `None` when the consumer went away.
async fn decode<D: Decoder>(
    reader: &mut Reader,
    decoder: &mut D,
    tx: &tokio::sync::mpsc::Sender<Event>,
    r: &mut Redactors,
) -> Option<Event> {
    let mut out = Vec::new();
    loop {
        match reader.next().await {
            None => return Some(decoder.end(false)),
            // A transport error or idle timeout after the model's finish
            // arrived loses nothing: keep the finish.
            Some(Err(e)) => {
                return Some(match decoder.end(false) {
                    finish @ Event::Finish { .. } => finish,
                    _ => Event::Error(e),
                });
            }
            Some(Ok((event, data))) => {
                if !decoder.knows(&event) && serde_json::from_str::<serde::de::IgnoredAny>(&data).is_err() {
                    continue;
                }
                let step = decoder.feed(&event, &data, &mut out);
                for ev in out.drain(..) {
                    let ev = redact(ev, r.text.as_mut(), r.thinking.as_mut());
                    tx.send(ev).await.ok()?;
                }
                match step {
                    Ok(true) => return Some(decoder.end(true)),
                    Ok(false) => {}
                    Err(e) => return Some(Event::Error(e)),
                }
            }
        }
    }
}

/// `ev` with its text passed through the redactors; a delta whose text
/// changed loses its token pieces (they would no longer add up to it).
fn redact(
    ev: Event,
    text: Option<&mut super::redact::Redactor>,
    thinking: Option<&mut super::redact::Redactor>,
) -> Event {
    match (ev, text, thinking) {
        (Event::Delta { text: t, pieces }, Some(r), _) => {
            let clean = r.push(&t);
            let pieces = if clean == t { pieces } else { Vec::new() };
            Event::Delta { text: clean, pieces }
        }
        (Event::Thinking { text: t }, _, Some(r)) => Event::Thinking { text: r.push(&t) },
        (ev, _, _) => ev,
    }
}

/// `ev` with every text field other than the streamed deltas scrubbed of
/// the key (those pass the streaming redactors).
fn scrub_fields(ev: Event, key: &ApiKey) -> Event {
    match ev {
        Event::Finish {
            reason,
            raw_reason,
            usage,
        } => Event::Finish {
            reason,
            raw_reason: raw_reason.map(|r| key.scrub(&r)),
            usage,
        },
        Event::Resume { token } => Event::Resume {
            token: key.scrub(&token),
        },
        Event::Error(e) => Event::Error(key.scrub_error(e)),
        other => other,
    }
}

/// A request's parts, borrowed for encoding.
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    /// System prompt (augmented with the schema on the prompt path).
    pub system: &'a str,
    /// User prompt.
    pub prompt: &'a str,
    /// Max tokens.
    pub max_tokens: Option<u32>,
    /// Temperature.
    pub temperature: Option<f32>,
    /// `top_p`.
    pub top_p: Option<f32>,
    /// Stop sequences.
    pub stop: &'a [String],
    /// The schema to send on the native path (`None`: no native field).
    pub schema: Option<&'a Value>,
}

impl Prepared<'_> {
    /// The chat `messages` both OpenAI and Ollama take: the system prompt
    /// (when there is one), then the user prompt.
    pub fn chat_messages(&self) -> Vec<Value> {
        let mut messages = Vec::with_capacity(2);
        if !self.system.is_empty() {
            messages.push(serde_json::json!({"role": "system", "content": self.system}));
        }
        messages.push(serde_json::json!({"role": "user", "content": self.prompt}));
        messages
    }
}

/// The headers of one request: how the key travels, the wire's own
/// headers, and the request's extra ones.
#[derive(Debug, Clone, Copy)]
pub struct HeaderSpec<'a> {
    /// How the key travels.
    pub auth: Auth,
    /// The wire's own headers (`anthropic-version`).
    pub wire: &'a [(&'static str, &'static str)],
    /// The request's extra headers.
    pub request: &'a [(String, String)],
}

/// How the response body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events.
    Sse,
    /// One JSON value per line.
    Lines,
}

enum Reader {
    Sse(http::SseReader),
    Lines(http::LineReader),
}

impl Reader {
    async fn next(&mut self) -> Option<Result<(String, String), LlmError>> {
        match self {
            Self::Sse(r) => r.next().await.map(|r| r.map(|s| (s.event, s.data))),
            // A byte that is not UTF-8 is replaced (and warned about), as on SSE.
            Self::Lines(r) => r.next().await.map(|r| {
                r.map(|line| {
                    let s = String::from_utf8(line).unwrap_or_else(|e| {
                        tracing::warn!("a line of the stream held bytes that are not UTF-8: replaced with U+FFFD");
                        String::from_utf8_lossy(e.as_bytes()).into_owned()
                    });
                    (String::new(), s)
                })
            }),
        }
    }
}

/// Turns one provider's stream into events.
pub trait Decoder: Send + 'static {
    /// One SSE event (`event` is its name) or one NDJSON line (`event` is
    /// empty): push any deltas onto `out`; `Ok(true)` when the protocol says
    /// the stream is complete. An `Err` ends the stream after the deltas.
    fn feed(&mut self, event: &str, data: &str, out: &mut Vec<Event>) -> Result<bool, LlmError>;

    /// The last event: the finish when `complete`; at the end of the body
    /// (`complete` false) the finish if the model's reason already arrived,
    /// else an error (the stream dropped; the deltas before it stand).
    fn end(&mut self, complete: bool) -> Event;

    /// The provider's token to resume the answer, sent before the finish
    /// (Gemini's `continuationToken`); asked once, after [`Self::end`].
    fn resume(&mut self) -> Option<Event> {
        None
    }

    /// Whether `event` (an SSE event's name) is one of the wire's own: an
    /// unknown one whose data is not JSON (a `ping`) is skipped, as the
    /// protocols say unknown events are, never read as a broken stream.
    fn knows(&self, event: &str) -> bool {
        event.is_empty() || event == "message"
    }
}

/// The events `decoder` makes of `events` (name, data), ended as a whole
/// body: how a batch's final (not streamed) answer is read by the same
/// decoder as a stream, so both give the same transcript.
pub fn decode_whole(mut decoder: impl Decoder, events: &[(String, String)]) -> Vec<Event> {
    let mut out = Vec::new();
    for (name, data) in events {
        match decoder.feed(name, data, &mut out) {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => {
                out.push(Event::Error(e));
                return out;
            }
        }
    }
    let last = decoder.end(true);
    out.extend(decoder.resume().filter(|_| matches!(last, Event::Finish { .. })));
    out.push(last);
    out
}

/// Parse one event's JSON, or a `Stream` error quoting its start.
pub fn parse_json(provider: &str, data: &str) -> Result<Value, LlmError> {
    serde_json::from_str(data).map_err(|_| {
        LlmError::new(
            ErrorKind::Stream,
            format!(
                "unreadable event from {provider}: {}",
                data.chars().take(200).collect::<String>()
            ),
        )
    })
}

/// The error for a body that ended before the model's finish.
pub fn dropped(provider: &str) -> LlmError {
    LlmError::new(
        ErrorKind::Stream,
        format!("the {provider} stream ended before the model finished; the partial output is kept"),
    )
}

/// An error the server sent inside the stream, classified by its words.
pub fn in_stream_error(provider: &str, kind_hint: &str, message: &str) -> LlmError {
    let both = format!("{kind_hint} {message}").to_ascii_lowercase();
    let kind = if http::is_context_length(&both) {
        ErrorKind::ContextLength
    } else if both.contains("overloaded") || both.contains("rate_limit") || both.contains("rate limit") {
        ErrorKind::RateLimited
    } else if both.contains("authentication") || both.contains("permission") {
        ErrorKind::Auth
    } else {
        ErrorKind::Stream
    };
    let label = if kind_hint.is_empty() {
        String::new()
    } else {
        format!("{kind_hint}: ")
    };
    LlmError::new(
        kind,
        format!("{provider} reported an error mid-stream: {label}{message}"),
    )
}

/// A temperature as JSON, rounded to 6 decimals so `0.7_f32` is sent as
/// `0.7`, not `0.699999988079071`.
pub fn temperature(t: f32) -> Value {
    let x = (f64::from(t) * 1e6).round() / 1e6;
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// An estimate of the tokens in `text` (o200k_base), for providers that
/// stream thinking text but report no count of it.
pub fn estimate_tokens(text: &str) -> u32 {
    if text.is_empty() {
        return 0;
    }
    let n = crate::output::tokens::boundaries(text, crate::output::tokens::Tokenizer::O200kBase).len() - 1;
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A JSON number as `u32`, when it is one.
pub fn u32_of(v: Option<&Value>) -> Option<u32> {
    v.and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_removes_key_and_masked_echo() {
        let k = ApiKey::new("K", "sk-live-0123456789abcdef".into());
        let s = k.scrub("bad key sk-live-0123456789abcdef and 'sk-liv***********cdef' ok **bold**");
        assert!(!s.contains("0123456789"), "{s}");
        assert!(!s.contains("cdef'"), "{s}");
        assert!(s.ends_with("ok **bold**"), "{s}");
        assert_eq!(format!("{k:?}"), "ApiKey { env: \"K\", value: \"<redacted>\" }");
    }

    #[test]
    fn temperature_is_short() {
        assert_eq!(temperature(0.7).to_string(), "0.7");
        assert_eq!(temperature(0.0).to_string(), "0.0");
    }
}
