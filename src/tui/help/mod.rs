//! `?`: every key of the keymap in force, over the tab (`Mode::Help`).
//! The arrows, pages, Home and End scroll it when it is longer than the
//! screen (80×24 shows a third of it); any other key closes it. Its one
//! piece of state is the first line on show ([`HelpTop`]).

pub mod view;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use crate::tui::Effect;
use crate::tui::component::{Component, Id, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{Mode, State};

/// The key list (`?`), over the body until any key.
#[derive(Debug, Clone, Copy)]
pub struct Help;

impl Component for Help {
    fn id(&self) -> Id {
        Id("help")
    }

    fn place(&self) -> Place {
        Place::Popup
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Help]
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        s.mode = Mode::Help;
        s.parts.get_mut::<HelpTop>().0 = 0;
        Vec::new()
    }

    fn key(&self, s: &mut State, k: KeyEvent) -> Vec<Effect> {
        let area = crate::tui::layout::screen(crate::tui::layout::full(s)).body;
        let (rows, shown) = view::rows_and_height(&s.keymap, area);
        let last = rows.saturating_sub(shown);
        let page = shown.max(1);
        let top = &mut s.parts.get_mut::<HelpTop>().0;
        *top = match k.code {
            KeyCode::Up | KeyCode::Char('k') => top.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *top + 1,
            KeyCode::PageUp => top.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ') => *top + page,
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => {
                s.mode = Mode::Normal;
                return Vec::new();
            }
        }
        .min(last);
        Vec::new()
    }

    fn owns_mode(&self, mode: &Mode) -> bool {
        *mode == Mode::Help
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        let top = s.parts.get::<HelpTop>().map_or(0, |t| t.0);
        view::draw(f, area, &s.keymap, s.theme, top);
    }
}

/// The help's first line on show.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HelpTop(pub usize);
