//! What every job the runner starts shares (the registry in force and the
//! session being recorded), and the one way a component's work comes back
//! to it ([`Job`], [`Answer`]): their own module, so the components'
//! effects and the runner that starts them read it without reading each
//! other.

use std::any::Any;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::UnboundedSender;

use super::Event;
use super::component::Id;

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
