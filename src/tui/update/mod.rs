//! The reducer: `update(&mut State, Event) -> Vec<Effect>`. Pure — no IO, no
//! clock, no terminal — so every key can be tested without a terminal. Work
//! that needs IO (runs, saves, loading) goes out as [`Effect`]s and comes back
//! as [`Event`]s.

mod external;
mod remember;
mod report;
mod save_model;
mod search;

use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui_textarea::{CursorMove, Input, Key as TaKey};

use crate::llm::FinishReason;
use crate::llm::params::Structured;
use crate::llm::structured::Path as StructuredPath;
use crate::prompt::{PromptConfig, ResponseType};
use crate::run::Spec;
use crate::session::RunRecord;

use super::event::{Effect, Event, ProviderChoice, RunJob, RunMsg, Source, SweepData, SweepInput, SweepJob};
use super::keymap::Action;
use super::layout;
use super::panes;
use super::run_view::{self, Phase, RunView};
use super::state::{Editor, Field, FirstScreen, Mode, OutPane, Shown, State, SweepView, Tab, Target};

/// The default max-token limit that `-`/`+` start from when there is none.
pub const DEFAULT_LIMIT: u32 = 256;

/// Apply one event; return the work it asks for.
pub fn update(s: &mut State, ev: Event) -> Vec<Effect> {
    if matches!(ev, Event::Key(_) | Event::Mouse(_) | Event::Paste(_)) {
        s.first_screen = None;
    }
    match ev {
        Event::Key(k) => key(s, k),
        Event::Mouse(m) => mouse(s, m),
        Event::Paste(text) => super::paste::paste(s, &text),
        Event::EditedExternally { field, result } => external::edited(s, field, result),
        Event::ModelSaved(r) => save_model::saved(s, r),
        Event::Remembered(r) => remember::loaded(s, r),
        Event::ReportWritten(r) => report::written(s, r),
        Event::Resize(w, h) => {
            s.size = (w, h);
            Vec::new()
        }
        Event::Tick(ms) => tick(s, ms),
        Event::PromptsLoaded {
            prompts,
            errors,
            warnings,
        } => {
            let n = prompts.len();
            s.prompts.prompts = prompts;
            s.prompts.errors = errors;
            s.prompts.loaded = true;
            s.prompts.selected = s.prompts.selected.min(s.prompts.filtered().len().saturating_sub(1));
            if let Some(e) = s.prompts.errors.first() {
                s.error(format!("{} prompt file(s) did not load: {e}", s.prompts.errors.len()));
            } else if let Some(w) = warnings.first() {
                s.info(format!("warning: {w}"));
            } else if n == 0 {
                s.info(format!("no prompts in {}", s.prompts_dir.display()));
            }
            Vec::new()
        }
        Event::SessionsLoaded(sessions) => {
            let first = !s.sessions.loaded;
            s.sessions.sessions = sessions;
            s.sessions.loaded = true;
            if first {
                first_screen(s);
            }
            s.sessions.selected = s.sessions.selected.min(s.sessions.rows().len().saturating_sub(1));
            if let Target::Recording(a, b) = s.target
                && s.sessions.sessions.get(a).and_then(|x| x.runs.get(b)).is_none()
            {
                s.target = Target::None;
            }
            remember::restore_pin(s)
        }
        Event::Run { id, msg } => run_msg(s, id, msg),
        Event::Saved(r) => {
            match r {
                Ok(file) => {
                    if let Some(e) = &mut s.editor {
                        e.dirty = false;
                        if let Ok((p, _)) = e.config() {
                            e.base = p;
                        }
                    }
                    s.info(format!("saved {file}"));
                    return vec![Effect::LoadPrompts];
                }
                Err(e) => s.error(format!("not saved: {e}")),
            }
            Vec::new()
        }
        Event::SweepReady(data) => {
            sweep_ready(s, *data);
            Vec::new()
        }
        Event::LocalInstalled(yes) => {
            s.local_installed = Some(yes);
            Vec::new()
        }
        Event::ProvidersLoaded(r) => {
            providers_loaded(s, r);
            Vec::new()
        }
        Event::GoldLoaded { ids, result } => gold_loaded(s, &ids, result),
        Event::MigrateWritten(w) => migrate_written(s, w),
        Event::Terminate => quit(s),
    }
}

/// The clock moved: streaming runs' elapsed time follows it.
fn tick(s: &mut State, ms: u64) -> Vec<Effect> {
    s.clock_ms = ms;
    if let Some(shown) = &mut s.shown {
        for id in shown
            .runs()
            .iter()
            .filter(|r| r.live())
            .map(|r| r.id)
            .collect::<Vec<_>>()
        {
            if let Some(r) = shown.find_mut(id)
                && r.phase == Phase::Streaming
            {
                r.elapsed_ms = ms.saturating_sub(r.started_ms);
            }
        }
    }
    Vec::new()
}

fn quit(s: &mut State) -> Vec<Effect> {
    s.quit = true;
    let mut out = cancel_live(s);
    out.push(remember::on_quit(s));
    out.push(Effect::Quit);
    out
}

/// The quit key: with unsaved edits it asks first, and quits when `asked`
/// says the question was just put.
fn quit_asking(s: &mut State, asked: Option<super::state::Confirm>) -> Vec<Effect> {
    let dirty = s.editor.as_ref().is_some_and(|e| e.dirty);
    if dirty && asked != Some(super::state::Confirm::QuitUnsaved) {
        s.error(format!(
            "unsaved edits: {} again quits without saving, {} saves",
            s.keymap.key_for(Action::Quit),
            s.keymap.key_for(Action::Save)
        ));
        s.confirm = Some(super::state::Confirm::QuitUnsaved);
        return Vec::new();
    }
    quit(s)
}

fn key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    if k.kind == KeyEventKind::Release {
        return Vec::new();
    }
    if k.modifiers.contains(KeyModifiers::CONTROL) && matches!(k.code, KeyCode::Char('c' | 'C')) {
        return quit(s);
    }
    if s.help {
        s.help = false;
        return Vec::new();
    }
    // A question is answered by the very next key, or dropped.
    let asked = s.confirm.take();
    if s.mode == Mode::Normal && s.keymap.action(&k) == Some(Action::Quit) {
        return quit_asking(s, asked);
    }
    match s.mode {
        Mode::Search(..) => search::key(s, k),
        Mode::Filter => filter_key(s, k),
        Mode::LimitInput => limit_key(s, k),
        Mode::Insert => insert_key(s, k),
        Mode::Picker => picker_key(s, k),
        Mode::ModelInput => model_key(s, k),
        Mode::Normal => {
            // While a search lasts, n / N move between its hits.
            if let KeyCode::Char(c @ ('n' | 'N')) = k.code
                && !k.modifiers.contains(KeyModifiers::CONTROL)
                && search::step(s, c == 'n')
            {
                return Vec::new();
            }
            match s.keymap.action(&k) {
                Some(a) => action(s, a),
                None => Vec::new(),
            }
        }
    }
}

fn filter_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    match k.code {
        KeyCode::Esc => {
            s.prompts.filter.clear();
            s.mode = Mode::Normal;
        }
        KeyCode::Enter => s.mode = Mode::Normal,
        KeyCode::Backspace => {
            s.prompts.filter.pop();
        }
        KeyCode::Up => s.prompts.selected = s.prompts.selected.saturating_sub(1),
        KeyCode::Down => s.prompts.selected += 1,
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => s.prompts.filter.push(c),
        _ => {}
    }
    s.prompts.selected = s.prompts.selected.min(s.prompts.filtered().len().saturating_sub(1));
    Vec::new()
}

fn limit_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    match k.code {
        KeyCode::Esc => {
            s.limit_input.clear();
            s.mode = Mode::Normal;
        }
        KeyCode::Enter => {
            let text = std::mem::take(&mut s.limit_input);
            s.mode = Mode::Normal;
            match text.trim().parse::<u32>() {
                Ok(0) => set_limit(s, None),
                Ok(n) => set_limit(s, Some(n)),
                Err(_) if text.trim().is_empty() => set_limit(s, None),
                Err(_) => s.error(format!("not a number of tokens: {text:?}")),
            }
        }
        KeyCode::Backspace => {
            s.limit_input.pop();
        }
        KeyCode::Char(c) if c.is_ascii_digit() && s.limit_input.len() < 9 => s.limit_input.push(c),
        _ => {}
    }
    Vec::new()
}

fn set_limit(s: &mut State, limit: Option<u32>) {
    s.max_tokens = limit;
    match limit {
        Some(n) => s.info(format!("max tokens: {n} (r runs)")),
        None => s.info("no max-token limit (r runs)"),
    }
}

fn insert_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    if k.code == KeyCode::Esc {
        s.mode = Mode::Normal;
        return Vec::new();
    }
    if s.keymap.action(&k) == Some(Action::Save)
        || (k.code == KeyCode::Char('s') && k.modifiers == KeyModifiers::CONTROL)
    {
        return save(s);
    }
    if s.keymap.action(&k) == Some(Action::ExternalEdit) {
        return external::open(s);
    }
    let Some(e) = &mut s.editor else {
        s.mode = Mode::Normal;
        return Vec::new();
    };
    if e.area_mut().input(Input::from(k)) {
        e.dirty = true;
        e.revalidate();
    }
    Vec::new()
}

fn action(s: &mut State, a: Action) -> Vec<Effect> {
    match a {
        Action::Quit => return quit_asking(s, None),
        Action::Help => s.help = true,
        Action::NextTab => s.tab = Tab::ALL[(s.tab.index() + 1) % Tab::ALL.len()],
        Action::PrevTab => s.tab = Tab::ALL[(s.tab.index() + Tab::ALL.len() - 1) % Tab::ALL.len()],
        Action::GoTab(n) => return go_tab(s, Tab::ALL[usize::from(n.clamp(1, 7)) - 1]),
        Action::Up => move_by(s, -1),
        Action::Down => move_by(s, 1),
        Action::PageUp => move_by(s, -page(s)),
        Action::PageDown => move_by(s, page(s)),
        Action::Top => move_by(s, isize::MIN / 2),
        Action::Bottom => move_by(s, isize::MAX / 2),
        Action::Left | Action::Right | Action::BigLeft | Action::BigRight => horizontal(s, a),
        Action::FocusNext => focus(s, 1),
        Action::FocusPrev => focus(s, -1),
        Action::Open => return open(s),
        Action::Edit => edit(s),
        Action::Filter => {
            if !search::start(s) {
                s.tab = Tab::Prompts;
                s.mode = Mode::Filter;
            }
        }
        Action::Run => return run(s),
        Action::Twins if s.tab == Tab::Migrate => return migrate_twins(s),
        Action::Twins => return twins(s),
        Action::Cancel => {
            let out = cancel_live(s);
            if out.is_empty() {
                search::end(s);
                s.message = None;
            } else {
                s.info("cancelled; what arrived is kept");
            }
            return out;
        }
        Action::Sweep => return sweep(s),
        Action::LimitDown => {
            let cur = s.max_tokens.unwrap_or(DEFAULT_LIMIT + s.limit_step);
            set_limit(s, Some(cur.saturating_sub(s.limit_step).max(1)));
        }
        Action::LimitUp => {
            let cur = s.max_tokens.unwrap_or(DEFAULT_LIMIT - s.limit_step);
            set_limit(s, Some(cur.saturating_add(s.limit_step)));
        }
        Action::LimitType => {
            s.limit_input.clear();
            s.mode = Mode::LimitInput;
        }
        Action::LimitNone => set_limit(s, None),
        Action::Provider => return open_picker(s),
        Action::Migrate => {
            migrate_selected(s);
            s.tab = Tab::Migrate;
        }
        Action::MigrateWrite => return migrate_write(s),
        Action::Pin => pin(s),
        Action::Copy => return copy(s),
        Action::Continue => return continue_run(s),
        Action::ExternalEdit => return external::open(s),
        Action::Report => return report::write(s),
        Action::Structured => cycle_structured(s),
        Action::Save => return save(s),
        Action::Rendered => {
            if let Some(e) = &mut s.editor {
                e.show_rendered = !e.show_rendered;
                s.tab = Tab::Edit;
            } else {
                s.info("open a prompt first (Enter on the prompt list)");
            }
        }
        Action::NextInput => {
            let theme = s.theme;
            match s.editor.as_mut().map(|e| e.next_input(theme)) {
                Some(Some(name)) => s.info(format!("sample input: {name}")),
                Some(None) => s.info("this prompt has no sample inputs"),
                None => s.info("open a prompt first (Enter on the prompt list)"),
            }
        }
        Action::Reload => {
            s.info("reloading prompts and sessions");
            return vec![Effect::LoadPrompts, Effect::LoadSessions];
        }
    }
    Vec::new()
}

fn go_tab(s: &mut State, t: Tab) -> Vec<Effect> {
    if t == Tab::Migrate && s.tab != Tab::Migrate {
        // Migrate what was chosen before switching (the selection, or the
        // editor's prompt); keep the view (scroll, pending confirm) when it
        // is the same prompt unchanged.
        let src = migrate_source(s);
        s.tab = t;
        if src.is_none() || s.migrate.as_ref().map(|m| &m.source) != src.as_ref() {
            migrate_selected_from(s, src);
        }
    }
    s.tab = t;
    if t == Tab::Compare {
        return refresh_compare(s);
    }
    if t == Tab::Sweep
        && s.sweep.is_none()
        && !s.sweep_pending
        && let Some(e) = sweep_effect(s)
    {
        return vec![e];
    }
    Vec::new()
}

fn page(s: &State) -> isize {
    let h = usize::from(layout::screen(layout::full(s)).body.height).saturating_sub(4);
    isize::try_from(h.max(1)).unwrap_or(1)
}

fn step(v: usize, by: isize, len: usize) -> usize {
    let max = len.saturating_sub(1);
    let next = if by < 0 {
        v.saturating_sub(by.unsigned_abs())
    } else {
        v.saturating_add(by.unsigned_abs())
    };
    next.min(max)
}

fn move_by(s: &mut State, by: isize) {
    match s.tab {
        Tab::Prompts => {
            let n = s.prompts.filtered().len();
            s.prompts.selected = step(s.prompts.selected, by, n);
        }
        Tab::Sessions => {
            let n = s.sessions.rows().len();
            s.sessions.selected = step(s.sessions.selected, by, n);
        }
        Tab::Edit => {
            if let Some(e) = &mut s.editor {
                let a = e.area_mut();
                let m = if by < 0 { CursorMove::Up } else { CursorMove::Down };
                if by.unsigned_abs() > 1_000_000 {
                    a.move_cursor(if by < 0 { CursorMove::Top } else { CursorMove::Bottom });
                } else {
                    for _ in 0..by.unsigned_abs() {
                        a.move_cursor(m);
                    }
                }
            }
        }
        Tab::Run | Tab::Sweep => scroll_pane(s, s.focus_in_tab(), by),
        Tab::Migrate => {
            if let Some(m) = &mut s.migrate {
                m.top = step(m.top, by, panes::migrate::rows(&m.source, &m.result).len());
            }
        }
        Tab::Compare => {
            let n = match &s.compare.report {
                Some(Ok(r)) => panes::compare::lines(r, &s.compare.labels, None, s.theme).len() + 8,
                _ => 1,
            };
            s.compare.top = step(s.compare.top, by, n);
        }
    }
}

impl State {
    /// The focused pane, within the panes the current tab has.
    pub fn focus_in_tab(&self) -> OutPane {
        let twins = self.shown.as_ref().is_some_and(Shown::twins);
        match (self.tab, self.focus) {
            (Tab::Sweep, OutPane::Response | OutPane::Response2) => OutPane::Json,
            (_, OutPane::Response2) if !twins => OutPane::Response,
            (_, f) => f,
        }
    }
}

/// Scroll `pane` by `by` rows; scrolling to the end follows new rows.
pub fn scroll_pane(s: &mut State, pane: OutPane, by: isize) {
    let rows = panes::rows(s, pane);
    let height = layout::inner_height(layout::pane_rect(s, pane));
    let max = rows.saturating_sub(height);
    let sc = s.scroll_mut(pane);
    let cur = sc.top_for(rows, height);
    let next = if by < 0 {
        cur.saturating_sub(by.unsigned_abs())
    } else {
        cur.saturating_add(by.unsigned_abs()).min(max)
    };
    sc.top = next;
    sc.follow = next >= max && by > 0;
}

fn horizontal(s: &mut State, a: Action) {
    let by: isize = match a {
        Action::Left => -1,
        Action::Right => 1,
        Action::BigLeft => -10,
        _ => 10,
    };
    match s.tab {
        Tab::Sweep => {
            if let Some(sw) = &s.sweep {
                let max = sw.max_tokens();
                let k = if by < 0 {
                    sw.cursor.saturating_sub(by.unsigned_abs())
                } else {
                    (sw.cursor + by.unsigned_abs()).min(max)
                };
                set_cursor(s, k);
            }
        }
        Tab::Edit | Tab::Run => focus(s, by.signum()),
        _ => {}
    }
}

fn focus(s: &mut State, dir: isize) {
    if s.tab == Tab::Edit {
        if let Some(e) = &mut s.editor {
            let i = (e.field.index() + if dir < 0 { 3 } else { 1 }) % 4;
            e.field = Field::ALL[i];
        }
        return;
    }
    let twins = s.shown.as_ref().is_some_and(Shown::twins);
    let order: Vec<OutPane> = match (s.tab, twins) {
        (Tab::Sweep, _) => vec![OutPane::Json, OutPane::Jsonl],
        (_, true) => vec![OutPane::Response, OutPane::Response2, OutPane::Json, OutPane::Jsonl],
        (_, false) => vec![OutPane::Response, OutPane::Json, OutPane::Jsonl],
    };
    let cur = order.iter().position(|p| *p == s.focus_in_tab()).unwrap_or(0);
    let n = order.len();
    let next = if dir < 0 { (cur + n - 1) % n } else { (cur + 1) % n };
    s.focus = order[next];
}

fn open_prompt(s: &mut State) -> bool {
    let Some(p) = s.prompts.selected_prompt().cloned() else {
        s.info("no prompt selected");
        return false;
    };
    let same = s
        .editor
        .as_ref()
        .is_some_and(|e| e.base.id == p.id && e.base.origin == p.origin);
    if !same {
        s.editor = Some(Editor::new(&p, s.theme));
    }
    s.target = Target::Prompt;
    true
}

fn open(s: &mut State) -> Vec<Effect> {
    let tab = s.tab;
    if tab == Tab::Prompts && open_prompt(s) {
        s.tab = Tab::Edit;
    } else if tab == Tab::Edit {
        edit(s);
    } else if tab == Tab::Sessions {
        open_recording(s);
    }
    Vec::new()
}

fn edit(s: &mut State) {
    if s.tab == Tab::Prompts && !open_prompt(s) {
        return;
    }
    if s.editor.is_some() {
        s.tab = Tab::Edit;
        s.mode = Mode::Insert;
    } else {
        s.info("open a prompt first (Enter on the prompt list)");
    }
}

/// The prompt a recorded run was made with: its snapshot, else the loaded
/// prompt of that id, else a bare one of the recorded response type.
pub fn prompt_of_record(s: &State, rec: &RunRecord) -> PromptConfig {
    if let Ok(p) = rec.prompt_config() {
        return p;
    }
    if let Some(p) = s.prompts.by_id(&rec.prompt_id) {
        return p.clone();
    }
    PromptConfig {
        id: rec.prompt_id.clone(),
        response_type: ResponseType::parse(&rec.response_type).unwrap_or_default(),
        schema: rec.prompt.get("schema").filter(|v| v.is_object()).cloned(),
        ..PromptConfig::default()
    }
}

/// A recorded run as a finished view (its recorded reference set).
fn view_of_record(s: &mut State, si: usize, ri: usize) -> Result<RunView, String> {
    let rec = s.sessions.sessions[si].runs[ri].clone();
    let prompt = prompt_of_record(s, &rec);
    let schemas = Arc::new(run_view::schemas_for(&prompt)?);
    let id = s.next_id;
    s.next_id += 1;
    let t = rec.transcript();
    let pieces: Vec<String> = t.pieces.iter().map(|p| p.text.clone()).collect();
    let mut v = RunView::from_text(
        id,
        &prompt,
        schemas,
        &rec.text,
        t.has_token_pieces().then_some(pieces.as_slice()),
        rec.finish,
    );
    v.provider.clone_from(&rec.provider.name);
    v.max_tokens = rec.params.max_tokens;
    v.usage = rec.usage;
    v.elapsed_ms = rec.total_ms;
    v.structured_path.clone_from(&rec.structured_path);
    v.note = Some(format!("recorded {}", reference(s, si, ri)));
    v.recorded = Some(reference(s, si, ri));
    if let Some(e) = &rec.error {
        v.phase = Phase::Failed(e.to_string());
    }
    Ok(v)
}

fn open_recording(s: &mut State) {
    let Some((si, Some(ri))) = s.sessions.selected_row() else {
        s.info("select a run (↓) to open it");
        return;
    };
    let _ = cancel_live(s);
    let v = match view_of_record(s, si, ri) {
        Ok(v) => v,
        Err(e) => {
            s.error(e);
            return;
        }
    };
    show(s, Shown::Single(Box::new(v)));
    s.target = Target::Recording(si, ri);
    s.tab = Tab::Run;
    s.info(format!(
        "opened {}; r replays it at the current limit ({})",
        reference(s, si, ri),
        limit_label(s.max_tokens)
    ));
}

fn reference(s: &State, si: usize, ri: usize) -> String {
    s.sessions.sessions[si].reference(ri)
}

/// A limit as people read it.
pub fn limit_label(l: Option<u32>) -> String {
    l.map_or_else(|| "no limit".into(), |n| format!("{n} tokens"))
}

fn show(s: &mut State, shown: Shown) {
    s.shown = Some(shown);
    s.sweep = None;
    s.sweep_pending = false;
    s.scroll_response = super::state::Scroll::following();
    s.scroll_response2 = super::state::Scroll::following();
    s.scroll_json = super::state::Scroll::following();
    s.scroll_jsonl = super::state::Scroll::following();
}

fn cancel_live(s: &mut State) -> Vec<Effect> {
    let Some(shown) = &mut s.shown else {
        return Vec::new();
    };
    let ids: Vec<u64> = shown.runs().iter().filter(|r| r.live()).map(|r| r.id).collect();
    for id in &ids {
        if let Some(r) = shown.find_mut(*id) {
            r.phase = Phase::Cancelled;
        }
    }
    ids.into_iter().map(Effect::Cancel).collect()
}

fn new_job(s: &mut State, prompt: &PromptConfig, source: Source) -> Result<(RunView, Effect), String> {
    let schemas = Arc::new(run_view::schemas_for(prompt)?);
    let id = s.next_id;
    s.next_id += 1;
    let provider = match source {
        Source::Recording { .. } => ProviderChoice::Replay,
        Source::Prompt(_) => s.provider.clone(),
    };
    let mut view = RunView::starting(id, prompt, schemas.clone(), provider.label(), s.max_tokens);
    view.started_ms = s.clock_ms;
    let job = RunJob {
        id,
        provider,
        source,
        schemas,
        max_tokens: s.max_tokens,
        sessions_dir: s.sessions_dir.clone(),
        prefill: String::new(),
    };
    Ok((view, Effect::Start(Box::new(job))))
}

fn spec(s: &State, prompt: PromptConfig, vars: serde_json::Map<String, serde_json::Value>) -> Spec {
    let mut spec = Spec::new(prompt, vars).limit(s.max_tokens);
    spec.cli.structured = s.structured.map(|p| match p {
        StructuredPath::Native | StructuredPath::NativeWrapped | StructuredPath::Grammar => Structured::Native,
        StructuredPath::Prompt => Structured::Prompt,
        StructuredPath::None => Structured::Off,
    });
    spec
}

/// The first screen without a local model says in one line what to do:
/// replay the recorded twins, or install the model.
fn first_screen(s: &mut State) {
    if s.local_installed != Some(false) || s.shown.is_some() {
        return;
    }
    s.first_screen = Some(if s.sessions.sessions.iter().any(|x| !x.runs.is_empty()) {
        FirstScreen::Replay
    } else {
        FirstScreen::Install
    });
}

/// What `y` copies: the focused response's text, or (in a parse pane) the
/// items the run's consumer kept, one JSON value per line (a JSON answer's
/// strict items, else the elements salvage recovered).
fn copy(s: &mut State) -> Vec<Effect> {
    let run = match &s.shown {
        Some(Shown::Single(r)) => r.as_ref(),
        Some(Shown::Twins { json, jsonl }) => {
            if matches!(s.focus, OutPane::Response2 | OutPane::Jsonl) {
                jsonl.as_ref()
            } else {
                json.as_ref()
            }
        }
        None => {
            s.info(rust_i18n::t!("tui.status.nothing_to_copy").into_owned());
            return Vec::new();
        }
    };
    let (what, text) = match s.focus {
        OutPane::Json | OutPane::Jsonl => {
            let items: &[serde_json::Value] = match (&run.json, run.response_type) {
                (Some(a), ResponseType::Json) if a.items.is_empty() => &a.salvaged,
                (Some(a), ResponseType::Json) => &a.items,
                _ => &run.jsonl.items,
            };
            let lines: Vec<String> = items.iter().map(serde_json::Value::to_string).collect();
            (
                rust_i18n::t!("tui.status.copied_items", n = items.len()),
                lines.join("\n"),
            )
        }
        OutPane::Response | OutPane::Response2 => (rust_i18n::t!("tui.status.copied_response"), run.text.clone()),
    };
    s.info(rust_i18n::t!("tui.status.copied", what = what, bytes = text.len()).into_owned());
    vec![Effect::Copy(text)]
}

/// Structured output: off → native → prompt → off.
fn cycle_structured(s: &mut State) {
    s.structured = match s.structured {
        None => Some(StructuredPath::Native),
        Some(StructuredPath::Native) => Some(StructuredPath::Prompt),
        Some(_) => None,
    };
    s.info(format!(
        "structured output: {} (native on a JSONL prompt: a grammar on llama-server)",
        s.structured_label()
    ));
}

/// `c`: run the selected prompt again from the JSONL answer on show, which
/// the limit cut: the new run starts from its text (its complete lines,
/// for a provider that cannot prefill) and goes on under the same limit.
fn continue_run(s: &mut State) -> Vec<Effect> {
    let Some(Shown::Single(r)) = &s.shown else {
        s.info(rust_i18n::t!("tui.status.continue_what").into_owned());
        return Vec::new();
    };
    if r.live() || r.finish != Some(FinishReason::Length) || r.response_type != ResponseType::Jsonl {
        s.info(rust_i18n::t!("tui.status.continue_what").into_owned());
        return Vec::new();
    }
    let (prefill, prompt_id) = (r.text.clone(), r.prompt_id.clone());
    let mut out = run(s);
    let started = out.iter_mut().find_map(|e| match e {
        Effect::Start(job) => Some(job),
        _ => None,
    });
    match started {
        Some(job) if matches!(&s.shown, Some(Shown::Single(v)) if v.prompt_id == prompt_id) => {
            job.prefill = prefill;
            s.info(rust_i18n::t!("tui.status.continuing").into_owned());
        }
        Some(_) => {
            s.info(rust_i18n::t!("tui.status.continue_what").into_owned());
            return cancel_live(s);
        }
        None => {}
    }
    out
}

fn local_guard(s: &mut State) -> bool {
    if s.provider == ProviderChoice::Local && s.local_installed == Some(false) {
        s.error(format!("local model not installed: {}", crate::llm::local::SETUP_HINT));
        return false;
    }
    true
}

fn run(s: &mut State) -> Vec<Effect> {
    if s.tab == Tab::Prompts && !open_prompt(s) {
        return Vec::new();
    }
    if s.tab == Tab::Sessions
        && let Some((si, Some(ri))) = s.sessions.selected_row()
    {
        s.target = Target::Recording(si, ri);
    }
    let mut out = Vec::new();
    match s.target.clone() {
        Target::None => {
            s.info("choose a prompt (1, Enter) or a recorded run (5, Enter) first");
            return out;
        }
        Target::Prompt => {
            if !local_guard(s) {
                return out;
            }
            let Some(e) = &s.editor else { return out };
            let (prompt, vars) = match e.config() {
                Ok(x) => x,
                Err(err) => {
                    s.error(format!("cannot run: {err}"));
                    return out;
                }
            };
            let source = Source::Prompt(Box::new(spec(s, prompt.clone(), vars)));
            match new_job(s, &prompt, source) {
                Ok((view, eff)) => {
                    out.extend(cancel_live(s));
                    show(s, Shown::Single(Box::new(view)));
                    out.push(eff);
                }
                Err(err) => s.error(err),
            }
        }
        Target::Recording(si, ri) => {
            let Some(rec) = s.sessions.sessions.get(si).and_then(|x| x.runs.get(ri)).cloned() else {
                s.target = Target::None;
                return out;
            };
            let prompt = prompt_of_record(s, &rec);
            let reference = reference(s, si, ri);
            let source = Source::Recording {
                record: Box::new(rec),
                reference,
            };
            match new_job(s, &prompt, source) {
                Ok((view, eff)) => {
                    out.extend(cancel_live(s));
                    show(s, Shown::Single(Box::new(view)));
                    out.push(eff);
                }
                Err(err) => s.error(err),
            }
        }
    }
    if s.tab != Tab::Sweep {
        s.tab = Tab::Run;
    }
    out
}

fn twins(s: &mut State) -> Vec<Effect> {
    if s.tab == Tab::Prompts && !open_prompt(s) {
        return Vec::new();
    }
    let Some(e) = &s.editor else {
        s.info("open a prompt with a twin first (Enter on the prompt list)");
        return Vec::new();
    };
    let (prompt, vars) = match e.config() {
        Ok(x) => x,
        Err(err) => {
            s.error(format!("cannot run: {err}"));
            return Vec::new();
        }
    };
    let Some(twin_id) = prompt.twin.clone() else {
        s.error(format!(
            "prompt {:?} has no twin (set `twin = \"…\"` in its config)",
            prompt.id
        ));
        return Vec::new();
    };
    let Some(twin) = s.prompts.by_id(&twin_id).cloned() else {
        s.error(format!(
            "twin {twin_id:?} of {:?} is not in {}",
            prompt.id,
            s.prompts_dir.display()
        ));
        return Vec::new();
    };
    let (array_prompt, lines_prompt) = if prompt.response_type == ResponseType::Jsonl {
        (twin, prompt)
    } else {
        (prompt, twin)
    };
    run_pair(s, &array_prompt, &lines_prompt, vars)
}

/// Run a JSON-array prompt and a JSONL prompt as a pair on the same
/// variables and limit (the twins of `t`, or a migration's pair).
fn run_pair(
    s: &mut State,
    array_prompt: &PromptConfig,
    lines_prompt: &PromptConfig,
    vars: serde_json::Map<String, serde_json::Value>,
) -> Vec<Effect> {
    if !local_guard(s) {
        return Vec::new();
    }
    s.compare.line_schema = match lines_prompt.response_type {
        ResponseType::Jsonl => lines_prompt.schema.clone(),
        _ => lines_prompt
            .schema
            .as_ref()
            .and_then(crate::prompt::migrate::line_schema),
    };
    let a = new_job(
        s,
        array_prompt,
        Source::Prompt(Box::new(spec(s, array_prompt.clone(), vars.clone()))),
    );
    let b = new_job(
        s,
        lines_prompt,
        Source::Prompt(Box::new(spec(s, lines_prompt.clone(), vars))),
    );
    match (a, b) {
        (Ok((va, ea)), Ok((vb, eb))) => {
            let mut out = cancel_live(s);
            show(
                s,
                Shown::Twins {
                    json: Box::new(va),
                    jsonl: Box::new(vb),
                },
            );
            s.target = Target::Prompt;
            if s.tab != Tab::Sweep {
                s.tab = Tab::Run;
            }
            out.push(ea);
            out.push(eb);
            out
        }
        (Err(e), _) | (_, Err(e)) => {
            s.error(e);
            Vec::new()
        }
    }
}

fn save(s: &mut State) -> Vec<Effect> {
    let Some(e) = &s.editor else {
        s.info("nothing to save: no prompt is open");
        return Vec::new();
    };
    match e.config() {
        Ok((p, _)) => {
            if let Some(err) = e.errors.iter().flatten().next() {
                s.info(format!("saving with an error at line {}: {}", err.line, err.message));
            } else {
                s.info(format!("saving {}…", p.origin.file));
            }
            vec![Effect::Save(Box::new(p))]
        }
        Err(err) => {
            s.error(format!("cannot save: {err}"));
            Vec::new()
        }
    }
}

fn run_msg(s: &mut State, id: u64, msg: RunMsg) -> Vec<Effect> {
    let clock = s.clock_ms;
    let Some(r) = s.shown.as_mut().and_then(|x| x.find_mut(id)) else {
        return Vec::new();
    };
    if !r.live() {
        return Vec::new();
    }
    match msg {
        RunMsg::Started { provider, note, at_ms } => {
            r.provider = provider;
            r.note = note;
            r.started_ms = at_ms;
        }
        RunMsg::Delta {
            text,
            pieces,
            elements,
            lines,
        } => {
            r.push_delta(&text, &pieces, elements, lines);
            r.elapsed_ms = clock.saturating_sub(r.started_ms);
        }
        RunMsg::Done(end) => {
            let end = *end;
            r.elements.clone_from(&end.json.elements);
            r.json = Some(end.json);
            r.jsonl = end.jsonl;
            r.finish = Some(end.finish);
            r.usage = end.usage;
            r.elapsed_ms = end.total_ms;
            r.structured_path = end.structured_path;
            r.phase = match end.error {
                Some(e) => Phase::Failed(e),
                None => Phase::Done,
            };
            let failure = match &r.phase {
                Phase::Failed(e) => Some(e.clone()),
                _ => None,
            };
            let recorded = end.recorded.clone();
            r.recorded = end.recorded;
            let finish = end.finish;
            let notes = if end.notes.is_empty() {
                String::new()
            } else {
                format!("{}; ", end.notes.join("; "))
            };
            let mut out = Vec::new();
            if s.shown.as_ref().is_some_and(|x| !x.live())
                && (s.pinned.is_some() || s.shown.as_ref().is_some_and(Shown::twins))
            {
                out.extend(refresh_compare(s));
            }
            if let Some(e) = failure {
                // The provider failed midway: say why (what arrived is kept,
                // and recorded when it was).
                let kept = recorded
                    .as_ref()
                    .map(|r| format!(" (recorded as {r})"))
                    .unwrap_or_default();
                s.error(format!("run failed: {e}{kept}"));
                if recorded.is_some() {
                    out.push(Effect::LoadSessions);
                }
            } else if let Some(rec) = recorded {
                s.info(format!("{notes}recorded as {rec}"));
                out.push(Effect::LoadSessions);
            } else if finish == FinishReason::Length {
                s.info(format!(
                    "{notes}cut by the max-token limit: compare the JSON and JSONL panes; s sweeps"
                ));
            } else if !notes.is_empty() {
                s.info(notes.trim_end_matches("; ").to_owned());
            }
            if s.shown.as_ref().is_some_and(|x| !x.live()) && s.tab == Tab::Sweep {
                out.extend(sweep_effect(s));
            }
            return out;
        }
        RunMsg::Failed(e) => {
            r.phase = Phase::Failed(e.clone());
            s.error(e);
        }
    }
    Vec::new()
}

fn sweep_input(r: &RunView) -> SweepInput {
    SweepInput {
        id: r.id,
        text: r.text.clone(),
        boundaries: r.token_pieces.then(|| r.boundaries.clone()),
        schemas: r.schemas.clone(),
    }
}

fn sweep_effect(s: &mut State) -> Option<Effect> {
    let shown = s.shown.as_ref()?;
    if shown.live() {
        return None;
    }
    let job = SweepJob {
        json: sweep_input(shown.json_side()),
        jsonl: sweep_input(shown.jsonl_side()),
    };
    s.sweep_pending = true;
    Some(Effect::Sweep(Box::new(job)))
}

fn sweep(s: &mut State) -> Vec<Effect> {
    s.tab = Tab::Sweep;
    match &s.shown {
        None => {
            s.info("run a prompt first (r), then sweep");
            Vec::new()
        }
        Some(x) if x.live() => {
            s.info("the sweep starts when the run ends");
            Vec::new()
        }
        Some(x) => {
            if x.runs().iter().any(|r| r.finish == Some(FinishReason::Length)) {
                s.info(format!(
                    "the run was cut by its limit, so the sweep stops there; {} then {} runs with no limit, and {} sweeps it all",
                    s.keymap.key_for(Action::LimitNone),
                    s.keymap.key_for(Action::Run),
                    s.keymap.key_for(Action::Sweep)
                ));
            }
            sweep_effect(s).into_iter().collect()
        }
    }
}

fn sweep_ready(s: &mut State, data: SweepData) {
    s.sweep_pending = false;
    let Some(shown) = &s.shown else { return };
    if shown.json_side().id != data.json_id || shown.jsonl_side().id != data.jsonl_id {
        return;
    }
    let limit = shown
        .json_side()
        .max_tokens
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut view = SweepView {
        data,
        cursor: 0,
        json_cut: None,
        jsonl_cut: None,
    };
    let cursor = limit.unwrap_or(usize::MAX).min(view.max_tokens());
    view.cursor = cursor;
    s.sweep = Some(view);
    set_cursor(s, cursor);
}

/// Move the sweep cursor to `k` tokens and re-analyse both sides there.
pub fn set_cursor(s: &mut State, k: usize) {
    let (Some(sw), Some(shown)) = (&mut s.sweep, &s.shown) else {
        return;
    };
    let k = k.min(sw.max_tokens());
    sw.cursor = k;
    let at = |bounds: &[usize]| bounds.get(k.min(bounds.len().saturating_sub(1))).copied().unwrap_or(0);
    let a = shown.json_side();
    let b = shown.jsonl_side();
    let ca = run_view::cut(&a.text, at(&sw.data.json_bounds), k, &a.schemas);
    let cb = if a.id == b.id {
        ca.clone()
    } else {
        run_view::cut(&b.text, at(&sw.data.jsonl_bounds), k, &b.schemas)
    };
    sw.json_cut = Some(ca);
    sw.jsonl_cut = Some(cb);
    s.scroll_json = super::state::Scroll::following();
    s.scroll_jsonl = super::state::Scroll::following();
}

fn mouse(s: &mut State, m: MouseEvent) -> Vec<Effect> {
    match m.kind {
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let by: isize = if m.kind == MouseEventKind::ScrollUp { -3 } else { 3 };
            if let Some((pane, _)) = layout::pane_at(s, m.column, m.row) {
                scroll_pane(s, pane, by);
            } else if s.tab == Tab::Edit {
                if let Some(e) = &mut s.editor {
                    let key = if by < 0 {
                        TaKey::MouseScrollUp
                    } else {
                        TaKey::MouseScrollDown
                    };
                    e.area_mut().input(Input {
                        key,
                        ..Input::default()
                    });
                }
            } else {
                move_by(s, by.signum());
            }
        }
        MouseEventKind::Down(_) => {
            if m.row == 0 {
                if let Some(t) = layout::tab_at(m.column) {
                    return go_tab(s, t);
                }
            } else if let Some((pane, _)) = layout::pane_at(s, m.column, m.row) {
                s.focus = pane;
            }
        }
        _ => {}
    }
    Vec::new()
}

fn gold_loaded(
    s: &mut State,
    ids: &[String],
    result: Result<Option<(String, Vec<serde_json::Value>)>, String>,
) -> Vec<Effect> {
    if ids != s.compare.gold_for {
        return Vec::new();
    }
    match result {
        Ok(g) => {
            s.compare.gold = g;
            s.compare.gold_error = None;
        }
        Err(e) => {
            s.compare.gold = None;
            s.compare.gold_error = Some(e);
        }
    }
    refresh_compare(s)
}

fn pin(s: &mut State) {
    let key = s.keymap.key_for(Action::GoTab(7));
    match &s.shown {
        Some(Shown::Single(r)) if !r.live() => {
            let text = format!(
                "pinned {} ({}) as compare side A: run another prompt or limit, then {key} compares",
                r.prompt_id,
                limit_label(r.max_tokens)
            );
            s.pinned = Some(r.clone());
            s.info(text);
        }
        Some(Shown::Single(_)) => s.info("the run is still going: pin it when it ends"),
        Some(Shown::Twins { .. }) => s.info(format!("a pair is compared as it is: {key}")),
        None => s.info("nothing to pin: run a prompt first"),
    }
}

fn open_picker(s: &mut State) -> Vec<Effect> {
    s.mode = Mode::Picker;
    let cur = (0..s.picker.len()).find(|i| s.picker.choice(*i).is_some_and(|c| c.label() == s.provider.label()));
    s.picker.selected = cur.unwrap_or(0);
    // Re-read the config: an edit to cutline.toml shows at once.
    vec![Effect::LoadProviders]
}

fn picker_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    let n = s.picker.len();
    if k.code == KeyCode::Char('w') {
        return save_model::ask(s);
    }
    // Any other key drops a save that was not confirmed.
    s.picker.save = None;
    match (k.code, s.keymap.action(&k)) {
        (KeyCode::Esc, _) | (_, Some(Action::Quit | Action::Provider)) => s.mode = Mode::Normal,
        (KeyCode::Enter, _) => choose_provider(s),
        (KeyCode::Char('e'), _) => {
            if s.picker.selected < 2 {
                s.info("replay and local have no model to choose");
            } else {
                let e = &s.picker.entries[s.picker.selected - 2];
                s.picker.model_input = s.picker.model_of(e).unwrap_or_default();
                s.mode = Mode::ModelInput;
            }
        }
        (KeyCode::Up, _) | (_, Some(Action::Up)) => s.picker.selected = s.picker.selected.saturating_sub(1),
        (KeyCode::Down, _) | (_, Some(Action::Down)) => s.picker.selected = step(s.picker.selected, 1, n),
        (_, Some(Action::Top)) => s.picker.selected = 0,
        (_, Some(Action::Bottom)) => s.picker.selected = n - 1,
        _ => {}
    }
    s.picker.selected = s.picker.selected.min(n - 1);
    Vec::new()
}

fn model_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    match k.code {
        KeyCode::Esc => s.mode = Mode::Picker,
        KeyCode::Enter => {
            s.mode = Mode::Picker;
            let Some(e) = s.picker.selected.checked_sub(2).and_then(|i| s.picker.entries.get(i)) else {
                return Vec::new();
            };
            let name = e.config.name.clone();
            let typed = std::mem::take(&mut s.picker.model_input).trim().to_owned();
            s.picker.models.retain(|(n, _)| *n != name);
            if !typed.is_empty() {
                s.picker.models.push((name.clone(), typed));
            }
            if s.provider.label() == name {
                choose_provider(s);
                s.mode = Mode::Picker;
            }
        }
        KeyCode::Backspace => {
            s.picker.model_input.pop();
        }
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) && s.picker.model_input.len() < 200 => {
            s.picker.model_input.push(c);
        }
        _ => {}
    }
    Vec::new()
}

fn choose_provider(s: &mut State) {
    let Some(choice) = s.picker.choice(s.picker.selected) else {
        return;
    };
    s.mode = Mode::Normal;
    s.provider = choice;
    match &s.provider {
        ProviderChoice::Local if s.local_installed == Some(false) => {
            s.error(format!("local model not installed: {}", crate::llm::local::SETUP_HINT));
        }
        ProviderChoice::Local => s.info("provider: local (llama-server + Gemma 3 270M, started on first run)"),
        ProviderChoice::Replay => s.info(format!(
            "provider: replay (recorded runs in {}, cut at the limit)",
            s.sessions_dir.display()
        )),
        ProviderChoice::Configured { name, model } => {
            let entry = s.picker.entries.iter().find(|e| &e.config.name == name);
            let text = format!(
                "provider: {name} ({}, model {})",
                entry.map_or("?", |e| e.config.kind.as_str()),
                model.as_deref().unwrap_or("none set")
            );
            match entry.filter(|e| !e.key_set).and_then(|e| e.config.key_env()) {
                Some(var) => s.error(format!("{text}: ${var} is not set, so runs will fail until it is")),
                None => s.info(text),
            }
        }
    }
}

fn providers_loaded(s: &mut State, r: Result<Vec<super::event::ProviderEntry>, String>) {
    s.picker.loaded = true;
    match r {
        Ok(entries) => {
            s.picker.entries = entries;
            s.picker.error = None;
        }
        Err(e) => {
            s.picker.entries.clear();
            s.error(format!("provider config not loaded: {e}"));
            s.picker.error = Some(e);
        }
    }
    s.picker.selected = s.picker.selected.min(s.picker.len() - 1);
    if let ProviderChoice::Configured { name, model } = &s.provider
        && !s.picker.entries.iter().any(|e| &e.config.name == name)
    {
        let name = name.clone();
        if model.is_none() || s.picker.error.is_none() {
            s.provider = ProviderChoice::Replay;
            if s.picker.error.is_none() {
                s.error(format!(
                    "provider {name:?} is not configured in cutline.toml; using replay (p chooses another)"
                ));
            }
        }
    } else if let ProviderChoice::Configured { name, model: None } = &s.provider {
        // Chosen by name at start: show the configured model.
        let name = name.clone();
        if let Some(row) = s.picker.entries.iter().position(|e| e.config.name == name) {
            s.provider = s.picker.choice(row + 2).unwrap_or(ProviderChoice::Replay);
        }
    }
}

/// The prompt the Migrate tab acts on: the selection on the prompt list, or
/// (from other tabs) the prompt open in the editor with its edits.
fn migrate_source(s: &State) -> Option<PromptConfig> {
    if s.tab != Tab::Prompts
        && let Some(e) = &s.editor
        && let Ok((p, _)) = e.config()
    {
        return Some(p);
    }
    s.prompts.selected_prompt().cloned()
}

/// The file a migration is written to: `<new id>.toml` next to the source.
pub fn migrate_target(src: &PromptConfig, new_id: &str) -> String {
    let dir = std::path::Path::new(&src.origin.file)
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    dir.join(format!("{new_id}.toml")).display().to_string()
}

fn migrate_selected(s: &mut State) {
    let src = migrate_source(s);
    migrate_selected_from(s, src);
}

fn migrate_selected_from(s: &mut State, src: Option<PromptConfig>) {
    let Some(src) = src else {
        s.migrate = None;
        s.info("no prompt selected to migrate");
        return;
    };
    let mut result = crate::prompt::migrate::migrate(&src, None);
    let target = match &mut result {
        Ok(m) => {
            let t = migrate_target(&src, &m.config.id);
            m.config.origin = crate::prompt::Origin {
                file: t.clone(),
                ..crate::prompt::Origin::default()
            };
            t
        }
        Err(_) => String::new(),
    };
    match &result {
        Ok(m) => s.info(format!(
            "migration of {}: {} flag(s), {} unconvertible",
            src.id,
            m.flags.len(),
            m.unconvertible.len()
        )),
        Err(e) => s.error(e.clone()),
    }
    s.migrate = Some(super::state::MigrateView {
        source: src,
        result,
        top: 0,
        target,
        confirm_overwrite: false,
        written: None,
    });
}

fn migrate_write(s: &mut State) -> Vec<Effect> {
    if s.tab != Tab::Migrate || s.migrate.is_none() {
        migrate_selected(s);
        s.tab = Tab::Migrate;
    }
    let Some(m) = &s.migrate else { return Vec::new() };
    let Ok(mig) = &m.result else {
        s.error("nothing to write: this prompt has no migration");
        return Vec::new();
    };
    if mig.config.schema.is_none() && m.source.schema.is_some() {
        s.error("not written: the schema was not converted (see the ✗ rows)");
        return Vec::new();
    }
    let overwrite = m.confirm_overwrite;
    let config = Box::new(mig.config.clone());
    let text = format!("writing {}…", m.target);
    s.info(text);
    vec![Effect::WriteMigrated { config, overwrite }]
}

fn migrate_written(s: &mut State, w: super::event::WriteOutcome) -> Vec<Effect> {
    use super::event::WriteOutcome;
    let key = s.keymap.key_for(Action::MigrateWrite);
    let Some(m) = &mut s.migrate else { return Vec::new() };
    match w {
        WriteOutcome::Written(file) => {
            m.confirm_overwrite = false;
            m.written = Some(file.clone());
            s.info(format!("wrote {file}; reloading prompts (t runs the pair)"));
            vec![Effect::LoadPrompts]
        }
        WriteOutcome::Exists(file) => {
            m.confirm_overwrite = true;
            s.error(format!(
                "{file} exists: {key} again overwrites it, any other tab leaves it"
            ));
            Vec::new()
        }
        WriteOutcome::Failed(e) => {
            m.confirm_overwrite = false;
            s.error(format!("not written: {e}"));
            Vec::new()
        }
    }
}

fn migrate_twins(s: &mut State) -> Vec<Effect> {
    let Some(m) = &s.migrate else {
        s.info("no migration on show");
        return Vec::new();
    };
    let Ok(mig) = &m.result else {
        s.error("this prompt has no migration to run");
        return Vec::new();
    };
    let src = m.source.clone();
    let migrated = mig.config.clone();
    let vars = match &s.editor {
        Some(e) if e.base.id == src.id => e.config().map(|(_, v)| v).unwrap_or_default(),
        _ => src.inputs.first().map(|i| i.vars.clone()).unwrap_or_default(),
    };
    run_pair(s, &src, &migrated, vars)
}

fn side_of(r: &RunView) -> Result<crate::compare::Side, String> {
    let analysis = match r.response_type {
        ResponseType::Json => match &r.json {
            Some(j) => crate::run::Analysis::Json(Box::new(j.clone())),
            None => return Err(format!("{} has no finished answer to compare", r.prompt_id)),
        },
        ResponseType::Jsonl => crate::run::Analysis::Jsonl(r.jsonl.clone()),
        ResponseType::Text => crate::run::Analysis::Text,
    };
    Ok(crate::compare::side(
        &r.prompt_id,
        &analysis,
        r.finish == Some(FinishReason::Length),
    ))
}

/// Recompute the Compare tab's report for the pair on show (twins, or the
/// pinned run against the run on show); ask for its gold set when the pair
/// changed.
fn refresh_compare(s: &mut State) -> Vec<Effect> {
    let c = &mut s.compare;
    let pair: Option<(&RunView, &RunView)> = match &s.shown {
        Some(Shown::Twins { json, jsonl }) => Some((json, jsonl)),
        Some(Shown::Single(r)) => s.pinned.as_deref().filter(|p| p.id != r.id).map(|p| (p, &**r)),
        None => None,
    };
    let Some((json, jsonl)) = pair else {
        c.report = Some(Err(format!(
            "Compare needs a pair:\n· {} runs a prompt and its twin\n· {} on the Migrate tab runs a prompt and its migration\n· {} pins the run on show as side A; the next run you show is side B",
            s.keymap.key_for(Action::Twins),
            s.keymap.key_for(Action::Twins),
            s.keymap.key_for(Action::Pin)
        )));
        c.ids = None;
        return Vec::new();
    };
    if json.live() || jsonl.live() {
        c.report = Some(Err(
            "the pair is still running; the comparison comes when both end".into()
        ));
        return Vec::new();
    }
    let mut ids = vec![json.prompt_id.clone()];
    if jsonl.prompt_id != json.prompt_id {
        ids.push(jsonl.prompt_id.clone());
    }
    let mut out = Vec::new();
    if c.gold_for != ids {
        c.gold_for.clone_from(&ids);
        c.gold = None;
        c.gold_error = None;
        out.push(Effect::LoadGold(ids));
    }
    let label = |r: &RunView| {
        format!(
            "{} · {} @ {}",
            r.response_type,
            r.prompt_id,
            r.max_tokens
                .map_or_else(|| "no limit".to_owned(), |n| format!("{n} tok"))
        )
    };
    c.labels = [label(json), label(jsonl)];
    if c.ids != Some((json.id, jsonl.id)) {
        c.top = 0;
    }
    c.ids = Some((json.id, jsonl.id));
    c.report = Some(match (side_of(json), side_of(jsonl)) {
        (Ok(a), Ok(b)) => {
            // The JSONL side's schema as loaded, else the pair's as run
            // (a migration not yet written is not in the list).
            let line_schema = [&jsonl.prompt_id, &json.prompt_id]
                .into_iter()
                .find_map(|id| s.prompts.by_id(id))
                .and_then(|p| match p.response_type {
                    ResponseType::Jsonl => p.schema.clone(),
                    _ => p.schema.as_ref().and_then(crate::prompt::migrate::line_schema),
                })
                .or_else(|| c.line_schema.clone());
            let keys = crate::compare::Keys::of(line_schema.as_ref(), &[]);
            let gold = c.gold.as_ref().map(|(_, g)| g.as_slice());
            Ok(Box::new(crate::compare::compare(a, b, &keys, gold)))
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    });
    out
}
