//! One run, end to end, for every caller (`cutline run`, `replay`, `eval`,
//! `migrate --check` and the workbench): a provider choice resolved to a
//! target (`target`), the request planned with the precedence and the
//! model's profile (`plan`), streamed with the dynamic fallback and any
//! client-side stop (`stream`), the answer analysed by its response type
//! and structured output checked, and the run recorded in a session.

pub mod continuation;
pub mod evidence;
pub mod follow_up;
pub mod interrupt;
pub mod plan;
pub mod probe;
pub mod recorded;
pub mod retry;
pub mod stop;
pub mod target;

use futures_util::StreamExt;
use serde_json::{Map, Value, json};

use crate::llm::params::{Adjustment, Layer};
use crate::llm::registry::Target;
use crate::llm::structured::{self, Path};
use crate::llm::{self, Event, EventStream, FinishReason, Transcript};
use crate::llm::{adapt, learned};
use crate::prompt::PromptConfig;
use crate::session::{Params, Recorder, RunRecord, now_ms};

pub use crate::output::Analysis;
pub use plan::{Plan, analysis_schema, plan};

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The prompt.
    pub prompt: PromptConfig,
    /// Variables (sample input merged with overrides).
    pub vars: Map<String, Value>,
    /// The command line's (or the workbench's) values: the highest level
    /// of the precedence.
    pub cli: Layer,
    /// Extra headers from the command line, over the provider's.
    pub headers: Vec<(String, String)>,
    /// What an undefined name does: empty as in TrustGraph (ibis), or an
    /// error (`--strict-vars`).
    pub undefined: crate::prompt::render::Undefined,
    /// The Python TrustGraph's service runs on (`--tg-python`), whose
    /// limits decide which responses fail whole.
    pub tg_python: crate::output::tg::TgPython,
}

impl Spec {
    /// A spec with nothing set on the command line.
    pub fn new(prompt: PromptConfig, vars: Map<String, Value>) -> Self {
        Self {
            prompt,
            vars,
            cli: Layer::default(),
            headers: Vec::new(),
            undefined: crate::prompt::render::Undefined::default(),
            tg_python: crate::output::tg::TgPython::default(),
        }
    }

    /// This spec with the command line's max-token limit set to `n`.
    #[must_use]
    pub fn limit(mut self, n: Option<u32>) -> Self {
        self.cli.max_tokens = n;
        self
    }
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The record (also written to the session, when recording).
    pub record: RunRecord,
    /// The analysis.
    pub analysis: Analysis,
    /// The structured value, when structured output succeeded.
    pub parsed: Option<Value>,
    /// Why structured output failed, when it did.
    pub structured_error: Option<Box<structured::StructuredOutputInvalid>>,
    /// Undefined names the render touched (rendered empty, as ibis does).
    pub undefined: Vec<String>,
}

/// Why a run could not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StartError {
    /// The prompt does not render (the file, line and cause).
    #[error(transparent)]
    Render(#[from] crate::prompt::ConfigError),
}

/// Snapshot of a prompt config for the session record.
pub fn snapshot(p: &PromptConfig) -> Value {
    let mut v = crate::prompt::to_trustgraph_prompt(p);
    if let Value::Object(m) = &mut v {
        m.insert("id".into(), p.id.clone().into());
        m.insert("system".into(), p.system.clone().into());
        m.insert("stop".into(), json!(p.stop));
    }
    v
}

/// Run `spec` on `target`, calling `on_event` as events arrive, and record
/// it in `recorder` when given.
pub async fn execute(
    target: &Target,
    spec: &Spec,
    recorder: Option<&mut Recorder>,
    mut on_event: impl FnMut(&Event, &Transcript),
) -> Result<Outcome, StartError> {
    let mut plan = plan(spec, target)?;
    let started_ms = now_ms();
    let transcript = stream(target, &mut plan, &mut on_event).await;
    Ok(finish(
        target.provider.info(),
        spec,
        &plan,
        started_ms,
        &transcript,
        recorder,
    ))
}

/// How many refusals one run learns from before it gives up.
const MAX_LESSONS: usize = 6;

/// Stream `plan` on `target`. First, where the provider has a Models API
/// not read yet (or not this week), it is asked about the model and the
/// plan fitted to the answer. Then a 400/404/422 that names a field the
/// request sent (or says the endpoint is wrong) teaches cutline what the
/// model accepts: the lesson is kept (`llm::learned`), the plan fitted
/// again and the request sent once more, and the record says so. Stop
/// sequences the model refuses are applied to the text here.
pub async fn stream(target: &Target, plan: &mut Plan, on_event: &mut impl FnMut(&Event, &Transcript)) -> Transcript {
    let info = target.provider.info();
    if target.provider.describe_matters(&plan.request) && ask_models_api(target).await {
        plan.refit(target.profile(), target.provider.prefills());
    }
    let mut lessons = 0;
    loop {
        tracing::debug!(
            provider = %info.name,
            model = %info.model,
            max_tokens = ?plan.request.max_tokens,
            prefill_bytes = plan.request.prefill.len(),
            prefill_tokens = plan.request.prefill_tokens.len(),
            "request"
        );
        let events = client_stop(
            interrupt::until_interrupted(target.provider.stream(plan.request.clone())),
            &plan.client_stop,
        );
        let t = llm::collect(events, &mut *on_event).await;
        tracing::debug!(
            provider = %info.name,
            finish = ?t.finish,
            input_tokens = ?t.usage.prompt_tokens,
            output_tokens = ?t.usage.completion_tokens,
            error = ?t.error.as_ref().map(|e| e.kind),
            total_ms = t.total_ms,
            "response"
        );
        if lessons >= MAX_LESSONS || !learn_from(target, plan, &t) {
            return t;
        }
        lessons += 1;
    }
}

/// The longest a run waits for a Models API's answer before going on
/// without it.
const MODELS_API_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Ask the provider's Models API about the model when it has one and no
/// fresh answer is kept; true when an answer arrived. A failure is logged,
/// never fatal: the table and refusals still serve.
async fn ask_models_api(target: &Target) -> bool {
    // One ask at a time: runs in flight together wait for the one that
    // asks, then read its answer instead of racing ahead of it.
    static ASKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let (base, model) = target.learned_key();
    let Some(ask) = target.provider.describe() else {
        return false;
    };
    let _turn = ASKING.lock().await;
    if !learned::should_ask(&base, &model, learned::now_ms()) {
        return learned::entry(&base, &model).is_some_and(|e| e.api.is_some());
    }
    // A small answer: a server that streams or stalls on this path does
    // not hold the run up past this bound.
    let ask = tokio::time::timeout(MODELS_API_WAIT, ask);
    match ask.await.unwrap_or_else(|_| {
        Err(llm::LlmError::new(
            llm::ErrorKind::Timeout,
            format!("no answer within {} s", MODELS_API_WAIT.as_secs()),
        ))
    }) {
        Ok(Some(api)) => {
            learned::set_api(&base, &model, api);
            true
        }
        Ok(None) => false,
        Err(e) => {
            tracing::info!(model = %model, "the Models API did not answer: {e}");
            false
        }
    }
}

/// What the refusal in `t` teaches, learned and fitted into `plan`; false
/// when it teaches nothing or changes nothing.
fn learn_from(target: &Target, plan: &mut Plan, t: &Transcript) -> bool {
    let Some(e) = t.error.as_ref().filter(|_| t.text.is_empty()) else {
        return false;
    };
    let Some((url, body)) = target.provider.wire(&plan.request) else {
        return false;
    };
    let Some(lesson) = adapt::lesson(e.status, &e.message, &body, &url, &plan.profile) else {
        return false;
    };
    let info = target.provider.info();
    tracing::warn!(
        "{} ({}) refused a request: {}; sending again",
        info.name,
        info.model,
        lesson.fact
    );
    let (base, model) = target.learned_key();
    let status = e.status.unwrap_or(400);
    let message = short(&e.message);
    learned::learn(
        &base,
        &model,
        &lesson.delta,
        learned::Evidence {
            fact: lesson.fact.clone(),
            source: learned::Source::Refusal,
            status: Some(status),
            message: message.clone(),
            at_ms: learned::now_ms(),
        },
    );
    let before = plan.request.clone();
    plan.learned(Adjustment::Learned {
        fact: lesson.fact,
        status,
        message,
    });
    plan.refit(target.profile(), target.provider.prefills());
    plan.request != before
}

fn short(s: &str) -> String {
    let mut out: String = s.chars().take(200).collect();
    if s.chars().count() > 200 {
        out.push('…');
    }
    out
}

/// `events` with `stops` applied: the text ends before the first stop
/// sequence and the run finishes `stop`; the rest of the stream is read for
/// its usage (reasoning tokens included) but its text is dropped.
fn client_stop(events: EventStream, stops: &[String]) -> EventStream {
    if stops.is_empty() {
        return events;
    }
    let filter = stop::StopFilter::new(stops);
    Box::pin(futures_util::stream::unfold(
        (events, filter, false),
        |(mut events, mut filter, mut hit)| async move {
            loop {
                let ev = events.next().await?;
                let out = match ev {
                    Event::Delta { .. } if hit => continue,
                    Event::Delta { text, .. } => match filter.push(&text) {
                        stop::Step::Pass(t) if t.is_empty() => continue,
                        stop::Step::Pass(t) => Event::Delta {
                            text: t,
                            pieces: Vec::new(),
                        },
                        stop::Step::Hit(t) => {
                            hit = true;
                            if t.is_empty() {
                                continue;
                            }
                            Event::Delta {
                                text: t,
                                pieces: Vec::new(),
                            }
                        }
                    },
                    Event::Finish { usage, raw_reason, .. } if hit => Event::Finish {
                        reason: FinishReason::Stop,
                        raw_reason: Some(format!(
                            "stop sequence (applied by cutline; the server said {})",
                            raw_reason.as_deref().unwrap_or("nothing")
                        )),
                        usage,
                    },
                    Event::Finish { .. } | Event::Error(_) if !hit => {
                        let held = filter.flush();
                        if held.is_empty() {
                            ev
                        } else {
                            // Hand the held text on first; the end comes next.
                            return Some((
                                Event::Delta {
                                    text: held,
                                    pieces: Vec::new(),
                                },
                                (
                                    Box::pin(futures_util::stream::once(async { ev }).chain(events)) as EventStream,
                                    filter,
                                    hit,
                                ),
                            ));
                        }
                    }
                    other => other,
                };
                return Some((out, (events, filter, hit)));
            }
        },
    ))
}

/// Analyse and record a transcript of `plan` (also used for replays).
pub fn finish(
    info: llm::ProviderInfo,
    spec: &Spec,
    plan: &Plan,
    started_ms: u64,
    t: &Transcript,
    recorder: Option<&mut Recorder>,
) -> Outcome {
    let p = &spec.prompt;
    let schema = plan.analysis_schema(p.schema.as_ref());
    let analysis = Analysis::of(p.response_type, schema.as_ref(), &t.text, spec.tg_python);
    let (parsed, structured_error) = match (plan.path, &p.schema) {
        (Path::Native | Path::NativeWrapped | Path::Prompt, Some(schema)) if t.finish != Some(FinishReason::Error) => {
            match structured::check_on(plan.path, &t.text, schema) {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(e)),
            }
        }
        _ => (None, None),
    };
    let req = &plan.request;
    let mut record = RunRecord {
        kind: crate::session::RecordKind::Run,
        run_id: String::new(),
        started_ms,
        prompt_id: p.id.clone(),
        response_type: p.response_type,
        prompt: snapshot(p),
        system: req.system.clone(),
        rendered: req.prompt.clone(),
        variables: spec.vars.clone(),
        provider: info,
        params: Params {
            max_tokens: req.max_tokens,
            temperature: req.temperature,
            stop: plan.stop().to_vec(),
            top_p: req.top_p,
            settings: Some(plan.settings.clone()),
        },
        text: t.text.clone(),
        thinking: t.thinking.clone(),
        pieces: t.pieces.clone(),
        finish: t.finish.unwrap_or(FinishReason::Error),
        raw_reason: t.raw_reason.clone(),
        usage: t.usage,
        error: t.error.clone(),
        first_token_ms: t.first_token_ms,
        total_ms: t.total_ms,
        structured_path: plan.path,
        adjustments: plan.adjustments.clone(),
        prefill: plan.request.prefill.clone(),
        token_ids: t.token_ids.clone(),
        continues: plan.continues,
        continuation_token: t.continuation_token.clone(),
        batch: t.batch.clone(),
        checks: Vec::new(),
        analysis: analysis.summary(),
    };
    let structured_cut = structured_error
        .as_ref()
        .is_some_and(|e| e.failure.starts_with("truncated JSON"));
    record.checks = evidence::check(&record, &analysis, structured_cut);
    if let Some(rec) = recorder {
        record.run_id = rec.next_run_id();
        if let Err(e) = rec.record(&record) {
            tracing::warn!("could not record the run in {}: {e}", rec.path().display());
        }
    }
    Outcome {
        record,
        analysis,
        parsed,
        structured_error,
        undefined: plan.undefined.clone(),
    }
}

/// A line for a person about where a run's output budget went, when the
/// provider reported reasoning: "limit 400: 380 reasoning, 20 answer", and
/// the warning that matters most when a run was cut with nothing visible.
pub fn budget_note(r: &RunRecord) -> Option<String> {
    let reasoning = r.usage.reasoning_tokens?;
    let answer = r.usage.answer_tokens();
    let est = if r.usage.reasoning_estimated {
        " (estimated)"
    } else {
        ""
    };
    let limit = r
        .params
        .max_tokens
        .map_or_else(|| "no limit".to_owned(), |n| format!("limit {n}"));
    let mut s = match answer {
        Some(a) => format!("{limit}: {reasoning} reasoning{est}, {a} answer"),
        None => format!("{limit}: {reasoning} reasoning{est}"),
    };
    if r.finish == FinishReason::Length && r.text.trim().is_empty() {
        s.push_str(" — the limit was spent on reasoning");
    }
    Some(s)
}

/// A line for a person about the prompt cache, when the provider reported
/// it: "1024 of 1200 prompt tokens from the cache" (and what was written
/// to it).
pub fn cache_note(r: &RunRecord) -> Option<String> {
    let u = &r.usage;
    if u.cached_tokens.is_none() && u.cache_write_tokens.is_none() {
        return None;
    }
    let of = u.prompt_tokens.map(|p| format!(" of {p}")).unwrap_or_default();
    let written = u
        .cache_write_tokens
        .filter(|w| *w > 0)
        .map(|w| format!(", {w} written to it"))
        .unwrap_or_default();
    Some(format!(
        "{}{of} prompt tokens from the cache{written}",
        u.cached_tokens.unwrap_or(0)
    ))
}

/// The runaway loop of a run: a repeating tail in an answer the limit cut
/// (`finish: length`). A run that repeated itself and then stopped on its
/// own has no runaway loop.
pub fn loop_of(r: &RunRecord) -> Option<crate::output::loops::Loop> {
    if r.finish != FinishReason::Length {
        return None;
    }
    let t = r.transcript();
    let bounds = t.has_token_pieces().then(|| {
        let pieces: Vec<&str> = r.pieces.iter().map(|p| p.text.as_str()).collect();
        crate::output::tokens::boundaries_from_pieces(&pieces)
    });
    crate::output::loops::detect(&r.text, bounds.as_deref())
}

/// Whether a recorded run can be replayed exactly: greedy decoding
/// (temperature 0 sent) on a server that reported its tokens.
pub fn replay_exact(r: &RunRecord) -> bool {
    r.params.temperature == Some(0.0) && r.pieces.iter().all(|p| !p.delta)
}
