//! `cutline eval` against a local OpenAI-compatible test server: exact
//! records and summary numbers for scripted answers, resumability (a rerun
//! makes no request; a torn session resumes with only the missing runs; a
//! failed run and an edited prompt run again), bounded concurrency (the
//! server counts requests in flight), 429 with retry-after, input errors.
//! No timing assertions: the server only holds answers open so that runs
//! overlap, and where a test needs a number of requests at once, it holds
//! them until that many have arrived (an event, not a time).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server answers to one request.
#[derive(Debug, Clone)]
enum Answer {
    /// A streamed completion: text chunks and the finish reason.
    Stream(Vec<String>, &'static str),
    /// A status with headers and a body.
    Status(u16, Vec<(&'static str, String)>, String),
}

type Handler = dyn Fn(&Value, usize) -> Answer + Send + Sync;

struct State {
    handler: Box<Handler>,
    hold: Duration,
    /// Hold the first answers until this many requests are in flight
    /// together (0: no gate); released for good once reached.
    gate: usize,
    /// The peak so far, for the gate to wait on.
    peak: tokio::sync::watch::Sender<usize>,
    requests: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    bodies: Mutex<Vec<Value>>,
    /// (arrival order, arrival time, status answered) of every request.
    log: Mutex<Vec<(usize, std::time::Instant, u16)>>,
}

/// A chat-completions server on loopback, in its own runtime thread.
struct TestServer {
    url: String,
    state: Arc<State>,
    _rt: tokio::runtime::Runtime,
}

impl TestServer {
    fn start(hold_ms: u64, handler: impl Fn(&Value, usize) -> Answer + Send + Sync + 'static) -> Self {
        Self::start_gated(hold_ms, 0, handler)
    }

    /// A server whose first answers wait until `gate` requests are in
    /// flight at once (then none waits again): a client that can send that
    /// many together always reaches the peak, however loaded the machine.
    /// A client that never does is released after a minute, and the peak
    /// then tells.
    fn start_gated(
        hold_ms: u64,
        gate: usize,
        handler: impl Fn(&Value, usize) -> Answer + Send + Sync + 'static,
    ) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let state = Arc::new(State {
            handler: Box::new(handler),
            hold: Duration::from_millis(hold_ms),
            gate,
            peak: tokio::sync::watch::channel(0).0,
            requests: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            bodies: Mutex::new(Vec::new()),
            log: Mutex::new(Vec::new()),
        });
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let st = state.clone();
        rt.spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let st = st.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, &st).await;
                });
            }
        });
        Self { url, state, _rt: rt }
    }

    /// [`Self::requests`] once it has not moved for 300 ms (bounded: 10 s).
    fn settled_requests(&self) -> usize {
        let mut seen = self.requests();
        for _ in 0..33 {
            std::thread::sleep(Duration::from_millis(300));
            let now = self.requests();
            if now == seen {
                break;
            }
            seen = now;
        }
        seen
    }

    fn requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }

    fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    fn bodies(&self) -> Vec<Value> {
        self.state.bodies.lock().unwrap().clone()
    }
}

async fn serve(mut sock: TcpStream, st: &State) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let n = st.requests.fetch_add(1, Ordering::SeqCst);
    let now = st.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    st.max_in_flight.fetch_max(now, Ordering::SeqCst);
    st.peak.send_modify(|p| *p = (*p).max(now));
    if st.gate > 0 {
        let mut peak = st.peak.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(60), peak.wait_for(|p| *p >= st.gate)).await;
    }
    let arrived = std::time::Instant::now();
    let answer = (st.handler)(&body, n);
    st.bodies.lock().unwrap().push(body);
    let status = match &answer {
        Answer::Status(s, ..) => *s,
        Answer::Stream(..) => 200,
    };
    st.log.lock().unwrap().push((n, arrived, status));
    // Streams are held open; errors are answered at once.
    if !st.hold.is_zero() && status == 200 {
        tokio::time::sleep(st.hold).await;
    }
    let result = write_answer(&mut sock, &answer).await;
    st.in_flight.fetch_sub(1, Ordering::SeqCst);
    result
}

async fn write_answer(sock: &mut TcpStream, a: &Answer) -> std::io::Result<()> {
    let (status, headers, body) = match a {
        Answer::Status(s, h, b) => (*s, h.clone(), b.clone()),
        Answer::Stream(chunks, finish) => {
            let mut b = String::new();
            for c in chunks {
                let p = json!({"choices": [{"index": 0, "delta": {"content": c}, "finish_reason": null}]});
                let _ = write!(b, "data: {p}\n\n");
            }
            let p = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
            let _ = write!(b, "data: {p}\n\ndata: [DONE]\n\n");
            (200, vec![("content-type", "text/event-stream".to_owned())], b)
        }
    };
    let mut head = format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    head.push_str("\r\n");
    sock.write_all(head.as_bytes()).await?;
    sock.write_all(body.as_bytes()).await?;
    sock.flush().await?;
    sock.shutdown().await
}

/// The user message of a chat request.
fn user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

const SCHEMA_ITEM: &str =
    r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}"#;

/// A temp project: two twin prompts, a config naming the server, gold.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(url: &str, inputs: &[(&str, &str)], extra_config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("prompts/gold")).unwrap();
        let mut samples = String::new();
        for (name, text) in inputs {
            let _ = write!(samples, "\n[[input]]\nname = \"{name}\"\ntext = \"{text}\"\n");
        }
        std::fs::write(
            p.join("prompts/t.toml"),
            format!(
                "id = \"t\"\nresponse-type = \"json\"\ntwin = \"t-jsonl\"\nprompt = \"JSON {{{{text}}}}\"\nschema = '{{\"type\":\"array\",\"items\":{SCHEMA_ITEM}}}'\n{samples}"
            ),
        )
        .unwrap();
        std::fs::write(
            p.join("prompts/t-jsonl.toml"),
            format!(
                "id = \"t-jsonl\"\nresponse-type = \"jsonl\"\ntwin = \"t\"\nprompt = \"JSONL {{{{text}}}}\"\nschema = '{SCHEMA_ITEM}'\n{samples}"
            ),
        )
        .unwrap();
        std::fs::write(
            p.join("prompts/gold/t.jsonl"),
            "{\"name\":\"a\"}\n{\"name\":\"b\"}\n{\"name\":\"c\"}\n{\"name\":\"d\"}\n",
        )
        .unwrap();
        std::fs::write(
            p.join("cutline.toml"),
            format!(
                "[[provider]]\nname = \"srv\"\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"m-test\"\n{extra_config}"
            ),
        )
        .unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Run `cutline eval ARGS` (JSONL); returns the records and exit code.
    fn eval(&self, args: &[&str]) -> (Vec<Value>, i32, String) {
        let out = Command::cargo_bin("cutline")
            .unwrap()
            .env("CUTLINE_LEARNED_FILE", "")
            .env_remove("CUTLINE_PROMPTS")
            .env_remove("CUTLINE_SESSIONS")
            .env("CUTLINE_CONFIG", self.path().join("cutline.toml"))
            .current_dir(self.path())
            .arg("eval")
            .args(["--provider", "srv"])
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let recs = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
            .collect();
        (
            recs,
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn of_type<'a>(recs: &'a [Value], t: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["type"] == t).collect()
}

fn totals(recs: &[Value]) -> &Value {
    of_type(recs, "totals").pop().expect("a totals record")
}

/// Scripted answers: the JSON prompt answers an array, the JSONL twin one
/// object per line; with a limit both are cut inside the third item.
fn scripted(body: &Value, _n: usize) -> Answer {
    let jsonl = user_text(body).starts_with("JSONL");
    let limited = body["max_tokens"].is_number();
    let chunks: Vec<&str> = match (jsonl, limited) {
        (false, true) => vec!["[{\"name\":\"a\"},", "{\"name\":\"b\"},", "{\"na"],
        (false, false) => vec!["[{\"name\":\"a\"},", "{\"name\":\"b\"},", "{\"name\":\"c\"}]"],
        (true, true) => vec!["{\"name\":\"a\"}\n", "{\"name\":\"b\"}\n", "{\"na"],
        (true, false) => vec!["{\"name\":\"a\"}\n", "{\"name\":\"b\"}\n", "{\"name\":\"c\"}"],
    };
    Answer::Stream(
        chunks.into_iter().map(str::to_owned).collect(),
        if limited { "length" } else { "stop" },
    )
}

/// Loss causes of the scripted runs: a cut run's misses are the limit's;
/// the uncut run never produced "d".
fn check_losses(j64: &Value, l64: &Value, jn: &Value) {
    let loss = |r: &Value| {
        let t = &r["loss"]["total"];
        [
            "gold",
            "found",
            "cut_by_limit",
            "schema_rejected",
            "never_produced",
            "invented",
        ]
        .map(|k| t[k].as_u64().unwrap())
    };
    assert_eq!(loss(j64), [4, 0, 4, 0, 0, 0]);
    assert_eq!(loss(l64), [4, 2, 2, 0, 0, 0]);
    assert_eq!(loss(jn), [4, 3, 0, 0, 1, 0]);
    assert_eq!(
        jn["loss"]["missed"],
        json!([{"type": "item", "key": "d", "cause": "never_produced"}])
    );
}

#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[test]
fn exact_records_and_summary_for_scripted_answers() {
    let server = TestServer::start(0, scripted);
    let proj = Project::new(&server.url, &[("x", "some text")], "");
    let (recs, code, stderr) = proj.eval(&["--prompt", "t", "--max-tokens", "64,none"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(server.requests(), 4);
    assert_eq!(recs[0]["_schema"], "cutline.eval/1");
    let plan = &of_type(&recs, "plan")[0];
    assert_eq!(plan["runs"], 4);
    assert_eq!(plan["pending"], 4);
    assert_eq!(plan["prompts"][1]["id"], "t-jsonl", "the twin is added");
    let runs = of_type(&recs, "run");
    assert_eq!(runs.len(), 4);
    let find = |prompt: &str, limit: Value| {
        *runs
            .iter()
            .find(|r| r["prompt"] == prompt && r["max_tokens"] == limit)
            .unwrap()
    };
    let j64 = find("t", json!(64));
    assert_eq!(j64["finish_reason"], "length");
    assert_eq!(j64["items"], 0, "strict JSON keeps nothing of a cut array");
    assert_eq!(j64["salvaged"], 2);
    assert_eq!(j64["truncated"], true);
    assert_eq!(j64["parse_ok"], false);
    assert_eq!(j64["skipped"], false);
    assert_eq!(j64["gold"], json!({"true_positives": 0, "predicted": 0, "gold": 4}));
    assert!(j64["key"].as_str().unwrap().starts_with("t@"), "{j64}");
    assert!(j64["key"].as_str().unwrap().ends_with(":64:srv/m-test:none"), "{j64}");
    let l64 = find("t-jsonl", json!(64));
    assert_eq!(
        (l64["items"].clone(), l64["judged"].clone(), l64["invalid"].clone()),
        (json!(2), json!(3), json!(1))
    );
    assert_eq!(l64["gold"], json!({"true_positives": 2, "predicted": 2, "gold": 4}));
    let jn = find("t", Value::Null);
    assert_eq!((jn["items"].clone(), jn["parse_ok"].clone()), (json!(3), json!(true)));
    check_losses(j64, l64, jn);
    let sums = of_type(&recs, "summary");
    assert_eq!(sums.len(), 4);
    let row = |p: &str, l: Value| *sums.iter().find(|r| r["prompt"] == p && r["max_tokens"] == l).unwrap();
    let r = row("t", json!(64));
    assert_eq!(r["items_total"], 0);
    assert_eq!(r["salvaged_total"], 2);
    assert_eq!(r["parse_ok_rate"], 0.0);
    assert_eq!(r["truncated"], 1);
    assert_eq!(r["twin"], "t-jsonl");
    assert_eq!(r["gold"]["recall"], 0.0);
    assert_eq!(r["gold"]["f1"], 0.0);
    let r = row("t-jsonl", json!(64));
    assert_eq!(r["items_total"], 2);
    assert_eq!(r["items_mean"], 2.0);
    assert_eq!(r["valid_rate"], json!(2.0 / 3.0));
    assert_eq!(r["gold"]["recall"], 0.5);
    assert_eq!(r["gold"]["precision"], 1.0);
    assert_eq!(r["loss"]["cut_by_limit"], 2);
    let r = row("t-jsonl", Value::Null);
    assert_eq!(r["items_total"], 3);
    assert_eq!(r["loss"]["never_produced"], 1);
    assert_eq!(r["valid_rate"], 1.0);
    assert_eq!(r["gold"]["recall"], 0.75);
    let twins = of_type(&recs, "twins");
    assert_eq!(twins.len(), 2);
    assert_eq!(twins[0]["max_tokens"], 64);
    assert_eq!(twins[0]["items_total"], json!([0, 2]));
    assert_eq!(twins[0]["recall"], json!([0.0, 0.5]));
    assert_eq!(twins[1]["items_total"], json!([3, 3]));
    let t = totals(&recs);
    assert_eq!(
        (
            t["runs"].clone(),
            t["ran"].clone(),
            t["skipped"].clone(),
            t["failed"].clone()
        ),
        (json!(4), json!(4), json!(0), json!(0))
    );

    // The session holds every run in full; the requests carried the limits.
    let session = cutline::session::load(&proj.path().join(t["session"]["path"].as_str().unwrap())).unwrap();
    assert_eq!(session.runs.len(), 4);
    assert!(
        session
            .runs
            .iter()
            .all(|r| r.provider.name == "srv" && !r.text.is_empty())
    );
    let mut limits: Vec<Value> = server.bodies().iter().map(|b| b["max_tokens"].clone()).collect();
    limits.sort_by_key(Value::to_string);
    assert_eq!(limits, vec![json!(64), json!(64), Value::Null, Value::Null]);
}

#[test]
fn a_rerun_skips_what_is_recorded_and_a_torn_session_runs_only_the_rest() {
    let server = TestServer::start(0, scripted);
    let proj = Project::new(&server.url, &[("x", "one"), ("y", "two")], "");
    let args = ["--prompt", "t", "--max-tokens", "64,none"];
    let (first, code, stderr) = proj.eval(&args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(server.requests(), 8);

    // The same command again: no request, every run reported as skipped,
    // with the same numbers.
    let (again, code, stderr) = proj.eval(&args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(server.requests(), 8, "a rerun makes no request");
    let runs = of_type(&again, "run");
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|r| r["skipped"] == true));
    let t = totals(&again);
    assert_eq!((t["skipped"].clone(), t["ran"].clone()), (json!(8), json!(0)));
    assert_eq!(
        of_type(&first, "summary")
            .iter()
            .map(|r| r["items_total"].clone())
            .collect::<Vec<_>>(),
        of_type(&again, "summary")
            .iter()
            .map(|r| r["items_total"].clone())
            .collect::<Vec<_>>()
    );

    // A crash after three runs: the header, three runs (and the prompt
    // snapshots written before them) and a torn line.
    let path = proj.path().join(t["session"]["path"].as_str().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    let mut kept = Vec::new();
    let mut runs = 0;
    for line in text.lines() {
        let is_run = line.starts_with("{\"type\":\"run\"");
        if is_run && runs == 3 {
            kept.push(line[..line.len() / 2].to_owned());
            break;
        }
        runs += usize::from(is_run);
        kept.push(line.to_owned());
    }
    std::fs::write(&path, kept.join("\n")).unwrap();
    let (resumed, code, stderr) = proj.eval(&args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(server.requests(), 8 + 5, "only the five missing runs are requested");
    let t = totals(&resumed);
    assert_eq!(
        (t["skipped"].clone(), t["ran"].clone(), t["runs"].clone()),
        (json!(3), json!(5), json!(8))
    );
    let warnings = of_type(&resumed, "warning");
    assert!(
        warnings
            .iter()
            .any(|w| w["message"].as_str().unwrap().contains("torn last line")),
        "{warnings:?}"
    );
    // And the repaired session is whole again.
    let (_, _, _) = proj.eval(&args);
    assert_eq!(server.requests(), 13);

    // One more limit: only its runs are new, in the same session.
    let (more, code, _) = proj.eval(&["--prompt", "t", "--max-tokens", "64,none,128"]);
    assert_eq!(code, 0);
    assert_eq!(server.requests(), 13 + 4);
    assert_eq!(
        (totals(&more)["skipped"].clone(), totals(&more)["ran"].clone()),
        (json!(8), json!(4))
    );
    assert_eq!(totals(&more)["session"]["path"], t["session"]["path"]);

    // Editing one prompt re-runs that prompt's runs only, in the same session.
    let p = proj.path().join("prompts/t-jsonl.toml");
    let edited = std::fs::read_to_string(&p)
        .unwrap()
        .replace("JSONL {{text}}", "JSONL: {{text}}");
    std::fs::write(&p, edited).unwrap();
    let (after_edit, code, _) = proj.eval(&args);
    assert_eq!(code, 0);
    assert_eq!(server.requests(), 17 + 4);
    assert_eq!(totals(&after_edit)["session"]["path"], t["session"]["path"]);
}

#[test]
fn failed_runs_are_reported_with_exit_5_and_run_again_on_resume() {
    // Input "bad" fails (500, not retried) until `healed` is set.
    let healed = Arc::new(AtomicUsize::new(0));
    let h = healed.clone();
    let server = TestServer::start(0, move |body, n| {
        if user_text(body).contains("bad") && h.load(Ordering::SeqCst) == 0 {
            Answer::Status(500, vec![], "{\"error\":\"boom\"}".into())
        } else {
            scripted(body, n)
        }
    });
    let proj = Project::new(&server.url, &[("ok", "fine"), ("bad", "bad one")], "max_retries = 0\n");
    let args = ["--prompt", "t", "--no-twins", "--max-tokens", "64"];
    let (recs, code, _) = proj.eval(&args);
    assert_eq!(code, 5, "a failed run is a provider error");
    assert_eq!(server.requests(), 2);
    let failed: Vec<&Value> = of_type(&recs, "run")
        .into_iter()
        .filter(|r| !r["error"].is_null())
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["input"], "bad");
    assert_eq!(failed[0]["error"]["status"], 500);
    let err = of_type(&recs, "error").pop().expect("error record");
    assert_eq!(err["category"], "provider_error");
    assert!(
        err["message"].as_str().unwrap().starts_with("1 of 2 runs failed"),
        "{err}"
    );
    let sum = &of_type(&recs, "summary")[0];
    assert_eq!((sum["completed"].clone(), sum["failed"].clone()), (json!(1), json!(1)));

    healed.store(1, Ordering::SeqCst);
    let (recs, code, stderr) = proj.eval(&args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(server.requests(), 3, "only the failed run is sent again");
    let t = totals(&recs);
    assert_eq!(
        (t["skipped"].clone(), t["ran"].clone(), t["failed"].clone()),
        (json!(1), json!(1), json!(0))
    );
}

#[test]
fn concurrency_is_bounded_exactly() {
    let server = TestServer::start_gated(0, 3, scripted);
    let inputs: Vec<(String, String)> = (0..6).map(|i| (format!("i{i}"), format!("text {i}"))).collect();
    let pairs: Vec<(&str, &str)> = inputs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let proj = Project::new(&server.url, &pairs, "");
    let (recs, code, stderr) = proj.eval(&[
        "--prompt",
        "t",
        "--no-twins",
        "--max-tokens",
        "64,none",
        "--concurrency",
        "3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(server.requests(), 12);
    assert_eq!(
        server.max_in_flight(),
        3,
        "never more than --concurrency requests at once, and that many"
    );
    assert_eq!(totals(&recs)["max_in_flight"], 3);
    assert_eq!(of_type(&recs, "run").len(), 12);
}

/// Group commit (issue 37): runs are written as they finish and synced
/// in groups, and a run is told (its `run` record printed) only once its
/// group is synced. Killed with `kill -9` after 25 runs were told, a
/// rerun finds every one of them recorded and sends none of them again.
#[test]
fn every_run_told_before_a_kill_is_recorded_and_never_sent_again() {
    let server = TestServer::start(5, scripted);
    let inputs: Vec<(String, String)> = (0..150).map(|i| (format!("i{i}"), format!("text {i}"))).collect();
    let pairs: Vec<(&str, &str)> = inputs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let proj = Project::new(&server.url, &pairs, "");
    let args = [
        "--prompt",
        "t",
        "--no-twins",
        "--max-tokens",
        "none",
        "--concurrency",
        "16",
    ];
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cutline"))
        .env("CUTLINE_LEARNED_FILE", "")
        .env_remove("CUTLINE_PROMPTS")
        .env_remove("CUTLINE_SESSIONS")
        .env("CUTLINE_CONFIG", proj.path().join("cutline.toml"))
        .current_dir(proj.path())
        .args(["eval", "--provider", "srv"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut told = std::collections::BTreeSet::new();
    let stdout = child.stdout.take().unwrap();
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let rec: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if rec["type"] == "run" {
            told.insert(rec["key"].as_str().unwrap().to_owned());
            if told.len() == 25 {
                child.kill().unwrap();
                break;
            }
        }
    }
    child.wait().unwrap();
    assert_eq!(told.len(), 25, "the eval ended before 25 runs were told");
    // A request the killed child wrote just before it died can reach the
    // server a moment later: count from when the count has settled.
    let sent_before = server.settled_requests();
    let (recs, code, stderr) = proj.eval(&args);
    assert_eq!(code, 0, "{stderr}");
    let skipped: std::collections::BTreeSet<String> = of_type(&recs, "run")
        .iter()
        .filter(|r| r["skipped"] == true)
        .map(|r| r["key"].as_str().unwrap().to_owned())
        .collect();
    let lost: Vec<&String> = told.difference(&skipped).collect();
    assert!(lost.is_empty(), "told but not recorded: {lost:?}");
    assert_eq!(of_type(&recs, "run").len(), 150);
    assert_eq!(
        server.requests() - sent_before,
        150 - skipped.len(),
        "the rerun sends only what is not recorded"
    );
}

#[test]
fn rate_limited_runs_honour_retry_after_and_complete() {
    // The first two requests are told to come back later.
    let server = TestServer::start(0, |body, n| {
        if n < 2 {
            Answer::Status(
                429,
                vec![("retry-after-ms", "200".into())],
                "{\"error\":\"slow down\"}".into(),
            )
        } else {
            scripted(body, n)
        }
    });
    let proj = Project::new(&server.url, &[("x", "one"), ("y", "two")], "");
    let (recs, code, stderr) = proj.eval(&[
        "--prompt",
        "t",
        "--no-twins",
        "--max-tokens",
        "64",
        "--concurrency",
        "2",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(server.requests(), 4, "two 429s, then two answers");
    let runs = of_type(&recs, "run");
    assert_eq!(runs.len(), 2);
    assert!(
        runs.iter().all(|r| r["error"].is_null() && r["salvaged"] == 2),
        "{runs:?}"
    );
}

/// One 429 with `retry-after` pauses the whole eval at that endpoint, not
/// just the run that got it: no request starts until the pause is over
/// (checked by arrival order against the 429's own time, a lower bound that
/// a slow machine cannot break).
#[test]
fn a_429_pauses_every_run_to_that_endpoint() {
    let server = TestServer::start(800, |body, n| {
        if n == 0 {
            Answer::Status(
                429,
                vec![("retry-after-ms", "1000".into())],
                "{\"error\":\"slow down\"}".into(),
            )
        } else {
            scripted(body, n)
        }
    });
    let proj = Project::new(&server.url, &[("x", "one"), ("y", "two")], "");
    let (recs, code, stderr) = proj.eval(&[
        "--prompt",
        "t",
        "--no-twins",
        "--max-tokens",
        "64,none",
        "--concurrency",
        "2",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(server.requests(), 5, "one 429, then four answers");
    assert!(of_type(&recs, "run").iter().all(|r| r["error"].is_null()));
    let log = server.state.log.lock().unwrap().clone();
    let limited_at = log.iter().find(|(n, ..)| *n == 0).map(|(_, t, _)| *t).unwrap();
    // Request 1 was already in flight beside the limited one; every later
    // one (the retry, and the runs started when request 1 finished after
    // 800 ms) waited out the 1000 ms pause.
    for (n, at, _) in log.iter().filter(|(n, ..)| *n >= 2) {
        assert!(
            at.duration_since(limited_at) >= Duration::from_secs(1),
            "request {n} came {:?} after the 429 that paused the endpoint for 1000 ms",
            at.duration_since(limited_at)
        );
    }
}

#[test]
fn inputs_from_a_jsonl_file_and_a_directory() {
    let server = TestServer::start(0, scripted);
    let proj = Project::new(&server.url, &[("x", "one")], "");
    let f = proj.path().join("in.jsonl");
    std::fs::write(&f, "{\"id\":\"first\",\"text\":\"a\"}\n\n{\"text\":\"b\"}\n").unwrap();
    let (recs, code, stderr) = proj.eval(&[
        "--prompt",
        "t",
        "--no-twins",
        "--max-tokens",
        "64",
        "--inputs",
        f.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let mut inputs: Vec<String> = of_type(&recs, "run")
        .iter()
        .map(|r| r["input"].as_str().unwrap().to_owned())
        .collect();
    inputs.sort();
    assert_eq!(inputs, vec!["first", "line-3"]);
    let mut texts: Vec<String> = server.bodies().iter().map(user_text).collect();
    texts.sort();
    assert_eq!(texts, vec!["JSON a", "JSON b"]);

    let d = proj.path().join("inputs");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("p.txt"), "plain").unwrap();
    std::fs::write(d.join("q.json"), "{\"text\":\"vars\"}").unwrap();
    std::fs::write(d.join("README.md"), "ignored").unwrap();
    let (recs, code, stderr) = proj.eval(&[
        "--prompt",
        "t",
        "--no-twins",
        "--max-tokens",
        "none",
        "--inputs",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let inputs: Vec<Value> = of_type(&recs, "run").iter().map(|r| r["input"].clone()).collect();
    assert_eq!(inputs.len(), 2);
    assert!(inputs.contains(&json!("p")) && inputs.contains(&json!("q")));
    let texts: Vec<String> = server.bodies().iter().map(user_text).collect();
    assert!(
        texts.contains(&"JSON plain".to_owned()) && texts.contains(&"JSON vars".to_owned()),
        "{texts:?}"
    );
}

#[test]
fn input_and_usage_errors_name_file_line_and_cause() {
    let server = TestServer::start(0, scripted);
    let proj = Project::new(&server.url, &[("x", "one")], "");
    let f = proj.path().join("inputs.jsonl");
    std::fs::write(&f, "{\"text\":\"a\"}\n{\"text\":\"b\"}\n{\"text\": oops}\n").unwrap();
    let (recs, code, _) = proj.eval(&["--prompt", "t", "--max-tokens", "64", "--inputs", f.to_str().unwrap()]);
    assert_eq!(code, 4);
    let err = of_type(&recs, "error").pop().unwrap();
    assert_eq!(err["category"], "input_error");
    let msg = err["message"].as_str().unwrap();
    assert!(msg.starts_with(&format!("{}:3:", f.display())), "{msg}");
    assert!(msg.contains("bad JSON"), "{msg}");

    std::fs::write(&f, "[\"not\", \"an object\"]\n").unwrap();
    let (recs, code, _) = proj.eval(&["--prompt", "t", "--max-tokens", "64", "--inputs", f.to_str().unwrap()]);
    assert_eq!(code, 4);
    assert_eq!(
        of_type(&recs, "error")[0]["message"],
        format!("{}:1: expected a JSON object of variables, got an array", f.display())
    );

    let (_, code, stderr) = proj.eval(&["--prompt", "t", "--max-tokens", "64,lots"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("\"lots\" is not a number of tokens or `none`"),
        "{stderr}"
    );

    let (recs, code, _) = proj.eval(&["--prompt", "nope", "--max-tokens", "64"]);
    assert_eq!(code, 3);
    assert_eq!(of_type(&recs, "error")[0]["category"], "config_invalid");
    assert_eq!(server.requests(), 0, "no request before the matrix is valid");
}

fn model_or_skip() -> bool {
    match cutline::llm::local::installed() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("CUTLINE_REQUIRE_LOCAL").is_none(),
                "CUTLINE_REQUIRE_LOCAL is set but {e}"
            );
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// The gold set against the real local model (Gemma 3 270M): at 64 tokens
/// the JSON array keeps nothing under strict parsing while its JSONL twin
/// keeps the lines it finished; gold recall is reported per row; a rerun
/// runs nothing.
#[test]
fn eval_over_the_gold_set_on_the_local_model() {
    if !model_or_skip() {
        return; // skip: the local model is not installed (model_or_skip said so)
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = cutline::store::resolve("extract-definitions", &repo.join("prompts")).unwrap();
    let first = &cfg.inputs[0];
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("gold-input.jsonl");
    let mut line = first.vars.clone();
    line.insert("id".into(), json!(first.name));
    std::fs::write(&inputs, format!("{}\n", Value::Object(line))).unwrap();
    let run = || {
        let out = Command::cargo_bin("cutline")
            .unwrap()
            .env("CUTLINE_LEARNED_FILE", "")
            .env_remove("CUTLINE_PROMPTS")
            .env_remove("CUTLINE_SESSIONS")
            .env_remove("CUTLINE_CONFIG")
            .args(["eval", "--prompt", "extract-definitions", "--max-tokens", "64,none"])
            .arg("--inputs")
            .arg(&inputs)
            .arg("--prompts")
            .arg(repo.join("prompts"))
            .arg("--sessions")
            .arg(dir.path().join("sessions"))
            .args(["--provider", "local", "--output", "json"])
            .output()
            .unwrap();
        let env: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(env["ok"], true, "{env}\n{}", String::from_utf8_lossy(&out.stderr));
        env["data"].clone()
    };
    let data = run();
    let rows = data["summary"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let row = |p: &str, l: Value| rows.iter().find(|r| r["prompt"] == p && r["max_tokens"] == l).unwrap();
    let array64 = row("extract-definitions", json!(64));
    let lines64 = row("extract-definitions-jsonl", json!(64));
    assert_eq!(array64["truncated"], 1, "{array64}");
    assert_eq!(array64["items_total"], 0, "a cut array keeps nothing: {array64}");
    assert!(array64["salvaged_total"].as_u64().unwrap() >= 1, "{array64}");
    assert!(lines64["items_total"].as_u64().unwrap() >= 1, "{lines64}");
    for r in rows {
        assert_eq!(r["failed"], 0, "{r}");
        assert_eq!(r["gold"]["runs"], 1, "gold applies to the annotated input: {r}");
        assert_eq!(r["gold"]["gold"], 6, "{r}");
        assert!(r["gold"]["recall"].is_number(), "{r}");
    }
    assert_eq!(array64["gold"]["recall"], 0.0);
    assert!(lines64["gold"]["recall"].as_f64().unwrap() > 0.0, "{lines64}");
    let full = row("extract-definitions", Value::Null);
    assert!(full["gold"]["true_positives"].as_u64().unwrap() >= 1, "{full}");
    let twins = data["twins"].as_array().unwrap();
    assert_eq!(twins[0]["max_tokens"], 64);
    assert_eq!(twins[0]["items_total"][0], 0);

    let again = run();
    assert_eq!(again["totals"]["skipped"], 4);
    assert_eq!(again["totals"]["ran"], 0);
    assert_eq!(
        again["summary"],
        data["summary"]
            .clone()
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r["skipped"] = json!(r["runs"]);
                r
            })
            .collect::<Value>()
    );
}

/// Hundreds of requests truly in flight: 1000 runs at `--concurrency 500`
/// (and 50) against a server that holds the first answers until that many
/// requests are open together: the server's peak equals the bound exactly,
/// and every run is recorded. Prints the eval's peak RSS (a figure for
/// BENCHMARKS.md, not asserted).
#[test]
fn in_flight_hundreds_with_flat_memory() {
    for conc in [50usize, 500] {
        let server = TestServer::start_gated(0, conc, scripted);
        let proj = Project::new(&server.url, &[("x", "one")], "");
        let f = proj.path().join("in.jsonl");
        let mut lines = String::new();
        for i in 0..500 {
            let _ = writeln!(lines, "{{\"text\":\"input {i}\"}}");
        }
        std::fs::write(&f, lines).unwrap();
        let (recs, code, stderr) = proj.eval(&[
            "--prompt",
            "t",
            "--no-twins",
            "--max-tokens",
            "64,none",
            "--inputs",
            f.to_str().unwrap(),
            "--concurrency",
            &conc.to_string(),
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(server.requests(), 1000);
        assert_eq!(server.max_in_flight(), conc);
        let t = totals(&recs);
        assert_eq!(t["ran"], 1000);
        assert_eq!(t["max_in_flight"], conc);
        eprintln!(
            "concurrency {conc}: server peak in flight {}, peak RSS {} KiB",
            server.max_in_flight(),
            t["peak_rss_kib"]
        );
    }
}

#[test]
fn bundled_gold_sets_fit_their_prompts() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(repo.join("prompts/gold")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let id = path.file_stem().unwrap().to_string_lossy().into_owned();
        let cfg = cutline::store::resolve(&id, &repo.join("prompts")).unwrap();
        assert!(!cfg.inputs.is_empty(), "{id}: no sample input to annotate");
        let mut ids = vec![id.clone()];
        ids.extend(cfg.twin.clone());
        for pid in ids {
            let p = cutline::store::resolve(&pid, &repo.join("prompts")).unwrap();
            let schema = cutline::eval::item_schema(&p).expect("an item schema");
            let compiled = cutline::output::schema::CompiledSchema::compile(&schema).unwrap();
            for (i, line) in std::fs::read_to_string(&path).unwrap().lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{id}.jsonl:{}: {e}", i + 1));
                assert!(
                    compiled.is_valid(&v),
                    "{id}.jsonl:{}: not valid for {pid}: {line}",
                    i + 1
                );
            }
        }
        n += 1;
    }
    assert!(n >= 3, "gold sets: {n}");
}

/// `--provider replay` cuts the bundled Gemma 3 270M recordings
/// (`sessions/demo.jsonl`) at each limit: the same comparison as the local
/// model test, offline and exact (an input without a recording:
/// `tests/replay_match.rs`).
#[test]
fn replay_eval_over_the_bundled_recordings() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::copy(repo.join("sessions/demo.jsonl"), sessions.join("demo.jsonl")).unwrap();
    let cfg = cutline::store::resolve("extract-definitions", &repo.join("prompts")).unwrap();
    let inputs = dir.path().join("gold-input.jsonl");
    let mut line = cfg.inputs[0].vars.clone();
    line.insert("id".into(), json!(cfg.inputs[0].name));
    std::fs::write(&inputs, format!("{}\n", Value::Object(line))).unwrap();
    let eval = |extra: &[&str]| {
        let out = Command::cargo_bin("cutline")
            .unwrap()
            .env("CUTLINE_LEARNED_FILE", "")
            .env_remove("CUTLINE_PROMPTS")
            .env_remove("CUTLINE_SESSIONS")
            .env_remove("CUTLINE_CONFIG")
            .args([
                "eval",
                "--prompt",
                "extract-definitions",
                "--provider",
                "replay",
                "--output",
                "json",
            ])
            .arg("--prompts")
            .arg(repo.join("prompts"))
            .arg("--sessions")
            .arg(&sessions)
            .args(extra)
            .output()
            .unwrap();
        let env: Value = serde_json::from_slice(&out.stdout).unwrap();
        (env, out.status.code().unwrap_or(-1))
    };
    let (env, code) = eval(&["--max-tokens", "32,64,none", "--inputs", inputs.to_str().unwrap()]);
    assert_eq!(code, 0, "{env}");
    let rows = env["data"]["summary"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    let row = |p: &str, l: Value| rows.iter().find(|r| r["prompt"] == p && r["max_tokens"] == l).unwrap();
    let array64 = row("extract-definitions", json!(64));
    assert_eq!(
        (array64["items_total"].clone(), array64["truncated"].clone()),
        (json!(0), json!(1))
    );
    assert!(
        row("extract-definitions-jsonl", json!(64))["items_total"]
            .as_u64()
            .unwrap()
            >= 1
    );
    let full = row("extract-definitions", Value::Null);
    assert_eq!(full["parse_ok"], 1, "the full recording parses: {full}");
    assert!(
        env["data"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["key"].as_str().unwrap().contains(":replay/gemma"))
    );
    for r in rows {
        assert_eq!(r["gold"]["runs"], 1, "{r}");
    }
    let (again, _) = eval(&["--max-tokens", "32,64,none", "--inputs", inputs.to_str().unwrap()]);
    assert_eq!(again["data"]["totals"]["skipped"], 6);
}
