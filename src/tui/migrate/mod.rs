//! The Migrate tab: a JSON-array prompt's JSONL twin (`prompt::migrate`)
//! shown as diffs, flags and unconvertible parts, written on request
//! (asking before an overwrite), and run as a pair with its source.
//!
//! `state` holds [`MigrateView`] and [`WriteOutcome`], `rows` builds the
//! tab's rows once per migration, `update` migrates, writes and runs the
//! pair, `view` draws, `effects` writes the file through the store.

mod effects;
mod rows;
mod state;
pub(super) mod update;
pub mod view;

pub(super) use effects::spawn_write;
pub use effects::write_migrated;
pub use rows::{Kind, Row, diff, line_summary};
pub use state::{MigrateView, WriteOutcome};
pub use update::migrate_target;

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{State, Tab};

/// The Migrate tab: a JSON-array prompt as JSONL, its diff and flags,
/// writing it, and running the pair (`t` here).
#[derive(Debug, Clone, Copy)]
pub struct Migrate;

impl Component for Migrate {
    fn id(&self) -> Id {
        Id("migrate")
    }

    fn place(&self) -> Place {
        Place::Tab(Tab::Migrate)
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Migrate, Action::MigrateWrite]
    }

    fn action(&self, s: &mut State, a: Action) -> Vec<Effect> {
        if a == Action::MigrateWrite {
            return update::migrate_write(s);
        }
        update::migrate_selected(s);
        s.tab = Tab::Migrate;
        Vec::new()
    }

    fn take(&self, s: &mut State, a: Action) -> Option<Vec<Effect>> {
        (a == Action::Twins).then(|| update::migrate_twins(s))
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        let Effect::WriteMigrated { config, overwrite } = e else {
            return Err(e);
        };
        spawn_write(cx.tx(), cx.prompts_dir(), config, overwrite);
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::MigrateWritten(w) => Ok(update::migrate_written(s, w)),
            other => Err(other),
        }
    }

    fn enter(&self, s: &mut State) -> Vec<Effect> {
        if s.tab != Tab::Migrate {
            // Migrate what was chosen before switching (the selection, or
            // the editor's prompt); keep the view (scroll, pending
            // confirm) when it is the same prompt unchanged.
            let src = update::migrate_source(s);
            if src.is_none() || s.migrate.as_ref().map(|m| &m.source) != src.as_ref() {
                update::migrate_selected_from(s, src);
            }
        }
        Vec::new()
    }

    fn move_by(&self, s: &mut State, by: isize, _under: &[Line<'static>]) {
        let width = usize::from(crate::tui::layout::screen(crate::tui::layout::full(s)).body.width.saturating_sub(2));
        if let Some(m) = &mut s.migrate {
            m.top = crate::tui::panes::step(m.top, by, view::rows(m, width));
        }
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, s);
    }

    fn navigate(&self, s: &mut State, nav: &Nav) -> Option<Vec<Effect>> {
        let Nav::Migrate(p) = nav else { return None };
        update::migrate_selected_from(s, p.as_deref().cloned());
        Some(Vec::new())
    }

    fn hint(&self, s: &State) -> Option<Cow<'static, str>> {
        let k = |a| s.keymap.key_for(a);
        Some(rust_i18n::t!(
            "tui.status.migrate",
            migrate = k(Action::Migrate),
            write = k(Action::MigrateWrite),
            twins = k(Action::Twins),
            provider = k(Action::Provider),
            help = k(Action::Help)
        ))
    }
}
