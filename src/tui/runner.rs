//! The effects runner: owns the tokio tasks that do IO (runs, saves, loading
//! directories, sweeps) and feeds their results back as [`Event`]s.

mod costs;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::AbortHandle;

use crate::llm::registry::{Choice, Registry};
use crate::llm::structured::Path as StructuredPath;
use crate::llm::{self, Event as LlmEvent};
use crate::output::json::{JsonAnalysis, SalvagedElement};
use crate::output::jsonl::JsonlAnalysis;
use crate::output::position::line_col;
use crate::output::schema::CompiledSchema;
use crate::output::stream::{Completed, JsonStream, JsonlStream};
use crate::output::sweep::{SweepSchemas, sweep};
use crate::output::tokens::{Tokenizer, boundaries};
use crate::run::target::{Recording, Resolved};
use crate::session::Recorder;

use super::event::{
    Effect, Event, Prefill, ProviderChoice, ProviderEntry, RunEnd, RunJob, RunMsg, Source, SweepData, SweepInput,
    SweepJob, WriteOutcome,
};
use super::files;

/// Runs effects; results come back on the channel it was given.
pub struct Runner {
    tx: UnboundedSender<Event>,
    prompts_dir: PathBuf,
    sessions_dir: PathBuf,
    tasks: HashMap<u64, AbortHandle>,
    recorder: Arc<Mutex<Option<Recorder>>>,
    /// The providers of cutline.toml, read at start and again each time the
    /// provider picker opens (the one explicit reload).
    registry: Arc<Mutex<Arc<Result<Registry, String>>>>,
    start: Instant,
}

impl Runner {
    /// A runner sending events on `tx`.
    pub fn new(tx: UnboundedSender<Event>, prompts_dir: PathBuf, sessions_dir: PathBuf, start: Instant) -> Self {
        Self {
            tx,
            prompts_dir,
            sessions_dir,
            tasks: HashMap::new(),
            recorder: Arc::new(Mutex::new(None)),
            registry: Arc::new(Mutex::new(Arc::new(Registry::load().map_err(|e| e.to_string())))),
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
        let registry = self.registry.lock().map_or_else(
            |_| Arc::new(Err("provider config unavailable".to_owned())),
            |g| g.clone(),
        );
        RunContext {
            registry,
            recorder: self.recorder.clone(),
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

    fn spawn_report(&self, session: String, runs: Vec<usize>) {
        let prompts = self.prompts_dir.clone();
        self.spawn_blocking(move |dir| {
            let r = files::write_report(&dir, &prompts, &session, &runs);
            tracing::info!("report of {session} {runs:?}: {r:?}");
            Some(Event::ReportWritten(r))
        });
    }

    fn spawn_load_sessions(&self) {
        let dir = self.sessions_dir.clone();
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let sessions: Vec<_> = crate::session::list(&dir)
                .iter()
                .filter_map(|p| match crate::session::load(p) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        tracing::warn!("session {}: {e}", p.display());
                        None
                    }
                })
                .collect();
            let _ = tx.send(Event::SessionsLoaded(sessions));
        });
    }

    /// Carry out one effect. Returns false for [`Effect::Quit`].
    pub fn apply(&mut self, e: Effect) -> bool {
        match e {
            Effect::Quit => {
                self.abort_all();
                return false;
            }
            Effect::LoadPrompts => {
                let dir = self.prompts_dir.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let (prompts, errors, warnings) = crate::store::load_dir(&dir);
                    tracing::info!(
                        "loaded {} prompts, {} errors from {}",
                        prompts.len(),
                        errors.len(),
                        dir.display()
                    );
                    let _ = tx.send(Event::PromptsLoaded {
                        prompts,
                        errors: errors.iter().map(ToString::to_string).collect(),
                        warnings: warnings.iter().map(ToString::to_string).collect(),
                    });
                });
            }
            Effect::LoadSessions => self.spawn_load_sessions(),
            Effect::Start(job) => {
                self.tasks.retain(|_, h| !h.is_finished());
                let id = job.id;
                tracing::info!("run {id}: start ({:?}, limit {:?})", job.provider, job.max_tokens);
                let tx = self.tx.clone();
                let ctx = self.context();
                let start = self.start;
                let h = tokio::spawn(async move {
                    // A panic in a run is reported as a failed run, never
                    // left to take the workbench down or hang it.
                    let run = std::panic::AssertUnwindSafe(run_task(&tx, *job, ctx, start));
                    let msg = match futures_util::FutureExt::catch_unwind(run).await {
                        Ok(Ok(end)) => RunMsg::Done(Box::new(end)),
                        Ok(Err(e)) => {
                            tracing::warn!("run {id}: {e}");
                            RunMsg::Failed(e)
                        }
                        Err(_) => RunMsg::Failed("internal error: the run panicked (see the log)".into()),
                    };
                    let _ = tx.send(Event::Run { id, msg });
                });
                self.tasks.insert(id, h.abort_handle());
            }
            Effect::Cancel(id) => {
                if let Some(h) = self.tasks.remove(&id) {
                    tracing::info!("run {id}: cancelled");
                    h.abort();
                }
            }
            Effect::Save(p) => {
                let tx = self.tx.clone();
                let dir = self.prompts_dir.clone();
                tokio::task::spawn_blocking(move || {
                    let r = crate::store::save_in(&p, &dir)
                        .map(|()| p.origin.file.clone())
                        .map_err(|e| e.to_string());
                    tracing::info!("save {}: {r:?}", p.id);
                    let _ = tx.send(Event::Saved(r));
                });
            }
            Effect::Copy(text) => osc52(&text),
            // The event loop runs the editor with the terminal suspended;
            // a runner without a terminal (tests) cannot.
            Effect::EditExternally { field, .. } => {
                let _ = self.tx.send(Event::EditedExternally {
                    field,
                    result: Err("no terminal to run the editor in".into()),
                });
            }
            Effect::LoadProviders => self.spawn_load_providers(),
            Effect::LoadGold(ids) => self.spawn_load_gold(ids),
            Effect::WriteMigrated { config, overwrite } => self.spawn_write_migrated(config, overwrite),
            // Written at once: it comes just before the workbench exits.
            Effect::Remember(r) => files::remember(&self.sessions_dir, &r),
            Effect::LoadRemembered => self.spawn_blocking(move |dir| files::remembered(&dir).map(Event::Remembered)),
            Effect::WriteReport { session, runs } => self.spawn_report(session, runs),
            Effect::SaveModel(job) => self.spawn_blocking(move |_| {
                let r = files::save_model(&job);
                tracing::info!("save model {} for {}: {r:?}", job.model, job.provider);
                Some(Event::ModelSaved(r))
            }),
            Effect::Costs(job) => self.spawn_costs(*job),
            Effect::Sweep(job) => {
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compute_sweep(&job))) {
                        Ok(data) => {
                            let _ = tx.send(Event::SweepReady(Box::new(data)));
                        }
                        Err(_) => tracing::error!("sweep panicked"),
                    }
                });
            }
        }
        true
    }

    /// Run the strategies of `S` on the pair; a panic is reported as a failure.
    fn spawn_costs(&self, job: crate::tui::event::CostJob) {
        let tx = self.tx.clone();
        let ctx = self.context();
        tokio::spawn(async move {
            let ids = job.ids;
            tracing::info!("strategies on runs {ids:?}: start");
            let work = std::panic::AssertUnwindSafe(costs::run(job, ctx));
            let result = futures_util::FutureExt::catch_unwind(work)
                .await
                .unwrap_or_else(|_| Err("internal error: the strategies panicked (see the log)".into()));
            if let Err(e) = &result {
                tracing::warn!("strategies on runs {ids:?}: {e}");
            }
            let _ = tx.send(Event::CostsDone { ids, result });
        });
    }

    fn spawn_load_providers(&self) {
        let tx = self.tx.clone();
        let slot = self.registry.clone();
        tokio::task::spawn_blocking(move || {
            let registry = Registry::load().map_err(|e| e.to_string());
            let r = registry.as_ref().map(entries).map_err(Clone::clone);
            if let Err(e) = &r {
                tracing::warn!("providers: {e}");
            }
            if let Ok(mut g) = slot.lock() {
                *g = Arc::new(registry);
            }
            let _ = tx.send(Event::ProvidersLoaded(r));
        });
    }

    fn spawn_load_gold(&self, ids: Vec<String>) {
        let dir = self.prompts_dir.join("gold");
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let result = load_gold(&dir, &ids);
            let _ = tx.send(Event::GoldLoaded { ids, result });
        });
    }

    fn spawn_write_migrated(&self, config: Box<crate::prompt::PromptConfig>, overwrite: bool) {
        let tx = self.tx.clone();
        let dir = self.prompts_dir.clone();
        tokio::task::spawn_blocking(move || {
            let outcome = write_migrated(&config, &dir, overwrite);
            tracing::info!("write migrated {}: {outcome:?}", config.id);
            let _ = tx.send(Event::MigrateWritten(outcome));
        });
    }

    /// Cancel every run.
    pub fn abort_all(&mut self) {
        for (_, h) in self.tasks.drain() {
            h.abort();
        }
    }
}

/// The configured providers with whether each one's key variable is set
/// (the key itself is never read here), or the config's error.
pub fn load_providers() -> Result<Vec<ProviderEntry>, String> {
    Registry::load().map(|r| entries(&r)).map_err(|e| e.to_string())
}

fn entries(registry: &Registry) -> Vec<ProviderEntry> {
    registry
        .config()
        .providers
        .iter()
        .cloned()
        .map(|config| {
            let key_set = config
                .key_env()
                .is_none_or(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
            ProviderEntry { config, key_set }
        })
        .collect()
}

/// Write a migrated prompt to its `origin.file` (atomically, through the
/// store), which must lie inside the prompts directory `dir`; an existing
/// file is only replaced when `overwrite`.
pub fn write_migrated(config: &crate::prompt::PromptConfig, dir: &std::path::Path, overwrite: bool) -> WriteOutcome {
    let file = config.origin.file.clone();
    if let Err(e) = crate::store::check_inside(std::path::Path::new(&file), dir) {
        return WriteOutcome::Failed(e.to_string());
    }
    if !overwrite && std::path::Path::new(&file).exists() {
        return WriteOutcome::Exists(file);
    }
    match crate::store::save_in(config, dir) {
        Ok(()) => WriteOutcome::Written(file),
        Err(e) => WriteOutcome::Failed(e.to_string()),
    }
}

/// The first gold set `dir/<id>.jsonl` among `ids`: its file and items,
/// `None` when there is none, or where it is malformed (`file:line: cause`).
pub fn load_gold(dir: &std::path::Path, ids: &[String]) -> Result<Option<(String, Vec<serde_json::Value>)>, String> {
    for id in ids {
        let path = dir.join(format!("{id}.jsonl"));
        if !path.exists() {
            continue;
        }
        let items = crate::eval::inputs::read_gold(&path)?;
        return Ok(Some((path.display().to_string(), items)));
    }
    Ok(None)
}

/// Points and boundaries of one side of a sweep.
fn side(input: &SweepInput) -> (Vec<usize>, Vec<crate::output::sweep::SweepPoint>, bool) {
    let (bounds, estimated) = match &input.boundaries {
        Some(b) => (b.clone(), false),
        None => (boundaries(&input.text, Tokenizer::O200kBase), true),
    };
    let points = sweep(input.text.as_bytes(), &bounds, &input.schemas);
    (bounds, points, estimated)
}

/// Compute a sweep job (pure CPU; the runner does it off the UI task).
pub fn compute_sweep(job: &SweepJob) -> SweepData {
    let (jb, jp, je) = side(&job.json);
    let (lb, lp, le) = if job.jsonl.id == job.json.id {
        (jb.clone(), jp.clone(), je)
    } else {
        side(&job.jsonl)
    };
    SweepData {
        json_id: job.json.id,
        json_bounds: jb,
        json_points: jp,
        jsonl_id: job.jsonl.id,
        jsonl_bounds: lb,
        jsonl_points: lp,
        estimated: je || le,
    }
}

fn ms_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The target of a job: the recording itself, or the workbench's provider
/// choice resolved by the one run path (a replay there plays the recording
/// of the prompt with these variables, else of any input, with a note).
async fn target_for(job: &RunJob, registry: &Result<Registry, String>) -> Result<Resolved, String> {
    target_of(&job.source, &job.provider, &job.sessions_dir, registry).await
}

/// [`target_for`] from its parts.
async fn target_of(
    source: &Source,
    provider: &ProviderChoice,
    sessions_dir: &std::path::Path,
    registry: &Result<Registry, String>,
) -> Result<Resolved, String> {
    match (source, provider) {
        (Source::Recording { record, reference }, _) => Ok(Resolved {
            target: crate::run::target::replay_of(record, reference.clone()),
            note: Some(format!("replay of {reference}")),
        }),
        (Source::Prompt(spec), choice) => {
            let (choice, model) = match choice {
                ProviderChoice::Replay => (Choice::Replay, None),
                ProviderChoice::Local => (Choice::Local, None),
                ProviderChoice::Configured { name, model } => (Choice::Named(name.clone()), model.clone()),
            };
            let registry = match (&choice, registry) {
                (Choice::Named(_), Err(e)) => return Err(format!("provider config: {e}")),
                (_, Ok(r)) => r.clone(),
                (_, Err(_)) => Registry::default(),
            };
            let (dir, id, vars) = (sessions_dir.to_path_buf(), spec.prompt.id.clone(), spec.vars.clone());
            tokio::task::spawn_blocking(move || {
                crate::run::target::resolve(
                    &registry,
                    &choice,
                    model.as_deref(),
                    (&id, &vars, &dir, Recording::AnyInput),
                )
                .map_err(|e| match choice {
                    Choice::Replay => format!("{}; switch to the local model (p)", e.message),
                    Choice::Named(n) => format!("provider {n}: {e}"),
                    Choice::Local => e.message,
                })
            })
            .await
            .map_err(|e| e.to_string())?
        }
    }
}

/// One run through the one run path (`run::plan`, `run::stream`,
/// `run::finish`), its deltas fed to both analysers as they arrive; runs on
/// a model (not replays) are recorded.
async fn run_task(tx: &UnboundedSender<Event>, job: RunJob, ctx: RunContext, start: Instant) -> Result<RunEnd, String> {
    let id = job.id;
    let Resolved { target, note } = target_for(&job, &ctx.registry).await?;
    let (spec, mut plan) = match &job.source {
        Source::Prompt(spec) => {
            let spec = spec.as_ref().clone().limit(job.max_tokens);
            let plan = crate::run::plan(&spec, &target).map_err(|e| e.to_string())?;
            (spec, plan)
        }
        Source::Recording { record, .. } => {
            let prompt = record.prompt_config().unwrap_or_else(|_| crate::prompt::PromptConfig {
                id: record.prompt_id.clone(),
                ..crate::prompt::PromptConfig::default()
            });
            let spec = crate::run::Spec::new(prompt, record.variables.clone()).limit(job.max_tokens);
            (spec, crate::run::Plan::recorded(record, job.max_tokens))
        }
    };
    // A continuation (`c`): set up as `run --continue` sets it up; the view
    // starts from the answer so far (only its complete lines after a
    // follow-up turn).
    if !job.prefill.text.is_empty() {
        crate::run::continuation::set_up(
            &mut plan,
            &target,
            &job.prefill.text,
            job.prefill.token_ids.clone(),
            None,
        );
    }
    let feed = crate::run::continuation::asked(&plan, &job.prefill.text).1.to_owned();
    let info = target.provider.info();
    let _ = tx.send(Event::Run {
        id,
        msg: RunMsg::Started {
            provider: info.name.clone(),
            note,
            at_ms: ms_since(start),
        },
    });
    let started_ms = crate::session::now_ms();
    // A wrapped native answer (`{"items": …}`) is analysed as one.
    let wrapped = match plan.analysis_schema(spec.prompt.schema.as_ref()) {
        Some(s) if plan.path == StructuredPath::NativeWrapped => Some(Arc::new(
            SweepSchemas::of_response(false, Some(&s)).map_err(|e| e.to_string())?,
        )),
        _ => None,
    };
    let schemas = wrapped.unwrap_or_else(|| job.schemas.clone());
    let mut an = Analysers::new(&schemas);
    // A continuation shows the answer so far first, then what follows.
    if !feed.is_empty() {
        let _ = tx.send(Event::Run {
            id,
            msg: an.feed(&feed, &[]),
        });
    }
    let transcript = crate::run::stream(&target, &mut plan, &mut |ev, _| {
        if let LlmEvent::Delta { text, pieces } = ev {
            let _ = tx.send(Event::Run {
                id,
                msg: an.feed(text, pieces),
            });
        }
    })
    .await;
    let (json, jsonl) = an.finish();
    let outcome = crate::run::finish(info, &spec, &plan, started_ms, &transcript, None).map_err(|e| e.to_string())?;
    let notes = run_notes(&outcome, &spec, &jsonl);
    let records = matches!(
        (&job.provider, &job.source),
        (
            ProviderChoice::Local | ProviderChoice::Configured { .. },
            Source::Prompt(_)
        )
    );
    let token_ids = ids_on_show(&job.prefill, plan.continues, &outcome.record);
    let saved_as = if records {
        record(&ctx.recorder, &job.sessions_dir, &spec.prompt.id, outcome.record)
    } else {
        None
    };
    Ok(RunEnd {
        json,
        jsonl,
        finish: transcript.finish.unwrap_or(llm::FinishReason::Error),
        usage: transcript.usage,
        total_ms: transcript.total_ms,
        structured_path: plan.path.as_str().into(),
        error: transcript.error.as_ref().map(ToString::to_string),
        recorded: saved_as,
        notes,
        token_ids,
    })
}

/// The token ids behind the text a run's view ends with: a fresh run's own,
/// a prefilled continuation's after those it went on from; none after a
/// follow-up turn (the view holds only the kept lines before it) or when
/// any call reported none.
fn ids_on_show(
    prefill: &Prefill,
    asked: Option<crate::session::Continues>,
    record: &crate::session::RunRecord,
) -> Option<Vec<u32>> {
    let own = crate::run::continuation::exact_ids(record)?;
    if prefill.text.is_empty() {
        return Some(own);
    }
    let prefilled = asked == Some(crate::session::Continues::Prefill);
    let mut ids = prefill.token_ids.clone().filter(|_| prefilled)?;
    ids.extend(own);
    Some(ids)
}

/// What the status bar says about a finished run beside its outcome:
/// adjustments, finish checks, where the budget went, undefined names, and
/// what an ignored `object-schema` would reject.
fn run_notes(outcome: &crate::run::Outcome, spec: &crate::run::Spec, jsonl: &JsonlAnalysis) -> Vec<String> {
    let mut notes: Vec<String> = outcome
        .record
        .adjustments
        .iter()
        .map(crate::llm::params::Adjustment::describe)
        .collect();
    notes.extend(
        outcome
            .record
            .checks
            .iter()
            .map(crate::llm::mismatch::Mismatch::describe),
    );
    notes.extend(crate::run::budget_note(&outcome.record));
    notes.extend(crate::run::cache_note(&outcome.record));
    if !outcome.undefined.is_empty() {
        notes.push(format!("undefined, rendered empty: {}", outcome.undefined.join(", ")));
    }
    if let Some(r) = jsonl.raises {
        notes.push(r.verdict(jsonl.counts.ok));
    }
    // What an `object-schema` TrustGraph ignores would reject, as the CLI says.
    if let Some(ignored) = spec
        .prompt
        .object_schema
        .as_ref()
        .and_then(|s| CompiledSchema::compile(s).ok())
        && spec.prompt.response_type == crate::prompt::ResponseType::Jsonl
    {
        let rejects = crate::output::jsonl::object_schema_rejects(jsonl, &ignored);
        notes.push(crate::output::jsonl::object_schema_warning(&rejects));
    }
    notes
}

/// What every run task shares: the registry in force and the session.
#[derive(Clone)]
struct RunContext {
    registry: Arc<Result<Registry, String>>,
    recorder: Arc<Mutex<Option<Recorder>>>,
}

/// The streaming analysers of one run: both parsers fed every delta, the
/// array elements validated as they close.
#[derive(Debug)]
pub struct Analysers<'s> {
    json: JsonStream<'s>,
    jsonl: JsonlStream<'s>,
    schemas: &'s SweepSchemas,
    elements: usize,
}

impl<'s> Analysers<'s> {
    /// New analysers checking against `schemas`.
    pub fn new(schemas: &'s SweepSchemas) -> Self {
        Self {
            json: JsonStream::new(&schemas.json),
            jsonl: JsonlStream::new(schemas.line.as_ref()),
            schemas,
            elements: 0,
        }
    }

    /// Feed one delta; the message carrying it and what it completed.
    pub fn feed(&mut self, text: &str, pieces: &[String]) -> RunMsg {
        let mut done = Vec::new();
        self.json.feed(text.as_bytes(), &mut done);
        let mut elements = Vec::new();
        for c in done.drain(..) {
            if let Completed::Element(el) = c {
                elements.push(validate_element(self.json.text(), self.schemas, el, self.elements));
                self.elements += 1;
            }
        }
        self.jsonl.feed(text.as_bytes(), &mut done);
        let lines = done
            .into_iter()
            .filter_map(|c| match c {
                Completed::Line(o, v) => Some((o, v)),
                Completed::Element(_) => None,
            })
            .collect();
        RunMsg::Delta {
            text: text.to_owned(),
            pieces: pieces.to_vec(),
            elements,
            lines,
        }
    }

    /// The end of the text: both full analyses.
    pub fn finish(self) -> (JsonAnalysis, JsonlAnalysis) {
        let mut rest = Vec::new();
        let jsonl = self.jsonl.finish(&mut rest);
        (self.json.finish(&mut rest), jsonl)
    }
}

fn validate_element(
    text: &[u8],
    schemas: &SweepSchemas,
    el: crate::output::salvage::Element,
    index: usize,
) -> SalvagedElement {
    let errors = schemas
        .json
        .element(el.property.as_deref())
        .and_then(|s| s.validate(&el.value).err())
        .unwrap_or_default();
    SalvagedElement {
        index,
        property: el.property.map(|p| p.to_string()),
        line: line_col(text, el.span.start).0,
        value: el.value,
        valid: errors.is_empty(),
        errors,
    }
}

/// Append a run to this workbench's session (created on first use).
fn record(
    recorder: &Mutex<Option<Recorder>>,
    dir: &std::path::Path,
    prompt_id: &str,
    mut run: crate::session::RunRecord,
) -> Option<String> {
    let mut g = recorder.lock().ok()?;
    if g.is_none() {
        match Recorder::create(dir, &format!("tui-{}", crate::session::now_ms())) {
            Ok(r) => *g = Some(r),
            Err(e) => {
                tracing::warn!("cannot create a session in {}: {e}", dir.display());
                return None;
            }
        }
    }
    let rec = g.as_mut()?;
    run.run_id = rec.next_run_id();
    match rec.record(&run) {
        Ok(()) => Some(run.run_id),
        Err(e) => {
            tracing::warn!("cannot record run of {prompt_id}: {e}");
            None
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
