//! The one run path's precedence, end to end: for each request parameter, a
//! value set at each level (command line > prompt config > provider config >
//! model profile > wire default) reaches the request body a local server
//! receives, from `cutline run`, `cutline eval` and the workbench's runner.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use cutline::llm::config::Config;
use cutline::llm::registry::Registry;
use cutline::tui::event::{Effect, Event, ProviderChoice, RunJob, RunMsg, Source};
use cutline::tui::runner::Runner;
use serde_json::{Value, json};
use support::{Recorded, Reply, Server};

/// A JSONL answer that ends on its own.
fn ok_reply() -> Reply {
    Reply::data(&[
        r#"{"choices":[{"index":0,"delta":{"content":"{\"entity\":\"a\",\"definition\":\"b\"}\n"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9}}"#,
        "[DONE]",
    ])
}

/// Where a parameter is set in one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Cli,
    Prompt,
    Provider,
    Profile,
    Wire,
}

/// One case: the settings at each level and what the body must then hold.
struct Case {
    name: &'static str,
    level: Level,
    /// Extra lines of the provider entry in cutline.toml.
    provider: &'static str,
    /// Extra lines of the prompt file.
    prompt: &'static str,
    /// Extra arguments of `run` and `eval`.
    args: &'static [&'static str],
    /// What the body (and headers) must show.
    check: fn(&Recorded),
}

fn body(r: &Recorded) -> Value {
    r.json()
}

/// Every parameter at every level it can be set. Lower levels are set too
/// where they exist, so each case proves its level wins over the ones below.
fn cases() -> Vec<Case> {
    [
        temperature(),
        top_p(),
        stop(),
        max_tokens(),
        structured(),
        effort(),
        headers(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn temperature() -> Vec<Case> {
    vec![
        Case {
            name: "temperature from the command line",
            level: Level::Cli,
            provider: "temperature = 0.3",
            prompt: "temperature = 0.5",
            args: &["--temperature", "0.7"],
            check: |r| assert_eq!(body(r)["temperature"], json!(0.7)),
        },
        Case {
            name: "temperature from the prompt",
            level: Level::Prompt,
            provider: "temperature = 0.3",
            prompt: "temperature = 0.5",
            args: &[],
            check: |r| assert_eq!(body(r)["temperature"], json!(0.5)),
        },
        Case {
            name: "temperature = 0.3 in cutline.toml",
            level: Level::Provider,
            provider: "temperature = 0.3",
            prompt: "",
            args: &[],
            check: |r| assert_eq!(body(r)["temperature"], json!(0.3)),
        },
        Case {
            name: "temperature refused by the profile",
            level: Level::Profile,
            provider: "[provider.profile]\ntemperature = false",
            prompt: "",
            args: &[],
            check: |r| assert!(body(r).get("temperature").is_none(), "{}", body(r)),
        },
        Case {
            name: "temperature 0 by default",
            level: Level::Wire,
            provider: "",
            prompt: "",
            args: &[],
            check: |r| assert_eq!(body(r)["temperature"], json!(0.0)),
        },
    ]
}

fn top_p() -> Vec<Case> {
    vec![
        Case {
            name: "top_p from the command line",
            level: Level::Cli,
            provider: "top_p = 0.9",
            prompt: "top-p = 0.8",
            args: &["--top-p", "0.7"],
            check: |r| assert_eq!(body(r)["top_p"], json!(0.7)),
        },
        Case {
            name: "top_p from the prompt",
            level: Level::Prompt,
            provider: "top_p = 0.9",
            prompt: "top-p = 0.8",
            args: &[],
            check: |r| assert_eq!(body(r)["top_p"], json!(0.8)),
        },
        Case {
            name: "top_p from the provider",
            level: Level::Provider,
            provider: "top_p = 0.9",
            prompt: "",
            args: &[],
            check: |r| assert_eq!(body(r)["top_p"], json!(0.9)),
        },
        Case {
            name: "top_p refused by the profile",
            level: Level::Profile,
            provider: "top_p = 0.9\n[provider.profile]\ntop_p = false",
            prompt: "",
            args: &[],
            check: |r| assert!(body(r).get("top_p").is_none(), "{}", body(r)),
        },
        Case {
            name: "no top_p by default",
            level: Level::Wire,
            provider: "",
            prompt: "",
            args: &[],
            check: |r| assert!(body(r).get("top_p").is_none(), "{}", body(r)),
        },
    ]
}

fn stop() -> Vec<Case> {
    vec![
        Case {
            name: "stop from the command line",
            level: Level::Cli,
            provider: "stop = [\"P\"]",
            prompt: "stop = [\"\\n###\"]",
            args: &["--stop", "CLI"],
            check: |r| assert_eq!(body(r)["stop"], json!(["CLI"])),
        },
        Case {
            name: "stop from the prompt",
            level: Level::Prompt,
            provider: "stop = [\"P\"]",
            prompt: "stop = [\"\\n###\"]",
            args: &[],
            check: |r| assert_eq!(body(r)["stop"], json!(["\n###"])),
        },
        Case {
            name: "stop from the provider",
            level: Level::Provider,
            provider: "stop = [\"P\"]",
            prompt: "",
            args: &[],
            check: |r| assert_eq!(body(r)["stop"], json!(["P"])),
        },
        Case {
            name: "stop refused by the profile (applied by cutline)",
            level: Level::Profile,
            provider: "[provider.profile]\nstop = false",
            prompt: "stop = [\"\\n###\"]",
            args: &[],
            check: |r| assert!(body(r).get("stop").is_none(), "{}", body(r)),
        },
        Case {
            name: "no stop by default",
            level: Level::Wire,
            provider: "",
            prompt: "",
            args: &[],
            check: |r| assert!(body(r).get("stop").is_none(), "{}", body(r)),
        },
    ]
}

fn max_tokens() -> Vec<Case> {
    vec![
        Case {
            name: "max tokens from the command line",
            level: Level::Cli,
            provider: "max_tokens = 33",
            prompt: "max-tokens = 22",
            args: &["--max-tokens", "11"],
            check: |r| assert_eq!(body(r)["max_tokens"], json!(11)),
        },
        Case {
            name: "max tokens from the prompt",
            level: Level::Prompt,
            provider: "max_tokens = 33",
            prompt: "max-tokens = 22",
            args: &[],
            check: |r| assert_eq!(body(r)["max_tokens"], json!(22)),
        },
        Case {
            name: "max tokens from the provider",
            level: Level::Provider,
            provider: "max_tokens = 33",
            prompt: "",
            args: &[],
            check: |r| assert_eq!(body(r)["max_tokens"], json!(33)),
        },
        Case {
            name: "the profile's max-token field",
            level: Level::Profile,
            provider: "max_tokens = 33\n[provider.profile]\ntoken_field = \"max_completion_tokens\"",
            prompt: "",
            args: &[],
            check: |r| {
                let b = body(r);
                assert_eq!(b["max_completion_tokens"], json!(33));
                assert!(b.get("max_tokens").is_none(), "{b}");
            },
        },
        Case {
            name: "no max tokens by default",
            level: Level::Wire,
            provider: "",
            prompt: "",
            args: &[],
            check: |r| assert!(body(r).get("max_tokens").is_none(), "{}", body(r)),
        },
    ]
}

fn structured() -> Vec<Case> {
    vec![
        Case {
            name: "structured path from the command line",
            level: Level::Cli,
            provider: "structured = \"off\"",
            prompt: "structured = \"native\"",
            args: &["--structured", "prompt"],
            check: |r| {
                let b = body(r);
                assert!(b.get("response_format").is_none(), "{b}");
                let sys = b["messages"][0]["content"].as_str().unwrap_or_default();
                assert!(sys.contains("JSON Schema"), "{sys}");
            },
        },
        Case {
            name: "structured path from the prompt",
            level: Level::Prompt,
            provider: "structured = \"off\"",
            prompt: "structured = \"native\"",
            args: &[],
            check: |r| assert_eq!(body(r)["response_format"]["type"], "json_schema"),
        },
        Case {
            name: "structured path from the provider",
            level: Level::Provider,
            provider: "structured = \"native\"",
            prompt: "",
            args: &[],
            check: |r| assert_eq!(body(r)["response_format"]["type"], "json_schema"),
        },
        Case {
            name: "native structured output wrapped for an object-root profile",
            level: Level::Profile,
            provider: "structured = \"native\"\n[provider.profile]\nnative = \"object-root\"",
            prompt: "",
            args: &[],
            check: |r| {
                let b = body(r);
                let s = &b["response_format"]["json_schema"]["schema"];
                assert_eq!(s["type"], "object", "{b}");
                assert_eq!(s["properties"]["items"]["type"], "array", "{b}");
            },
        },
        Case {
            name: "no structured output by default",
            level: Level::Wire,
            provider: "",
            prompt: "",
            args: &[],
            check: |r| assert!(body(r).get("response_format").is_none(), "{}", body(r)),
        },
    ]
}

fn effort() -> Vec<Case> {
    vec![
        Case {
            name: "effort from the command line",
            level: Level::Cli,
            provider: "effort = \"high\"",
            prompt: "effort = \"medium\"",
            args: &["--effort", "low"],
            check: |r| assert_eq!(body(r)["reasoning_effort"], json!("low")),
        },
        Case {
            name: "effort from the prompt",
            level: Level::Prompt,
            provider: "effort = \"high\"",
            prompt: "effort = \"medium\"",
            args: &[],
            check: |r| assert_eq!(body(r)["reasoning_effort"], json!("medium")),
        },
        Case {
            name: "effort = \"high\" in cutline.toml",
            level: Level::Provider,
            provider: "effort = \"high\"",
            prompt: "",
            args: &[],
            check: |r| assert_eq!(body(r)["reasoning_effort"], json!("high")),
        },
        Case {
            name: "effort the profile does not take",
            level: Level::Profile,
            provider: "effort = \"high\"\n[provider.profile]\neffort = [\"low\"]",
            prompt: "",
            args: &[],
            check: |r| assert!(body(r).get("reasoning_effort").is_none(), "{}", body(r)),
        },
        Case {
            name: "no effort by default",
            level: Level::Wire,
            provider: "",
            prompt: "",
            args: &[],
            check: |r| assert!(body(r).get("reasoning_effort").is_none(), "{}", body(r)),
        },
    ]
}

fn headers() -> Vec<Case> {
    vec![
        Case {
            name: "a header from the command line",
            level: Level::Cli,
            provider: "headers = { \"X-Level\" = \"provider\" }",
            prompt: "",
            args: &["--header", "X-Level: cli"],
            check: |r| assert_eq!(r.header("x-level"), Some("cli")),
        },
        Case {
            name: "a header from the provider",
            level: Level::Provider,
            provider: "headers = { \"X-Level\" = \"provider\" }",
            prompt: "",
            args: &[],
            check: |r| assert_eq!(r.header("x-level"), Some("provider")),
        },
    ]
}

/// A prompt file: json response type with an array schema (so the
/// structured cases have something to send), one sample input.
fn prompt_text(extra: &str) -> String {
    format!(
        r#"id = "p"
response-type = "json"
{extra}
system = "Extract."
prompt = "Text: {{{{ text }}}}"
schema = '{{"type": "array", "items": {{"type": "object", "properties": {{"entity": {{"type": "string"}}}}, "required": ["entity"]}}}}'

[[input]]
name = "one"
text = "a is b"
"#
    )
}

fn config_text(url: &str, extra: &str) -> String {
    format!(
        "[[provider]]\nname = \"t\"\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"m\"\n{extra}\n"
    )
}

/// A directory with `prompts/p.toml`, `sessions/` and `cutline.toml`.
fn setup(url: &str, case: &Case) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("prompts")).unwrap();
    std::fs::create_dir_all(dir.path().join("sessions")).unwrap();
    std::fs::write(dir.path().join("prompts/p.toml"), prompt_text(case.prompt)).unwrap();
    std::fs::write(dir.path().join("cutline.toml"), config_text(url, case.provider)).unwrap();
    dir
}

fn cutline(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("cutline").unwrap();
    c.current_dir(dir)
        .env("CUTLINE_CONFIG", dir.join("cutline.toml"))
        .env("CUTLINE_LEARNED_FILE", "")
        .args(["--prompts", "prompts", "--sessions", "sessions"])
        .timeout(Duration::from_secs(60));
    c
}

/// Run every case through the binary with `command` (plus each case's own
/// arguments) and check the one request it sent.
async fn every_case_through(command: &[&str]) {
    let server = Server::handler(|_| ok_reply()).await;
    for case in cases() {
        let dir = setup(&server.url(), &case);
        let before = server.requests().len();
        let out = cutline(dir.path()).args(command).args(case.args).output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let reqs = server.requests();
        assert_eq!(reqs.len(), before + 1, "{}", case.name);
        (case.check)(&reqs[before]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_parameter_at_every_level_reaches_the_body_from_run() {
    every_case_through(&["run", "p", "--provider", "t", "--no-record", "--output", "json"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_parameter_at_every_level_reaches_the_body_from_eval() {
    every_case_through(&[
        "eval",
        "--prompt",
        "p",
        "--provider",
        "t",
        "--no-twins",
        "--output",
        "json",
    ])
    .await;
}

/// The workbench sets the limit and the structured path itself (its
/// command-line level); the other parameters come from the prompt, the
/// provider, the profile and the wire as for the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_parameter_at_every_level_reaches_the_body_from_the_workbench() {
    let server = Server::handler(|_| ok_reply()).await;
    for case in cases() {
        let workbench_args = match case.args {
            [] => None,
            ["--max-tokens", n] => Some((n.parse::<u32>().ok(), None)),
            ["--structured", "prompt"] => Some((None, Some(cutline::llm::params::Structured::Prompt))),
            // Temperature, top_p, stop and headers have no workbench control.
            _ => continue,
        };
        let (limit, structured) = workbench_args.unwrap_or((None, None));
        let dir = setup(&server.url(), &case);
        let config = cutline::llm::config::parse(&config_text(&server.url(), case.provider), Path::new("t.toml"))
            .expect("config");
        let registry = Registry::new(Config { providers: config });
        let (prompt, _) = cutline::prompt::load_toml("p.toml", &prompt_text(case.prompt)).expect("prompt");
        let vars = prompt.inputs[0].vars.clone();
        let mut spec = cutline::run::Spec::new(prompt.clone(), vars);
        spec.cli.structured = structured;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut runner = Runner::new(
            tx,
            cutline::store::Workspace::at(&dir.path().join("prompts")),
            dir.path().join("sessions"),
            Instant::now(),
        )
        .with_registry(registry);
        let before = server.requests().len();
        runner.apply(Effect::Start(Box::new(RunJob {
            prefill: cutline::tui::event::Prefill::default(),
            id: 1,
            provider: ProviderChoice::Configured {
                name: "t".into(),
                model: None,
            },
            source: Source::Prompt(Box::new(spec)),
            schemas: Arc::new(cutline::tui::run::schemas_for(&prompt)),
            max_tokens: limit,
            tg_python: cutline::output::tg::TgPython::default(),
            sessions_dir: dir.path().join("sessions"),
        })));
        loop {
            let ev = tokio::time::timeout(Duration::from_secs(30), rx.recv())
                .await
                .expect("the run ends")
                .expect("channel open");
            match ev {
                Event::Run {
                    msg: RunMsg::Done(end), ..
                } => {
                    assert_eq!(end.error, None, "{}", case.name);
                    break;
                }
                Event::Run {
                    msg: RunMsg::Failed(e), ..
                } => panic!("{}: {e}", case.name),
                _ => {}
            }
        }
        let reqs = server.requests();
        assert_eq!(reqs.len(), before + 1, "{}", case.name);
        (case.check)(&reqs[before]);
    }
    // Every level was exercised somewhere.
    for level in [Level::Cli, Level::Prompt, Level::Provider, Level::Profile, Level::Wire] {
        assert!(cases().iter().any(|c| c.level == level));
    }
}

/// An undefined variable renders empty as TrustGraph's ibis does and is
/// named in the warnings; `--strict-vars` makes it an error before any
/// request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undefined_variables_are_warned_or_refused_with_strict_vars() {
    let server = Server::handler(|_| ok_reply()).await;
    let case = &cases()[4];
    let dir = setup(&server.url(), case);
    let text = prompt_text("").replace(
        "Text: {{ text }}",
        "Text: {{ text }}{% if framing %} {{ framing }}{% endif %}",
    );
    std::fs::write(dir.path().join("prompts/p.toml"), text).unwrap();
    let out = cutline(dir.path())
        .args(["run", "p", "--provider", "t", "--no-record", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["data"]["undefined"], json!(["framing"]));
    assert!(v["warnings"].to_string().contains("framing"), "{}", v["warnings"]);
    assert_eq!(server.only_request().json()["messages"][1]["content"], "Text: a is b");
    let out = cutline(dir.path())
        .args([
            "run",
            "p",
            "--provider",
            "t",
            "--no-record",
            "--strict-vars",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("framing"));
    assert_eq!(server.requests().len(), 1, "no request after a refused render");
}

/// `eval --vars FILE.json` lays structured variables over every input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_takes_structured_variables_from_a_file() {
    let server = Server::handler(|_| ok_reply()).await;
    let dir = setup(&server.url(), &cases()[4]);
    let text = prompt_text("").replace(
        "Text: {{ text }}",
        "Text: {{ text }}{% for k, v in extra.items() %} {{ k }}={{ v }}{% endfor %}",
    );
    std::fs::write(dir.path().join("prompts/p.toml"), text).unwrap();
    std::fs::write(dir.path().join("v.json"), r#"{"extra": {"a": 1, "b": [2, 3]}}"#).unwrap();
    let out = cutline(dir.path())
        .args([
            "eval",
            "--prompt",
            "p",
            "--provider",
            "t",
            "--no-twins",
            "--vars",
            "v.json",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let body = server.only_request().json();
    assert_eq!(body["messages"][1]["content"], "Text: a is b a=1 b=[2, 3]");
}

/// A prompt whose per-line schema sits under `object-schema` (ignored by
/// TrustGraph's loader): `run` keeps every parsed line, as TrustGraph does,
/// and names the lines that schema would reject.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_names_the_lines_an_ignored_object_schema_would_reject() {
    let server = Server::handler(|_| {
        Reply::data(&[
            r#"{"choices":[{"index":0,"delta":{"content":"{\"entity\":\"a\"}\n{\"entity\":\"b\",\"definition\":\"c\"}\n"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ])
    })
    .await;
    let dir = setup(&server.url(), &cases()[4]);
    std::fs::write(
        dir.path().join("prompts/p.toml"),
        "id = \"p\"\nresponse-type = \"jsonl\"\nprompt = \"List terms.\"\nobject-schema = '{\"type\": \"object\", \"required\": [\"entity\", \"definition\"]}'\n",
    )
    .unwrap();
    let out = cutline(dir.path())
        .args(["run", "p", "--provider", "t", "--no-record", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["data"]["analysis"]["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["data"]["object_schema"]["ignored_by_trustgraph"], true);
    assert_eq!(v["data"]["object_schema"]["would_reject"][0]["line"], 1);
    assert_eq!(
        v["data"]["object_schema"]["would_reject"].as_array().map(Vec::len),
        Some(1)
    );
    assert!(
        v["warnings"].to_string().contains("would reject line(s) 1"),
        "{}",
        v["warnings"]
    );
}
