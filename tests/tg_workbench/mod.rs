//! The workbench's TrustGraph part against the live stack: in a directory
//! `cutline tg pull` made, the status line names the deployment, workspace
//! and version; `T` on the Migrate tab shows the diff of the migration and
//! asks, `y` writes it in place of the prompt and pushes it (TrustGraph's
//! config service holds it after); a push TrustGraph's loader would not
//! take shows its refusal and writes nothing. Driven in process: the real
//! reducer, runner and jobs, no terminal.

use std::path::Path;
use std::time::Instant;

use cutline::store::Workspace;
use cutline::tui::event::{Effect, Event};
use cutline::tui::keymap::Keymap;
use cutline::tui::runner::Runner;
use cutline::tui::state::{Mode, State, Tab};
use cutline::tui::theme::Theme;
use cutline::tui::trustgraph::{Stage, TgState};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::Env;
use super::tui_support::{ch, drive, screen};

fn stage(s: &State) -> Stage {
    s.parts.get::<TgState>().map(|t| t.stage.clone()).unwrap_or_default()
}

fn select(s: &mut State, id: &str) {
    s.tab = Tab::Prompts;
    let rows = s.prompts.filtered();
    s.prompts.selected = rows.iter().position(|&i| s.prompts.prompts[i].id == id).unwrap();
}

fn set_local(file: &Path, key: &str, value: &str) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["config"]["prompt"][key] = Value::String(value.to_owned());
    std::fs::write(file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// The whole story on the workbench; `original` is the live
/// `extract-definitions` before it, and is live again after (`tg undo`).
pub fn pushed_from_the_workbench(env: &Env<'_>, original: &str) {
    let (code, v) = env.cutline(&["tg", "pull", "--dir", "tg/wb"], &[]);
    assert_eq!(code, 0, "{v}");
    let version = v["data"]["version"].as_u64().unwrap();
    let dir = env.home.join("tg/wb");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (tx, mut rx) = unbounded_channel();
        let mut runner = Runner::new(tx, Workspace::at(&dir), env.home.join("sessions"), Instant::now());
        let keymap = Keymap::defaults().with_own(&cutline::tui::registry::own_keys());
        let mut s = State::new(dir.clone(), env.home.join("sessions"), keymap, Theme { color: false });
        s.size = (100, 30);
        s.local_installed = Some(false);
        s.first_screen = None;
        let mut start = vec![Effect::LoadPrompts];
        start.extend(cutline::tui::COMPONENTS.iter().flat_map(|c| c.init(&s)));
        drive(&mut s, &mut runner, &mut rx, start, |s| {
            s.prompts.loaded && s.parts.get::<TgState>().is_some_and(|t| t.pulled.is_some())
        })
        .await;
        let host = env.stack.url.trim_start_matches("http://").trim_end_matches('/');
        let words = format!("TrustGraph default@{host} v{version}");
        assert!(screen(&s, 100, 30).contains(&words), "{}", screen(&s, 100, 30));

        migrated_and_pushed(env, &mut s, &mut runner, &mut rx, &dir).await;
        refused(env, &mut s, &mut runner, &mut rx, &dir).await;
    });
    let (code, v) = env.cutline(&["tg", "undo", "--dir", "tg/wb"], &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(env.live("template.extract-definitions"), original);
}

async fn migrated_and_pushed(
    env: &Env<'_>,
    s: &mut State,
    runner: &mut Runner,
    rx: &mut UnboundedReceiver<Event>,
    dir: &Path,
) {
    let file = dir.join("default.json");
    let before = std::fs::read(&file).unwrap();
    let live_before = env.live("template.extract-definitions");
    select(s, "extract-definitions");
    let fx = super::tui_support::send(s, [ch('M'), ch('T')]);
    assert_eq!(s.tab, Tab::Migrate);
    drive(s, runner, rx, fx, |s| matches!(stage(s), Stage::Ask(_))).await;
    assert_eq!(s.mode, Mode::Own(cutline::tui::trustgraph::ID));
    let shown = screen(s, 100, 30);
    for line in [
        "push extract-definitions to workspace default at",
        "the migration is first written in place of the prompt in",
        "replace template.extract-definitions",
        "Answer with [-a-]{+JSONL: one+}",
    ] {
        assert!(shown.contains(line), "{line:?} not on the screen:\n{shown}");
    }
    let Stage::Ask(ready) = stage(s) else { unreachable!() };
    let parts: Vec<&str> = ready.keys[0].parts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(parts.first(), Some(&"template"), "{ready:?}");
    assert_eq!(parts.last(), Some(&"response-type"), "{ready:?}");
    assert!(parts.contains(&"schema /type"), "{ready:?}");
    // The end of the diff, a key away: the schema and the question.
    let _ = super::tui_support::send(s, [super::tui_support::key(ratatui::crossterm::event::KeyCode::End)]);
    let shown = screen(s, 100, 30);
    for line in ["response-type: \"json\" → \"jsonl\"", "y or Enter pushes"] {
        assert!(shown.contains(line), "{line:?} not on the screen:\n{shown}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), before, "asking writes nothing");
    assert_eq!(env.live("template.extract-definitions"), live_before);

    let fx = super::tui_support::send(s, [ch('y')]);
    drive(s, runner, rx, fx, |s| stage(s) == Stage::Idle && s.prompts.loaded).await;
    let message = format!("{:?}", s.message);
    assert!(
        message.contains("pushed template.extract-definitions (push 1, version"),
        "{message}"
    );
    let local: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let written = local["config"]["prompt"]["template.extract-definitions"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        env.live("template.extract-definitions"),
        written,
        "what was pushed is live"
    );
    let entry: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(entry["response-type"], "jsonl");
    assert_eq!(
        local["config"]["prompt"]["system"],
        json!(env.live("system")),
        "system untouched"
    );
    let (_, diff) = env.cutline(&["tg", "diff", "--dir", "tg/wb"], &[]);
    let live_version = diff["data"]["summary"]["version_live"].as_u64().unwrap();
    assert_eq!(diff["data"]["keys"], json!([]), "{diff}");
    let pulled = s.parts.get::<TgState>().unwrap().pulled.clone().unwrap();
    assert_eq!(pulled.version, live_version, "the status line follows the push");
}

async fn refused(env: &Env<'_>, s: &mut State, runner: &mut Runner, rx: &mut UnboundedReceiver<Event>, dir: &Path) {
    let other_live = env.live("template.zz-summary");
    let bad = json!({"prompt": "Count {{ i + 1 }}", "response-type": "text"}).to_string();
    set_local(&dir.join("default.json"), "template.zz-summary", &bad);
    drive(s, runner, rx, vec![Effect::LoadPrompts], |s| s.prompts.loaded).await;
    select(s, "zz-summary");
    let fx = super::tui_support::send(s, [ch('T')]);
    drive(s, runner, rx, fx, |s| matches!(stage(s), Stage::Refused { .. })).await;
    let shown = screen(s, 100, 30);
    assert!(shown.contains("Push refused"), "{shown}");
    assert!(shown.contains("zz-summary was not pushed:"), "{shown}");
    let Stage::Refused { lines, .. } = stage(s) else {
        unreachable!()
    };
    assert_eq!(
        lines[0],
        "TrustGraph's prompt service would not load the workspace this push leaves; nothing was written:"
    );
    assert!(lines[1].starts_with("template.zz-summary: "), "{lines:?}");
    assert!(
        lines[1].contains("extract-definitions would serve, zz-summary would fail"),
        "{lines:?}"
    );
    assert_eq!(
        env.live("template.zz-summary"),
        other_live,
        "a refused push writes nothing"
    );
    let _ = super::tui_support::send(s, [ch('x')]);
    assert_eq!(s.mode, Mode::Normal, "any key closes the refusal");
    set_local(&dir.join("default.json"), "template.zz-summary", &other_live);
}
