//! Keys and modes: a key goes to the mode's owner, or through the keymap to
//! an action — taken first by a component on show, else the root's own
//! (quit, tabs, moving, focus, the limit, reload), else its owner's in the
//! registry. Quitting asks first with unsaved edits.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use super::DEFAULT_LIMIT;
use crate::tui::Effect;
use crate::tui::component::Component;
use crate::tui::keymap::Action;
use crate::tui::layout;
use crate::tui::registry;
use crate::tui::state::{Confirm, Mode, OutPane, State, Tab};

/// Quit now: live runs stop, each component keeps what it remembers.
pub(super) fn quit(s: &mut State) -> Vec<Effect> {
    s.quit = true;
    let mut out = s.cancel_live();
    for c in registry::COMPONENTS {
        out.extend(c.on_quit(s));
    }
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
    // A question is answered by the very next key, or dropped.
    let asked = s.confirm.take();
    if s.mode == Mode::Normal && s.keymap.action(&k) == Some(Action::Quit) {
        return quit_asking(s, asked);
    }
    match &s.mode {
        Mode::Normal => {
            let shown: Vec<&dyn Component> = registry::on_show(s).collect();
            for c in shown {
                if let Some(out) = c.before_keymap(s, &k) {
                    return out;
                }
            }
            match s.keymap.action(&k) {
                Some(a) => action(s, a),
                None => Vec::new(),
            }
        }
        Mode::LimitInput(_) => limit_key(s, k),
        mode => match registry::mode_owner(mode) {
            Some(c) => c.key(s, k),
            None => Vec::new(),
        },
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

/// An action: a component on show may take it first, then the root does
/// its own, then the component that owns it.
pub(super) fn action(s: &mut State, a: Action) -> Vec<Effect> {
    let shown: Vec<&dyn Component> = registry::on_show(s).collect();
    for c in shown {
        if let Some(out) = c.take(s, a) {
            return out;
        }
    }
    if let Some(out) = root_action(s, a) {
        return out;
    }
    registry::owner(a).map_or_else(Vec::new, |c| c.action(s, a))
}

/// The actions on what every component shares: quitting, tabs, moving,
/// focus, the limit, reloading. `None` for a component's action.
fn root_action(s: &mut State, a: Action) -> Option<Vec<Effect>> {
    if !is_root(a) {
        return None;
    }
    match a {
        Action::Quit => return Some(quit_asking(s, None)),
        Action::NextTab => s.tab = Tab::ALL[(s.tab.index() + 1) % Tab::ALL.len()],
        Action::PrevTab => s.tab = Tab::ALL[(s.tab.index() + Tab::ALL.len() - 1) % Tab::ALL.len()],
        Action::GoTab(n) => {
            let i = usize::from(n.max(1)).min(Tab::ALL.len()) - 1;
            return Some(go_tab(s, Tab::ALL[i]));
        }
        Action::Up => move_by(s, -1),
        Action::Down => move_by(s, 1),
        Action::PageUp => move_by(s, -page(s)),
        Action::PageDown => move_by(s, page(s)),
        Action::Top => move_by(s, isize::MIN / 2),
        Action::Bottom => move_by(s, isize::MAX / 2),
        Action::Left => sideways(s, -1),
        Action::Right => sideways(s, 1),
        Action::BigLeft => sideways(s, -10),
        Action::BigRight => sideways(s, 10),
        Action::FocusNext => focus(s, 1),
        Action::FocusPrev => focus(s, -1),
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
        Action::Reload => {
            s.info(rust_i18n::t!("tui.msg.reloading"));
            return Some(vec![Effect::LoadPrompts, Effect::LoadSessions]);
        }
        _ => return None,
    }
    Some(Vec::new())
}

/// Whether the root answers `a` (the rest belong to components): quitting,
/// tabs, moving, focus, the limit, reloading.
pub fn is_root(a: Action) -> bool {
    matches!(
        a,
        Action::Quit
            | Action::NextTab
            | Action::PrevTab
            | Action::GoTab(_)
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
            | Action::Left
            | Action::Right
            | Action::BigLeft
            | Action::BigRight
            | Action::FocusNext
            | Action::FocusPrev
            | Action::LimitDown
            | Action::LimitUp
            | Action::LimitType
            | Action::LimitNone
            | Action::Reload
    )
}

/// Go to tab `t`: its component sets itself up first (it sees the tab the
/// person comes from).
pub(super) fn go_tab(s: &mut State, t: Tab) -> Vec<Effect> {
    let tab = registry::COMPONENTS
        .iter()
        .copied()
        .find(|c| c.place() == crate::tui::component::Place::Tab(t));
    let out = tab.map(|c| c.enter(s)).unwrap_or_default();
    s.tab = t;
    out
}

pub(super) fn page(s: &State) -> isize {
    let h = usize::from(layout::screen(layout::full(s)).body.height).saturating_sub(4);
    isize::try_from(h.max(1)).unwrap_or(1)
}

/// Up, down and pages in the body on show.
pub(super) fn move_by(s: &mut State, by: isize) {
    if let Some(c) = registry::body(s) {
        let under = registry::under(s, c.id());
        c.move_by(s, by, &under);
    }
}

/// Left and right in the body on show.
fn sideways(s: &mut State, by: isize) {
    if let Some(c) = registry::body(s) {
        c.sideways(s, by);
    }
}

/// The next or previous pane: the body's own order (the editor's fields,
/// the sweep's two parses), else the Run tab's panes.
pub(super) fn focus(s: &mut State, dir: isize) {
    if registry::body(s).is_some_and(|c| c.focus(s, dir)) {
        return;
    }
    let order: &[OutPane] = if s.shown.as_ref().is_some_and(crate::tui::runs::Shown::twins) {
        &[OutPane::Response, OutPane::Response2, OutPane::Json, OutPane::Jsonl]
    } else {
        &[OutPane::Response, OutPane::Json, OutPane::Jsonl]
    };
    crate::tui::panes::focus_in(s, order, dir);
}

pub(super) fn mouse(s: &mut State, m: MouseEvent) -> Vec<Effect> {
    match m.kind {
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let by: isize = if m.kind == MouseEventKind::ScrollUp { -3 } else { 3 };
            if let Some((pane, _)) = layout::pane_at(s, m.column, m.row) {
                crate::tui::runs::scroll_pane(s, pane, by);
            } else if !registry::body(s).is_some_and(|c| c.wheel(s, by)) {
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
