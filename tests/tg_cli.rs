//! `cutline tg` where the deployment misbehaves, without TrustGraph: a
//! gateway that is down, one that accepts and never answers, one that
//! refuses the token (echoing it), one that answers what is not the config
//! API, and a directory that was never pulled. Each ends in bounded time
//! with one envelope of the right category, and the token is never on
//! screen. (`tests/tg_live.rs` runs the commands against TrustGraph's own
//! services.)

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Reply, Server};

const TOKEN: &str = "tg-test-SECRET777tokenMnBv4321";

fn cutline(dir: &std::path::Path, args: &[&str]) -> (i32, Value, String, Duration) {
    let started = Instant::now();
    let out = Command::new(assert_cmd::cargo::cargo_bin("cutline"))
        .args(args)
        .args(["--output", "json"])
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("TRUSTGRAPH_URL")
        .env_remove("TRUSTGRAPH_WORKSPACE")
        .env("TRUSTGRAPH_TOKEN", TOKEN)
        .output()
        .expect("run cutline");
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stdout.contains("SECRET777") && !stderr.contains("SECRET777"),
        "the token reached the screen:\n{stdout}\n{stderr}"
    );
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (out.status.code().unwrap_or(-1), v, stderr, took)
}

fn category(v: &Value) -> &str {
    v["error"]["category"].as_str().unwrap_or("")
}

#[test]
fn a_gateway_that_is_down_is_one_deployment_error() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/");
    let (code, v, _, took) = cutline(dir.path(), &["tg", "pull", "-u", &url]);
    assert_eq!(code, 12, "{v}");
    assert_eq!(category(&v), "deployment_error");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!("TrustGraph gateway {url}api/v1/config cannot be reached")),
        "{msg}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(!dir.path().join("tg").exists(), "a failed pull writes nothing");
}

#[test]
fn a_gateway_that_stalls_ends_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    // Accept and hold every connection, never answering.
    let held = std::thread::spawn(move || {
        let mut socks = Vec::new();
        for s in listener.incoming().take(1) {
            socks.push(s);
            std::thread::sleep(Duration::from_secs(8));
        }
    });
    let (code, v, _, took) = cutline(dir.path(), &["tg", "pull", "-u", &url, "--timeout", "2s"]);
    assert_eq!(code, 12, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert_eq!(
        msg,
        format!(
            "TrustGraph gateway {url}api/v1/config did not answer within 2 s (the config API's answer); nothing more \
             was sent"
        )
    );
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(7),
        "{took:?}"
    );
    let _ = held.join();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_named_without_showing_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![Reply::status(
        401,
        &format!(r#"{{"error": "bad token {TOKEN}"}}"#),
    )])
    .await;
    let url = format!("{}/", server.url());
    let d = dir.path().to_owned();
    let (code, v, _, _) = tokio::task::spawn_blocking(move || cutline(&d, &["tg", "pull", "-u", &url]))
        .await
        .unwrap();
    assert_eq!(code, 12, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("refused the credentials (HTTP 401): bad token <redacted>"),
        "{msg}"
    );
    let req = server.only_request();
    assert_eq!(req.path, "/api/v1/config");
    assert_eq!(
        req.headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .map(|(_, v)| v.as_str()),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"operation": "getvalues", "type": "prompt", "workspace": "default"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_is_not_the_config_api_is_a_protocol_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![Reply::status(200, r#"{"values": []}"#)]).await;
    let url = format!("{}/", server.url());
    let d = dir.path().to_owned();
    let (code, v, _, _) = tokio::task::spawn_blocking(move || cutline(&d, &["tg", "pull", "-u", &url, "-w", "prod"]))
        .await
        .unwrap();
    assert_eq!(code, 12, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("unexpected answer: no `version` in the answer"),
        "{v}"
    );
    let body: Value = serde_json::from_slice(&server.only_request().body).unwrap();
    assert_eq!(body["workspace"], "prod");
}

#[test]
fn push_diff_and_undo_need_a_pull_and_a_url_needs_no_password() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["push", "diff", "undo"] {
        let (code, v, _, _) = cutline(dir.path(), &["tg", cmd]);
        assert_eq!(code, 2, "{cmd}: {v}");
        assert_eq!(
            v["error"]["message"],
            "tg/default: no TrustGraph pull here (no .trustgraph/pull.json); run `cutline tg pull --dir tg/default` \
             first"
        );
    }
    let (code, v, _, _) = cutline(dir.path(), &["tg", "pull", "-u", "http://me:pw@127.0.0.1:1/"]);
    assert_eq!(code, 2, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a user name or password in the URL")
    );
}
