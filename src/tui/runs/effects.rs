//! The runner's part of a run: one run through the one run path
//! (`run::plan`, `run::stream`, `run::finish`), its deltas fed to both
//! streaming analysers as they arrive, a continuation set up by
//! `run::continuation`, runs on a model recorded in this workbench's
//! session.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::AbortHandle;

use super::{Analysers, Prefill, RunEnd, RunError, RunJob, RunMsg, Source};
use crate::llm::config::ProvidersFileError;
use crate::llm::registry::{Choice, Registry};
use crate::llm::structured::Path as StructuredPath;
use crate::llm::{self, Event as LlmEvent};
use crate::output::jsonl::JsonlAnalysis;
use crate::output::schema::CompiledSchema;
use crate::output::sweep::SweepSchemas;
use crate::run::target::{ResolveError, Resolved};
use crate::session::Recorder;
use crate::tui::Event;
use crate::tui::choice::ProviderChoice;
use crate::tui::choice::registry_choice;
use crate::tui::work::RunContext;

/// Start `job` on the runtime; its news comes back as [`Event::Run`]. A
/// panic in a run is reported as a failed run, never left to take the
/// workbench down or hang it. The switch returned stops it with what
/// arrived recorded ([`super::stop`]); the handle drops it outright.
pub(in crate::tui) fn spawn(
    tx: UnboundedSender<Event>,
    ctx: RunContext,
    start: Instant,
    job: RunJob,
) -> (AbortHandle, super::Stop) {
    let id = job.id;
    tracing::info!("run {id}: start ({:?}, limit {:?})", job.provider, job.max_tokens);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let handle = tokio::spawn(async move {
        // A panic in a run is reported as a failed run, never
        // left to take the workbench down or hang it.
        let run = std::panic::AssertUnwindSafe(run_task(&tx, job, ctx, start, stopped));
        let msg = match futures_util::FutureExt::catch_unwind(run).await {
            Ok(Ok(end)) => RunMsg::Done(Box::new(end)),
            Ok(Err(e)) => {
                tracing::warn!("run {id}: {e}");
                RunMsg::Failed(e)
            }
            Err(_) => RunMsg::Failed(RunError::Panicked),
        };
        let _ = tx.send(Event::Run { id, msg });
    })
    .abort_handle();
    (handle, stop)
}

fn ms_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The target of a job: the recording itself, or the workbench's provider
/// choice resolved by the one run path (`run::target::resolve`: a replay
/// there plays the recording of exactly the job's request, or says what
/// differs).
async fn target_for(job: &RunJob, registry: &Result<Registry, ProvidersFileError>) -> Result<Resolved, RunError> {
    target_of(&job.source, &job.provider, &job.sessions_dir, registry).await
}

/// [`target_for`] from its parts.
pub(in crate::tui) async fn target_of(
    source: &Source,
    provider: &ProviderChoice,
    sessions_dir: &std::path::Path,
    registry: &Result<Registry, ProvidersFileError>,
) -> Result<Resolved, RunError> {
    match (source, provider) {
        (Source::Recording { record, reference }, _) => Ok(Resolved {
            target: crate::run::target::replay_of(record, reference.clone()),
            note: Some(format!("replay of {reference}")),
        }),
        // A replay plays the recording of exactly this request (whatever
        // prompt id it was recorded under), or says what differs.
        (Source::Prompt(spec), pick) => {
            let (registry, choice, model) = registry_choice(pick, registry).map_err(RunError::Config)?;
            let (spec, dir) = (spec.clone(), sessions_dir.to_path_buf());
            tokio::task::spawn_blocking(move || {
                crate::run::target::resolve(&registry, &choice, model.as_deref(), (&spec, &dir)).map_err(|e| {
                    match (e, choice) {
                        (ResolveError::Replay(e), _) => RunError::Replay(Box::new(e)),
                        (ResolveError::Provider(source), Choice::Named(name)) => RunError::Provider { name, source },
                        (ResolveError::Provider(e), Choice::Local) => RunError::Local(e),
                        (ResolveError::Provider(e), Choice::Replay) => RunError::NoRecording(e),
                    }
                })
            })
            .await?
        }
    }
}

/// One run through the one run path (`run::plan`, `run::stream`,
/// `run::finish`), its deltas fed to both analysers as they arrive; runs on
/// a model (not replays) are recorded.
async fn run_task(
    tx: &UnboundedSender<Event>,
    job: RunJob,
    ctx: RunContext,
    start: Instant,
    stopped: tokio::sync::watch::Receiver<bool>,
) -> Result<RunEnd, RunError> {
    let id = job.id;
    let Resolved { target, note } = target_for(&job, &ctx.registry).await?;
    let target = super::stop::stoppable(target, stopped);
    let (spec, mut plan, feed) = planned(&job, &target)?;
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
    let schemas = schemas_of(&plan, &spec, &job)?;
    let mut an = Analysers::new(&schemas, job.tg_python);
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
    let outcome = crate::run::finish(info, &spec, &plan, started_ms, &transcript, None);
    let notes = run_notes(&outcome, &spec, &jsonl);
    let records = matches!(
        (&job.provider, &job.source),
        (
            ProviderChoice::Local | ProviderChoice::Configured { .. },
            Source::Prompt(_)
        )
    );
    let token_ids = ids_on_show(&job.prefill, &plan, &outcome.record);
    let continuation_token = outcome.record.continuation_token.clone();
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
        structured_path: plan.path,
        error: transcript.error.clone(),
        recorded: saved_as,
        notes,
        token_ids,
        continuation_token,
    })
}

/// The spec and plan of a job (a recording replays its own plan), set up
/// as a continuation when the job goes on from an answer (`c`), as `run
/// --continue` sets it up; and the answer so far the view starts from
/// (only its complete lines after a follow-up turn).
fn planned(
    job: &RunJob,
    target: &crate::llm::registry::Target,
) -> Result<(crate::run::Spec, crate::run::Plan, String), RunError> {
    // The limit is the spec's; a recording replays its own request at it.
    let spec = job.spec();
    let mut plan = match &job.source {
        Source::Prompt(_) => crate::run::plan(&spec, target)?,
        Source::Recording { record, .. } => crate::run::Plan::recorded(record, spec.cli.max_tokens),
    };
    if !job.prefill.text.is_empty() {
        crate::run::continuation::set_up(
            &mut plan,
            target,
            &job.prefill.text,
            job.prefill.token_ids.clone(),
            job.prefill.continuation_token.as_deref(),
        );
    }
    let feed = crate::run::continuation::asked(&plan, &job.prefill.text).1.to_owned();
    Ok((spec, plan, feed))
}

/// The schemas the analysers check against: the job's, or a wrapped native
/// answer's (`{"items": …}`), which is analysed as one.
fn schemas_of(plan: &crate::run::Plan, spec: &crate::run::Spec, job: &RunJob) -> Result<Arc<SweepSchemas>, RunError> {
    let wrapped = match plan.analysis_schema(spec.prompt.schema.as_ref()) {
        Some(s) if plan.path == StructuredPath::NativeWrapped => {
            Some(Arc::new(SweepSchemas::of_response(false, Some(&s))?))
        }
        _ => None,
    };
    Ok(wrapped.unwrap_or_else(|| job.schemas.clone()))
}

/// The token ids behind the text a run's view ends with: a fresh run's own,
/// a continuation's as `run::continuation` stitches them (after a prefill,
/// those it went on from and then its own; else none).
fn ids_on_show(prefill: &Prefill, plan: &crate::run::Plan, record: &crate::session::RunRecord) -> Option<Vec<u32>> {
    if prefill.text.is_empty() {
        return crate::run::continuation::exact_ids(record);
    }
    let (how, _) = crate::run::continuation::asked(plan, &prefill.text);
    crate::run::continuation::ids_after(prefill.token_ids.clone(), how, record)
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

/// Append a run to this workbench's session (created on first use).
pub(in crate::tui) fn record(
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
