//! The effects runner: owns the tokio tasks that do IO (runs, saves, loading
//! directories, sweeps) and feeds their results back as [`Event`]s. It only
//! dispatches: each effect is carried out by its feature's `effects.rs`.

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
use super::remember::effects as remember;
use super::work::{Job as _, JobContext, RunContext};
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

    /// Run `f` (given the sessions directory) on the blocking pool and send
    /// the event it returns.
    fn spawn_blocking(&self, f: impl FnOnce(PathBuf) -> Option<Event> + Send + 'static) {
        let tx = self.tx.clone();
        let dir = self.sessions_dir.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(ev) = f(dir) {
                let _ = tx.send(ev);
            }
        });
    }

    /// Carry out one effect. Returns false for [`Effect::Quit`].
    pub fn apply(&mut self, e: Effect) -> bool {
        match e {
            Effect::Quit => {
                self.abort_all();
                return false;
            }
            Effect::LoadPrompts => super::prompts::spawn_load(self.tx.clone(), self.workspace.clone()),
            Effect::LoadSessions => super::sessions::spawn_load(self.tx.clone(), self.sessions_dir.clone()),
            Effect::Start(job) => {
                self.tasks.retain(|_, h| !h.is_finished());
                self.stops.retain(|id, _| self.tasks.contains_key(id));
                let id = job.id;
                let (h, stop) = super::runs::spawn(self.tx.clone(), self.context(), self.start, *job);
                self.tasks.insert(id, h);
                self.stops.insert(id, stop);
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
            Effect::Save(p) => super::editor::spawn_save(self.tx.clone(), self.prompts_dir.clone(), p),
            Effect::Copy(text) => osc52(&text),
            // The event loop runs the editor with the terminal suspended;
            // a runner without a terminal (tests) cannot.
            Effect::EditExternally { field, .. } => {
                let _ = self.tx.send(Event::EditedExternally {
                    field,
                    result: Err(super::editor::external::ExternalError::NoTerminal),
                });
            }
            Effect::LoadProviders => super::providers::spawn_load(self.tx.clone(), self.registry.clone()),
            Effect::LoadGold(ids) => {
                super::compare::spawn_load_gold(self.tx.clone(), self.prompts_dir.join("gold"), ids);
            }
            Effect::WriteMigrated { config, overwrite } => {
                super::migrate::spawn_write(self.tx.clone(), self.prompts_dir.clone(), config, overwrite);
            }
            // Written at once: it comes just before the workbench exits.
            Effect::Remember(r) => remember::remember(&self.sessions_dir, &r),
            Effect::LoadRemembered => self.spawn_blocking(move |dir| remember::remembered(&dir).map(Event::Remembered)),
            Effect::WriteReport { session, runs, py } => {
                let dirs = (self.sessions_dir.clone(), self.prompts_dir.clone());
                super::report::spawn(self.tx.clone(), dirs.0, dirs.1, session, runs, py);
            }
            Effect::SaveModel(job) => self.spawn_blocking(move |_| {
                let r = super::providers::save_model(&job);
                tracing::info!("save model {} for {}: {r:?}", job.model, job.provider);
                Some(Event::ModelSaved(r))
            }),
            Effect::Costs(job) => job.start(self.job_context(Id("costs"))),
            Effect::Job { to, job } => job.start(self.job_context(to)),
            Effect::Eval(job) => {
                self.tasks.retain(|_, h| !h.is_finished());
                let id = job.id;
                let gold = self.prompts_dir.join("gold");
                let h = super::eval::spawn(self.tx.clone(), self.context(), gold, *job);
                self.tasks.insert(id, h);
            }
            Effect::Sweep(job) => super::sweep::spawn(self.tx.clone(), job),
            // Routed by the reducer; one that got here has no one to go to.
            Effect::Nav(nav) => tracing::warn!("unrouted {nav:?}"),
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
