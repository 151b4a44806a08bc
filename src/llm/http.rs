//! HTTP plumbing shared by the providers: sending with bounded retries
//! (429/529 honour `retry-after` and pause every request of the process to
//! that endpoint until then, 5xx back off with jitter, 401/403 never
//! retry), reading SSE or NDJSON with an idle timeout and a size bound, and
//! turning a task into a cancellable [`EventStream`].

use std::future::Future;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::{RequestBuilder, Response, StatusCode};
use tokio::sync::mpsc;

use super::wire::ApiKey;
use super::{ErrorKind, Event, EventStream, LlmError, Timeouts};

/// Retries for rate limits and server errors.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// First backoff; doubles each time, with jitter.
    pub base: Duration,
    /// The longest wait for one retry. A server that asks for a longer
    /// one (`retry-after`, Gemini's `RetryInfo`) gets an error naming its
    /// wait instead: cutline never sleeps longer than this unasked.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            base: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// Largest response body cutline reads before giving up on a stream.
pub const MAX_BODY_BYTES: usize = 64 << 20;

/// A client with the connect timeout set and a redirect policy that never
/// sends a credential to another origin: a redirect within the same scheme,
/// host and port is followed (ten at most); one to another origin is an
/// error naming where it pointed. (reqwest's default strips only
/// `Authorization`, not `x-api-key`, `x-goog-api-key` or configured headers.)
pub fn client(t: &Timeouts) -> reqwest::Client {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .last()
            .is_some_and(|prev| prev.origin() == attempt.url().origin());
        if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else if same {
            attempt.follow()
        } else {
            let to = attempt.url().to_string();
            attempt.error(format!(
                "the server redirected to another origin ({to}); cutline does not follow it, so no key or \
                 header goes to another host"
            ))
        }
    });
    reqwest::Client::builder()
        .connect_timeout(t.connect)
        .redirect(policy)
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// Wrap a producer task as a stream. The task gets a sender; when the
/// consumer drops the stream, the task is stopped at its next await.
pub fn spawn_stream<F, Fut>(f: F) -> EventStream
where
    F: FnOnce(mpsc::Sender<Event>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(256);
    let closed = tx.clone();
    let work = f(tx);
    tokio::spawn(async move {
        tokio::select! {
            () = work => {}
            () = closed.closed() => {}
        }
    });
    Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|e| (e, rx))
    }))
}

/// A wait a server asked for: `retry-after-ms` (OpenAI), `retry-after` in
/// seconds (an HTTP date is treated as "soon"). A number too large for a
/// `Duration` is `Duration::MAX`, which the cap then refuses.
fn retry_after(resp: &Response) -> Option<Duration> {
    let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|ms| *ms >= 0.0)
    {
        return Some(seconds(ms / 1000.0));
    }
    let v = header("retry-after")?;
    match v.parse::<f64>() {
        Ok(secs) if secs >= 0.0 => Some(seconds(secs)),
        _ => Some(Duration::from_secs(1)),
    }
}

/// Seconds as a duration, saturating (NaN is 0, too large is `MAX`).
fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(if s > 0.0 { Duration::MAX } else { Duration::ZERO })
}

/// The wait in a Gemini error body: `error.details[]` entry of type
/// `type.googleapis.com/google.rpc.RetryInfo` with `retryDelay` like `"7s"`
/// or `"0.5s"` (Gemini sends no `retry-after` header).
pub fn retry_info(body: &str) -> Option<Duration> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let details = v.pointer("/error/details")?.as_array()?;
    details.iter().find_map(|d| {
        let is_retry = d
            .get("@type")
            .and_then(serde_json::Value::as_str)?
            .ends_with("google.rpc.RetryInfo");
        let delay = d.get("retryDelay")?.as_str()?.strip_suffix('s')?.parse::<f64>().ok()?;
        (is_retry && delay >= 0.0).then(|| seconds(delay))
    })
}

fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let exp = policy.base.saturating_mul(1 << attempt.min(10));
    let jitter = exp.mul_f64(fastrand::f64() * 0.5);
    (exp + jitter).min(policy.max_wait)
}

/// When each endpoint (scheme, host, port) may be sent to again after a
/// 429/529 with `retry-after`. Shared by every request of the process, so
/// one rate-limited request pauses the others to that endpoint too (an eval
/// with hundreds in flight backs off as a whole instead of hammering on).
static RATE_GATES: std::sync::Mutex<Vec<(String, tokio::time::Instant)>> = std::sync::Mutex::new(Vec::new());

fn endpoint_of(url: &reqwest::Url) -> String {
    format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str().unwrap_or(""),
        url.port_or_known_default().unwrap_or(0)
    )
}

/// Until when `endpoint` is paused, if it is.
fn gate_until(endpoint: &str) -> Option<tokio::time::Instant> {
    let now = tokio::time::Instant::now();
    let mut g = RATE_GATES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    g.retain(|(_, t)| *t > now);
    g.iter().find(|(e, _)| e == endpoint).map(|(_, t)| *t)
}

/// Pause `endpoint` until `until` (never shortening a longer pause).
fn close_gate(endpoint: &str, until: tokio::time::Instant) {
    let mut g = RATE_GATES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match g.iter_mut().find(|(e, _)| e == endpoint) {
        Some((_, t)) => *t = (*t).max(until),
        None => g.push((endpoint.to_owned(), until)),
    }
}

/// Send with retries. `build` makes a fresh request for each attempt; `key`
/// scrubs an error body before it is cut short for a message, and names its
/// variable in a 401's message (the key itself is never shown).
pub async fn send(
    build: impl Fn() -> RequestBuilder,
    policy: &RetryPolicy,
    key: Option<&ApiKey>,
    first_byte: Duration,
) -> Result<Response, LlmError> {
    let key_env = key.map(ApiKey::env);
    let clean = |body: &str| cut(&key.map_or_else(|| body.to_owned(), |k| k.scrub(body)), 500);
    let mut attempt = 0;
    loop {
        let (client, request) = build().build_split();
        let endpoint = request.as_ref().ok().map(|r| endpoint_of(r.url()));
        if let Some(until) = endpoint.as_deref().and_then(gate_until) {
            tokio::time::sleep_until(until).await;
        }
        let result = match request {
            Ok(r) => match tokio::time::timeout(first_byte, client.execute(r)).await {
                Ok(r) => r,
                Err(_) => {
                    return Err(LlmError::new(
                        ErrorKind::Timeout,
                        format!(
                            "no response headers within {:.0} s (`first_byte_timeout_secs` in cutline.toml)",
                            first_byte.as_secs_f64()
                        ),
                    ));
                }
            },
            Err(e) => Err(e),
        };
        let resp = match result {
            Ok(r) => r,
            Err(e) => {
                let kind = if e.is_timeout() {
                    ErrorKind::Timeout
                } else {
                    ErrorKind::Connect
                };
                let err = LlmError::new(kind, describe_reqwest(&e));
                if attempt + 1 < policy.attempts && kind == ErrorKind::Timeout {
                    tracing::info!(attempt, "request timed out; retrying");
                    tokio::time::sleep(backoff(policy, attempt)).await;
                    attempt += 1;
                    continue;
                }
                return Err(err);
            }
        };
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let code = status.as_u16();
        let rate_limited = code == 429 || code == 529;
        if (rate_limited || status.is_server_error()) && attempt + 1 < policy.attempts {
            let (asked, body) = if rate_limited {
                match retry_after(&resp) {
                    Some(w) => (Some(w), None),
                    None => {
                        let body = read_error_body(resp).await;
                        (retry_info(&body), Some(clean(&body)))
                    }
                }
            } else {
                drop(resp);
                (None, None)
            };
            if let Some(w) = asked.filter(|w| *w > policy.max_wait) {
                return Err(wait_too_long(status, w, policy.max_wait, body.as_deref()));
            }
            let wait = asked.unwrap_or_else(|| backoff(policy, attempt));
            let jitter = Duration::from_millis(fastrand::u64(0..100));
            if rate_limited && let Some(e) = &endpoint {
                close_gate(e, tokio::time::Instant::now() + wait);
            }
            let wait = (wait + jitter).min(policy.max_wait);
            tracing::info!(
                status = code,
                attempt,
                wait_ms = wait.as_millis(),
                "retrying after the server's answer"
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
            continue;
        }
        let body = clean(&read_error_body(resp).await);
        return Err(status_error(status, &body, key_env, attempt + 1));
    }
}

/// The error for a server that asked to wait longer than the cap.
fn wait_too_long(status: StatusCode, asked: Duration, cap: Duration, body: Option<&str>) -> LlmError {
    let asked = if asked == Duration::MAX {
        "longer than cutline can count".to_owned()
    } else {
        format!("{:.1} s", asked.as_secs_f64())
    };
    LlmError {
        kind: ErrorKind::RateLimited,
        status: Some(status.as_u16()),
        message: format!(
            "rate limited; the server asked to wait {asked}, over the {:.0} s cap (`retry_max_wait_secs` in \
             cutline.toml), so cutline stopped instead of waiting{}",
            cap.as_secs_f64(),
            body.map(|b| format!(": {b}")).unwrap_or_default()
        ),
    }
}

/// A whole (small) response body, at most `cap` bytes, each chunk within
/// `idle`.
pub async fn read_capped(resp: Response, cap: usize, idle: Duration) -> Result<Vec<u8>, LlmError> {
    let mut out = Vec::new();
    let mut s = resp.bytes_stream();
    loop {
        match tokio::time::timeout(idle, s.next()).await {
            Err(_) => return Err(idle_error(idle)),
            Ok(None) => return Ok(out),
            Ok(Some(Err(e))) => return Err(LlmError::new(ErrorKind::Stream, format!("the body broke: {e}"))),
            Ok(Some(Ok(chunk))) => {
                out.extend_from_slice(&chunk);
                if out.len() > cap {
                    return Err(LlmError::new(
                        ErrorKind::Stream,
                        format!("a body over {} KiB where a small one was expected", cap >> 10),
                    ));
                }
            }
        }
    }
}

async fn read_error_body(resp: Response) -> String {
    let mut out = Vec::new();
    let mut s = resp.bytes_stream();
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout(Duration::from_secs(5), s.next()).await {
        out.extend_from_slice(&chunk);
        if out.len() > 4096 {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` cut to `n` characters, with `…` when it was longer. Cut only
/// after scrubbing: a key the cut goes through would survive in part.
fn cut(text: &str, n: usize) -> String {
    let mut t: String = text.chars().take(n).collect();
    if text.chars().nth(n).is_some() {
        t.push('…');
    }
    t
}

/// Whether an error text (lower-cased) says the prompt does not fit the
/// context: OpenAI `context_length_exceeded`, Anthropic "prompt is too long",
/// Gemini "input token count … exceeds the maximum number of tokens",
/// llama-server "exceeds the available context size", Ollama and vLLM.
pub fn is_context_length(lower: &str) -> bool {
    [
        "context length",
        "context_length",
        "maximum context",
        "context window",
        "too many tokens",
        "exceeds the available context",
        "prompt is too long",
        "input token count",
        "exceeds the maximum number of tokens",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

fn auth_failed(key_env: Option<&str>, body: &str) -> (ErrorKind, String) {
    let message = match key_env {
        Some(env) => format!("authentication failed (not retried); check the API key in ${env}: {body}"),
        None => format!("authentication failed (not retried): {body}"),
    };
    (ErrorKind::Auth, message)
}

/// An error for a non-success status.
pub fn status_error(status: StatusCode, body: &str, key_env: Option<&str>, attempts: u32) -> LlmError {
    let code = status.as_u16();
    let lower = body.to_ascii_lowercase();
    // Gemini answers a wrong key with 400 INVALID_ARGUMENT / API_KEY_INVALID.
    let bad_key = code == 400 && (lower.contains("api_key_invalid") || lower.contains("api key not valid"));
    let (kind, message) = match code {
        401 | 403 => auth_failed(key_env, body),
        400 if bad_key => auth_failed(key_env, body),
        429 | 529 => (
            ErrorKind::RateLimited,
            format!("rate limited; gave up after {attempts} attempts: {body}"),
        ),
        _ if is_context_length(&lower) => (
            ErrorKind::ContextLength,
            format!("the prompt does not fit the model's context: {body}"),
        ),
        _ if status.is_server_error() => (
            ErrorKind::Server,
            format!("server error; gave up after {attempts} attempts: {body}"),
        ),
        _ => (ErrorKind::BadRequest, body.to_owned()),
    };
    LlmError {
        kind,
        status: Some(code),
        message,
    }
}

fn describe_reqwest(e: &reqwest::Error) -> String {
    // reqwest errors include the URL, which never carries a key here (keys
    // travel in headers), so the message is safe to show.
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}

/// One SSE event.
#[derive(Debug, Clone)]
pub struct Sse {
    /// The `event:` name ("message" when absent).
    pub event: String,
    /// The `data:` payload.
    pub data: String,
}

type ByteStream = std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send>>;

/// Why a response body stopped: the transport failed, or the size bound was
/// reached.
#[derive(Debug)]
pub enum BodyError {
    /// The connection broke.
    Http(reqwest::Error),
    /// More than [`MAX_BODY_BYTES`] arrived.
    TooLarge,
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Http(e) => e.fmt(f),
            Self::TooLarge => f.write_str("response larger than 64 MiB"),
        }
    }
}

type BoundedStream = std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<bytes::Bytes, BodyError>> + Send>>;

/// The body as a stream that fails with [`BodyError::TooLarge`] once more
/// than `limit` bytes have passed, *before* they reach the SSE parser: a
/// body that never ends (keep-alive comments, or one line that never ends)
/// is bounded too, not only one that keeps sending events.
///
/// It also hands the parser whole lines only (up to the last `\n` or `\r`
/// of what has arrived): `eventsource-stream` re-parses its buffer from the
/// start on every chunk, so a long unterminated line fed in small chunks
/// would cost quadratic time before the bound is reached.
fn bounded(resp: Response, limit: usize) -> BoundedStream {
    struct St {
        inner: ByteStream,
        pending: Vec<u8>,
        total: usize,
        limit: usize,
        done: bool,
    }
    let st = St {
        inner: Box::pin(resp.bytes_stream()),
        pending: Vec::new(),
        total: 0,
        limit,
        done: false,
    };
    Box::pin(futures_util::stream::unfold(st, |mut st| async move {
        loop {
            if st.done {
                return None;
            }
            match st.inner.next().await {
                None => {
                    st.done = true;
                    if st.pending.is_empty() {
                        return None;
                    }
                    let tail = bytes::Bytes::from(std::mem::take(&mut st.pending));
                    return Some((Ok(tail), st));
                }
                Some(Err(e)) => {
                    st.done = true;
                    return Some((Err(BodyError::Http(e)), st));
                }
                Some(Ok(chunk)) => {
                    st.total = st.total.saturating_add(chunk.len());
                    if st.total > st.limit {
                        st.done = true;
                        return Some((Err(BodyError::TooLarge), st));
                    }
                    let Some(end) = memchr::memrchr2(b'\n', b'\r', &chunk) else {
                        st.pending.extend_from_slice(&chunk);
                        continue;
                    };
                    let out = if st.pending.is_empty() {
                        chunk.slice(..=end)
                    } else {
                        st.pending.extend_from_slice(&chunk[..=end]);
                        bytes::Bytes::from(std::mem::take(&mut st.pending))
                    };
                    st.pending.extend_from_slice(&chunk[end + 1..]);
                    return Some((Ok(out), st));
                }
            }
        }
    }))
}

fn idle_error(idle: Duration) -> LlmError {
    LlmError::new(
        ErrorKind::Timeout,
        format!(
            "no data for {}s (idle timeout); the partial output is kept",
            idle.as_secs_f64()
        ),
    )
}

fn too_large() -> LlmError {
    LlmError::new(
        ErrorKind::Stream,
        "response larger than 64 MiB; stopped reading, the partial output is kept",
    )
}

/// Reads SSE events with an idle timeout and a size bound.
pub struct SseReader {
    inner: std::pin::Pin<Box<eventsource_stream::EventStream<BoundedStream>>>,
    idle: Duration,
    done: bool,
}

impl SseReader {
    /// Start reading `resp` as SSE.
    pub fn new(resp: Response, idle: Duration) -> Self {
        Self {
            inner: Box::pin(bounded(resp, MAX_BODY_BYTES).eventsource()),
            idle,
            done: false,
        }
    }

    /// The next event; `None` at the end of the body. Errors: idle timeout,
    /// broken stream, invalid UTF-8, too large. After an error it ends.
    pub async fn next(&mut self) -> Option<Result<Sse, LlmError>> {
        if self.done {
            return None;
        }
        let r = match tokio::time::timeout(self.idle, self.inner.next()).await {
            Err(_) => Some(Err(idle_error(self.idle))),
            Ok(None) => None,
            Ok(Some(Err(eventsource_stream::EventStreamError::Transport(BodyError::TooLarge)))) => {
                Some(Err(too_large()))
            }
            Ok(Some(Err(e))) => Some(Err(LlmError::new(ErrorKind::Stream, format!("the stream broke: {e}")))),
            Ok(Some(Ok(ev))) => {
                return Some(Ok(Sse {
                    event: ev.event,
                    data: ev.data,
                }));
            }
        };
        self.done = true;
        r
    }
}

/// Reads newline-delimited JSON (Ollama) with the same guards.
pub struct LineReader {
    inner: ByteStream,
    buf: Vec<u8>,
    start: usize,
    total: usize,
    idle: Duration,
    done: bool,
}

impl LineReader {
    /// Start reading `resp` line by line.
    pub fn new(resp: Response, idle: Duration) -> Self {
        Self {
            inner: Box::pin(resp.bytes_stream()),
            buf: Vec::new(),
            start: 0,
            total: 0,
            idle,
            done: false,
        }
    }

    /// The next non-blank line; `None` at the end of the body.
    pub async fn next(&mut self) -> Option<Result<Vec<u8>, LlmError>> {
        loop {
            if let Some(off) = memchr::memchr(b'\n', &self.buf[self.start..]) {
                let line = self.buf[self.start..self.start + off].to_vec();
                self.start += off + 1;
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return Some(Ok(line));
            }
            if self.done {
                let rest = self.buf[self.start..].to_vec();
                self.start = self.buf.len();
                return (!rest.iter().all(u8::is_ascii_whitespace)).then_some(Ok(rest));
            }
            self.buf.drain(..self.start);
            self.start = 0;
            match tokio::time::timeout(self.idle, self.inner.next()).await {
                Err(_) => return Some(Err(idle_error(self.idle))),
                Ok(None) => self.done = true,
                Ok(Some(Err(e))) => {
                    self.done = true;
                    return Some(Err(LlmError::new(ErrorKind::Stream, format!("the stream broke: {e}"))));
                }
                Ok(Some(Ok(chunk))) => {
                    self.total += chunk.len();
                    if self.total > MAX_BODY_BYTES {
                        self.done = true;
                        return Some(Err(too_large()));
                    }
                    self.buf.extend_from_slice(&chunk);
                }
            }
        }
    }
}
