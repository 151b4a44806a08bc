//! What every job the runner starts shares (the registry in force and the
//! session being recorded), and the one way a component's work comes back
//! to it ([`Job`], [`Answer`]): their own module, so the components'
//! effects and the runner that starts them read it without reading each
//! other.

use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::AbortHandle;

use super::Event;
use super::state::Id;

use crate::llm::config::ProvidersFileError;
use crate::llm::registry::Registry;
use crate::session::Recorder;

/// What every run task shares: the registry in force and the session.
#[derive(Clone)]
pub(in crate::tui) struct RunContext {
    pub(in crate::tui) registry: Arc<Result<Registry, ProvidersFileError>>,
    pub(in crate::tui) recorder: Arc<Mutex<Option<Recorder>>>,
}

/// A job's answer on its way back to the component that asked (gitui's
/// bare notification): the component reads it as its own message type.
pub struct Answer {
    /// The component it is for.
    pub to: Id,
    /// The message, of that component's own type.
    pub msg: Box<dyn Any + Send>,
}

impl Answer {
    /// `msg` for component `to`.
    pub fn new<M: Any + Send>(to: Id, msg: M) -> Self {
        Self { to, msg: Box::new(msg) }
    }
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Answer to {:?}", self.to)
    }
}

/// Work a component hands the runner ([`crate::tui::Effect::Job`]): it
/// runs off the UI thread and answers through its [`JobContext`], so a new
/// component's work and answers need no variant of the root's enums.
pub trait Job: Send + std::fmt::Debug {
    /// Start it on the runtime; answer through `cx`.
    fn start(self: Box<Self>, cx: JobContext);
}

/// What a job is started with: where to answer, and what the runner shares.
pub struct JobContext {
    /// The component that asked.
    pub to: Id,
    /// The reducer's channel.
    pub(in crate::tui) tx: UnboundedSender<Event>,
    /// The registry in force and the session.
    pub(in crate::tui) run: RunContext,
    /// The prompts directory.
    pub prompts_dir: PathBuf,
    /// The sessions directory.
    pub sessions_dir: PathBuf,
}

impl JobContext {
    /// Send `msg` back to the component that asked.
    pub fn answer<M: Any + Send>(&self, msg: M) {
        let _ = self.tx.send(Event::Answer(Answer::new(self.to, msg)));
    }
}

/// What a component carries its effects out with, lent by the runner for
/// one effect: the channel, the directories, the registry and session in
/// force, and the runner's books of tasks (so `Esc` and quitting reach
/// what a component started).
pub struct Carry<'r> {
    /// The reducer's channel.
    pub(in crate::tui) tx: &'r UnboundedSender<Event>,
    /// The prompts directory as the workspace it is read as.
    pub(in crate::tui) workspace: &'r crate::store::Workspace,
    /// The sessions directory.
    pub(in crate::tui) sessions_dir: &'r PathBuf,
    /// The registry in force and the session.
    pub(in crate::tui) run: RunContext,
    /// The providers slot the picker's reload refills.
    pub(in crate::tui) registry: &'r Arc<Mutex<Arc<Result<Registry, ProvidersFileError>>>>,
    /// When the workbench started (runs time themselves from it).
    pub(in crate::tui) start: Instant,
    /// Tasks by id, for `Effect::Cancel` and quitting.
    pub(in crate::tui) tasks: &'r mut HashMap<u64, AbortHandle>,
    /// The stop switch of each run, by id (`runs::Stop`).
    pub(in crate::tui) stops: &'r mut HashMap<u64, tokio::sync::watch::Sender<bool>>,
}

impl Carry<'_> {
    /// A sender for events.
    pub(in crate::tui) fn tx(&self) -> UnboundedSender<Event> {
        self.tx.clone()
    }

    /// The prompts directory.
    pub(in crate::tui) fn prompts_dir(&self) -> PathBuf {
        self.workspace.dir.clone()
    }

    /// What a job of component `to` starts with.
    pub(in crate::tui) fn job_context(&self, to: Id) -> JobContext {
        JobContext {
            to,
            tx: self.tx(),
            run: self.run.clone(),
            prompts_dir: self.prompts_dir(),
            sessions_dir: self.sessions_dir.clone(),
        }
    }

    /// Keep `task` under `id` (finished ones are dropped first), with the
    /// switch that stops it gently when it has one.
    pub(in crate::tui) fn track(&mut self, id: u64, task: AbortHandle, stop: Option<tokio::sync::watch::Sender<bool>>) {
        self.tasks.retain(|_, h| !h.is_finished());
        self.stops.retain(|id, _| self.tasks.contains_key(id));
        self.tasks.insert(id, task);
        if let Some(stop) = stop {
            self.stops.insert(id, stop);
        }
    }
}
