//! The runner's part of the eval view: the eval engine (`eval::engine`:
//! plan, resume, streamed execution, the writer) on the prompts on show,
//! its events sent back as [`Event::Eval`]. It runs on a thread with a
//! runtime of its own, so a cancel drops every run in flight and the
//! engine's spawner with them; what the writer recorded stays.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::{EvalEnd, EvalError, EvalJob, EvalMsg, EvalPlan};
use crate::eval::engine::{self, Ask, PromptPlan};
use crate::eval::{Input, RunSummary};
use crate::llm::config::ProvidersFileError;
use crate::llm::params::Layer;
use crate::llm::registry::{Choice, Registry, Target};
use crate::prompt::PromptConfig;
use crate::tui::Event;
use crate::tui::choice::ProviderChoice;
use crate::tui::choice::registry_choice;
use crate::tui::work::RunContext;

/// Start eval `job` (gold sets from `gold_dir`); its news comes back as
/// [`Event::Eval`]. Aborting the handle cancels it.
pub(in crate::tui) fn spawn(
    tx: UnboundedSender<Event>,
    ctx: RunContext,
    gold_dir: PathBuf,
    job: EvalJob,
) -> AbortHandle {
    let id = job.id;
    tracing::info!("eval {id}: start ({:?}, limits {:?})", job.provider, job.limits);
    let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
    let (done_tx, done_rx) = oneshot::channel::<()>();
    let failed_tx = tx.clone();
    let spawned = std::thread::Builder::new().name(format!("eval-{id}")).spawn(move || {
        let work = std::panic::AssertUnwindSafe(|| on_own_runtime(&tx, &ctx, &gold_dir, job, cancel_rx));
        let msg = match std::panic::catch_unwind(work) {
            Ok(Ok(Some(end))) => Some(EvalMsg::Done(end)),
            Ok(Ok(None)) => None,
            Ok(Err(e)) => Some(EvalMsg::Failed(e)),
            Err(_) => Some(EvalMsg::Failed(EvalError::Panicked)),
        };
        match &msg {
            Some(EvalMsg::Failed(e)) => tracing::warn!("eval {id}: {e}"),
            None => tracing::info!("eval {id}: cancelled"),
            _ => tracing::info!("eval {id}: done"),
        }
        if let Some(msg) = msg {
            let _ = tx.send(Event::Eval { id, msg });
        }
        let _ = done_tx.send(());
    });
    if let Err(e) = spawned {
        let msg = EvalMsg::Failed(EvalError::Thread(e));
        let _ = failed_tx.send(Event::Eval { id, msg });
    }
    // The handle the runner keeps: aborting it drops `cancel_tx`, which
    // tells the eval's thread to drop its runtime.
    tokio::spawn(async move {
        let _cancel_when_dropped = cancel_tx;
        let _ = done_rx.await;
    })
    .abort_handle()
}

/// The eval on a runtime of its own, until it ends (`Some`) or is
/// cancelled (`None`); the runtime is dropped with whatever is in flight.
fn on_own_runtime(
    tx: &UnboundedSender<Event>,
    ctx: &RunContext,
    gold_dir: &Path,
    job: EvalJob,
    cancel: oneshot::Receiver<()>,
) -> Result<Option<EvalEnd>, EvalError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(EvalError::Runtime)?;
    let out = rt.block_on(async {
        tokio::select! {
            r = eval(tx, ctx, gold_dir, job) => Some(r),
            _ = cancel => None,
        }
    });
    rt.shutdown_background();
    out.transpose()
}

/// Who answers: one target for the whole matrix, or (replay) a recording
/// per prompt × input.
struct Who {
    shared: Option<Target>,
    model: String,
    is_local: bool,
}

fn who(provider: &ProviderChoice, registry: &Result<Registry, ProvidersFileError>) -> Result<Who, EvalError> {
    let (registry, choice, model) = registry_choice(provider, registry).map_err(EvalError::Config)?;
    if choice == Choice::Replay {
        return Ok(Who {
            shared: None,
            model: String::new(),
            is_local: false,
        });
    }
    let target = registry.target(&choice, model.as_deref()).map_err(|e| match &choice {
        Choice::Named(name) => EvalError::Provider {
            name: name.clone(),
            source: e,
        },
        _ => EvalError::Setup(e),
    })?;
    Ok(Who {
        model: target.provider.info().model,
        is_local: registry.is_local(&choice),
        shared: Some(target),
    })
}

/// The recording replay plays for `cfg` on `input`: one of exactly the
/// request it makes (as `cutline eval --provider replay` finds it), or a
/// note saying why there is none and what differs (that input is left out).
fn recording(dir: &Path, cfg: &PromptConfig, input: &Input, notes: &mut Vec<String>) -> Option<Target> {
    let spec = crate::run::Spec::new(cfg.clone(), input.vars.clone());
    match crate::run::target::replay_for(&spec, dir) {
        Ok(target) => Some(target),
        Err(e) => {
            notes.push(format!("replay: input {:?}: {e}; left out", input.id));
            None
        }
    }
}

/// Each prompt with its sample inputs, gold set and (replay) recordings.
fn prompt_plans(job: &EvalJob, gold_dir: &Path, notes: &mut Vec<String>) -> Result<Vec<PromptPlan>, EvalError> {
    let replay = job.provider == ProviderChoice::Replay;
    let mut plans = Vec::new();
    for cfg in &job.prompts {
        let inputs = crate::eval::inputs::samples(cfg);
        if let Some(w) = crate::run::plan::schema_problem(cfg.schema.as_ref()) {
            notes.push(format!("prompt {:?}: {w}", cfg.id));
        }
        let gold = crate::eval::inputs::gold_of(cfg, gold_dir, &[])?;
        let replays = inputs
            .iter()
            .map(|i| replay.then(|| recording(&job.sessions_dir, cfg, i, notes)).flatten())
            .collect();
        plans.push(PromptPlan {
            cfg: cfg.clone(),
            inputs,
            gold,
            replays,
        });
    }
    Ok(plans)
}

/// The eval: plan, open and read the session, send the plan, run what is
/// pending through the engine.
async fn eval(
    tx: &UnboundedSender<Event>,
    ctx: &RunContext,
    gold_dir: &Path,
    job: EvalJob,
) -> Result<EvalEnd, EvalError> {
    let who = who(&job.provider, &ctx.registry)?;
    let mut notes = Vec::new();
    let plans = prompt_plans(&job, gold_dir, &mut notes)?;
    let ask = Arc::new(Ask {
        provider: job.provider.label().to_owned(),
        model: who.model.clone(),
        shared: who.shared,
        cli: Layer {
            structured: job.structured,
            ..Layer::default()
        },
        headers: Vec::new(),
        limits: job.limits.clone(),
        tg_python: job.tg_python,
    });
    let (m, warnings) = engine::plan(plans, &ask)?;
    notes.extend(warnings);
    if m.planned.is_empty() {
        return Err(EvalError::NothingToRun(notes.first().cloned()));
    }
    let ids: Vec<&str> = m.plans.iter().map(|p| p.cfg.id.as_str()).collect();
    let structured = engine::session::structured_word(job.structured);
    let session_id = engine::session::session_id(&ids, &ask.provider, &ask.model, structured);
    let (mut recorder, path) =
        engine::session::open(&job.sessions_dir, &session_id).map_err(|source| EvalError::Session {
            path: job.sessions_dir.clone(),
            source,
        })?;
    let (done, session_warnings) = engine::resume(&m, &path).map_err(|source| EvalError::Session {
        path: path.clone(),
        source,
    })?;
    notes.extend(session_warnings);
    let (pending, skipped) = m.split(done);
    let pending = not_in_batches(&path, pending, &mut notes)?;
    let (prompts, per_prompt) = m.table_prompts(job.limits.len());
    let plan = EvalPlan {
        session: recorder.id().to_owned(),
        path: path.display().to_string(),
        model: who.model,
        runs: m.planned.len(),
        skipped,
        prompts,
        per_prompt,
        warnings: notes,
    };
    let id = job.id;
    let _ = tx.send(Event::Eval {
        id,
        msg: EvalMsg::Planned(Box::new(plan)),
    });
    if pending.is_empty() {
        return Ok(EvalEnd::default());
    }
    if who.is_local {
        crate::llm::local::installed().map_err(EvalError::Setup)?;
    }
    let concurrency = if who.is_local { 1 } else { 4 };
    let mut events = ViewEvents {
        tx: tx.clone(),
        id,
        in_flight: 0,
    };
    let executed = engine::stream::execute(Arc::new(m), ask, pending, concurrency, &mut recorder, &mut events).await?;
    Ok(EvalEnd {
        unrecorded: executed.unrecorded.0,
        problem: executed.full.or(executed.unrecorded.1),
    })
}

/// `pending` without the runs still in provider batches of the session at
/// `path`: never sent again from here (a note says how many).
fn not_in_batches(
    path: &std::path::Path,
    pending: Vec<engine::Planned>,
    notes: &mut Vec<String>,
) -> Result<Vec<engine::Planned>, EvalError> {
    let flying = engine::in_batches(path).map_err(|e| EvalError::Session {
        path: path.to_owned(),
        source: std::io::Error::other(e),
    })?;
    let (pending, held) = engine::hold_in_batches(pending, &flying);
    if held > 0 {
        notes.push(format!(
            "{held} runs are still in provider batches of this session: not sent again; `cutline eval --batch` \
             collects them"
        ));
    }
    Ok(pending)
}

/// The engine's events as [`Event::Eval`]s.
struct ViewEvents {
    tx: UnboundedSender<Event>,
    id: u64,
    in_flight: usize,
}

impl ViewEvents {
    fn send(&self, msg: EvalMsg) {
        let _ = self.tx.send(Event::Eval { id: self.id, msg });
    }
}

impl engine::Events for ViewEvents {
    fn finished(&mut self, s: &RunSummary) -> std::io::Result<()> {
        self.send(EvalMsg::Finished(Box::new(s.clone())));
        Ok(())
    }

    fn warn(&mut self, message: String) -> std::io::Result<()> {
        self.send(EvalMsg::Warn(message));
        Ok(())
    }

    fn progress(&mut self, in_flight: usize) {
        if in_flight != self.in_flight {
            self.in_flight = in_flight;
            self.send(EvalMsg::InFlight(in_flight));
        }
    }

    fn batch(&mut self, _note: &crate::eval::batch::Note) -> std::io::Result<()> {
        Ok(())
    }
}
