//! The eval view (`E`, over the Compare tab): the prompt on show and its
//! twin run over the prompt's own sample inputs at a list of limits, on
//! the workbench's provider, by the one eval engine `cutline eval` runs
//! (`eval::engine`: plan, resume, streamed execution, the writer), into
//! the session `cutline eval` would use for the same prompts and provider,
//! so either resumes what the other recorded. While it runs: runs done,
//! rate and time left; then the summary table (`eval::table`), the twins
//! at each limit and, with a gold set, why gold items were missed.
//!
//! The feature in one folder: its state ([`EvalView`], in `State::eval`),
//! the reducer's part (`update`: open, start, limits, cancel, the engine's
//! news), the view (`view`) and the runner's part (`effects`: the engine
//! on a runtime of its own, dropped whole when the eval is cancelled).

mod effects;
mod error;
mod state;
pub(super) mod update;
pub mod view;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::eval::{RunSummary, TablePrompt};
use crate::llm::params::Structured;
use crate::prompt::PromptConfig;
use crate::tui::choice::ProviderChoice;

pub(super) use effects::spawn;
pub use error::EvalError;
pub use state::{Ending, EvalRun, EvalView, Progress};

/// The limits an eval view starts with.
pub const DEFAULT_LIMITS: &str = "64,128,256,none";

/// An eval for the runner to carry out.
#[derive(Debug, Clone)]
pub struct EvalJob {
    /// Its id (from the run ids, so a cancel names it alone).
    pub id: u64,
    /// The prompt on show, then its twin.
    pub prompts: Vec<PromptConfig>,
    /// The limits.
    pub limits: Vec<Option<u32>>,
    /// The provider (the Run tab's).
    pub provider: ProviderChoice,
    /// Structured output asked for (the Run tab's).
    pub structured: Option<Structured>,
    /// The Python whose limits TrustGraph's verdict follows.
    pub tg_python: crate::output::tg::TgPython,
    /// Where the session is.
    pub sessions_dir: PathBuf,
}

/// The matrix planned and what the session already held.
#[derive(Debug, Clone)]
pub struct EvalPlan {
    /// The session's id.
    pub session: String,
    /// Its file.
    pub path: String,
    /// The model answering (empty for replay).
    pub model: String,
    /// Runs in the matrix.
    pub runs: usize,
    /// Runs the session already held, as summaries (not run again).
    pub skipped: Vec<RunSummary>,
    /// The prompts as the table lists them.
    pub prompts: Vec<TablePrompt>,
    /// Runs per table row, per prompt (its inputs).
    pub per_prompt: BTreeMap<String, usize>,
    /// What a person should read before the runs (identical inputs,
    /// inputs without a recording, the session's own warnings).
    pub warnings: Vec<String>,
}

/// How an eval ended, when it was not cancelled and did not fail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvalEnd {
    /// Runs whose record could not be written.
    pub unrecorded: usize,
    /// Why (the session full, or the first write error).
    pub problem: Option<String>,
}

/// News of an eval, from the runner.
#[derive(Debug)]
pub enum EvalMsg {
    /// Planned; the session opened and read.
    Planned(Box<EvalPlan>),
    /// A run finished and was recorded.
    Finished(Box<RunSummary>),
    /// Runs in flight now.
    InFlight(usize),
    /// Something a person should read.
    Warn(String),
    /// Every pending run ran.
    Done(EvalEnd),
    /// The eval could not start or go on.
    Failed(EvalError),
}

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{Mode, State, Tab};

/// The eval view, over the Compare tab while open (`E`): it takes `r`, `m`
/// and `Esc` there.
#[derive(Debug, Clone, Copy)]
pub struct Eval;

impl Component for Eval {
    fn id(&self) -> Id {
        Id("eval")
    }

    fn place(&self) -> Place {
        Place::Over(Tab::Compare)
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Eval]
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        update::toggle(s)
    }

    fn take(&self, s: &mut State, a: Action) -> Option<Vec<Effect>> {
        update::action(s, a)
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        let Effect::Eval(job) = e else { return Err(e) };
        let id = job.id;
        let task = spawn(cx.tx(), cx.run.clone(), cx.prompts_dir().join("gold"), *job);
        cx.track(id, task, None);
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::Eval { id, msg } => Ok(update::msg(s, id, msg)),
            other => Err(other),
        }
    }

    fn owns_mode(&self, mode: &Mode) -> bool {
        matches!(mode, Mode::EvalLimits(_))
    }

    fn key(&self, s: &mut State, k: KeyEvent) -> Vec<Effect> {
        update::limits_key(s, k)
    }

    fn move_by(&self, s: &mut State, by: isize, _under: &[Line<'static>]) {
        let n = view::rows(s);
        s.eval.top = crate::tui::panes::step(s.eval.top, by, n);
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, s);
    }

    fn hint(&self, s: &State) -> Option<Cow<'static, str>> {
        let k = |a| s.keymap.key_for(a);
        Some(rust_i18n::t!(
            "tui.eval.hint",
            run = k(Action::Run),
            limits = k(Action::LimitType),
            cancel = k(Action::Cancel),
            back = k(Action::Eval),
            provider = k(Action::Provider),
            help = k(Action::Help)
        ))
    }

    fn mode_hint(&self, s: &State) -> Option<Cow<'static, str>> {
        match &s.mode {
            Mode::EvalLimits(text) => Some(rust_i18n::t!("tui.eval.limits_input", text = text)),
            _ => None,
        }
    }
}
