//! A tiny scripted HTTP/1.1 server for provider wire tests.
//!
//! It listens on `127.0.0.1:0`, records every request (method, path with
//! query, headers, body) and answers each connection with the next scripted
//! [`Reply`]: a status, headers, and body chunks sent with optional delays,
//! chunk-encoded with `Connection: close`. A reply can be cut: the connection
//! is dropped before the body's last chunk, as when a network drops.
#![allow(dead_code, reason = "shared by several test binaries; each uses a part")]

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Headers besides the framing ones.
    pub headers: Vec<(String, String)>,
    /// Body chunks, each sent after its delay.
    pub chunks: Vec<(Duration, Vec<u8>)>,
    /// Drop the connection instead of ending the body.
    pub cut: bool,
}

impl Reply {
    /// A status with a body of one chunk.
    pub fn status(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![(Duration::ZERO, body.as_bytes().to_vec())],
            cut: false,
        }
    }

    /// A 200 SSE stream: each item is one raw event (its lines, without the
    /// blank line that ends it).
    pub fn sse(events: &[&str]) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks: events
                .iter()
                .map(|e| (Duration::ZERO, format!("{e}\n\n").into_bytes()))
                .collect(),
            cut: false,
        }
    }

    /// A 200 SSE stream of `data:` events.
    pub fn data(payloads: &[&str]) -> Self {
        let events: Vec<String> = payloads.iter().map(|p| format!("data: {p}")).collect();
        let refs: Vec<&str> = events.iter().map(String::as_str).collect();
        Self::sse(&refs)
    }

    /// A 200 NDJSON stream, one chunk per line.
    pub fn ndjson(lines: &[&str]) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "application/x-ndjson".into())],
            chunks: lines
                .iter()
                .map(|l| (Duration::ZERO, format!("{l}\n").into_bytes()))
                .collect(),
            cut: false,
        }
    }

    /// Add a header.
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }

    /// Wait `ms` before the chunk at `index`.
    pub fn delay_before(mut self, index: usize, ms: u64) -> Self {
        self.chunks[index].0 = Duration::from_millis(ms);
        self
    }

    /// Drop the connection after the chunks, leaving the body unfinished.
    pub fn cut(mut self) -> Self {
        self.cut = true;
        self
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `POST`, `GET`, …
    pub method: String,
    /// Path with the query string.
    pub path: String,
    /// Headers, names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Recorded {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// Answers a request by looking at it (a server that behaves like a model
/// that refuses some parameters, say).
pub type Handler = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

/// Where replies come from.
#[derive(Clone)]
enum Replies {
    Queue(Arc<Mutex<VecDeque<Reply>>>),
    Handler(Handler),
}

impl Replies {
    fn next(&self, req: &Recorded) -> Reply {
        match self {
            Self::Queue(q) => q
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| Reply::status(500, "{\"error\": \"no more scripted replies\"}")),
            Self::Handler(h) => h(req),
        }
    }
}

/// The server; stops when dropped.
pub struct Server {
    addr: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Start serving `replies`, one per connection, in order; once they run
    /// out every request gets a 500.
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::serving(Replies::Queue(Arc::new(Mutex::new(VecDeque::from(replies))))).await
    }

    /// Start answering every request with `handler`'s reply to it.
    pub async fn handler(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        Self::serving(Replies::Handler(Arc::new(handler))).await
    }

    async fn serving(queue: Replies) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let recorded = recorded.clone();
                let queue = queue.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, &recorded, &queue).await;
                });
            }
        });
        Self { addr, requests, task }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// The only request; panics unless there was exactly one.
    pub fn only_request(&self) -> Recorded {
        let r = self.requests();
        assert_eq!(r.len(), 1, "expected one request, got {}", r.len());
        r.into_iter().next().unwrap()
    }
}

async fn read_request(sock: &mut TcpStream) -> std::io::Result<Option<Recorded>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_owned();
    let path = first.next().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Ok(Some(Recorded {
        method,
        path,
        headers,
        body,
    }))
}

async fn serve(mut sock: TcpStream, recorded: &Mutex<Vec<Recorded>>, queue: &Replies) -> std::io::Result<()> {
    let Some(req) = read_request(&mut sock).await? else {
        return Ok(());
    };
    let reply = queue.next(&req);
    recorded.lock().unwrap().push(req);
    let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    for (k, v) in &reply.headers {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    sock.write_all(head.as_bytes()).await?;
    sock.flush().await?;
    for (delay, bytes) in &reply.chunks {
        if !delay.is_zero() {
            tokio::time::sleep(*delay).await;
        }
        if bytes.is_empty() {
            continue;
        }
        sock.write_all(format!("{:x}\r\n", bytes.len()).as_bytes()).await?;
        sock.write_all(bytes).await?;
        sock.write_all(b"\r\n").await?;
        sock.flush().await?;
    }
    if reply.cut {
        // Give the client a moment to read what was sent, then drop the
        // connection without the terminating chunk.
        tokio::time::sleep(Duration::from_millis(20)).await;
        return Ok(());
    }
    sock.write_all(b"0\r\n\r\n").await?;
    sock.flush().await?;
    sock.shutdown().await?;
    Ok(())
}
