//! Keys and modes: what a key does in each mode, tabs, scrolling, focus and the mouse; quitting (with its question).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui_textarea::{CursorMove, Input, Key as TaKey};

use super::DEFAULT_LIMIT;
use crate::tui::compare::update::{pin, refresh_compare};
use crate::tui::editor::Field;
use crate::tui::editor::external_update as external;
use crate::tui::editor::update::{edit, open, save};
use crate::tui::eval::update as eval;
use crate::tui::event::Effect;
use crate::tui::keymap::Action;
use crate::tui::layout;
use crate::tui::migrate::update::{
    migrate_selected, migrate_selected_from, migrate_source, migrate_twins, migrate_write,
};
use crate::tui::providers::update::{model_key, open_picker, picker_key};
use crate::tui::remember::update as remember;
use crate::tui::report::update as report;
use crate::tui::run::Shown;
use crate::tui::run::update::{cancel_live, continue_run, copy, cycle_structured, run, twins};
use crate::tui::search::update as search;
use crate::tui::state::{Confirm, Mode, OutPane, State, Tab};
use crate::tui::sweep::update::{sweep, sweep_effect};
use crate::tui::sweep::{Sweep, set_cursor};

pub(super) fn quit(s: &mut State) -> Vec<Effect> {
    s.quit = true;
    let mut out = cancel_live(s);
    out.push(remember::on_quit(s));
    out.push(Effect::Quit);
    out
}

/// The quit key: with unsaved edits it asks first, and quits when `asked`
/// says the question was just put.
pub(super) fn quit_asking(s: &mut State, asked: Option<Confirm>) -> Vec<Effect> {
    let dirty = s.editor.as_ref().is_some_and(|e| e.dirty);
    if dirty && asked != Some(Confirm::QuitUnsaved) {
        s.error(rust_i18n::t!(
            "tui.msg.unsaved",
            quit = s.keymap.key_for(Action::Quit),
            save = s.keymap.key_for(Action::Save)
        ));
        s.confirm = Some(Confirm::QuitUnsaved);
        return Vec::new();
    }
    quit(s)
}

pub(super) fn key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    if k.kind == KeyEventKind::Release {
        return Vec::new();
    }
    if k.modifiers.contains(KeyModifiers::CONTROL) && matches!(k.code, KeyCode::Char('c' | 'C')) {
        return quit(s);
    }
    if s.mode == Mode::Help {
        s.mode = Mode::Normal;
        return Vec::new();
    }
    // A question is answered by the very next key, or dropped.
    let asked = s.confirm.take();
    if s.mode == Mode::Normal && s.keymap.action(&k) == Some(Action::Quit) {
        return quit_asking(s, asked);
    }
    match s.mode {
        Mode::Search(..) => search::key(s, k),
        // Closed above, before any key is read.
        Mode::Help => Vec::new(),
        Mode::Filter => crate::tui::prompts::update::filter_key(s, k),
        Mode::LimitInput(_) => limit_key(s, k),
        Mode::EvalLimits(_) => eval::limits_key(s, k),
        Mode::Insert => crate::tui::editor::update::insert_key(s, k),
        Mode::Picker => picker_key(s, k),
        Mode::ModelInput(_) => model_key(s, k),
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

pub(super) fn limit_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    let Mode::LimitInput(typed) = &mut s.mode else {
        return Vec::new();
    };
    match k.code {
        KeyCode::Esc => s.mode = Mode::Normal,
        KeyCode::Enter => {
            let text = std::mem::take(typed);
            s.mode = Mode::Normal;
            match text.trim().parse::<u32>() {
                Ok(0) => set_limit(s, None),
                Ok(n) => set_limit(s, Some(n)),
                Err(_) if text.trim().is_empty() => set_limit(s, None),
                Err(_) => s.error(rust_i18n::t!("tui.msg.not_a_number", text = format!("{text:?}"))),
            }
        }
        KeyCode::Backspace => {
            typed.pop();
        }
        KeyCode::Char(c) if c.is_ascii_digit() && typed.len() < 9 => typed.push(c),
        _ => {}
    }
    Vec::new()
}

pub(super) fn set_limit(s: &mut State, limit: Option<u32>) {
    s.max_tokens = limit;
    match limit {
        Some(n) => s.info(rust_i18n::t!("tui.msg.limit_set", n = n)),
        None => s.info(rust_i18n::t!("tui.msg.limit_none")),
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "the action switchboard; issue 36 moves each tab's keys into its component"
)]
pub(super) fn action(s: &mut State, a: Action) -> Vec<Effect> {
    if eval::on_show(s)
        && let Some(out) = eval::action(s, a)
    {
        return out;
    }
    match a {
        Action::Quit => return quit_asking(s, None),
        Action::Help => s.mode = Mode::Help,
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
                s.info(rust_i18n::t!("tui.msg.cancelled"));
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
        Action::LimitType => s.mode = Mode::LimitInput(String::new()),
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
        Action::Costs => return crate::tui::costs::update::start(s),
        Action::Eval => return eval::toggle(s),
        Action::Structured => cycle_structured(s),
        Action::Save => return save(s),
        Action::Rendered => {
            if let Some(e) = &mut s.editor {
                e.show_rendered = !e.show_rendered;
                s.tab = Tab::Edit;
            } else {
                s.info(rust_i18n::t!("tui.msg.open_prompt_first"));
            }
        }
        Action::NextInput => {
            let theme = s.theme;
            match s.editor.as_mut().map(|e| e.next_input(theme)) {
                Some(Some(name)) => s.info(rust_i18n::t!("tui.msg.sample_input", name = name)),
                Some(None) => s.info(rust_i18n::t!("tui.msg.no_inputs")),
                None => s.info(rust_i18n::t!("tui.msg.open_prompt_first")),
            }
        }
        Action::Reload => {
            s.info(rust_i18n::t!("tui.msg.reloading"));
            return vec![Effect::LoadPrompts, Effect::LoadSessions];
        }
    }
    Vec::new()
}

pub(super) fn go_tab(s: &mut State, t: Tab) -> Vec<Effect> {
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
        && matches!(s.sweep, Sweep::Idle)
        && let Some(e) = sweep_effect(s)
    {
        return vec![e];
    }
    Vec::new()
}

pub(super) fn page(s: &State) -> isize {
    let h = usize::from(layout::screen(layout::full(s)).body.height).saturating_sub(4);
    isize::try_from(h.max(1)).unwrap_or(1)
}

pub(in crate::tui) fn step(v: usize, by: isize, len: usize) -> usize {
    let max = len.saturating_sub(1);
    let next = if by < 0 {
        v.saturating_sub(by.unsigned_abs())
    } else {
        v.saturating_add(by.unsigned_abs())
    };
    next.min(max)
}

pub(super) fn move_by(s: &mut State, by: isize) {
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
                m.top = step(m.top, by, crate::tui::migrate::view::rows(m));
            }
        }
        Tab::Compare if s.eval.open => {
            let n = crate::tui::eval::view::rows(s);
            s.eval.top = step(s.eval.top, by, n);
        }
        Tab::Compare => {
            let n = crate::tui::compare::view::rows(s);
            s.compare.top = step(s.compare.top, by, n);
        }
    }
}

/// Scroll `pane` by `by` rows; scrolling to the end follows new rows.
pub fn scroll_pane(s: &mut State, pane: OutPane, by: isize) {
    let rows = crate::tui::run::rows(s, pane);
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

pub(super) fn horizontal(s: &mut State, a: Action) {
    let by: isize = match a {
        Action::Left => -1,
        Action::Right => 1,
        Action::BigLeft => -10,
        _ => 10,
    };
    match s.tab {
        Tab::Sweep => {
            if let Some(sw) = s.sweep.ready() {
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

pub(super) fn focus(s: &mut State, dir: isize) {
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

pub(super) fn mouse(s: &mut State, m: MouseEvent) -> Vec<Effect> {
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
