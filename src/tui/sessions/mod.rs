//! The Sessions tab: the recorded sessions and their runs, opened (Enter)
//! as finished views or replayed (`r`) at the limit.
//!
//! `state` holds [`SessionsView`], `update` takes the sessions read and
//! opens a recording, `view` draws the list and the selected run's
//! details, `effects` reads the directory.

mod effects;
mod state;
pub(super) mod update;
pub mod view;

pub use crate::tui::runs::prompt_of_record;
pub(super) use effects::spawn_load;
pub use state::SessionsView;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{State, Tab};

/// The Sessions tab: recorded sessions, and Enter to open a run.
#[derive(Debug, Clone, Copy)]
pub struct Sessions;

impl Component for Sessions {
    fn id(&self) -> Id {
        Id("sessions")
    }

    fn place(&self) -> Place {
        Place::Tab(Tab::Sessions)
    }

    fn take(&self, s: &mut State, a: Action) -> Option<Vec<Effect>> {
        (a == Action::Open).then(|| {
            update::open_recording(s);
            Vec::new()
        })
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        match e {
            Effect::LoadSessions => spawn_load(cx.tx(), cx.sessions_dir.clone()),
            other => return Err(other),
        }
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::SessionsLoaded(sessions) => Ok(update::loaded(s, sessions)),
            other => Err(other),
        }
    }

    fn move_by(&self, s: &mut State, by: isize, _under: &[Line<'static>]) {
        let n = s.sessions.rows().len();
        s.sessions.selected = crate::tui::panes::step(s.sessions.selected, by, n);
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, s);
    }
}
