//! Fixed prompts, responses and states for the workbench tests: no network,
//! no model, no terminal.
#![allow(dead_code, reason = "shared by several test binaries; each uses a part")]

use std::path::PathBuf;
use std::sync::Arc;

use cutline::llm::FinishReason;
use cutline::prompt::{Origin, PromptConfig, ResponseType, SampleInput};
use cutline::tui::event::{Effect, Event, RunEnd, RunMsg};
use cutline::tui::keymap::Keymap;
use cutline::tui::run::Analysers;
use cutline::tui::run::Shown;
use cutline::tui::run::{RunView, schemas_for};
use cutline::tui::state::State;
use cutline::tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value, json};

/// A truncated JSON array: three complete elements (one CJK + emoji), the
/// fourth cut mid-key.
pub const TRUNCATED_ARRAY: &str = "[\n  {\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar from light\"},\n  {\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"},\n  {\"entity\": \"光合作用\", \"definition\": \"日本語の説明 😀\"},\n  {\"entity\": \"stomata\", \"defin";

/// The same items as JSONL, with a schema-invalid line, a line that is not
/// JSON, and the same cut at the end.
pub const JSONL_WITH_ERRORS: &str = "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar from light\"}\n{\"entity\": \"chlorophyll\"}\nnot json at all\n{\"entity\": \"光合作用\", \"definition\": \"日本語の説明 😀\"}\n{\"entity\": \"stomata\", \"defin";

/// A complete, valid JSON array.
pub const VALID_ARRAY: &str = "[\n  {\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar from light\"},\n  {\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}\n]";

/// Valid JSONL.
pub const VALID_JSONL: &str = "{\"entity\": \"photosynthesis\", \"definition\": \"how plants make sugar from light\"}\n{\"entity\": \"chlorophyll\", \"definition\": \"the green pigment\"}\n";

/// Item schema.
pub fn item_schema() -> Value {
    json!({"type": "object", "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["entity", "definition"]})
}

fn input() -> SampleInput {
    let mut vars = Map::new();
    vars.insert("text".into(), Value::String("Plants turn light into sugar.".into()));
    SampleInput {
        name: "photosynthesis".into(),
        vars,
    }
}

/// The JSON-array prompt.
pub fn json_prompt() -> PromptConfig {
    PromptConfig {
        id: "extract-definitions".into(),
        description: "Definitions as one JSON array".into(),
        system: "You extract definitions.".into(),
        template: "Extract definitions from:\n{{ text }}\nJSON:".into(),
        response_type: ResponseType::Json,
        schema: Some(json!({"type": "array", "items": item_schema()})),
        inputs: vec![input()],
        twin: Some("extract-definitions-jsonl".into()),
        origin: Origin {
            file: "prompts/extract-definitions.toml".into(),
            ..Origin::default()
        },
        ..PromptConfig::default()
    }
}

/// Its JSONL twin.
pub fn jsonl_prompt() -> PromptConfig {
    PromptConfig {
        id: "extract-definitions-jsonl".into(),
        description: "Definitions, one JSON object per line".into(),
        template: "Extract definitions from:\n{{ text }}\nJSONL:".into(),
        response_type: ResponseType::Jsonl,
        schema: Some(item_schema()),
        inputs: vec![input()],
        twin: Some("extract-definitions".into()),
        origin: Origin {
            file: "prompts/extract-definitions-jsonl.toml".into(),
            ..Origin::default()
        },
        ..PromptConfig::default()
    }
}

/// A JSONL prompt whose lines are a `type`-discriminated union.
pub fn union_prompt() -> PromptConfig {
    PromptConfig {
        id: "extract-graph-jsonl".into(),
        description: "Definitions and relationships, tagged by type".into(),
        template: "{{ text }}".into(),
        response_type: ResponseType::Jsonl,
        schema: Some(json!({"oneOf": [
            {"type": "object", "properties": {"type": {"const": "definition"}, "entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["type", "entity", "definition"]},
            {"type": "object", "properties": {"type": {"const": "relationship"}, "subject": {"type": "string"}, "predicate": {"type": "string"}, "object": {"type": "string"}}, "required": ["type", "subject", "predicate", "object"]}
        ]})),
        inputs: vec![input()],
        origin: Origin {
            file: "prompts/extract-graph-jsonl.toml".into(),
            ..Origin::default()
        },
        ..PromptConfig::default()
    }
}

/// A fresh state, colourless, 100×30, with the three prompts loaded.
pub fn state() -> State {
    let mut s = State::new(
        PathBuf::from("prompts"),
        PathBuf::from("sessions"),
        Keymap::defaults(),
        Theme { color: false },
    );
    s.size = (100, 30);
    s.local_installed = Some(false);
    let _ = cutline::tui::update(
        &mut s,
        Event::PromptsLoaded {
            prompts: vec![json_prompt(), jsonl_prompt(), union_prompt()],
            errors: Vec::new(),
            warnings: Vec::new(),
        },
    );
    let _ = cutline::tui::update(&mut s, Event::SessionsLoaded(Vec::new()));
    // The panes' snapshots show their own hints; the first screen's guide
    // has its own test.
    s.first_screen = None;
    s
}

/// A key press.
pub fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// A character key press.
pub fn ch(c: char) -> Event {
    key(KeyCode::Char(c))
}

/// Ctrl + a character.
pub fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

/// Send events in order; return every effect.
pub fn send(s: &mut State, events: impl IntoIterator<Item = Event>) -> Vec<Effect> {
    events.into_iter().flat_map(|e| cutline::tui::update(s, e)).collect()
}

/// Split `text` into token-ish pieces of about `n` characters (never inside
/// a character).
pub fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

/// A finished run of `prompt` from fixed text, cut into pieces of 4 chars.
pub fn finished(id: u64, prompt: &PromptConfig, text: &str, finish: FinishReason) -> RunView {
    let schemas = Arc::new(schemas_for(prompt));
    let p = pieces(text, 4);
    let mut v = RunView::from_text(
        id,
        prompt,
        schemas,
        text,
        Some(&p),
        finish,
        cutline::output::tg::TgPython::default(),
    );
    v.provider = "replay".into();
    v.max_tokens = Some(u32::try_from(p.len()).unwrap());
    v.elapsed_ms = 1234;
    v
}

/// Show one finished run.
pub fn show(s: &mut State, v: RunView) {
    s.shown = Some(Shown::Single(Box::new(v)));
    s.tab = cutline::tui::state::Tab::Run;
}

/// The stream messages a run of `text` produces, in pieces of `n` chars,
/// then its end.
pub fn stream(prompt: &PromptConfig, text: &str, n: usize, finish: FinishReason) -> (Vec<RunMsg>, RunMsg) {
    let schemas = schemas_for(prompt);
    let mut an = Analysers::new(&schemas, cutline::output::tg::TgPython::default());
    let ps = pieces(text, n);
    let msgs = ps.iter().map(|p| an.feed(p, std::slice::from_ref(p))).collect();
    let (json, jsonl) = an.finish();
    let end = RunMsg::Done(Box::new(RunEnd {
        json,
        jsonl,
        finish,
        usage: cutline::llm::Usage {
            prompt_tokens: Some(20),
            completion_tokens: u32::try_from(ps.len()).ok(),
            ..Default::default()
        },
        total_ms: 2500,
        structured_path: cutline::llm::structured::Path::None,
        error: None,
        recorded: None,
        notes: Vec::new(),
        token_ids: None,
        continuation_token: None,
    }));
    (msgs, end)
}

/// Draw the state on a `w`×`h` test terminal; the screen as text.
pub fn screen(s: &State, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| cutline::tui::draw(f, s)).unwrap();
    t.backend().to_string()
}

/// A run of an eval as the engine summarises it: `items` kept of `judged`
/// values, cut when `cut`, failed with a provider error when `error`.
pub fn eval_summary(
    prompt: &PromptConfig,
    input: &str,
    limit: Option<u32>,
    (items, judged): (usize, usize),
    cut: bool,
    error: Option<&str>,
) -> cutline::eval::RunSummary {
    let gold = (prompt.id == "extract-definitions").then_some(cutline::eval::GoldCounts {
        true_positives: items.min(3),
        predicted: items,
        gold: 4,
    });
    cutline::eval::RunSummary {
        key: format!("{}:{input}:{limit:?}", prompt.id),
        prompt: prompt.id.clone(),
        response_type: prompt.response_type,
        input: input.into(),
        max_tokens: limit,
        skipped: false,
        finish_reason: if error.is_some() {
            FinishReason::Error
        } else if cut {
            FinishReason::Length
        } else {
            FinishReason::Stop
        },
        items,
        judged,
        valid: items,
        invalid: judged - items,
        truncated: cut,
        parse_ok: !cut && items == judged,
        salvaged: items,
        gold: if error.is_some() { None } else { gold },
        loss: None,
        completion_tokens: Some(40),
        reasoning_tokens: None,
        reasoning_estimated: false,
        prompt_tokens: Some(100),
        cached_tokens: None,
        checks: Vec::new(),
        loop_repeats: None,
        repeats_dropped: 0,
        total_ms: 500,
        error: error.map(|e| cutline::llm::LlmError::new(cutline::llm::ErrorKind::BadRequest, e)),
        run_id: format!("eval-x#{input}"),
    }
}

/// The plan of an eval of the JSON prompt and its twin over `inputs`
/// inputs at `limits`, with `skipped` already recorded.
pub fn eval_plan(
    inputs: usize,
    limits: usize,
    skipped: Vec<cutline::eval::RunSummary>,
) -> cutline::tui::event::EvalPlan {
    let prompts = [json_prompt(), jsonl_prompt()];
    cutline::tui::event::EvalPlan {
        session: "eval-0123456789ab".into(),
        path: "sessions/eval-0123456789ab.jsonl".into(),
        model: String::new(),
        runs: 2 * inputs * limits,
        skipped,
        prompts: prompts
            .iter()
            .map(|p| cutline::eval::TablePrompt {
                id: p.id.clone(),
                response_type: p.response_type,
                twin: p.twin.clone(),
            })
            .collect(),
        per_prompt: prompts.iter().map(|p| (p.id.clone(), inputs)).collect(),
        warnings: Vec::new(),
    }
}

/// Apply `effects` through the real runner, then feed its events back to
/// the reducer until `done(state)` holds (20 s at most; the panic shows the
/// status line).
pub async fn drive(
    s: &mut State,
    runner: &mut cutline::tui::runner::Runner,
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
    effects: Vec<Effect>,
    done: impl Fn(&State) -> bool,
) {
    for e in effects {
        runner.apply(e);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done(s) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let ev = tokio::time::timeout(left, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for the runner; status: {:?}", s.message))
            .expect("channel open");
        for e in cutline::tui::update(s, ev) {
            runner.apply(e);
        }
    }
}
