//! The effects runner: owns the tokio tasks that do IO (runs, saves, loading
//! directories, sweeps) and feeds their results back as [`Event`]s. It
//! carries out the root's effects (quit, cancel, the clipboard, a
//! component's job) and lends every other to the component whose it is
//! (`Component::carry_out`, with a [`Carry`]); it names no component.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::AbortHandle;

use crate::llm::config::ProvidersFileError;
use crate::llm::registry::Registry;
use crate::session::Recorder;

use super::component::Id;
use super::work::{Carry, JobContext, RunContext};
use super::{Effect, Event};

/// Runs effects; results come back on the channel it was given.
pub struct Runner {
    tx: UnboundedSender<Event>,
    workspace: crate::store::Workspace,
    prompts_dir: PathBuf,
    sessions_dir: PathBuf,
    tasks: HashMap<u64, AbortHandle>,
    /// The stop switch of each run (not evals), by id.
    stops: HashMap<u64, super::runs::Stop>,
    recorder: Arc<Mutex<Option<Recorder>>>,
    /// The providers of cutline.toml, read at start and again each time the
    /// provider picker opens (the one explicit reload).
    registry: Arc<Mutex<Arc<Result<Registry, ProvidersFileError>>>>,
    start: Instant,
}

impl Runner {
    /// A runner sending events on `tx`.
    pub fn new(
        tx: UnboundedSender<Event>,
        workspace: crate::store::Workspace,
        sessions_dir: PathBuf,
        start: Instant,
    ) -> Self {
        Self {
            tx,
            prompts_dir: workspace.dir.clone(),
            workspace,
            sessions_dir,
            tasks: HashMap::new(),
            stops: HashMap::new(),
            recorder: Arc::new(Mutex::new(None)),
            registry: Arc::new(Mutex::new(Arc::new(Registry::load()))),
            start,
        }
    }

    /// A runner with the providers of `registry` instead of those of the
    /// config files (embedding, tests); the picker's reload reads the files.
    #[must_use]
    pub fn with_registry(self, registry: Registry) -> Self {
        if let Ok(mut g) = self.registry.lock() {
            *g = Arc::new(Ok(registry));
        }
        self
    }

    fn context(&self) -> RunContext {
        // A poisoned lock still holds the last registry loaded.
        let registry = self
            .registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        RunContext {
            registry,
            recorder: self.recorder.clone(),
        }
    }

    /// What a component's job starts with.
    fn job_context(&self, to: Id) -> JobContext {
        JobContext {
            to,
            tx: self.tx.clone(),
            run: self.context(),
            prompts_dir: self.prompts_dir.clone(),
            sessions_dir: self.sessions_dir.clone(),
        }
    }

    /// Carry out one effect: the root's own (quitting, cancelling, the
    /// clipboard, a component's job), or the component's whose it is.
    /// Returns false for [`Effect::Quit`].
    pub fn apply(&mut self, e: Effect) -> bool {
        match e {
            Effect::Quit => {
                self.abort_all();
                return false;
            }
            Effect::Cancel(id) => {
                // A run ends its stream and records what arrived; an eval
                // (whose writer recorded every run that finished) is dropped.
                if let Some(stop) = self.stops.remove(&id) {
                    tracing::info!("run {id}: stopped");
                    let _ = stop.send(true);
                } else if let Some(h) = self.tasks.remove(&id) {
                    tracing::info!("eval {id}: cancelled");
                    h.abort();
                }
            }
            Effect::Copy(text) => osc52(&text),
            Effect::Job { to, job } => job.start(self.job_context(to)),
            // Routed by the reducer; one that got here has no one to go to.
            Effect::Nav(nav) => tracing::warn!("unrouted {nav:?}"),
            mut e => {
                let run = self.context();
                let mut cx = Carry {
                    tx: &self.tx,
                    workspace: &self.workspace,
                    sessions_dir: &self.sessions_dir,
                    run,
                    registry: &self.registry,
                    start: self.start,
                    tasks: &mut self.tasks,
                    stops: &mut self.stops,
                };
                for c in super::COMPONENTS {
                    match c.carry_out(&mut cx, e) {
                        Ok(()) => return true,
                        Err(back) => e = back,
                    }
                }
                tracing::warn!("no component carries out {e:?}");
            }
        }
        true
    }

    /// Cancel every run: a run still streaming is stopped first and given
    /// up to two seconds to record what arrived (quitting, or a signal,
    /// never loses a run's answer so far); then every task is dropped.
    pub fn abort_all(&mut self) {
        for (_, stop) in self.stops.drain() {
            let _ = stop.send(true);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while self.tasks.values().any(|h| !h.is_finished()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for (_, h) in self.tasks.drain() {
            h.abort();
        }
    }
}

/// Ask the terminal to put `text` on the clipboard: OSC 52 with the text in
/// base64, written straight to the terminal between frames.
fn osc52(text: &str) {
    use base64::Engine as _;
    use std::io::Write as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(text);
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "\x1b]52;c;{b64}\x07");
    let _ = out.flush();
}
