//! `?`: every key of the keymap in force, over the tab (`Mode::Help`; any
//! key closes it). A view only: the keymap is its state.

pub mod view;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

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
        Vec::new()
    }

    fn owns_mode(&self, mode: &Mode) -> bool {
        *mode == Mode::Help
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, &s.keymap, s.theme);
    }
}
