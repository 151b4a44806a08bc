//! Reading a streamed response body: SSE events or NDJSON lines, each
//! within the idle timeout, the whole within [`super::MAX_BODY_BYTES`].

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::Response;

use super::MAX_BODY_BYTES;
use crate::llm::{ErrorKind, LlmError};

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
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The connection broke.
    #[error(transparent)]
    Http(reqwest::Error),
    /// More than [`MAX_BODY_BYTES`] arrived.
    #[error("response larger than 64 MiB")]
    TooLarge,
}

type BoundedStream = std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<bytes::Bytes, BodyError>> + Send>>;

/// `lines` as valid UTF-8: a byte that is not (a server's stray byte) is
/// replaced with U+FFFD and warned about, so one bad byte never ends a
/// run and loses the rest of the answer. The lines are whole, so a
/// character split across chunks is never taken for a bad one.
fn valid_utf8(lines: bytes::Bytes) -> bytes::Bytes {
    if std::str::from_utf8(&lines).is_ok() {
        return lines;
    }
    let fixed = String::from_utf8_lossy(&lines).into_owned();
    tracing::warn!("the stream held bytes that are not UTF-8: each was replaced with U+FFFD and the answer goes on");
    bytes::Bytes::from(fixed)
}

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
                    return Some((Ok(valid_utf8(tail)), st));
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
                    return Some((Ok(valid_utf8(out)), st));
                }
            }
        }
    }))
}

pub(super) fn idle_error(idle: Duration) -> LlmError {
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
            Ok(Some(Err(e))) => Some(Err(LlmError::caused(
                ErrorKind::Stream,
                format!("the stream broke: {e}"),
                e,
            ))),
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
                    return Some(Err(LlmError::caused(
                        ErrorKind::Stream,
                        format!("the stream broke: {e}"),
                        e,
                    )));
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
