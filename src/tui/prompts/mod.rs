//! The Prompts tab: every prompt of the prompts directory (a file that does
//! not load is listed with its error), filtered by `/`, opened by Enter.
//!
//! `state` holds [`PromptList`], `update` takes the loaded directory and
//! the filter's keys, `view` draws the list and the selected prompt,
//! `effects` loads the directory through the store.

mod effects;
mod state;
pub(super) mod update;
pub mod view;

pub(super) use effects::spawn_load;
pub use state::PromptList;

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{Mode, State, Tab};

/// The Prompts tab: the list, and `/` to filter it.
#[derive(Debug, Clone, Copy)]
pub struct Prompts;

impl Component for Prompts {
    fn id(&self) -> Id {
        Id("prompts")
    }

    fn place(&self) -> Place {
        Place::Tab(Tab::Prompts)
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Filter]
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        s.tab = Tab::Prompts;
        s.mode = Mode::Filter;
        Vec::new()
    }

    /// `r`, `t` and `E` here open the selection in the editor first, then
    /// do what they do.
    fn take(&self, s: &mut State, a: Action) -> Option<Vec<Effect>> {
        if !matches!(a, Action::Run | Action::Twins | Action::Eval) {
            return None;
        }
        if s.prompts.selected_prompt().is_none() {
            if a == Action::Eval {
                return None;
            }
            s.info(rust_i18n::t!("tui.msg.no_prompt_selected"));
            return Some(Vec::new());
        }
        Some(vec![Effect::Nav(Nav::OpenSelected), Effect::Nav(Nav::Act(a))])
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        match e {
            Effect::LoadPrompts => spawn_load(cx.tx(), cx.workspace.clone()),
            other => return Err(other),
        }
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::PromptsLoaded {
                prompts,
                errors,
                warnings,
            } => Ok(update::loaded(s, prompts, errors, &warnings)),
            other => Err(other),
        }
    }

    fn owns_mode(&self, mode: &Mode) -> bool {
        *mode == Mode::Filter
    }

    fn key(&self, s: &mut State, k: KeyEvent) -> Vec<Effect> {
        update::filter_key(s, k)
    }

    fn move_by(&self, s: &mut State, by: isize, _under: &[Line<'static>]) {
        let n = s.prompts.filtered().len();
        s.prompts.selected = crate::tui::panes::step(s.prompts.selected, by, n);
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, s);
    }

    fn mode_hint(&self, s: &State) -> Option<Cow<'static, str>> {
        Some(rust_i18n::t!("tui.status.filter", text = s.prompts.filter))
    }
}
