//! The Compare tab: the pair on show (twins, or the pinned run against the
//! run on show) compared item by item with `compare::compare`, with its
//! gold set and the loss of each side; the report is computed in the
//! reducer when the pair or the gold set changes, never per frame.
//!
//! `state` holds [`CompareView`], `update` the pin, the gold set and the
//! report, `view` draws the tab, `effects` finds the gold set. The
//! strategy table under the report is its own feature (`tui::costs`).

mod effects;
mod state;
pub(super) mod update;
pub mod view;

pub use effects::load_gold;
pub(super) use effects::spawn_load_gold;
pub use state::{CompareView, NoReport};

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{State, Tab};

/// The Compare tab: the pair on show item by item, the pin (`P`), the
/// gold set; the sections under its report are other components'.
#[derive(Debug, Clone, Copy)]
pub struct Compare;

impl Component for Compare {
    fn id(&self) -> Id {
        Id("compare")
    }

    fn place(&self) -> Place {
        Place::Tab(Tab::Compare)
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Pin]
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        update::pin(s);
        Vec::new()
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        let Effect::LoadGold(ids) = e else { return Err(e) };
        spawn_load_gold(cx.tx(), cx.prompts_dir().join("gold"), ids);
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::GoldLoaded { ids, result } => Ok(update::gold_loaded(s, &ids, result)),
            other => Err(other),
        }
    }

    fn enter(&self, s: &mut State) -> Vec<Effect> {
        update::refresh_compare(s)
    }

    fn move_by(&self, s: &mut State, by: isize, under: &[Line<'static>]) {
        let n = view::rows(s, under);
        s.compare.top = crate::tui::panes::step(s.compare.top, by, n);
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, under: &[Line<'static>]) {
        view::draw(f, area, s, under);
    }

    fn hint(&self, s: &State) -> Option<Cow<'static, str>> {
        let k = |a| s.keymap.key_for(a);
        Some(rust_i18n::t!(
            "tui.status.compare",
            twins = k(Action::Twins),
            pin = k(Action::Pin),
            provider = k(Action::Provider),
            help = k(Action::Help)
        ))
    }

    fn navigate(&self, s: &mut State, nav: &Nav) -> Option<Vec<Effect>> {
        matches!(nav, Nav::Compare).then(|| update::refresh_compare(s))
    }
}
