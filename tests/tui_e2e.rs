//! The real binary in a real terminal: `cutline` with no subcommand, driven
//! through tmux (send-keys to type, capture-pane to read the screen). Skips,
//! saying why, when tmux is not installed, unless `CUTLINE_REQUIRE_TMUX` is
//! set (as CI sets it), which makes a missing tmux a failure. Every step
//! waits for what the screen shows, never for a time.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(tag: &str) -> Option<Self> {
        let ok = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            assert!(
                std::env::var_os("CUTLINE_REQUIRE_TMUX").is_none(),
                "CUTLINE_REQUIRE_TMUX is set but tmux is not installed"
            );
            eprintln!("skipped: tmux is not installed (apt-get install tmux)");
            return None;
        }
        Some(Self {
            socket: format!("cutline-e2e-{tag}-{}", std::process::id()),
        })
    }

    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn start(&self, shell_cmd: &str) {
        self.start_at(shell_cmd, (120, 36));
    }

    /// [`Tmux::start`] in a terminal of `(columns, rows)`.
    fn start_at(&self, shell_cmd: &str, (w, h): (u16, u16)) {
        let (w, h) = (w.to_string(), h.to_string());
        self.cmd(&["new-session", "-d", "-s", "e2e", "-x", &w, "-y", &h, shell_cmd]);
    }

    /// Run `shell_cmd` in the same pane on a cleared screen, ending what
    /// runs there. Killing the last session instead ends the tmux server,
    /// and a new session started while it is still going away can fail,
    /// leaving no pane (a blank screen).
    fn restart(&self, shell_cmd: &str) {
        self.cmd(&["respawn-pane", "-k", "-t", "e2e", shell_cmd]);
    }

    /// Type `keys` in order. Never Escape: an Escape read together with
    /// the key after it is one Alt sequence, so it goes through [`Tmux::escape`].
    fn keys(&self, keys: &[&str]) {
        assert!(
            !keys.contains(&"Escape"),
            "send Escape with escape(), which waits for it to land"
        );
        let mut args = vec!["send-keys", "-t", "e2e"];
        args.extend_from_slice(keys);
        self.cmd(&args);
    }

    /// Escape, then wait until `gone` has left the screen: the workbench has
    /// read the Escape on its own, so the next key cannot join it as Alt-key.
    fn escape(&self, gone: &str) {
        self.cmd(&["send-keys", "-t", "e2e", "Escape"]);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let s = self.screen();
            if !s.contains(gone) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "Escape did not take {gone:?} off the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "e2e"])
    }

    /// Wait until the screen contains `needle`; the screen, or a panic
    /// showing the last screen.
    fn wait_for(&self, needle: &str) -> String {
        self.wait_for_secs(needle, 30)
    }

    /// `wait_for` with a longer bound, for runs on the real local model.
    fn wait_for_secs(&self, needle: &str, secs: u64) -> String {
        self.wait_until(needle, secs, |s| s.contains(needle))
    }

    /// Wait until a captured screen satisfies `done`. A capture can catch
    /// the terminal halfway through a frame, so a test that reads more than
    /// one line waits for all of it here rather than asserting on the first
    /// screen that shows a part.
    fn wait_until(&self, what: &str, secs: u64, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.screen();
            if done(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn pane_pid(&self) -> u32 {
        self.cmd(&["list-panes", "-t", "e2e", "-F", "#{pane_pid}"])
            .trim()
            .parse()
            .expect("pane pid")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

const ITEM_SCHEMA: &str = r#"{"type": "object", "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["entity", "definition"]}"#;
const INPUT: &str = "Photosynthesis is how plants make sugar. Chlorophyll is the green pigment.";

fn fixture(dir: &Path) {
    let prompts = dir.join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("extract-definitions.toml"),
        format!(
            "id = \"extract-definitions\"\ndescription = \"Definitions as one JSON array\"\nresponse-type = \"json\"\ntwin = \"extract-definitions-jsonl\"\nprompt = \"\"\"\nDefine the terms in:\n{{{{text}}}}\nOutput:\n\"\"\"\nschema = '''{{\"type\": \"array\", \"items\": {ITEM_SCHEMA}}}'''\n\n[[input]]\nname = \"photosynthesis\"\ntext = \"{INPUT}\"\n"
        ),
    )
    .unwrap();
    std::fs::write(
        prompts.join("extract-definitions-jsonl.toml"),
        format!(
            "id = \"extract-definitions-jsonl\"\ndescription = \"Definitions, one per line\"\nresponse-type = \"jsonl\"\ntwin = \"extract-definitions\"\nprompt = \"\"\"\nDefine the terms in:\n{{{{text}}}}\nOutput:\n\"\"\"\nschema = '''{ITEM_SCHEMA}'''\n\n[[input]]\nname = \"photosynthesis\"\ntext = \"{INPUT}\"\n"
        ),
    )
    .unwrap();
    let items = [
        ("photosynthesis", "how plants make sugar"),
        ("chlorophyll", "the green pigment 緑色"),
        ("stomata", "tiny pores on a leaf 😀"),
    ];
    let lines: Vec<String> = items
        .iter()
        .map(|(e, d)| json!({"entity": e, "definition": d}).to_string())
        .collect();
    let array = format!("[\n{}\n]", lines.join(",\n"));
    let jsonl = format!("{}\n", lines.join("\n"));
    // Each recording answers the request the workbench makes of its prompt
    // (replay plays a recording for no other).
    let rendered = format!("Define the terms in:\n{INPUT}\nOutput:\n");
    let run = |n: usize, id: &str, rt: &str, text: &str| {
        let chars: Vec<char> = text.chars().collect();
        let pieces: Vec<serde_json::Value> = chars
            .chunks(4)
            .enumerate()
            .map(|(i, c)| json!({"text": c.iter().collect::<String>(), "ms": i * 5}))
            .collect();
        json!({
            "type": "run", "run_id": format!("demo#{n}"), "started_ms": n, "prompt_id": id, "response_type": rt,
            "prompt": {}, "system": "", "rendered": rendered, "variables": {"text": INPUT},
            "provider": {"name": "local", "kind": "llama-server", "model": "gemma-3-270m"},
            "params": {"max_tokens": null, "temperature": 0.0, "stop": []}, "text": text, "finish": "stop",
            "usage": {"completion_tokens": pieces.len()}, "pieces": pieces, "total_ms": 100,
            "structured_path": "none", "analysis": {}
        })
        .to_string()
    };
    // A rebinding in the config file's [keys] table.
    std::fs::write(dir.join("cutline.toml"), "[keys]\nsweep = [\"s\", \"w\"]\n").unwrap();
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(
        sessions.join("demo.jsonl"),
        format!(
            "{}\n{}\n{}\n",
            json!({"type": "session", "version": 1, "id": "demo", "created_ms": 0}),
            run(1, "extract-definitions", "json", &array),
            run(2, "extract-definitions-jsonl", "jsonl", &jsonl)
        ),
    )
    .unwrap();
}

fn launch(t: &Tmux, dir: &Path) {
    t.start(&workbench_cmd(dir));
}

/// The workbench on `dir`'s fixture, then its exit code and the terminal's
/// mode once it has gone.
fn workbench_cmd(dir: &Path) -> String {
    let bin = env!("CARGO_BIN_EXE_cutline");
    format!(
        "cd '{}' && env XDG_CACHE_HOME='{}' CUTLINE_CONFIG= '{bin}' --prompts prompts --sessions sessions --provider replay; echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-\\?icanon'; echo STTY_DONE; sleep 60",
        dir.display(),
        dir.join("cache").display()
    )
}

/// Wait until the workbench is on screen (`cutline` with no subcommand
/// opens it); a failure shows the screen.
fn started(t: &Tmux) {
    t.wait_for("Prompts ·");
}

#[test]
fn workbench_twins_sweep_help_and_quit() {
    let Some(t) = Tmux::new("keys") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    launch(&t, dir.path());
    started(&t);
    let s = t.wait_for("extract-definitions-jsonl");
    assert!(s.contains("replay │ limit none"), "{s}");
    // The JSON prompt, its twin, both cut at 20 tokens.
    t.keys(&["/", "d", "e", "f", "Enter"]);
    t.wait_for("/def");
    t.keys(&["j", "m", "2", "0", "Enter"]);
    t.wait_for("limit 20");
    t.keys(&["t"]);
    let s = t.wait_for("jsonl: finish length");
    assert!(s.contains("a strict consumer gets 0 items"), "{s}");
    assert!(s.contains("salvaged"), "{s}");
    assert!(s.contains("✓ 1 kept"), "{s}");
    // The sweep (on the key bound in cutline.toml) and its cursor.
    t.keys(&["w"]);
    t.wait_for("Items recovered vs max tokens");
    t.wait_for("cut at 20 tokens");
    t.keys(&["Left"]);
    t.wait_for("cut at 19 tokens");
    // Help lists the keys; any key closes it.
    t.keys(&["?"]);
    t.wait_for("rebind in the [keys] table");
    t.keys(&["x", "q"]);
    let s = t.wait_for("STTY_DONE");
    assert!(s.contains("EXIT=0"), "{s}");
    assert!(
        s.lines().any(|l| l.trim() == "icanon"),
        "terminal left in raw mode:\n{s}"
    );
}

#[test]
fn sigterm_restores_the_terminal() {
    let Some(t) = Tmux::new("term") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    launch(&t, dir.path());
    started(&t);
    t.wait_for("extract-definitions-jsonl");
    // The pane runs `sh -c …`; cutline is its child.
    let pid = cutline_pid(&t);
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success());
    let s = t.wait_for("STTY_DONE");
    assert!(s.contains("EXIT=143"), "{s}");
    assert!(
        s.lines().any(|l| l.trim() == "icanon"),
        "terminal left in raw mode:\n{s}"
    );
}

/// The real local model in the real binary: the bundled extract-definitions
/// prompt and its JSONL twin run at 64 tokens on Gemma 3 270M; the JSON
/// array is lost to a strict consumer, the JSONL twin keeps its lines.
/// Skipped when the model is not installed, unless `CUTLINE_REQUIRE_LOCAL`.
#[test]
fn workbench_on_the_local_model_json_lost_jsonl_kept() {
    if let Err(e) = cutline::llm::local::installed() {
        assert!(
            std::env::var_os("CUTLINE_REQUIRE_LOCAL").is_none(),
            "CUTLINE_REQUIRE_LOCAL is set but {e}"
        );
        eprintln!("skipped: {e}");
        return;
    }
    let Some(t) = Tmux::new("local") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let sessions = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_cutline");
    let cmd = format!(
        "cd '{}' && env CUTLINE_CONFIG= '{bin}' --prompts prompts --sessions '{}' --provider local; echo EXIT=$?; echo STTY_DONE; sleep 60",
        env!("CARGO_MANIFEST_DIR"),
        sessions.path().display()
    );
    t.start(&cmd);
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["/", "e", "x", "t", "r", "a", "c", "t", "-", "d", "e", "f", "Enter"]);
    t.wait_for("/extract-def");
    t.keys(&["m", "6", "4", "Enter"]);
    t.wait_for("limit 64");
    t.keys(&["t"]);
    // The twins share one local server and finish in either order: wait for both.
    t.wait_for_secs("a strict consumer gets 0 items", 300);
    let s = t.wait_for_secs("jsonl: finish length", 300);
    assert!(s.contains("extract-definitions-jsonl"), "{s}");
    assert!(s.contains("a strict consumer gets 0 items"), "{s}");
    assert!(s.contains("✓ 2 kept"), "{s}");
    t.keys(&["q"]);
    let s = t.wait_for("STTY_DONE");
    assert!(s.contains("EXIT=0"), "{s}");
    // The runs were recorded.
    let n = std::fs::read_dir(sessions.path()).unwrap().count();
    assert!(n >= 1, "no session recorded");
}

/// Issue 6: a panic on the UI thread (injected through the test-only
/// `CUTLINE_TEST_PANIC=after-first-frame`) leaves the terminal as it found
/// it — main screen with what was there before, cursor shown, cooked mode
/// with echo — reports the panic and the log file, exits 101, and leaves
/// no escape-sequence debris on the screen.
#[test]
fn a_panic_restores_the_terminal() {
    let Some(t) = Tmux::new("panic") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let bin = env!("CARGO_BIN_EXE_cutline");
    let cache = dir.path().join("cache");
    let cmd = format!(
        "cd '{}' && echo BEFORE_THE_WORKBENCH; env RUST_BACKTRACE=0 CUTLINE_TEST_PANIC=after-first-frame XDG_CACHE_HOME='{}' CUTLINE_CONFIG= '{bin}' --prompts prompts --sessions sessions --provider replay; echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-\\?icanon'; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-\\?echo'; echo STTY_DONE; sleep 60",
        dir.path().display(),
        cache.display()
    );
    t.start(&cmd);
    let s = t.wait_for("STTY_DONE");
    assert!(s.contains("EXIT=101"), "not the panic exit code:\n{s}");
    assert!(
        s.contains("BEFORE_THE_WORKBENCH"),
        "the screen before the workbench is gone:\n{s}"
    );
    assert!(
        s.contains("CUTLINE_TEST_PANIC: injected panic after the first frame"),
        "panic message not reported:\n{s}"
    );
    assert!(s.contains("the workbench panicked; log:"), "log path not printed:\n{s}");
    let lines: Vec<&str> = s.lines().map(str::trim).collect();
    assert!(lines.contains(&"icanon"), "terminal left in raw mode:\n{s}");
    assert!(lines.contains(&"echo"), "terminal left without echo:\n{s}");
    // No workbench frame and no escape debris left on the main screen.
    assert!(
        !s.contains("1 Prompts"),
        "workbench frame left on the main screen:\n{s}"
    );
    assert!(
        !s.contains('\u{1b}') && !s.contains("[?") && !s.contains("^["),
        "escape debris:\n{s}"
    );
    let flags = t.cmd(&["display-message", "-p", "-t", "e2e", "#{alternate_on} #{cursor_flag}"]);
    assert_eq!(flags.trim(), "0 1", "alternate screen still on or cursor hidden");
    // The log has the panic too.
    let log = std::fs::read_to_string(cache.join("cutline").join("tui.log")).unwrap_or_default();
    assert!(log.contains("panic:"), "log:\n{log}");
}

/// Start the binary in `dir` with `CUTLINE_CONFIG` set to `config` (and
/// extra `env` assignments); the shell reports the exit code after it.
fn launch_with(t: &Tmux, dir: &Path, config: &Path, env: &str) {
    let bin = env!("CARGO_BIN_EXE_cutline");
    let cmd = format!(
        "cd '{}' && env XDG_CACHE_HOME='{}' CUTLINE_CONFIG='{}' {env} '{bin}' --prompts prompts --sessions sessions --provider replay; echo EXIT=$?; echo STTY_DONE; sleep 60",
        dir.display(),
        dir.join("cache").display(),
        config.display()
    );
    t.start(&cmd);
}

/// Issue 4: providers from cutline.toml in the picker — kind, model, a
/// missing key named by its variable, never a key's value — chosen from the
/// keyboard with the model edited; a run on a provider that cannot work
/// fails with its reason in the status bar instead of taking the workbench
/// down.
#[test]
fn configured_providers_are_chosen_in_the_picker() {
    let Some(t) = Tmux::new("providers") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let config = dir.path().join("providers.toml");
    std::fs::write(
        &config,
        "[[provider]]\nname = \"gpt\"\nkind = \"openai\"\nmodel = \"gpt-4o-mini\"\napi_key_env = \"CUTLINE_E2E_UNSET_KEY\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\n[[provider]]\nname = \"keyed\"\nkind = \"openai\"\nmodel = \"m1\"\napi_key_env = \"CUTLINE_E2E_SET_KEY\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmax_retries = 0\n",
    )
    .unwrap();
    launch_with(&t, dir.path(), &config, "CUTLINE_E2E_SET_KEY=sk-e2e-secret-value-42");
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["p"]);
    let s = t.wait_for("key missing: $CUTLINE_E2E_UNSET_KEY is not set");
    assert!(s.contains("openai · model gpt-4o-mini"), "{s}");
    assert!(s.contains("openai · model m1"), "{s}");
    // The configured provider without a key: chosen, and a run fails saying why.
    t.keys(&["Down", "Down", "Enter"]);
    t.wait_for("gpt gpt-4o-mini │");
    t.keys(&["r"]);
    // The status line named the variable already: wait for the failure.
    let s = t.wait_for("failed");
    assert!(s.contains("CUTLINE_E2E_UNSET_KEY"), "{s}");
    // The one with a key: its model edited in the picker.
    t.keys(&["p", "Down", "Down", "Down", "e"]);
    t.wait_for("model: m1");
    t.keys(&["BSpace", "BSpace", "m", "2", "Enter"]);
    // w asks, w again writes it into the file, every other byte kept.
    t.keys(&["w"]);
    t.wait_for("for keyed into");
    let before = std::fs::read_to_string(&config).unwrap();
    t.keys(&["w"]);
    t.wait_for("saved model = \"m2\" for keyed");
    let after = std::fs::read_to_string(&config).unwrap();
    assert_eq!(after, before.replace("model = \"m1\"", "model = \"m2\""));
    t.keys(&["Enter"]);
    t.wait_for("keyed m2 │");
    t.keys(&["1", "r"]);
    let s = t.wait_for("failed");
    for screen in [&s, &t.screen()] {
        assert!(
            !screen.contains("sk-e2e-secret"),
            "a key's value is on screen:\n{screen}"
        );
    }
    t.keys(&["q"]);
    let s = t.wait_for("STTY_DONE");
    assert!(s.contains("EXIT=0"), "{s}");
}

/// A cutline.toml that does not parse is reported in the workbench with
/// its file and line, and the workbench keeps working.
#[test]
fn a_bad_config_is_shown_not_fatal() {
    let Some(t) = Tmux::new("badcfg") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let config = dir.path().join("broken.toml");
    std::fs::write(&config, "[[provider]]\nname = \"x\"\nkind = \n").unwrap();
    launch_with(&t, dir.path(), &config, "");
    let s = t.wait_for("provider config not loaded");
    assert!(s.contains("broken.toml:3:"), "no file:line in:\n{s}");
    t.keys(&["p"]);
    let s = t.wait_for("✗ ");
    assert!(s.contains("broken.toml:3:"), "{s}");
    // The picker closes before `t` is typed (see `Tmux::escape`).
    t.escape("Enter chooses");
    t.keys(&["t"]);
    t.wait_for("jsonl: finish");
    t.keys(&["q"]);
    let s = t.wait_for("STTY_DONE");
    assert!(s.contains("EXIT=0"), "{s}");
}

/// Issue 5 in the real binary: the JSON prompt migrated (diff on screen),
/// written over its existing twin only after the confirm, the pair run from
/// the Migrate tab, and compared.
#[test]
fn migrate_write_run_the_pair_and_compare() {
    let Some(t) = Tmux::new("migrate") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    recorded_migration(dir.path());
    launch(&t, dir.path());
    started(&t);
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["/", "d", "e", "f", "i", "n", "Enter"]);
    t.wait_for("/defin");
    t.keys(&["j", "M"]);
    // The migration takes the first free id: the bundled twin's file is
    // never written over.
    let s = t.wait_for("Migrate extract-definitions → extract-definitions-jsonl-2");
    assert!(s.contains("── schema ──"), "{s}");
    assert!(s.contains("-  \"type\": \"array\","), "{s}");
    let twin = dir.path().join("prompts").join("extract-definitions-jsonl.toml");
    let before = std::fs::read_to_string(&twin).unwrap();
    let written = dir.path().join("prompts").join("extract-definitions-jsonl-2.toml");
    t.keys(&["W"]);
    t.wait_for("✓ written to prompts/extract-definitions-jsonl-2.toml");
    let first = std::fs::read_to_string(&written).unwrap();
    assert!(first.contains("twin = \"extract-definitions\""), "{first}");
    // Writing again asks first, then replaces; the twin is untouched.
    t.keys(&["W"]);
    t.wait_for("exists: W again overwrites");
    t.keys(&["W"]);
    t.wait_for("✓ written to prompts/extract-definitions-jsonl-2.toml");
    assert_eq!(std::fs::read_to_string(&twin).unwrap(), before);
    t.keys(&["t"]);
    t.wait_for("jsonl: finish stop");
    t.keys(&["7"]);
    t.wait_for("Compare A vs B");
    // The table comes once both sides have ended; its total row says both
    // kept the same three items.
    t.wait_until("the compare table's total row", 30, |s| {
        s.lines().any(|l| l.contains("total") && l.contains("3     3      3"))
    });
    t.keys(&["q"]);
    let s = t.wait_for("STTY_DONE");
    assert!(s.contains("EXIT=0"), "{s}");
}

/// A recording of the migration's own request (as `W` writes it, beside
/// the twin): replay plays the twin's recording for no other request.
fn recorded_migration(dir: &Path) {
    let src = std::fs::read_to_string(dir.join("prompts/extract-definitions.toml")).unwrap();
    let (p, _) = cutline::prompt::load_toml("extract-definitions.toml", &src).unwrap();
    let m = cutline::prompt::migrate(&p, None).unwrap().config;
    let r = cutline::prompt::render(&m, &serde_json::Map::new(), &p.inputs[0].vars).unwrap();
    let path = dir.join("sessions/demo.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.lines().last().unwrap();
    let mut run: serde_json::Value = serde_json::from_str(last).unwrap();
    run["run_id"] = json!("demo#3");
    run["started_ms"] = json!(3);
    run["rendered"] = json!(r.prompt);
    run["system"] = json!(r.system);
    std::fs::write(&path, format!("{text}{run}\n")).unwrap();
}

/// The pid of cutline, the child of the pane's shell.
fn cutline_pid(t: &Tmux) -> String {
    let out = Command::new("pgrep")
        .arg("-P")
        .arg(t.pane_pid().to_string())
        .output()
        .expect("pgrep");
    let pid = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_owned();
    assert!(!pid.is_empty(), "no child of the pane's shell");
    pid
}

/// A 10 KB bracketed paste into the editor lands whole in one step, and a
/// Ctrl-S sent right after it saves all of it without waiting for more
/// keys; so does the same paste typed as keys. Then a 200 KB burst typed without bracketed paste (a million
/// key events in the issue) does not hold a SIGTERM back.
#[test]
fn a_paste_lands_in_one_step_and_a_signal_goes_ahead_of_queued_keys() {
    let Some(t) = Tmux::new("paste") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    launch(&t, dir.path());
    started(&t);
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["Enter", "e"]);
    let paste = dir.path().join("paste.txt");
    let mut text = String::new();
    for i in 0..200 {
        let _ = writeln!(text, "pasted line {i:03} of a ten kilobyte paste, fifty-one bytes");
    }
    text.push_str("PASTE-END ");
    assert!(text.len() >= 10_000);
    std::fs::write(&paste, &text).unwrap();
    t.cmd(&["load-buffer", "-b", "p", paste.to_str().unwrap()]);
    t.cmd(&["paste-buffer", "-p", "-b", "p", "-t", "e2e"]);
    t.cmd(&["send-keys", "-t", "e2e", "C-s"]);
    t.wait_for("saved prompts/extract-definitions-jsonl.toml");
    let saved = std::fs::read_to_string(dir.path().join("prompts/extract-definitions-jsonl.toml")).unwrap();
    assert!(saved.contains("pasted line 000"), "{saved}");
    assert!(saved.contains("PASTE-END Define the terms in:"), "{saved}");
    // The same 10 KB without bracketed paste (tmux types it as keys): all
    // of it arrives, and a Ctrl-S right after it saves it, with no further
    // key pressed. crossterm's default event source left the tail unread
    // until the next key (crossterm-rs/crossterm#1057).
    let typed = dir.path().join("typed.txt");
    std::fs::write(&typed, text.replace("PASTE-END ", "TYPED-END ")).unwrap();
    t.cmd(&["load-buffer", "-b", "u", typed.to_str().unwrap()]);
    t.cmd(&["paste-buffer", "-b", "u", "-t", "e2e"]);
    t.cmd(&["send-keys", "-t", "e2e", "C-s"]);
    let file = dir.path().join("prompts/extract-definitions-jsonl.toml");
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut saved = String::new();
    while Instant::now() < deadline && !saved.contains("TYPED-END ") {
        std::thread::sleep(Duration::from_millis(100));
        saved = std::fs::read_to_string(&file).unwrap();
    }
    // Typed at the cursor, which the first paste left before "Define".
    assert!(saved.contains("PASTE-END pasted line 000"), "{saved}");
    assert!(saved.contains("TYPED-END Define the terms in:"), "{saved}");
    assert_eq!(saved.matches("pasted line 199 of").count(), 2, "{saved}");
    // A burst typed without bracketed paste, then SIGTERM at once.
    let burst = dir.path().join("burst.txt");
    std::fs::write(&burst, "x".repeat(200_000)).unwrap();
    t.cmd(&["load-buffer", "-b", "k", burst.to_str().unwrap()]);
    t.cmd(&["paste-buffer", "-b", "k", "-t", "e2e"]);
    let pid = cutline_pid(&t);
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    // The workbench ends on the signal, not after the burst (the wait is
    // bounded, not timed: how fast is for BENCHMARKS.md).
    let s = t.wait_for_secs("STTY_DONE", 120);
    assert!(s.contains("EXIT=143"), "{s}");
}

/// Issue 13: the workbench in another language, from `LANG` or `--lang`:
/// tabs, the status bar's hints and the help are translated.
#[test]
fn the_workbench_speaks_the_chosen_language() {
    let Some(t) = Tmux::new("lang") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let config = dir.path().join("none.toml");
    std::fs::write(&config, "").unwrap();
    launch_with(&t, dir.path(), &config, "LC_ALL= LC_MESSAGES= LANG=zh_CN.UTF-8");
    let s = t.wait_for("1 提示词");
    assert!(s.contains("2 编辑") && s.contains("7 对比"), "{s}");
    t.keys(&["Down"]);
    let s = t.wait_for("帮助 · r 运行");
    assert!(s.contains("上限 无"), "{s}");
    t.keys(&["?"]);
    let s = t.wait_for("本帮助");
    assert!(s.contains("任意键关闭"), "{s}");
    t.keys(&["x", "q"]);
    assert!(t.wait_for("STTY_DONE").contains("EXIT=0"));
    t.cmd(&["kill-server"]);

    let t = Tmux::new("lang-flag").unwrap();
    let bin = env!("CARGO_BIN_EXE_cutline");
    t.start(&format!(
        "cd '{}' && env CUTLINE_CONFIG='{}' LANG=zh_CN.UTF-8 '{bin}' --lang es --prompts prompts --sessions sessions --provider replay; echo EXIT=$?; sleep 60",
        dir.path().display(),
        config.display()
    ));
    let s = t.wait_for("3 Lanzar");
    assert!(s.contains("7 Cotejar"), "--lang wins over LANG: {s}");
    t.keys(&["Down"]);
    t.wait_for("? ayuda · r ejecutar");
    t.keys(&["q"]);
    assert!(t.wait_for("EXIT=").contains("EXIT=0"));
}

/// Issue 13: `y` copies the response on show through OSC 52, which tmux
/// (`set-clipboard on`) turns into a paste buffer.
#[test]
fn copy_reaches_the_clipboard_through_osc_52() {
    let Some(t) = Tmux::new("copy") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    launch(&t, dir.path());
    started(&t);
    t.cmd(&["set-option", "-g", "set-clipboard", "on"]);
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["/", "j", "s", "o", "n", "l", "Enter"]);
    t.wait_for("/jsonl");
    t.keys(&["j", "m", "2", "0", "Enter"]);
    t.wait_for("limit 20");
    t.keys(&["r"]);
    t.wait_for("finish length");
    t.keys(&["y"]);
    // The parse pane has the focus: the kept line.
    let s = t.wait_for("to the clipboard");
    assert!(s.contains("copied 1 kept items ("), "{s}");
    let buffer = t.cmd(&["show-buffer"]);
    assert_eq!(
        buffer,
        "{\"entity\":\"photosynthesis\",\"definition\":\"how plants make sugar\"}"
    );
    // The response pane has it after `[`: the whole text, cut line and all.
    t.keys(&["[", "y"]);
    t.wait_for("copied the response (80 B)");
    assert!(t.cmd(&["show-buffer"]).ends_with("{\"entity\":\"chlo"));
    t.keys(&["q"]);
    assert!(t.wait_for("STTY_DONE").contains("EXIT=0"));
}

/// Issue 13: Ctrl-O hands the field to `$EDITOR` with the workbench
/// suspended (the editor owns the terminal and reads the keys typed), then
/// the workbench comes back with the edited text, which Ctrl-S saves.
#[test]
fn ctrl_o_edits_the_field_in_the_external_editor() {
    let Some(t) = Tmux::new("editor") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    // An "editor" that shows it has the terminal, reads a word typed there
    // in cooked mode, and puts it into the file.
    let script = dir.path().join("editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf 'EDITOR-OPEN %s\\n' \"$(basename \"$1\" | sed 's/-[^.]*//')\"\nread word\nsed -i \"s/Define/$word/\" \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = dir.path().join("cutline.toml");
    launch_with(
        &t,
        dir.path(),
        &config,
        &format!("VISUAL= EDITOR='{}'", script.display()),
    );
    started(&t);
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["Enter"]);
    t.wait_for("Define the terms in:");
    t.keys(&["C-o"]);
    let s = t.wait_for("EDITOR-OPEN");
    assert!(s.contains("EDITOR-OPEN cutline.txt"), "{s}");
    assert!(
        !s.contains("Prompts ·"),
        "the workbench left the screen to the editor:\n{s}"
    );
    t.cmd(&["send-keys", "-t", "e2e", "List", "Enter"]);
    let s = t.wait_for("edited in the external editor");
    assert!(s.contains("List the terms in:"), "{s}");
    t.cmd(&["send-keys", "-t", "e2e", "C-s"]);
    let s = t.wait_for("saved prompts/");
    let file = s
        .split("saved ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_owned();
    let saved = std::fs::read_to_string(dir.path().join(&file)).unwrap();
    assert!(saved.contains("List the terms in:"), "{saved}");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY_DONE").contains("EXIT=0"));
}

/// Issue 13: `/` in the Run tab finds text in the focused pane and `n`
/// moves to the next hit, in the real terminal.
#[test]
fn slash_finds_text_in_the_response_pane() {
    let Some(t) = Tmux::new("search") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    launch(&t, dir.path());
    started(&t);
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["/", "j", "s", "o", "n", "l", "Enter"]);
    t.wait_for("/jsonl");
    t.keys(&["j", "r"]);
    t.wait_for("finish stop");
    // The JSON-array parse pane has the focus and no such text; the JSONL
    // pane's rows are the kept lines (row 1 is its header).
    t.keys(&["/", "P", "I", "G", "M", "E", "N", "T", "Enter"]);
    t.wait_for("/PIGMENT: no match in this pane");
    t.keys(&["]", "/", "P", "I", "G", "M", "E", "N", "T", "Enter"]);
    let s = t.wait_for("match 1 of 1");
    assert!(s.contains("/PIGMENT: match 1 of 1 (row 3)"), "{s}");
    t.keys(&["[", "[", "/", "e", "n", "t", "i", "t", "y", "Enter"]);
    t.wait_for("/entity: match 1 of 3 (row 1)");
    t.keys(&["n"]);
    t.wait_for("/entity: match 2 of 3 (row 2)");
    t.escape("/entity: match 2 of 3");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY_DONE").contains("EXIT=0"));
}

/// Issue 13: the last tab and the pinned compare side come back in the next
/// session (kept beside the sessions, the pin as its recording).
#[test]
fn the_last_tab_and_the_pin_come_back_next_time() {
    let Some(t) = Tmux::new("remember") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    launch(&t, dir.path());
    started(&t);
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["5", "Down", "Enter"]);
    t.wait_for("opened demo#1");
    t.keys(&["P"]);
    t.wait_for("as compare side A");
    t.keys(&["7", "q"]);
    assert!(t.wait_for("STTY_DONE").contains("EXIT=0"));
    let kept = std::fs::read_to_string(dir.path().join("sessions/.cutline-workbench.json")).unwrap();
    assert_eq!(kept, r#"{"tab":"compare","pin":"demo#1"}"#);
    t.restart(&workbench_cmd(dir.path()));
    let s = t.wait_for("compare side A: demo#1, pinned last session");
    assert!(s.contains("Nothing to compare yet"), "the Compare tab is on show:\n{s}");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY_DONE").contains("EXIT=0"));
}

/// Issue 13: `x` on an opened recording writes the shareable report beside
/// the sessions and says where.
#[test]
fn x_writes_the_report_of_what_is_on_show() {
    let Some(t) = Tmux::new("report") else { return }; // skip: tmux is not installed (Tmux::new said so)
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    launch(&t, dir.path());
    started(&t);
    t.wait_for("extract-definitions-jsonl");
    t.keys(&["5", "Down", "Down", "Enter"]);
    t.wait_for("opened demo#2");
    t.keys(&["x"]);
    let s = t.wait_for("open it in a browser");
    assert!(s.contains("report: sessions/demo-2.html ("), "{s}");
    let page = std::fs::read_to_string(dir.path().join("sessions/demo-2.html")).unwrap();
    assert!(page.contains("extract-definitions-jsonl"), "{page}");
    t.keys(&["q"]);
    assert!(t.wait_for("STTY_DONE").contains("EXIT=0"));
}

/// Issue 35: the workbench in a real 80×24 terminal in each language. The
/// tab bar shows every tab whole, the body's frame closes at the last
/// column, no line is wider than the terminal, and the help — longer than
/// the screen — says which keys it shows and scrolls to its last one.
#[test]
fn the_workbench_fits_80_by_24_in_every_language() {
    let langs: [(&str, [&str; 7], &str, &str); 3] = [
        (
            "en",
            [
                "1 Prompts",
                "2 Edit",
                "3 Run",
                "4 Sweep",
                "5 Sessions",
                "6 Migrate",
                "7 Compare",
            ],
            "Keys 1–19 of",
            "close this help",
        ),
        (
            "zh",
            ["1 提示词", "2 编辑", "3 运行", "4 扫描", "5 会话", "6 迁移", "7 对比"],
            "按键 1–19，共",
            "关闭本帮助",
        ),
        (
            "es",
            [
                "1 Prompts",
                "2 Editar",
                "3 Lanzar",
                "4 Barrer",
                "5 Sesiones",
                "6 Migrar",
                "7 Cotejar",
            ],
            "Teclas 1–19 de",
            "cierran esta ayuda",
        ),
    ];
    for (lang, tabs, help_top, help_last) in langs {
        let tag = format!("fit-{lang}");
        let Some(t) = Tmux::new(&tag) else { return }; // skip: tmux is not installed (Tmux::new said so)
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path());
        let config = dir.path().join("none.toml");
        std::fs::write(&config, "").unwrap();
        let bin = env!("CARGO_BIN_EXE_cutline");
        t.start_at(
            &format!(
                "cd '{}' && env XDG_CACHE_HOME='{}' CUTLINE_CONFIG='{}' '{bin}' --lang {lang} --prompts prompts --sessions sessions --provider replay; echo EXIT=$?; echo STTY_DONE; sleep 60",
                dir.path().display(),
                dir.path().join("cache").display(),
                config.display()
            ),
            (80, 24),
        );
        let s = t.wait_until("the tab bar", 30, |s| {
            tabs.iter().all(|tab| s.contains(tab)) && s.contains("extract-definitions-jsonl")
        });
        fits(&s, lang);
        t.keys(&["?"]);
        let s = t.wait_for(help_top);
        fits(&s, lang);
        t.keys(&["End"]);
        let s = t.wait_for(help_last);
        fits(&s, lang);
        t.keys(&["x", "q"]);
        assert!(t.wait_for("STTY_DONE").contains("EXIT=0"), "{lang}");
        t.cmd(&["kill-server"]);
    }
}

/// Every line of an 80-column screen fits, and a frame that opens at the
/// first column closes at the last.
fn fits(screen: &str, lang: &str) {
    let lines: Vec<&str> = screen.lines().collect();
    assert!(lines.len() <= 24, "{lang}: {} lines\n{screen}", lines.len());
    for l in &lines {
        let w = unicode_width::UnicodeWidthStr::width(*l);
        assert!(w <= 80, "{lang}: a line of {w} columns: {l:?}\n{screen}");
        if l.starts_with('┌') {
            assert!(
                l.ends_with('┐') && w == 80,
                "{lang}: a frame's top not closed at column 80: {l:?}\n{screen}"
            );
        }
        if l.starts_with('└') {
            assert!(
                l.ends_with('┘') && w == 80,
                "{lang}: a frame's bottom not closed at column 80: {l:?}\n{screen}"
            );
        }
    }
}
