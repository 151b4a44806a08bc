//! One trait for every part of the workbench a person sees or presses a
//! key for — a tab, a view over a tab, a section under another's body, a
//! popup, a key's job — and the one message that moves between them.
//!
//! Each part is a [`Component`]: a unit struct in its folder, listed once
//! in the `components!` list of `tui/mod.rs` ([`super::COMPONENTS`]). The
//! root's keys, frame and status line (`update/keys.rs`, `view`, `status`)
//! name no feature: they ask the registry which component is on show,
//! which owns an action, a key or a mode, and what sits under a body. A
//! component that needs another (compare the pair again, open this
//! prompt, sweep what is on show) returns a [`Nav`] in its effects; the
//! root routes it to the component that answers it before anything reaches
//! the runner. Components never import each other.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::keymap::{Action, OwnKey};
pub use super::state::Id;
use super::state::{Mode, State, Tab};
use super::work::Carry;
use super::{Effect, Event};
use crate::prompt::PromptConfig;

/// Where a component shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A tab of the tab bar.
    Tab(Tab),
    /// Drawn instead of a tab's body while it is `State::overlay`.
    Over(Tab),
    /// Lines at the foot of another component's body.
    Under(Id),
    /// Drawn over the body while one of its modes holds the keys.
    Popup,
    /// Over a tab's panes (marks, hits), on the tabs it names.
    Marks(&'static [Tab]),
    /// Nowhere: a key's job whose answer is the status line.
    Job,
}

/// The message that moves between components: a component returns it in
/// its effects ([`Effect::Nav`]) and the root routes it, at once and in
/// order, to the component that answers it.
#[derive(Debug)]
pub enum Nav {
    /// Compare the pair on show again (the Compare tab's report).
    Compare,
    /// The pair on show is another pair: what was worked out for the old
    /// one is dropped.
    PairChanged,
    /// Sweep what is on show, when nothing of it is live.
    Sweep,
    /// The search ends (`Esc` with nothing to cancel).
    EndSearch,
    /// The prompts or the sessions loaded: put back what the last session
    /// showed, as far as what it needs is there now.
    Resume,
    /// Open the Prompts tab's selection in the editor (one is selected).
    OpenSelected,
    /// Open this prompt in the editor, as what `r` runs.
    OpenPrompt(Box<PromptConfig>),
    /// Migrate this prompt on the Migrate tab (`None`: say none is chosen).
    Migrate(Option<Box<PromptConfig>>),
    /// Run a JSON-array prompt and a JSONL prompt as a pair on the same
    /// variables and limit.
    RunPair {
        /// The JSON-array side.
        array: Box<PromptConfig>,
        /// The JSONL side.
        lines: Box<PromptConfig>,
        /// The variables both run on.
        vars: serde_json::Map<String, serde_json::Value>,
    },
    /// An action for the component that owns it, no view taking it first.
    Act(Action),
    /// Say this in the status line, after what came before it.
    Say(String),
}

/// A tab, view, section, popup or key's job of the workbench. Every method
/// but `id` and `place` has a default: a component says only what it does.
pub trait Component: Sync {
    /// Its key in the registry.
    fn id(&self) -> Id;

    /// Where it shows.
    fn place(&self) -> Place;

    /// The actions it owns: the keymap binds each, the help lists each,
    /// and the root hands each to [`Component::action`].
    fn actions(&self) -> &'static [Action] {
        &[]
    }

    /// Work to start with the workbench (its jobs, [`Effect::Job`]); the
    /// event loop hands them to the runner once, before the first frame.
    fn init(&self, _s: &State) -> Vec<Effect> {
        Vec::new()
    }

    /// What it keeps as the workbench quits (what it remembers for the
    /// next start), after the live runs are stopped.
    fn on_quit(&self, _s: &State) -> Vec<Effect> {
        Vec::new()
    }

    /// Keys of its own, beyond the built-in actions: the root binds them
    /// (`[keys]` rebinds them by name), the help lists them, and their
    /// actions ([`Action::Own`]) come to [`Component::action`].
    fn keys(&self) -> &'static [OwnKey] {
        &[]
    }

    /// Whether it is on show: its tab is, or it is the open overlay of
    /// the tab on show, or its mode holds the keys.
    fn on_show(&self, s: &State) -> bool {
        match self.place() {
            Place::Tab(t) => s.tab == t,
            Place::Over(t) => s.tab == t && s.overlay == Some(self.id()),
            Place::Popup => self.owns_mode(&s.mode),
            Place::Marks(tabs) => tabs.contains(&s.tab),
            Place::Under(_) | Place::Job => false,
        }
    }

    /// One of its actions, wherever the person is.
    fn action(&self, _s: &mut State, _a: Action) -> Vec<Effect> {
        Vec::new()
    }

    /// While on show, an action it takes before its owner does (a view
    /// over a tab gives `r` its own meaning); `None` lets it through.
    fn take(&self, _s: &mut State, _a: Action) -> Option<Vec<Effect>> {
        None
    }

    /// While on show in normal mode, a key it reads before the keymap
    /// (`n` between search hits); `None` lets it through.
    fn before_keymap(&self, _s: &mut State, _k: &KeyEvent) -> Option<Vec<Effect>> {
        None
    }

    /// Whether `mode` is one of its typing modes ([`Mode::Own`] with its
    /// id is).
    fn owns_mode(&self, mode: &Mode) -> bool {
        *mode == Mode::Own(self.id())
    }

    /// A key in one of its modes.
    fn key(&self, _s: &mut State, _k: KeyEvent) -> Vec<Effect> {
        Vec::new()
    }

    /// Up, down, pages, first and last row (`by` rows, saturating).
    fn move_by(&self, _s: &mut State, _by: isize, _under: &[Line<'static>]) {}

    /// Left and right (`by` steps).
    fn sideways(&self, _s: &mut State, _by: isize) {}

    /// The next (`dir` 1) or previous (-1) pane or field in its own
    /// order; false leaves it to the root (the Run tab's panes).
    fn focus(&self, _s: &mut State, _dir: isize) -> bool {
        false
    }

    /// The mouse wheel over it, outside the scrolling panes (`by` rows);
    /// false moves as the arrows do.
    fn wheel(&self, _s: &mut State, _by: isize) -> bool {
        false
    }

    /// Its tab is being opened by its key or a click (`s.tab` is still the
    /// tab the person comes from): set up what it shows.
    fn enter(&self, _s: &mut State) -> Vec<Effect> {
        Vec::new()
    }

    /// Draw it in `area`; `under` are the lines of the sections at the
    /// foot of its body.
    fn draw(&self, _f: &mut Frame<'_>, _area: Rect, _s: &State, _under: &[Line<'static>]) {}

    /// Its lines at the foot of the body it is [`Place::Under`].
    fn lines(&self, _s: &State) -> Vec<Line<'static>> {
        Vec::new()
    }

    /// Its words on the status line's first line, after the provider,
    /// limit and structured output (wherever the person is).
    fn status(&self, _s: &State) -> Vec<String> {
        Vec::new()
    }

    /// The status line's key hints while it is on show in normal mode.
    fn hint(&self, _s: &State) -> Option<Cow<'static, str>> {
        None
    }

    /// The status line's words while one of its modes holds the keys.
    fn mode_hint(&self, _s: &State) -> Option<Cow<'static, str>> {
        None
    }

    /// An event of its own (what its effects' work sent back); any other
    /// is handed back for the next component.
    fn event(&self, _s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        Err(ev)
    }

    /// Carry out an effect of its own (the runner lends it `cx`); any other
    /// is handed back for the next component.
    fn carry_out(&self, _cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        Err(e)
    }

    /// The answer of one of its jobs ([`crate::tui::work::Job`]): its own
    /// message type, to downcast.
    fn answer(&self, _s: &mut State, _msg: Box<dyn std::any::Any + Send>) -> Vec<Effect> {
        Vec::new()
    }

    /// A navigation message, if it is one this component answers.
    fn navigate(&self, _s: &mut State, _nav: &Nav) -> Option<Vec<Effect>> {
        None
    }
}

/// The state of components that have no field of their own in the root
/// `State`, one value per type: a component added later keeps its state
/// here (`s.parts.get_mut::<MyState>()`), so adding it is its folder and
/// its registry line, not a field at the root.
#[derive(Default)]
pub struct Parts(std::collections::HashMap<std::any::TypeId, Box<dyn std::any::Any + Send>>);

impl Parts {
    /// The state of type `T`, if a component keeps one.
    pub fn get<T: std::any::Any>(&self) -> Option<&T> {
        self.0.get(&std::any::TypeId::of::<T>()).and_then(|b| b.downcast_ref())
    }

    /// The state of type `T`, made at its default the first time.
    pub fn get_mut<T: std::any::Any + Send + Default>(&mut self) -> &mut T {
        let slot = self
            .0
            .entry(std::any::TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        if !slot.is::<T>() {
            *slot = Box::new(T::default());
        }
        match slot.downcast_mut() {
            Some(t) => t,
            None => unreachable!("a part is kept under its own type's id"),
        }
    }
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Parts({})", self.0.len())
    }
}
