//! `cutline tg` and the `trustgraph` provider against TrustGraph 2.11.1's
//! own services: its config service, no-auth IAM, API gateway, prompt
//! service and OpenAI text-completion service on Debian's RabbitMQ, all on
//! 127.0.0.1, installed by `scripts/setup-tg-live.sh` and started (and
//! stopped when the test ends) by `scripts/tg_live_stack.py`. The one
//! deviation from TrustGraph's code is the config service's table store,
//! in memory instead of Cassandra (and the gateway's listen address,
//! passed to aiohttp since TrustGraph has no option for it); the script
//! says so. The model behind the text-completion service is a small
//! deterministic server written here, so every item can be asserted.
//!
//! TrustGraph's own CLI checks the other side: what `cutline tg push`
//! writes, `tg-get-config-item` and `tg-show-prompts` show and the prompt
//! service reloads without an error in its log; what `tg-put-config-item`
//! writes, `cutline tg pull` reads.
//!
//! The gateway takes about a minute to start (TrustGraph's IAM key wait),
//! so one test walks the whole story on one stack. Without the stack
//! installed it says so and passes, unless `CUTLINE_REQUIRE_TG_LIVE=1`
//! (CI sets it).

mod support;
mod tg_workbench;
mod tui_support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Reply, Server};

const ITEMS_JSONL: &str = "{\"entity\": \"river\", \"definition\": \"a natural stream of water\"}\n\
                           {\"entity\": \"delta\", \"definition\": \"a landform at a river mouth\"}\n";
const ITEMS_ARRAY: &str = "[{\"entity\": \"river\", \"definition\": \"a natural stream of water\"}, \
                           {\"entity\": \"delta\", \"definition\": \"a landform at a river mouth\"}]";

/// The model: JSONL when the prompt no longer asks for a JSON array.
fn answer_for(text: &str) -> &'static str {
    if text.contains("JSON array") {
        ITEMS_ARRAY
    } else {
        ITEMS_JSONL
    }
}

fn fake_llm(req: &support::Recorded) -> Reply {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let content = &body["messages"][0]["content"];
    let text = content
        .as_str()
        .map(str::to_owned)
        .or_else(|| content[0]["text"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let answer = answer_for(&text);
    let head = json!({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "fake-model"});
    if body["stream"] == true {
        let mut frames: Vec<String> = answer
            .as_bytes()
            .chunks(16)
            .map(|c| {
                let mut f = head.clone();
                f["choices"] =
                    json!([{"index": 0, "delta": {"content": String::from_utf8_lossy(c)}, "finish_reason": null}]);
                f.to_string()
            })
            .collect();
        let mut end = head.clone();
        end["choices"] = json!([{"index": 0, "delta": {}, "finish_reason": "stop"}]);
        frames.push(end.to_string());
        let mut usage = head.clone();
        usage["choices"] = json!([]);
        usage["usage"] = json!({"prompt_tokens": 11, "completion_tokens": 29, "total_tokens": 40});
        frames.push(usage.to_string());
        frames.push("[DONE]".to_owned());
        let refs: Vec<&str> = frames.iter().map(String::as_str).collect();
        return Reply::data(&refs);
    }
    Reply::status(
        200,
        &json!({"id": "c1", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 29, "total_tokens": 40}})
        .to_string(),
    )
}

/// The running stack; stopped (stdin closed, then waited for) when dropped.
struct Stack {
    child: Child,
    url: String,
    prompt_log: PathBuf,
    bin: PathBuf,
}

impl Drop for Stack {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn venv_python() -> Option<PathBuf> {
    let required = std::env::var_os("CUTLINE_REQUIRE_TG_LIVE").is_some_and(|v| v == "1");
    let out = Command::new("bash").arg("scripts/setup-tg-live.sh").output().ok();
    let ok = out.as_ref().is_some_and(|o| o.status.success());
    if !ok {
        let why = out.map_or_else(
            || "bash not found".to_owned(),
            |o| String::from_utf8_lossy(&o.stderr).into_owned(),
        );
        assert!(
            !required,
            "CUTLINE_REQUIRE_TG_LIVE=1 but scripts/setup-tg-live.sh failed:\n{why}"
        );
        eprintln!("skipping: TrustGraph's live stack is not installed (scripts/setup-tg-live.sh failed:\n{why})");
        return None;
    }
    let path = String::from_utf8_lossy(&out.unwrap().stdout)
        .trim()
        .lines()
        .last()?
        .to_owned();
    Some(PathBuf::from(path))
}

fn start(python: &Path, llm_url: &str, work: &Path) -> Stack {
    let mut child = Command::new(python)
        .arg("scripts/tg_live_stack.py")
        .args(["--llm-url", llm_url, "--model", "fake-model", "--workdir"])
        .arg(work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the stack");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the stack's line");
    let info: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("the stack did not start ({e}): {line:?}"));
    Stack {
        child,
        url: info["url"].as_str().expect("url").to_owned(),
        prompt_log: PathBuf::from(
            info["logs"]["prompt"]
                .as_str()
                .or_else(|| info["logs"]["prompt-template"].as_str())
                .expect("prompt log"),
        ),
        bin: python.parent().expect("venv bin").to_owned(),
    }
}

struct Env<'a> {
    stack: &'a Stack,
    home: PathBuf,
    dir: PathBuf,
}

impl Env<'_> {
    fn cutline(&self, args: &[&str], extra_env: &[(&str, &str)]) -> (i32, Value) {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("cutline"));
        c.args(args)
            .args(["--output", "json"])
            .current_dir(&self.home)
            .env("HOME", &self.home)
            .env("XDG_CACHE_HOME", self.home.join("cache"))
            .env("CUTLINE_CONFIG", self.home.join("cutline.toml"))
            .env("TRUSTGRAPH_URL", &self.stack.url)
            .env_remove("TRUSTGRAPH_TOKEN")
            .env_remove("TRUSTGRAPH_WORKSPACE");
        for (k, v) in extra_env {
            c.env(k, v);
        }
        let out = c.output().expect("run cutline");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let v = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code().unwrap_or(-1), v)
    }

    /// A TrustGraph CLI tool's stdout (they exit 0 on failure, so their
    /// output is what is checked).
    fn tg(&self, tool: &str, args: &[&str]) -> String {
        let out = Command::new(self.stack.bin.join(tool))
            .args(args)
            .env("TRUSTGRAPH_URL", &self.stack.url)
            .env_remove("TRUSTGRAPH_TOKEN")
            .output()
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn live(&self, key: &str) -> String {
        let v = self.tg("tg-get-config-item", &["--type", "prompt", "--key", key]);
        v.strip_suffix('\n').unwrap_or(&v).to_owned()
    }

    fn local_file(&self) -> PathBuf {
        self.dir.join("default.json")
    }

    fn edit_local(&self, key: &str, value: Option<&str>) {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(self.local_file()).unwrap()).unwrap();
        match value {
            Some(s) => v["config"]["prompt"][key] = Value::String(s.to_owned()),
            None => {
                v["config"]["prompt"].as_object_mut().unwrap().remove(key);
            }
        }
        std::fs::write(self.local_file(), serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    fn prompt_log(&self) -> String {
        std::fs::read_to_string(&self.stack.prompt_log).unwrap_or_default()
    }

    /// Wait (bounded) until the prompt service logged `n` reloads.
    fn reloads(&self, n: usize) {
        let until = Instant::now() + Duration::from_secs(20);
        while self.prompt_log().matches("Prompt configuration reloaded").count() < n {
            assert!(
                Instant::now() < until,
                "the prompt service did not reload:\n{}",
                self.prompt_log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn original_entry() -> String {
    let p = cutline::store::resolve("extract-definitions", Path::new("prompts")).unwrap();
    cutline::prompt::trustgraph::encode(&cutline::prompt::trustgraph::bundle_entry(&p))
}

fn call_prompt(url: &str, id: &str) -> Value {
    let out = Command::new("curl")
        .args(["-s", "-m", "30", "-X", "POST", "-H", "Content-Type: application/json"])
        .arg(format!("{url}api/v1/flow/default/service/prompt"))
        .arg("-d")
        .arg(json!({"id": id, "variables": {"text": "A river flows into a delta."}}).to_string())
        .output()
        .expect("curl");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn pull_migrate_push_serve_refuse_and_undo_against_trustgraphs_own_services() {
    let Some(python) = venv_python() else { return }; // skip: TrustGraph's live stack (CUTLINE_REQUIRE_TG_LIVE)
    let rt = tokio::runtime::Runtime::new().unwrap();
    let llm = rt.block_on(Server::handler(fake_llm));
    let work = tempfile::tempdir().unwrap();
    let stack = start(&python, &format!("{}/v1", llm.url()), &work.path().join("stack"));
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = Env {
        stack: &stack,
        dir: home.join("tg/default"),
        home,
    };

    // TrustGraph's CLI writes the deployment's prompts.
    let original = original_entry();
    assert!(
        env.tg(
            "tg-put-config-item",
            &[
                "--type",
                "prompt",
                "--key",
                "system",
                "--value",
                "\"You extract definitions.\""
            ]
        )
        .contains("set")
    );
    env.tg(
        "tg-put-config-item",
        &[
            "--type",
            "prompt",
            "--key",
            "template.extract-definitions",
            "--value",
            &original,
        ],
    );
    let other = json!({"prompt": "Summarise: {{ text }}", "response-type": "text"}).to_string();
    env.tg(
        "tg-put-config-item",
        &["--type", "prompt", "--key", "template.zz-summary", "--value", &other],
    );
    env.reloads(1);

    pulled(&env, &original);
    migrated_and_pushed(&env, &original);
    refused(&env);
    undone(&env, &original);
    tg_workbench::pushed_from_the_workbench(&env, &original);
    run_through_the_service(&env);
    bad_credentials(&env);
    token_never_kept(&env);
    exported_by_trustgraph_reads(&env);
    drop(stack);
}

fn pulled(env: &Env<'_>, original: &str) {
    let (code, v) = env.cutline(&["tg", "pull"], &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["data"]["keys"],
        json!(["system", "template.extract-definitions", "template.zz-summary"])
    );
    let local: Value = serde_json::from_str(&std::fs::read_to_string(env.local_file()).unwrap()).unwrap();
    assert_eq!(local["source_workspace"], "default");
    assert_eq!(
        local["config"]["prompt"]["template.extract-definitions"], original,
        "pulled byte for byte"
    );
    let (code, v) = env.cutline(&["--prompts", "tg/default", "prompts"], &[]);
    assert_eq!(code, 0, "{v}");
    let ids: Vec<&str> = v["data"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["extract-definitions", "zz-summary"]);
}

/// The walkthrough's in-place migration of `extract-definitions` into the
/// pulled bundle, with `extra` arguments.
fn migrate_in_place(env: &Env<'_>, extra: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "--prompts",
        "tg/default",
        "migrate",
        "extract-definitions",
        "--format",
        "trustgraph",
        "--id",
        "extract-definitions",
        "--write",
        "tg/default/default.json",
    ];
    args.extend_from_slice(extra);
    env.cutline(&args, &[])
}

fn migrated_and_pushed(env: &Env<'_>, original: &str) {
    let (code, v) = migrate_in_place(env, &[]);
    // Replacing a prompt of the pulled bundle in its file is an overwrite:
    // refused, naming both, until --force.
    assert_eq!(code, 11, "{v}");
    assert_eq!(
        v["error"]["message"],
        "not written: the migration would replace the file tg/default/default.json and prompt \"extract-definitions\" \
         (in tg/default/default.json); --force writes over it, or pick another path or --id"
    );
    let (code, v) = migrate_in_place(env, &["--force"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["data"]["replaced"],
        serde_json::json!({"file": true, "prompt": "extract-definitions", "in": "tg/default/default.json"})
    );
    let (code, v) = env.cutline(&["tg", "diff"], &[]);
    assert_eq!(code, 0, "{v}");
    let keys = v["data"]["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "{v}");
    assert_eq!(keys[0]["key"], "template.extract-definitions");
    assert_eq!(keys[0]["status"], "local");
    assert_eq!(
        keys[0]["change"]["fields"]["response-type"],
        json!({"old": "json", "new": "jsonl"})
    );
    assert_eq!(keys[0]["change"]["schema"][0]["path"], "/type");

    let (code, v) = env.cutline(&["tg", "push", "--dry-run"], &[]);
    assert_eq!((code, &v["data"]["written"]), (0, &json!(false)), "{v}");
    assert_eq!(
        env.live("template.extract-definitions"),
        original,
        "a dry run writes nothing"
    );

    let (code, v) = env.cutline(&["tg", "push"], &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["keys"], json!(["template.extract-definitions"]));
    assert_eq!(v["data"]["read_back"], "equal");
    let local: Value = serde_json::from_str(&std::fs::read_to_string(env.local_file()).unwrap()).unwrap();
    assert_eq!(
        env.live("template.extract-definitions"),
        local["config"]["prompt"]["template.extract-definitions"]
    );
    env.reloads(2);
    assert!(
        !env.prompt_log().contains("Configuration reload failed"),
        "{}",
        env.prompt_log()
    );
    assert!(env.tg("tg-show-prompts", &[]).contains("jsonl"));
    // TrustGraph's prompt service serves the migrated prompt: the items.
    let answer = call_prompt(&env.stack.url, "extract-definitions");
    let items: Value = serde_json::from_str(answer["object"].as_str().unwrap_or("null")).unwrap_or(Value::Null);
    assert_eq!(
        items,
        json!([{"entity": "river", "definition": "a natural stream of water"},
               {"entity": "delta", "definition": "a landform at a river mouth"}]),
        "{answer}"
    );
}

fn refused(env: &Env<'_>) {
    let before = env.cutline(&["tg", "diff"], &[]).1["data"]["summary"]["version_live"].clone();
    let other_live = env.live("template.zz-summary");
    // A template ibis refuses: the workspace would half-load.
    let bad = json!({"prompt": "Count {{ i + 1 }}", "response-type": "text"}).to_string();
    env.edit_local("template.zz-summary", Some(&bad));
    let (code, v) = env.cutline(&["tg", "push"], &[]);
    assert_eq!(code, 3, "{v}");
    let refusal = &v["error"]["detail"]["refused"][0];
    assert_eq!(refusal["key"], "template.zz-summary");
    assert!(
        refusal["reason"]
            .as_str()
            .unwrap()
            .contains("extract-definitions would serve, zz-summary would fail"),
        "{v}"
    );
    env.edit_local("template.zz-summary", Some(&other_live));
    // A system written as plain text would silently become "Be helpful.".
    let system = env.live("system");
    env.edit_local("system", Some("You extract definitions."));
    let (code, v) = env.cutline(&["tg", "push"], &[]);
    assert_eq!(code, 3, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("\"Be helpful.\""),
        "{v}"
    );
    env.edit_local("system", Some(&system));
    let after = env.cutline(&["tg", "diff"], &[]).1["data"]["summary"]["version_live"].clone();
    assert_eq!(before, after, "a refused push writes nothing");
    assert_eq!(env.live("template.zz-summary"), other_live);
    // The live version moved since the pull: refused, naming what moved.
    let moved = json!({"prompt": "Summarise briefly: {{ text }}", "response-type": "text"}).to_string();
    env.tg(
        "tg-put-config-item",
        &["--type", "prompt", "--key", "template.zz-summary", "--value", &moved],
    );
    let local_change = json!({"prompt": "Summarise in one line: {{ text }}", "response-type": "text"}).to_string();
    env.edit_local("template.zz-summary", Some(&local_change));
    let (code, v) = env.cutline(&["tg", "push"], &[]);
    assert_eq!(code, 11, "{v}");
    assert_eq!(v["error"]["category"], "conflict");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("changed live since: template.zz-summary"),
        "{v}"
    );
    assert_eq!(env.live("template.zz-summary"), moved);
    env.edit_local("template.zz-summary", Some(&other_live));
}

fn undone(env: &Env<'_>, original: &str) {
    let (code, v) = env.cutline(&["tg", "undo"], &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["keys"], json!(["template.extract-definitions"]));
    assert_eq!(
        env.live("template.extract-definitions"),
        original,
        "undo restores the exact previous value"
    );
    let (code, v) = env.cutline(&["tg", "undo"], &[]);
    assert_eq!(code, 2, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().starts_with("nothing to undo"),
        "{v}"
    );
}

fn run_through_the_service(env: &Env<'_>) {
    std::fs::write(
        env.home.join("cutline.toml"),
        format!(
            "[[provider]]\nname = \"live\"\nkind = \"trustgraph\"\nbase_url = \"{}\"\n",
            env.stack.url
        ),
    )
    .unwrap();
    // Push the migration again, then run it on the deployment's own service.
    let (code, v) = env.cutline(&["tg", "pull", "--force"], &[]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = migrate_in_place(env, &["--force"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(env.cutline(&["tg", "push"], &[]).0, 0);
    env.reloads(4);
    let (code, v) = env.cutline(
        &[
            "--prompts",
            "tg/default",
            "run",
            "extract-definitions",
            "--provider",
            "live",
            "--var",
            "text=A river flows into a delta.",
            "--max-tokens",
            "64",
        ],
        &[],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["text"], ITEMS_JSONL, "the deployment's raw answer");
    assert_eq!(v["data"]["analysis"]["items"].as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(v["data"]["usage"]["completion_tokens"], 29);
    let adjustments = v["data"]["adjustments"].to_string();
    assert!(
        adjustments.contains("max_tokens") && adjustments.contains("the deployment decides it"),
        "{adjustments}"
    );
    // A prompt the deployment does not have: the swallowed failure is named.
    let bundled = concat!(env!("CARGO_MANIFEST_DIR"), "/prompts");
    let (code, v) = env.cutline(
        &[
            "--prompts",
            bundled,
            "run",
            "extract-topics",
            "--provider",
            "live",
            "--var",
            "text=x",
        ],
        &[],
    );
    assert_eq!(code, 5, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("swallows a failing prompt call"),
        "{v}"
    );
}

/// With a token the no-auth IAM takes (`tg_…`), every command works and
/// no file cutline left, nor its output, holds it.
fn token_never_kept(env: &Env<'_>) {
    const TOKEN: &str = "tg_SECRET4242liveToken";
    let with = [("TRUSTGRAPH_TOKEN", TOKEN)];
    let mut seen = String::new();
    for args in [
        &["tg", "pull", "--dir", "tokened"][..],
        &["tg", "diff", "--dir", "tokened"],
        &["tg", "push", "--dir", "tokened", "--dry-run"],
        &[
            "--prompts",
            "tg/default",
            "run",
            "extract-definitions",
            "--provider",
            "live",
            "--var",
            "text=x",
        ],
    ] {
        let (code, v) = env.cutline(args, &with);
        assert_eq!(code, 0, "{args:?}: {v}");
        seen.push_str(&v.to_string());
    }
    assert!(!seen.contains("SECRET4242"), "the token reached the output");
    for entry in walk(&env.home) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("SECRET4242"),
            "the token was written to {}",
            entry.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// What `tg-export-workspace-config` writes is a prompts directory's file.
fn exported_by_trustgraph_reads(env: &Env<'_>) {
    let dir = env.home.join("exported");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("default.json");
    let out = Command::new(env.stack.bin.join("tg-export-workspace-config"))
        .arg("-o")
        .arg(&file)
        .env("TRUSTGRAPH_URL", &env.stack.url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (code, v) = env.cutline(&["--prompts", "exported", "prompts"], &[]);
    assert_eq!(code, 0, "{v}");
    let ids: Vec<&str> = v["data"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["extract-definitions", "zz-summary"]);
}

fn bad_credentials(env: &Env<'_>) {
    let (code, v) = env.cutline(&["tg", "pull", "--dir", "elsewhere"], &[("TRUSTGRAPH_TOKEN", "wrong")]);
    assert_eq!(code, 12, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("refused the credentials (HTTP 401): auth failure"),
        "{v}"
    );
    let (code, v) = env.cutline(&["tg", "pull", "-w", "nosuch"], &[]);
    assert_eq!(code, 12, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("answered HTTP 404: workspace not found"),
        "{v}"
    );
    let _ = std::io::stdout().flush();
}
