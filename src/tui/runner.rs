//! The effects runner: owns the tokio tasks that do IO (runs, saves, loading
//! directories, sweeps) and feeds their results back as [`Event`]s.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::AbortHandle;

use crate::llm::replay::Replay;
use crate::llm::structured::Path as StructuredPath;
use crate::llm::{self, Event as LlmEvent, Provider, Request, Timeouts};
use crate::output::json::{JsonAnalysis, SalvagedElement};
use crate::output::jsonl::JsonlAnalysis;
use crate::output::position::line_col;
use crate::output::stream::{Completed, JsonStream, JsonlStream};
use crate::output::sweep::{SweepSchemas, sweep};
use crate::output::tokens::{Tokenizer, boundaries};
use crate::session::Recorder;

use super::event::{
    Effect, Event, ProviderChoice, ProviderEntry, RunEnd, RunJob, RunMsg, Source, SweepData, SweepInput, SweepJob,
    WriteOutcome,
};
use super::log::log;

/// Runs effects; results come back on the channel it was given.
pub struct Runner {
    tx: UnboundedSender<Event>,
    prompts_dir: PathBuf,
    sessions_dir: PathBuf,
    tasks: HashMap<u64, AbortHandle>,
    recorder: Arc<Mutex<Option<Recorder>>>,
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
            start,
        }
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
                    log(format!(
                        "loaded {} prompts, {} errors from {}",
                        prompts.len(),
                        errors.len(),
                        dir.display()
                    ));
                    let _ = tx.send(Event::PromptsLoaded {
                        prompts,
                        errors: errors.iter().map(ToString::to_string).collect(),
                        warnings: warnings.iter().map(ToString::to_string).collect(),
                    });
                });
            }
            Effect::LoadSessions => {
                let dir = self.sessions_dir.clone();
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    let sessions: Vec<_> = crate::session::list(&dir)
                        .iter()
                        .filter_map(|p| match crate::session::load(p) {
                            Ok(s) => Some(s),
                            Err(e) => {
                                log(format!("session {}: {e}", p.display()));
                                None
                            }
                        })
                        .collect();
                    let _ = tx.send(Event::SessionsLoaded(sessions));
                });
            }
            Effect::Start(job) => {
                self.tasks.retain(|_, h| !h.is_finished());
                let id = job.id;
                log(format!(
                    "run {id}: start ({:?}, limit {:?})",
                    job.provider, job.max_tokens
                ));
                let tx = self.tx.clone();
                let rec = self.recorder.clone();
                let start = self.start;
                let h = tokio::spawn(async move {
                    // A panic in a run is reported as a failed run, never
                    // left to take the workbench down or hang it.
                    let run = std::panic::AssertUnwindSafe(run_task(&tx, *job, rec, start));
                    let msg = match futures_util::FutureExt::catch_unwind(run).await {
                        Ok(Ok(end)) => RunMsg::Done(Box::new(end)),
                        Ok(Err(e)) => {
                            log(format!("run {id}: {e}"));
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
                    log(format!("run {id}: cancelled"));
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
                    log(format!("save {}: {r:?}", p.id));
                    let _ = tx.send(Event::Saved(r));
                });
            }
            Effect::LoadProviders => self.spawn_load_providers(),
            Effect::LoadGold(ids) => self.spawn_load_gold(ids),
            Effect::WriteMigrated { config, overwrite } => self.spawn_write_migrated(config, overwrite),
            Effect::Sweep(job) => {
                let tx = self.tx.clone();
                tokio::task::spawn_blocking(move || {
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compute_sweep(&job))) {
                        Ok(data) => {
                            let _ = tx.send(Event::SweepReady(Box::new(data)));
                        }
                        Err(_) => log("sweep panicked"),
                    }
                });
            }
        }
        true
    }

    fn spawn_load_providers(&self) {
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let r = load_providers();
            if let Err(e) = &r {
                log(format!("providers: {e}"));
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
            log(format!("write migrated {}: {outcome:?}", config.id));
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
    let cfg = crate::llm::config::Config::load().map_err(|e| e.to_string())?;
    Ok(cfg
        .providers
        .into_iter()
        .map(|config| {
            let key_set = config
                .key_env()
                .is_none_or(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
            ProviderEntry { config, key_set }
        })
        .collect())
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
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut items = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v = serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            items.push(v);
        }
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

async fn provider_for(job: &RunJob) -> Result<(Box<dyn Provider>, Option<String>), String> {
    match (&job.source, &job.provider) {
        (Source::Recording { record, reference }, _) => Ok((
            Box::new(Replay {
                source: reference.clone(),
                transcript: record.transcript(),
                original: record.provider.clone(),
            }),
            Some(format!("replay of {reference}")),
        )),
        (Source::Prompt(spec), ProviderChoice::Replay) => {
            let dir = job.sessions_dir.clone();
            let id = spec.prompt.id.clone();
            let vars = spec.vars.clone();
            let found = tokio::task::spawn_blocking(move || {
                crate::session::find_recording(&dir, &id, Some(&vars))
                    .map(|x| (x, true))
                    .or_else(|| crate::session::find_recording(&dir, &id, None).map(|x| (x, false)))
            })
            .await
            .map_err(|e| e.to_string())?;
            let Some(((rec, reference), same_input)) = found else {
                return Err(format!(
                    "no recorded run of prompt {:?} in {} to replay; switch to the local model (p) or record one with `cutline run {} --provider local`",
                    spec.prompt.id,
                    job.sessions_dir.display(),
                    spec.prompt.id
                ));
            };
            let note = if same_input {
                format!("replay of {reference}")
            } else {
                format!("replay of {reference} (recorded with another input)")
            };
            Ok((
                Box::new(Replay {
                    source: reference,
                    transcript: rec.transcript(),
                    original: rec.provider.clone(),
                }),
                Some(note),
            ))
        }
        (Source::Prompt(_), ProviderChoice::Local) => {
            let p = llm::local::provider(Timeouts::default()).await.map_err(|e| e.message)?;
            Ok((Box::new(p), None))
        }
        (Source::Prompt(_), ProviderChoice::Configured { name, model }) => {
            let cfg = configured(name, model.as_deref())?;
            let p = crate::llm::config::build(&cfg).map_err(|e| format!("provider {name}: {e}"))?;
            Ok((p, cfg.model.map(|m| format!("model {m}"))))
        }
    }
}

/// A configured provider read afresh from cutline.toml, with the model
/// chosen in the workbench.
fn configured(name: &str, model: Option<&str>) -> Result<crate::llm::config::ProviderConfig, String> {
    let cfg = crate::llm::config::Config::load().map_err(|e| format!("provider config: {e}"))?;
    let mut p = cfg
        .get(name)
        .cloned()
        .ok_or_else(|| format!("provider {name:?} is not configured in cutline.toml (any more)"))?;
    if let Some(m) = model {
        p.model = Some(m.to_owned());
    }
    Ok(p)
}

/// One run: provider, request, stream through both analysers, record.
async fn run_task(
    tx: &UnboundedSender<Event>,
    job: RunJob,
    recorder: Arc<Mutex<Option<Recorder>>>,
    start: Instant,
) -> Result<RunEnd, String> {
    let id = job.id;
    let (provider, note) = provider_for(&job).await?;
    let (req, path): (Request, StructuredPath) = match &job.source {
        Source::Prompt(spec) => {
            let mut spec = spec.as_ref().clone();
            spec.max_tokens = job.max_tokens;
            if let ProviderChoice::Configured { name, model } = &job.provider {
                spec.structured = configured(name, model.as_deref())?.structured_path(spec.structured);
            }
            crate::run::request(&spec).map_err(|e| e.to_string())?
        }
        Source::Recording { record, .. } => (
            Request {
                system: record.system.clone(),
                prompt: record.rendered.clone(),
                max_tokens: job.max_tokens,
                stop: record.params.stop.clone(),
                temperature: record.params.temperature,
                response_schema: None,
            },
            StructuredPath::None,
        ),
    };
    let info = provider.info();
    let _ = tx.send(Event::Run {
        id,
        msg: RunMsg::Started {
            provider: info.name.clone(),
            note,
            at_ms: ms_since(start),
        },
    });
    let started_ms = crate::session::now_ms();
    let schemas = job.schemas.clone();
    let mut an = Analysers::new(&schemas);
    let transcript = llm::collect(provider.stream(req.clone()), |ev, _| {
        if let LlmEvent::Delta { text, pieces } = ev {
            let _ = tx.send(Event::Run {
                id,
                msg: an.feed(text, pieces),
            });
        }
    })
    .await;
    let (json, jsonl) = an.finish();
    let mut saved_as = None;
    if let (ProviderChoice::Local | ProviderChoice::Configured { .. }, Source::Prompt(spec)) =
        (&job.provider, &job.source)
    {
        let mut spec = spec.as_ref().clone();
        spec.max_tokens = job.max_tokens;
        match crate::run::finish(info, &spec, &req, path, started_ms, &transcript, None) {
            Ok(outcome) => saved_as = record(&recorder, &job.sessions_dir, &spec.prompt.id, outcome.record),
            Err(e) => log(format!("run {id}: not recorded: {e}")),
        }
    }
    Ok(RunEnd {
        json,
        jsonl,
        finish: transcript.finish.unwrap_or(llm::FinishReason::Error),
        usage: transcript.usage,
        total_ms: transcript.total_ms,
        structured_path: match path {
            StructuredPath::Native => "native",
            StructuredPath::Prompt => "prompt",
            StructuredPath::None => "none",
        }
        .into(),
        error: transcript.error.as_ref().map(ToString::to_string),
        recorded: saved_as,
    })
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
        (self.json.finish(), jsonl)
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
                log(format!("cannot create a session in {}: {e}", dir.display()));
                return None;
            }
        }
    }
    let rec = g.as_mut()?;
    run.run_id = rec.next_run_id();
    match rec.record(&run) {
        Ok(()) => Some(run.run_id),
        Err(e) => {
            log(format!("cannot record run of {prompt_id}: {e}"));
            None
        }
    }
}
