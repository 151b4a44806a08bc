//! HTTP plumbing shared by the providers: sending with bounded retries as
//! the SDKs retry (`retry.rs`), reading SSE or NDJSON with an idle timeout
//! and a size bound (`read.rs`), and turning a task into a cancellable
//! [`EventStream`].

mod read;
mod retry;

use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::{RequestBuilder, Response, StatusCode};
use tokio::sync::mpsc;

pub use read::{BodyError, LineReader, Sse, SseReader};
pub use retry::{RetryPolicy, retry_info};

pub mod key;

use super::{ErrorKind, Event, EventStream, LlmError, Timeouts};
use key::ApiKey;

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
    let builder = tls_ready(reqwest::Client::builder())
        .connect_timeout(t.connect)
        .redirect(policy);
    match builder.build() {
        Ok(c) => c,
        Err(e) => {
            // Only TLS setup can fail here, and it cannot with the roots
            // merged in; a plain client still reaches http:// endpoints.
            tracing::warn!("HTTP client with the redirect policy: {e}; using a plain one");
            tls_ready(reqwest::Client::builder()).build().unwrap_or_default()
        }
    }
}

/// A builder whose TLS works on any machine: rustls on `ring` (installed as
/// the process's provider once, so reqwest and the WebSocket client agree),
/// and the system's roots merged with Mozilla's (webpki-root-certs), so a
/// machine without a CA bundle still verifies public hosts and a company
/// CA installed in the system still counts.
pub fn tls_ready(builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        // Err means one is already installed (by the embedding program).
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let roots = webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .filter_map(|der| reqwest::Certificate::from_der(der).ok());
    builder.tls_certs_merge(roots)
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

/// Send with retries, as the providers' SDKs retry (`retry.rs`). `build`
/// makes a fresh request for each attempt; `key` scrubs an error body
/// before it is cut short for a message, and names its variable in a 401's
/// message (the key itself is never shown).
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
        let endpoint = request.as_ref().ok().map(|r| retry::endpoint_of(r.url()));
        if let Some(until) = endpoint.as_deref().and_then(retry::gate_until) {
            tokio::time::sleep_until(until).await;
        }
        let resp = match execute(client, request, first_byte).await {
            Ok(r) => r,
            Err(e) if e.kind == ErrorKind::Timeout && attempt + 1 < policy.attempts => {
                tracing::info!(attempt, "request timed out; retrying");
                tokio::time::sleep(retry::backoff(policy, attempt)).await;
                attempt += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let verdict = retry::verdict(status, resp.headers());
        let asked = retry::retry_after(resp.headers(), std::time::SystemTime::now());
        let body = read_error_body(resp).await;
        if retry::quota_exhausted(&body) {
            return Err(retry::quota_error(status, &clean(&body)));
        }
        if verdict == retry::Verdict::Final || attempt + 1 >= policy.attempts {
            return Err(status_error(status, &clean(&body), key_env, attempt + 1));
        }
        let asked = asked.or_else(|| retry::retry_info(&body));
        if let Some(w) = asked.filter(|w| *w > policy.max_wait) {
            return Err(retry::wait_too_long(status, w, policy.max_wait, Some(&clean(&body))));
        }
        let wait = asked.unwrap_or_else(|| retry::backoff(policy, attempt));
        if matches!(status.as_u16(), 429 | 529)
            && let Some(e) = &endpoint
        {
            retry::close_gate(e, tokio::time::Instant::now() + wait);
        }
        let wait = (wait + Duration::from_millis(fastrand::u64(0..100))).min(policy.max_wait);
        tracing::info!(
            status = status.as_u16(),
            attempt,
            wait_ms = wait.as_millis(),
            "retrying after the server's answer"
        );
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// One attempt, its headers within `first_byte`.
async fn execute(
    client: reqwest::Client,
    request: reqwest::Result<reqwest::Request>,
    first_byte: Duration,
) -> Result<Response, LlmError> {
    let r = request.map_err(|e| LlmError::caused(ErrorKind::Connect, describe_reqwest(&e), e))?;
    match tokio::time::timeout(first_byte, client.execute(r)).await {
        Ok(Ok(resp)) => Ok(resp),
        Ok(Err(e)) => {
            let kind = if e.is_timeout() {
                ErrorKind::Timeout
            } else {
                ErrorKind::Connect
            };
            Err(LlmError::caused(kind, describe_reqwest(&e), e))
        }
        Err(_) => Err(LlmError::new(
            ErrorKind::Timeout,
            format!(
                "no response headers within {:.0} s (`first_byte_timeout_secs` in cutline.toml)",
                first_byte.as_secs_f64()
            ),
        )),
    }
}

/// A whole (small) response body, at most `cap` bytes, each chunk within
/// `idle`.
pub async fn read_capped(resp: Response, cap: usize, idle: Duration) -> Result<Vec<u8>, LlmError> {
    let mut out = Vec::new();
    let mut s = resp.bytes_stream();
    loop {
        match tokio::time::timeout(idle, s.next()).await {
            Err(_) => return Err(read::idle_error(idle)),
            Ok(None) => return Ok(out),
            Ok(Some(Err(e))) => return Err(LlmError::caused(ErrorKind::Stream, format!("the body broke: {e}"), e)),
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

/// An error body for a message: decoded as the server says it encoded it
/// (gzip and deflate, by reqwest), at most 4 KiB, each chunk within 5 s;
/// a body that is not text is shown escaped, with a note.
async fn read_error_body(resp: Response) -> String {
    let mut out = Vec::new();
    let mut broke = None;
    let mut s = resp.bytes_stream();
    loop {
        match tokio::time::timeout(Duration::from_secs(5), s.next()).await {
            Ok(Some(Ok(chunk))) => {
                out.extend_from_slice(&chunk);
                if out.len() > 4096 {
                    break;
                }
            }
            Ok(Some(Err(e))) => {
                broke = Some(describe_reqwest(&e));
                break;
            }
            Ok(None) | Err(_) => break,
        }
    }
    let text = readable(&out);
    match broke {
        Some(e) => format!("{text} (the body could not be read or decoded: {e})"),
        None => text,
    }
}

/// `bytes` as text for a person: as they are when they are UTF-8 text;
/// otherwise every byte that is not printable shown as `\xNN`, with a note
/// (a binary body, or a compressed one no one asked for, never reaches a
/// terminal raw).
pub fn readable(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let printable = |c: char| !c.is_control() || matches!(c, '\n' | '\t');
    if let Ok(s) = std::str::from_utf8(bytes)
        && s.chars().all(printable)
    {
        return s.to_owned();
    }
    let mut out = format!("({} bytes that are not text, shown escaped) ", bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if printable(c) {
                out.push(c);
            } else {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "\\x{b:02x}");
                }
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
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
        402 => (
            ErrorKind::Quota,
            format!("payment required (not retried); check the account's billing: {body}"),
        ),
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
        source: None,
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
