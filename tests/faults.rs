//! Network faults against a local server, on the two SSE providers most runs
//! use: llama-server's native `/completion` and OpenAI chat completions.
//!
//! Each fault ends with no panic, an error of a stated kind whose message
//! says what happened, and the text that arrived before it kept in the
//! transcript (and, through `run::execute`, in the session record).
//!
//! What `providers_wire.rs` already covers for OpenAI (a clean cut without
//! the final chunk, 429 and 500 retries, a silent stream, malformed events)
//! is covered here for llama-server, plus what neither covered: a TCP reset,
//! a slow drip that completes, a body that never ends, invalid UTF-8 after
//! good text and a character split across chunks. Loopback only; no timing
//! assertions (delays only make the faults happen).

mod support;

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use cutline::llm::config;
use cutline::llm::{self, ErrorKind, FinishReason, Provider, Request, Transcript};
use support::{Reply, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The two providers under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum P {
    LlamaServer,
    OpenAi,
}

const BOTH: [P; 2] = [P::LlamaServer, P::OpenAi];

impl P {
    fn kind(self) -> &'static str {
        match self {
            Self::LlamaServer => "llama-server",
            Self::OpenAi => "openai",
        }
    }

    fn base(self, url: &str) -> String {
        match self {
            Self::LlamaServer => url.to_owned(),
            Self::OpenAi => format!("{url}/v1"),
        }
    }

    /// One `data:` payload carrying `text`, not the last.
    fn delta(self, text: &str) -> String {
        let t = serde_json::to_string(text).unwrap();
        match self {
            Self::LlamaServer => format!(r#"{{"content":{t},"tokens":[1],"stop":false}}"#),
            Self::OpenAi => {
                format!(r#"{{"choices":[{{"index":0,"delta":{{"content":{t}}},"finish_reason":null}}]}}"#)
            }
        }
    }

    /// The `data:` payloads that end the stream normally.
    fn finish(self) -> Vec<String> {
        match self {
            Self::LlamaServer => vec![
                r#"{"content":"","stop":true,"stop_type":"eos","tokens_evaluated":3,"tokens_predicted":2}"#.to_owned(),
            ],
            Self::OpenAi => vec![
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#.to_owned(),
                "[DONE]".to_owned(),
            ],
        }
    }

    /// A complete stream of `parts` as a scripted reply.
    fn ok(self, parts: &[&str]) -> Reply {
        let mut payloads: Vec<String> = parts.iter().map(|p| self.delta(p)).collect();
        payloads.extend(self.finish());
        let refs: Vec<&str> = payloads.iter().map(String::as_str).collect();
        Reply::data(&refs)
    }
}

/// A provider of kind `p` on `url` with fast retries; `extra` is more TOML.
fn provider(p: P, url: &str, extra: &str) -> Box<dyn Provider> {
    let text = format!(
        "[[provider]]\nname = \"t\"\nkind = \"{}\"\nbase_url = \"{}\"\nmodel = \"m-test\"\n\
         {}max_retries = 2\nretry_base_secs = 0.001\nretry_max_wait_secs = 3\n{extra}\n",
        p.kind(),
        p.base(url),
        if p == P::OpenAi {
            "api_key_env = \"FAULTS_TEST_KEY\"\n"
        } else {
            ""
        },
    );
    let c = config::parse(&text, Path::new("faults.toml"))
        .expect("config")
        .remove(0);
    config::build_with_env(&c, &|_: &str| Some("sk-test-faults".to_owned())).expect("build")
}

fn req() -> Request {
    Request {
        prompt: "x".into(),
        ..Request::default()
    }
}

async fn run(p: &dyn Provider) -> Transcript {
    tokio::time::timeout(Duration::from_secs(60), llm::collect(p.stream(req()), |_, _| {}))
        .await
        .expect("the stream ended")
}

/// [`run`], telling `read` once the client has read text ending `upto`,
/// so a server resets the connection only after that (an event, never a
/// sleep: the kernel drops unread bytes when a reset arrives).
async fn run_telling(p: &dyn Provider, read: &tokio::sync::Notify, upto: &str) -> Transcript {
    let told = |_: &llm::Event, t: &Transcript| {
        if t.text.ends_with(upto) {
            read.notify_one();
        }
    };
    tokio::time::timeout(Duration::from_secs(60), llm::collect(p.stream(req()), told))
        .await
        .expect("the stream ended")
}

/// The run failed with `kind`, and its message contains every one of `says`.
fn assert_failed(t: &Transcript, p: P, kind: ErrorKind, says: &[&str]) {
    assert_eq!(t.finish, Some(FinishReason::Error), "{p:?}: {t:?}");
    let e = t.error.as_ref().unwrap_or_else(|| panic!("{p:?}: no error in {t:?}"));
    assert_eq!(e.kind, kind, "{p:?}: {}", e.message);
    for s in says {
        assert!(e.message.contains(s), "{p:?}: {:?} lacks {s:?}", e.message);
    }
}

fn sse_chunk(payload: &str) -> Vec<u8> {
    format!("data: {payload}\n\n").into_bytes()
}

// ------------------------------------------------------- a raw TCP server

/// A server that hands each connection, after reading its request, to
/// `script`, which writes whatever it likes (framing included). A GET (a
/// Models API asked before the first run) is answered 404, so the script
/// sees only the generation requests.
struct Raw {
    addr: std::net::SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Raw {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Raw {
    async fn start<F, Fut>(script: F) -> Self
    where
        F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::io::Result<()>> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let script = std::sync::Arc::new(script);
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let script = script.clone();
                tokio::spawn(async move {
                    match read_request(&mut sock).await {
                        Ok(true) => {
                            let _ = sock
                                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                                .await;
                        }
                        Ok(false) => {
                            let _ = script(sock).await;
                        }
                        Err(_) => {}
                    }
                });
            }
        });
        Self { addr, task }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Read one request (head and `content-length` body); true for a GET.
async fn read_request(sock: &mut TcpStream) -> std::io::Result<bool> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut have = buf.len() - head_end - 4;
    while have < len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        have += n;
    }
    Ok(head.starts_with("get "))
}

const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";

async fn write_chunk(sock: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    sock.write_all(format!("{:x}\r\n", bytes.len()).as_bytes()).await?;
    sock.write_all(bytes).await?;
    sock.write_all(b"\r\n").await?;
    sock.flush().await
}

// ------------------------------------------------------------------ faults

#[tokio::test]
async fn connection_refused_is_a_connect_error_with_nothing_kept() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for p in BOTH {
        let t = run(provider(p, &format!("http://127.0.0.1:{port}"), "").as_ref()).await;
        assert_failed(&t, p, ErrorKind::Connect, &["127.0.0.1"]);
        assert_eq!(t.text, "");
    }
}

#[tokio::test]
async fn a_reset_midway_keeps_the_partial_text() {
    for p in BOTH {
        let read = std::sync::Arc::new(tokio::sync::Notify::new());
        let server_read = read.clone();
        let server = Raw::start(move |mut sock| {
            let read = server_read.clone();
            async move {
                sock.write_all(SSE_HEAD).await?;
                write_chunk(&mut sock, &sse_chunk(&p.delta("Hal"))).await?;
                write_chunk(&mut sock, &sse_chunk(&p.delta("f"))).await?;
                // Once the client has read what was sent, reset (RST, not FIN).
                read.notified().await;
                #[allow(deprecated, reason = "set_linger is deprecated for blocking close; a reset (RST) is exactly what this test needs")]
                sock.set_linger(Some(Duration::ZERO))?;
                drop(sock);
                Ok(())
            }
        })
        .await;
        let t = run_telling(provider(p, &server.url(), "").as_ref(), &read, "Half").await;
        assert_failed(&t, p, ErrorKind::Stream, &["the stream broke"]);
        assert_eq!(t.text, "Half", "{p:?}");
    }
}

#[tokio::test]
async fn a_slow_drip_under_the_idle_timeout_completes() {
    for p in BOTH {
        let mut reply = p.ok(&["a", "b", "c", "d"]);
        for i in 0..reply.chunks.len() {
            reply = reply.delay_before(i, 100);
        }
        let server = Server::start(vec![reply]).await;
        let t = run(provider(p, &server.url(), "idle_timeout_secs = 10").as_ref()).await;
        assert_eq!(t.error, None, "{p:?}");
        assert_eq!(t.finish, Some(FinishReason::Stop), "{p:?}");
        assert_eq!(t.text, "abcd", "{p:?}");
    }
}

#[tokio::test]
async fn a_drip_over_the_idle_timeout_is_a_timeout_that_keeps_the_text() {
    for p in BOTH {
        // The third event comes long after the idle timeout.
        let server = Server::start(vec![p.ok(&["Par", "tial", "never"]).delay_before(2, 5000)]).await;
        let t = run(provider(p, &server.url(), "idle_timeout_secs = 0.3").as_ref()).await;
        assert_failed(
            &t,
            p,
            ErrorKind::Timeout,
            &["no data for 0.3s", "idle timeout", "partial output is kept"],
        );
        assert_eq!(t.text, "Partial", "{p:?}");
    }
}

#[tokio::test]
async fn llama_server_429_honours_retry_after_then_succeeds() {
    let server = Server::start(vec![
        Reply::status(429, r#"{"error":{"code":429,"message":"busy"}}"#).header("retry-after", "0"),
        P::LlamaServer.ok(&["Hi"]),
    ])
    .await;
    let t = run(provider(P::LlamaServer, &server.url(), "").as_ref()).await;
    assert_eq!(t.error, None);
    assert_eq!(t.text, "Hi");
    assert_eq!(server.requests().len(), 2);
    assert!(server.requests().iter().all(|r| r.path == "/completion"));
}

#[tokio::test]
async fn a_429_past_the_retries_names_the_attempts_and_the_body() {
    for p in BOTH {
        let limited = || Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "0");
        let server = Server::start(vec![limited(), limited(), limited(), p.ok(&["late"])]).await;
        let t = run(provider(p, &server.url(), "").as_ref()).await;
        assert_failed(
            &t,
            p,
            ErrorKind::RateLimited,
            &["gave up after 3 attempts", "slow down"],
        );
        assert_eq!(t.error.as_ref().unwrap().status, Some(429));
        assert_eq!(server.requests().len(), 3, "{p:?}");
    }
}

#[tokio::test]
async fn llama_server_500_then_success() {
    let server = Server::start(vec![
        Reply::status(500, r#"{"error":{"code":500,"message":"slot unavailable"}}"#),
        P::LlamaServer.ok(&["Hi"]),
    ])
    .await;
    let t = run(provider(P::LlamaServer, &server.url(), "").as_ref()).await;
    assert_eq!(t.error, None);
    assert_eq!(t.text, "Hi");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn llama_server_malformed_sse_is_an_unreadable_event_error() {
    for bad in [r#"{"content": "x""#, "not json at all", r"[1, 2"] {
        let server = Server::start(vec![Reply::data(&[&P::LlamaServer.delta("ok "), bad])]).await;
        let t = run(provider(P::LlamaServer, &server.url(), "").as_ref()).await;
        assert_failed(
            &t,
            P::LlamaServer,
            ErrorKind::Stream,
            &["unreadable event from llama-server"],
        );
        assert_eq!(t.text, "ok ");
    }
    // An error object mid-stream, as llama-server sends when a slot fails.
    let server = Server::start(vec![Reply::data(&[
        &P::LlamaServer.delta("ok "),
        r#"{"error":{"code":500,"message":"decode failed"}}"#,
    ])])
    .await;
    let t = run(provider(P::LlamaServer, &server.url(), "").as_ref()).await;
    assert_failed(&t, P::LlamaServer, ErrorKind::Stream, &["decode failed"]);
    assert_eq!(t.text, "ok ");
}

#[tokio::test]
async fn a_body_that_ends_without_a_final_event_keeps_the_text() {
    for p in BOTH {
        let server = Server::start(vec![Reply::data(&[&p.delta("Half")])]).await;
        let t = run(provider(p, &server.url(), "").as_ref()).await;
        assert_eq!(t.finish, Some(FinishReason::Error), "{p:?}");
        assert_eq!(t.error.as_ref().unwrap().kind, ErrorKind::Stream, "{p:?}");
        assert_eq!(t.text, "Half", "{p:?}");
    }
}

/// Bytes the endless server sends at most, so a client that never stops
/// reading cannot make the test run forever.
const ENDLESS_CAP: usize = 256 << 20;

/// A stream that sends one delta and then `filler` forever (until the
/// client goes away or the cap).
async fn endless(p: P, filler: &'static [u8]) -> Raw {
    Raw::start(move |mut sock| async move {
        sock.write_all(SSE_HEAD).await?;
        write_chunk(&mut sock, &sse_chunk(&p.delta("kept"))).await?;
        let block = filler.repeat((64 << 10) / filler.len());
        let mut sent = 0;
        while sent < ENDLESS_CAP {
            write_chunk(&mut sock, &block).await?;
            sent += block.len();
        }
        Ok(())
    })
    .await
}

#[tokio::test]
async fn a_body_that_never_ends_is_bounded_and_keeps_the_text() {
    for p in BOTH {
        // Keep-alive comments forever: no event ever completes, so only a
        // bound on the bytes (not on events) stops it.
        let server = endless(p, b": keep-alive\n").await;
        let t = run(provider(p, &server.url(), "").as_ref()).await;
        assert_failed(
            &t,
            p,
            ErrorKind::Stream,
            &["larger than 64 MiB", "partial output is kept"],
        );
        assert_eq!(t.text, "kept", "{p:?}");
        // One `data:` line that never ends.
        let server = Raw::start(move |mut sock| async move {
            sock.write_all(SSE_HEAD).await?;
            write_chunk(&mut sock, &sse_chunk(&p.delta("kept"))).await?;
            write_chunk(&mut sock, b"data: {\"content\":\"").await?;
            let block = vec![b'x'; 16 << 10];
            let mut sent = 0;
            while sent < ENDLESS_CAP {
                write_chunk(&mut sock, &block).await?;
                sent += block.len();
            }
            Ok(())
        })
        .await;
        let t = run(provider(p, &server.url(), "").as_ref()).await;
        assert_failed(&t, p, ErrorKind::Stream, &["larger than 64 MiB"]);
        assert_eq!(t.text, "kept", "{p:?}");
    }
}

/// Issue 32, case 24: one byte that is not UTF-8 in a stream ended the
/// run and lost the rest of the answer. It is replaced with U+FFFD (and
/// warned about on stderr), and the answer goes on to its finish.
#[tokio::test]
async fn invalid_utf8_in_a_chunk_is_replaced_and_the_answer_goes_on() {
    for p in BOTH {
        let mut reply = Reply::data(&[&p.delta("ok ")]);
        let mut bad = sse_chunk(&p.delta("aXXb "));
        let at = bad.windows(2).position(|w| w == b"XX").unwrap();
        bad[at] = 0xff;
        bad[at + 1] = 0xfe;
        reply.chunks.push((Duration::ZERO, bad));
        reply.chunks.push((Duration::ZERO, sse_chunk(&p.delta("the rest"))));
        for f in p.finish() {
            reply.chunks.push((Duration::ZERO, sse_chunk(&f)));
        }
        let server = Server::start(vec![reply]).await;
        let t = run(provider(p, &server.url(), "").as_ref()).await;
        assert_eq!(t.error, None, "{p:?}");
        assert_eq!(t.text, "ok a\u{FFFD}\u{FFFD}b the rest", "{p:?}");
        assert_eq!(t.finish, Some(FinishReason::Stop), "{p:?}");
    }
}

#[tokio::test]
async fn a_character_split_across_chunks_is_not_an_error() {
    for p in BOTH {
        // "é" is C3 A9; the chunk boundary falls between the two bytes.
        let mut bytes = sse_chunk(&p.delta("café"));
        for f in p.finish() {
            bytes.extend(sse_chunk(&f));
        }
        let at = bytes.windows(2).position(|w| w == [0xC3, 0xA9]).unwrap() + 1;
        let mut reply = Reply::data(&["x"]);
        reply.chunks = vec![
            (Duration::ZERO, bytes[..at].to_vec()),
            (Duration::ZERO, bytes[at..].to_vec()),
        ];
        let server = Server::start(vec![reply]).await;
        let t = run(provider(p, &server.url(), "").as_ref()).await;
        assert_eq!(t.error, None, "{p:?}");
        assert_eq!(t.text, "café", "{p:?}");
    }
}

// ------------------------------------------------- kept *and* recorded

const PROMPT: &str = r#"
id = "faults"
response-type = "jsonl"
prompt = "List fruit, one JSON object per line."
schema = '{"type": "object", "required": ["name"]}'
"#;

#[tokio::test]
async fn a_fault_midway_is_recorded_with_its_partial_output() {
    let (prompt, _) = cutline::prompt::load_toml("faults.toml", PROMPT).expect("prompt");
    let spec = cutline::run::Spec::new(prompt, serde_json::Map::new()).limit(Some(100));
    let dir = tempfile::tempdir().unwrap();
    for p in BOTH {
        let read = std::sync::Arc::new(tokio::sync::Notify::new());
        let server_read = read.clone();
        let server = Raw::start(move |mut sock| {
            let read = server_read.clone();
            async move {
                sock.write_all(SSE_HEAD).await?;
                write_chunk(&mut sock, &sse_chunk(&p.delta("{\"name\": \"apple\"}\n{\"na"))).await?;
                // Reset once the client has read it.
                read.notified().await;
                #[allow(deprecated, reason = "set_linger is deprecated for blocking close; a reset (RST) is exactly what this test needs")]
                sock.set_linger(Some(Duration::ZERO))?;
                Ok(())
            }
        })
        .await;
        let prov = cutline::llm::registry::Target::plain(std::sync::Arc::from(provider(p, &server.url(), "")));
        let mut rec = cutline::session::Recorder::create(dir.path(), "faults").unwrap();
        let out = tokio::time::timeout(
            Duration::from_secs(60),
            cutline::run::execute(&prov, &spec, Some(&mut rec), |_, t| {
                if t.text.ends_with("{\"na") {
                    read.notify_one();
                }
            }),
        )
        .await
        .expect("the run ended")
        .expect("the run started");
        assert_eq!(out.record.text, "{\"name\": \"apple\"}\n{\"na", "{p:?}");
        let loaded = cutline::session::load(rec.path()).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let run = &loaded.runs[0];
        assert_eq!(run.finish, FinishReason::Error, "{p:?}");
        assert_eq!(run.error.as_ref().unwrap().kind, ErrorKind::Stream, "{p:?}");
        assert_eq!(run.text, "{\"name\": \"apple\"}\n{\"na", "{p:?}");
        // The complete first line is still an item of the recorded analysis.
        assert_eq!(run.analysis["items"], 1, "{p:?}: {}", run.analysis);
    }
}

/// A server that accepts and never answers, one that sends half its
/// headers, and one that trickles an event a second forever: each run ends
/// `timeout` within its configured bound, with what arrived kept.
#[tokio::test]
async fn every_wait_is_bounded_by_first_byte_and_total_timeouts() {
    let silent = Raw::start(|sock| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(sock);
        Ok(())
    })
    .await;
    let half = Raw::start(|mut sock| async move {
        sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-").await?;
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(())
    })
    .await;
    for p in BOTH {
        for (what, url) in [("silent", silent.url()), ("half headers", half.url())] {
            let prov = provider(p, &url, "first_byte_timeout_secs = 1");
            let t = run(prov.as_ref()).await;
            let e = t.error.expect("an error");
            assert_eq!(e.kind, ErrorKind::Timeout, "{p:?} {what}: {e}");
            assert!(
                e.message.contains("no response headers within 1 s"),
                "{p:?} {what}: {e}"
            );
        }
        let trickle = Raw::start(move |mut sock| async move {
            sock.write_all(SSE_HEAD).await?;
            loop {
                write_chunk(&mut sock, &sse_chunk(&p.delta("x"))).await?;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        })
        .await;
        let prov = provider(p, &trickle.url(), "total_timeout_secs = 2");
        let t = run(prov.as_ref()).await;
        let e = t.error.expect("an error");
        assert_eq!(e.kind, ErrorKind::Timeout, "{p:?}: {e}");
        assert!(
            e.message.contains("longer than 2 s (`total_timeout_secs`"),
            "{p:?}: {e}"
        );
        assert!(t.text.starts_with("xx"), "{p:?}: what arrived is kept: {:?}", t.text);
        assert_eq!(t.finish, Some(FinishReason::Error));
    }
}

/// A `retry-after` too large for any clock is an error that says so, never
/// a panic in a worker.
#[tokio::test]
async fn an_absurd_retry_after_is_an_error_not_a_panic() {
    for (header, value) in [
        ("retry-after", "1e30"),
        ("retry-after-ms", "1e300"),
        ("retry-after", "120"),
    ] {
        let server = Server::start(vec![
            Reply::status(429, "{\"error\":\"slow down\"}").header(header, value),
        ])
        .await;
        let prov = provider(P::OpenAi, &server.url(), "");
        let t = run(prov.as_ref()).await;
        let e = t.error.expect("an error");
        assert_eq!(e.kind, ErrorKind::RateLimited, "{header}: {value}: {e}");
        assert!(e.message.contains("over the 3 s cap"), "{header}: {value}: {e}");
        assert_eq!(server.requests().len(), 1);
    }
}

/// Issue 32, case 23: an emoji (four UTF-8 bytes) cut at a chunk
/// boundary, at each of its three inner bytes, is one character: never an
/// error, never a replacement character.
#[tokio::test]
async fn an_emoji_split_across_chunks_at_any_byte_is_not_an_error() {
    for p in BOTH {
        for cut in 1..4 {
            let mut bytes = sse_chunk(&p.delta("ok 😀 done"));
            for f in p.finish() {
                bytes.extend(sse_chunk(&f));
            }
            let at = bytes.windows(4).position(|w| w == "😀".as_bytes()).unwrap() + cut;
            let mut reply = Reply::data(&["x"]);
            reply.chunks = vec![
                (Duration::ZERO, bytes[..at].to_vec()),
                (Duration::from_millis(20), bytes[at..].to_vec()),
            ];
            let server = Server::start(vec![reply]).await;
            let t = run(provider(p, &server.url(), "").as_ref()).await;
            assert_eq!(t.error, None, "{p:?} cut {cut}");
            assert_eq!(t.text, "ok 😀 done", "{p:?} cut {cut}");
        }
    }
}
