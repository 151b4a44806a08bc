//! `/` in the Run and Sweep tabs' panes: find a text in the focused pane's
//! rows as drawn, `n`/`N` between hits, `Esc` ends it. Elsewhere `/`
//! filters the prompt list (`tui::prompts`).
//!
//! [`Search`] is its state (in `State.search`, the typing in
//! `Mode::Search`), `update` its keys, `view` marks the hit.

pub(super) mod update;
pub mod view;

use crate::tui::state::OutPane;

/// A search found in a pane: `n`/`N` move between its hits, `Esc` ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// The pane searched.
    pub pane: OutPane,
    /// What was searched for (matched case-insensitively).
    pub query: String,
    /// The row of the current hit; `None` when the search found nothing
    /// (`n`/`N` say so again, never move on to the next sample input, until
    /// `Esc` ends it).
    pub row: Option<usize>,
}

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::Effect;
use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{Mode, State, Tab};

/// Search in the Run and Sweep panes: it takes `/` there, `n`/`N` while a
/// search lasts, and marks the hit.
#[derive(Debug, Clone, Copy)]
pub struct SearchPanes;

impl Component for SearchPanes {
    fn id(&self) -> Id {
        Id("search")
    }

    fn place(&self) -> Place {
        Place::Marks(&[Tab::Run, Tab::Sweep])
    }

    fn take(&self, s: &mut State, a: Action) -> Option<Vec<Effect>> {
        (a == Action::Filter && update::start(s)).then(Vec::new)
    }

    fn before_keymap(&self, s: &mut State, k: &KeyEvent) -> Option<Vec<Effect>> {
        // While a search lasts, n / N move between its hits.
        match k.code {
            KeyCode::Char(c @ ('n' | 'N'))
                if !k.modifiers.contains(KeyModifiers::CONTROL) && update::step(s, c == 'n') =>
            {
                Some(Vec::new())
            }
            _ => None,
        }
    }

    fn owns_mode(&self, mode: &Mode) -> bool {
        matches!(mode, Mode::Search(..))
    }

    fn key(&self, s: &mut State, k: KeyEvent) -> Vec<Effect> {
        update::key(s, k)
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::mark_hit(f, area, s);
    }

    fn mode_hint(&self, s: &State) -> Option<Cow<'static, str>> {
        match &s.mode {
            Mode::Search(_, text) => Some(rust_i18n::t!("tui.status.search_input", text = text)),
            _ => None,
        }
    }

    fn navigate(&self, s: &mut State, nav: &Nav) -> Option<Vec<Effect>> {
        matches!(nav, Nav::EndSearch).then(|| {
            update::end(s);
            Vec::new()
        })
    }
}
