//! `cutline eval --prompt P… [--inputs DIR|FILE.jsonl] --max-tokens 64,128,none [--provider P] [--concurrency N]`
//!
//! Runs the matrix prompts × inputs × limits (each JSON prompt's JSONL twin
//! included unless `--no-twins`), at most `--concurrency` runs in flight on
//! one shared provider, and records every run in one session. The session
//! id defaults to a hash of the prompt ids and the provider, so rerunning
//! the same command (or one with more inputs or limits) resumes: runs already recorded without error are skipped, failed ones
//! run again, a changed prompt or input runs anew.
//!
//! JSONL records: `plan`, then one `run` per run as it finishes (skipped
//! ones first, `skipped: true`), then one `summary` per prompt × limit,
//! one `twins` per JSON/JSONL pair × limit, and `totals`. Exit code 5 when
//! any run failed (the others are still run, recorded and reported).

mod progress;
mod setup;
mod strategy;

use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::out::{Category, CliError, Format, Out};
use super::params::Sampling;
use super::run::StructuredArg;
use super::{Cli, io_err};
use crate::eval::strategy::Strategy;
use crate::eval::{self, Gold, Input, KeyParts, RunSummary, TablePrompt};
use crate::llm::registry::Target;
use crate::llm::structured::Path as Structured;
use crate::llm::{ErrorKind, LlmError};
use crate::prompt::PromptConfig;
use crate::run::{Analysis, Outcome, Spec};
use crate::session::RunRecord;
use progress::Progress;
use setup::{Who, gold_for, inputs_of, loaded, recording, resolve_prompts, who};

/// Arguments of `eval`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Output: JSONL by default: a preamble, `plan`, one `run` record per run as it finishes \
(`skipped: true` for runs recorded by an earlier eval), `summary` per prompt × limit, `twins` per JSON/JSONL pair \
× limit, `totals`; `--output json` for one envelope, `--output pretty` for the table. A progress bar goes to \
stderr when it is a terminal.\n\nExit codes: 0 every run completed; 5 some run failed at the provider (the others \
are still run, recorded and reported; rerun the same command to retry only the failed ones); \
2 bad command line; 3 a prompt that does not load or render; 4 unreadable inputs or gold; \
7 the local model is not installed."
)]
pub struct Args {
    /// Prompt ids or paths; repeat the flag or separate with commas.
    #[arg(long, value_name = "PROMPT", required = true, value_delimiter = ',')]
    pub prompt: Vec<String>,
    /// Do not add each JSON prompt's JSONL twin (and vice versa) to the matrix.
    #[arg(long)]
    pub no_twins: bool,
    /// Inputs: a directory (`.txt`: the prompt's main variable; `.json`: an
    /// object of variables; id = file stem) or a JSONL file (one object of
    /// variables per line, optional `id`). Default: each prompt's sample inputs.
    #[arg(long, value_name = "DIR|FILE.jsonl")]
    pub inputs: Option<PathBuf>,
    /// Max-token limits, comma-separated; `none` is no limit.
    #[arg(long, value_name = "64,128,256,none", value_parser = limits_arg, default_value = "none")]
    pub max_tokens: Limits,
    /// Provider: `local` (the embedded llama-server), `replay` (each prompt × input's recorded run, cut at
    /// every limit), or a name configured in cutline.toml.
    #[arg(long, default_value = "local")]
    pub provider: String,
    /// Runs in flight at once (default: 1 on `local`, which decodes one at a time; 4 otherwise).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: Option<u32>,
    /// Record into (and resume from) this session id (default: `eval-<hash of the prompt ids and provider>`).
    #[arg(long)]
    pub session: Option<String>,
    /// Structured output for json prompts (as in `run`).
    #[arg(long, value_enum)]
    pub structured: Option<StructuredArg>,
    /// Temperature, top_p, stop sequences, extra headers (as in `run`).
    #[command(flatten)]
    pub sampling: Sampling,
    /// A JSON file holding an object of variables of any JSON type, laid
    /// over every input's variables (structured values for TrustGraph
    /// templates that loop over dicts and lists).
    #[arg(long = "vars", value_name = "FILE.json")]
    pub vars_file: Option<PathBuf>,
    /// Directory of gold sets `<prompt-id>.jsonl` (default: `<prompts>/gold`).
    #[arg(long, value_name = "DIR")]
    pub gold: Option<PathBuf>,
    /// Key fields that match items against the gold set (default: the
    /// schema's required string fields; e.g. `--key entity` to score the
    /// terms found whatever their definitions' wording).
    #[arg(long = "key", value_name = "FIELD")]
    pub keys: Vec<String>,
    /// No progress bar on stderr (it is drawn only when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,
    /// Compare what getting every item costs: `single` (one call at the
    /// limit), `retry-double` (while cut, again with twice the limit),
    /// `continue` (while cut, continue a JSONL answer). Reports items,
    /// calls, tokens billed, time and gold recall per strategy.
    #[arg(long, value_name = "single,retry-double,continue", value_parser = strategies_arg)]
    pub strategy: Option<Strategies>,
    /// With `--strategy retry-double`: retries at most (each doubles the limit).
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub retries: u32,
    /// With `--strategy continue`: continuation calls at most.
    #[arg(long = "continue", value_name = "N", default_value_t = 6)]
    pub continue_calls: u32,
}

/// Parsed `--strategy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strategies(pub Vec<Strategy>);

fn strategies_arg(s: &str) -> Result<Strategies, String> {
    Strategy::parse_list(s).map(Strategies)
}

/// Parsed `--max-tokens`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits(pub Vec<Option<u32>>);

fn limits_arg(s: &str) -> Result<Limits, String> {
    eval::parse_limits(s).map(Limits)
}

/// A prompt of the matrix with its inputs and gold set.
struct PromptPlan {
    cfg: PromptConfig,
    inputs: Vec<Input>,
    gold: Option<Gold>,
    /// With `--provider replay`: the recording of each input.
    replays: Vec<Option<Target>>,
}

/// One run of the matrix.
#[derive(Debug, Clone)]
struct Planned {
    key: String,
    prompt: usize,
    input: usize,
    limit: Option<u32>,
}

fn config_err(e: impl std::fmt::Display) -> CliError {
    CliError::new(Category::ConfigInvalid, e.to_string())
}

fn llm_err(e: &LlmError) -> CliError {
    let cat = if e.kind == ErrorKind::SetupRequired {
        Category::SetupRequired
    } else {
        Category::ProviderError
    };
    CliError::new(cat, e.to_string())
}

/// Run `eval`.
#[allow(clippy::too_many_lines)]
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    if let Some(Strategies(strategies)) = &args.strategy {
        return strategy::run(args, strategies, cli, out);
    }
    let prompts = resolve_prompts(args, &cli.prompts)?;
    let (raw_inputs, overlay) = loaded(args)?;
    let gold_dir = args.gold.clone().unwrap_or_else(|| cli.prompts.join("gold"));
    let limits = &args.max_tokens.0;

    let Who {
        shared,
        model,
        is_local,
        replay,
    } = who(args)?;
    let cli_layer = args.sampling.layer(None, args.structured.map(StructuredArg::level));
    let concurrency = args.concurrency.map_or(if is_local { 1 } else { 4 }, |c| c as usize);

    // Plan: every prompt × input rendered once (a template error stops the
    // eval before any request), every limit a run with its key.
    let mut plans: Vec<PromptPlan> = Vec::new();
    let mut planned: Vec<Planned> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for cfg in prompts {
        let inputs = inputs_of(&cfg, raw_inputs.as_deref(), overlay.as_ref())?;
        if let Some(w) = crate::run::plan::schema_problem(cfg.schema.as_ref()) {
            out.warn(format!("prompt {:?}: {w}", cfg.id)).map_err(|e| io_err(&e))?;
        }
        let gold = gold_for(&cfg, &gold_dir, &args.keys)?;
        let ph = eval::prompt_hash(&crate::run::snapshot(&cfg));
        let pi = plans.len();
        let mut replays: Vec<Option<Target>> = Vec::new();
        for (ii, input) in inputs.iter().enumerate() {
            let (run_provider, run_model) = if replay {
                let t = recording(cli, &cfg, input)?;
                let model = t.provider.info().model;
                (Some(t), model)
            } else {
                (None, model.clone())
            };
            let spec = eval_spec(&cfg, &input.vars, &cli_layer, &args.sampling.headers);
            let Some(target) = run_provider.as_ref().or(shared.as_ref()) else {
                continue;
            };
            let plan = crate::run::plan(&spec, target)
                .map_err(|e| config_err(format!("prompt {:?}, input {:?}: {e}", cfg.id, input.id)))?;
            replays.push(run_provider);
            let req = &plan.request;
            let ih = eval::input_hash(&input.vars, &req.system, &req.prompt);
            let sp = plan.path.as_str();
            for &limit in limits {
                let key = KeyParts {
                    prompt_id: &cfg.id,
                    prompt_hash: &ph,
                    input_hash: &ih,
                    max_tokens: limit,
                    provider: &args.provider,
                    model: &run_model,
                    structured: sp,
                }
                .key();
                if let Some(&other) = seen.get(&key) {
                    if Some(limit) != limits.first().copied() {
                        continue;
                    }
                    let o: &Planned = &planned[other];
                    let other_input = if o.prompt == pi {
                        inputs[o.input].id.clone()
                    } else {
                        String::new()
                    };
                    out.warn(format!(
                        "prompt {:?}: input {:?} is identical to input {other_input:?}; run once",
                        cfg.id, input.id
                    ))
                    .map_err(|e| io_err(&e))?;
                    continue;
                }
                seen.insert(key.clone(), planned.len());
                planned.push(Planned {
                    key,
                    prompt: pi,
                    input: ii,
                    limit,
                });
            }
        }
        plans.push(PromptPlan {
            cfg,
            inputs,
            gold,
            replays,
        });
    }

    // The session: resume what is recorded under the same keys. Its default
    // id depends on the prompts and the provider only, so rerunning the same
    // eval resumes it, and so does extending it with inputs or limits.
    let identities: Vec<String> = plans
        .iter()
        .map(|p| {
            format!(
                "{}|{}/{model}|{:?}",
                p.cfg.id,
                args.provider,
                structured_words(args.structured)
            )
        })
        .collect();
    // The file name `Recorder::create` would give this id.
    let session_id = crate::session::safe_stem(
        &args
            .session
            .clone()
            .unwrap_or_else(|| eval::default_session_id(&identities)),
    );
    let session_path = crate::session::file_for(&cli.sessions, &session_id);
    // Open (and lock) the session before reading what it holds, so a second
    // eval on the same session fails at once instead of repeating runs.
    let mut recorder = super::run::open_session(&cli.sessions, &session_id)
        .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", cli.sessions.display())))?;
    let session_ref = json!({"id": recorder.id(), "path": recorder.path().display().to_string()});
    let mut done: HashMap<String, RunSummary> = HashMap::new();
    if session_path.is_file() {
        let s = crate::session::load(&session_path)
            .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", session_path.display())))?;
        for w in &s.warnings {
            out.warn(w.clone()).map_err(|e| io_err(&e))?;
        }
        for r in s.runs {
            // A continuation call (prefilled) is not a run of the matrix.
            if r.error.is_some() || r.continues.is_some() {
                continue;
            }
            let key = eval::record_key(&r);
            let Some(&i) = seen.get(&key) else { continue };
            let p = &planned[i];
            let plan = &plans[p.prompt];
            let path = Structured::parse(&r.structured_path).unwrap_or(Structured::None);
            let schema = crate::run::analysis_schema(path, plan.cfg.schema.as_ref());
            let Ok(analysis) = Analysis::of(plan.cfg.response_type, schema.as_ref(), &r.text) else {
                continue;
            };
            let summary = eval::summarise(
                key.clone(),
                &plan.inputs[p.input].id,
                &r,
                &analysis,
                plan.gold.as_ref(),
                true,
            );
            done.insert(key, summary);
        }
    }

    let pending: Vec<Planned> = planned.iter().filter(|p| !done.contains_key(&p.key)).cloned().collect();
    let io = |e: std::io::Error| io_err(&e);
    let plan_rec = json!({
        "type": "plan",
        "session": session_ref,
        "prompts": plans.iter().map(|p| json!({"id": p.cfg.id, "response_type": p.cfg.response_type.to_string(), "inputs": p.inputs.len(), "gold": p.gold.as_ref().map(|g| g.file.clone())})).collect::<Vec<_>>(),
        "max_tokens": limits,
        "provider": args.provider,
        "model": model,
        "concurrency": concurrency,
        "runs": planned.len(),
        "pending": pending.len(),
        "skipped": planned.len() - pending.len(),
    });
    out.record(&plan_rec).map_err(io)?;

    // Skipped runs first, in plan order.
    let mut summaries: Vec<RunSummary> = Vec::with_capacity(planned.len());
    for p in &planned {
        if let Some(s) = done.remove(&p.key) {
            out.record(&run_record(&s)).map_err(io)?;
            summaries.push(s);
        }
    }

    let ids: Vec<&str> = plans.iter().map(|p| p.cfg.id.as_str()).collect();
    let table_prompts: Vec<TablePrompt> = plans
        .iter()
        .map(|p| TablePrompt {
            id: p.cfg.id.clone(),
            response_type: p.cfg.response_type.to_string(),
            twin: p.cfg.twin.clone().filter(|t| ids.contains(&t.as_str())),
        })
        .collect();
    let mut per_prompt: BTreeMap<String, usize> = BTreeMap::new();
    for p in &planned {
        *per_prompt.entry(plans[p.prompt].cfg.id.clone()).or_insert(0) += 1;
    }
    for n in per_prompt.values_mut() {
        *n /= limits.len().max(1);
    }
    let mut progress = Progress::new(
        planned.len(),
        summaries.len(),
        std::io::stderr().is_terminal() && !args.no_progress,
    );
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    // Runs whose session write failed (a full disk): said at once, counted,
    // and the eval exits non-zero at the end.
    let mut unrecorded: (usize, Option<String>) = (0, None);
    // The session reached the size cutline reads back: no run is started
    // after that, since none could be recorded.
    let mut full: Option<String> = None;
    if !pending.is_empty() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")))?;
        let plans = Arc::new(plans);
        let result: Result<(), CliError> = rt.block_on(async {
            if is_local {
                crate::llm::local::installed().map_err(|e| llm_err(&e))?;
            }
            let provider = shared;
            let (tx, mut rx) = tokio::sync::mpsc::channel::<Finished>(concurrency.min(1024));
            let spawner = tokio::spawn(spawn_runs(Runs {
                provider,
                plans: plans.clone(),
                pending,
                concurrency,
                cli: cli_layer.clone(),
                headers: args.sampling.headers.clone(),
                tx,
                in_flight: in_flight.clone(),
                max_in_flight: max_in_flight.clone(),
            }));
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                let f = tokio::select! {
                    f = rx.recv() => f,
                    _ = tick.tick() => {
                        progress.draw(in_flight.load(Ordering::Relaxed), false);
                        continue;
                    }
                };
                let Some(f) = f else { break };
                let plan = &plans[f.planned.prompt];
                let input = &plan.inputs[f.planned.input].id;
                let mut record = f.record;
                record.run_id = recorder.next_run_id();
                if let Err(e) = recorder.record(&record) {
                    unrecorded.0 += 1;
                    if crate::session::is_full(&e) && full.is_none() {
                        spawner.abort();
                        progress.clear();
                        out.warn(format!("{e}; the eval stops here")).map_err(io)?;
                        full = Some(e.to_string());
                    } else if unrecorded.1.is_none() {
                        unrecorded.1 = Some(e.to_string());
                        progress.clear();
                        out.warn(format!(
                            "could not record runs in {}: {e}; a rerun will run them again",
                            recorder.path().display()
                        ))
                        .map_err(io)?;
                    }
                }
                let s = eval::summarise(f.planned.key, input, &record, &f.analysis, plan.gold.as_ref(), false);
                drop(record);
                progress.finished(s.failed());
                progress.clear();
                out.record(&run_record(&s)).map_err(io)?;
                progress.draw(in_flight.load(Ordering::Relaxed), true);
                summaries.push(s);
                if full.is_some() {
                    break;
                }
            }
            let _ = spawner.await;
            Ok(())
        });
        progress.clear();
        drop(rt);
        result?;
    }

    // The table.
    let rows = eval::table(&table_prompts, limits, &per_prompt, &summaries);
    for r in &rows {
        out.record(&tagged("summary", r)).map_err(io)?;
    }
    let twins = eval::twins(&rows);
    let twin_recs: Vec<Value> = twins.iter().map(twin_record).collect();
    for t in &twin_recs {
        out.record(t).map_err(io)?;
    }
    let failed = summaries.iter().filter(|s| s.failed()).count();
    let skipped = summaries.iter().filter(|s| s.skipped).count();
    let totals = json!({
        "type": "totals",
        "runs": summaries.len(),
        "completed": summaries.len() - failed,
        "ran": summaries.len() - skipped,
        "skipped": skipped,
        "failed": failed,
        "max_in_flight": max_in_flight.load(Ordering::Relaxed),
        "peak_rss_kib": peak_rss_kib(),
        "session": session_ref,
    });
    out.record(&totals).map_err(io)?;
    let mut text = eval::pretty_table(&rows);
    text.push_str(&rust_i18n::t!(
        "pretty.eval_footer",
        runs = summaries.len(),
        ran = summaries.len() - skipped,
        skipped = skipped,
        failed = failed,
        session = recorder.path().display()
    ));
    text.push('\n');
    out.pretty(&text).map_err(io)?;
    let data = json!({
        "session": session_ref,
        "plan": plan_rec,
        "runs": summaries,
        "summary": rows,
        "twins": twin_recs,
        "totals": totals,
    });
    if let Some(why) = full {
        let mut err = CliError::new(
            Category::InputError,
            format!(
                "{why}; the eval stopped after {} runs ({} not recorded); run the rest with another --session",
                summaries.len() - skipped,
                unrecorded.0
            ),
        );
        err.detail = Some(if out.format() == Format::Json { data } else { totals });
        return Err(err);
    }
    if let (n @ 1.., Some(first)) = unrecorded {
        let mut err = CliError::new(
            Category::InputError,
            format!(
                "{n} of {} runs were not recorded in {} (first: {first}); a rerun will run them again",
                summaries.len() - skipped,
                recorder.path().display()
            ),
        );
        err.detail = Some(if out.format() == Format::Json { data } else { totals });
        return Err(err);
    }
    if failed > 0 {
        let first = summaries
            .iter()
            .find_map(|s| s.error.as_ref().map(|e| format!("{} on {}: {e}", s.prompt, s.input)))
            .unwrap_or_default();
        let mut err = CliError::new(
            Category::ProviderError,
            format!(
                "{failed} of {} runs failed (first: {first}); the others are recorded; rerun the same command to retry only the failed ones",
                summaries.len()
            ),
        );
        err.detail = Some(if out.format() == Format::Json { data } else { totals });
        return Err(err);
    }
    Ok(data)
}

/// A record: `type` first, then the fields of `body`.
fn tagged(kind: &str, body: &impl serde::Serialize) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), kind.into());
    if let Ok(Value::Object(fields)) = serde_json::to_value(body) {
        m.extend(fields);
    }
    Value::Object(m)
}

fn run_record(s: &RunSummary) -> Value {
    tagged("run", s)
}

fn twin_record(t: &eval::TwinRow) -> Value {
    let f1 = |r: &eval::Row| r.gold.as_ref().and_then(|g| g.f1);
    let recall = |r: &eval::Row| r.gold.as_ref().and_then(|g| g.recall);
    json!({
        "type": "twins",
        "max_tokens": t.max_tokens,
        "json_prompt": t.json.prompt,
        "jsonl_prompt": t.jsonl.prompt,
        "items_total": [t.json.items_total, t.jsonl.items_total],
        "items_mean": [t.json.items_mean, t.jsonl.items_mean],
        "valid_rate": [t.json.valid_rate, t.jsonl.valid_rate],
        "parse_ok_rate": [t.json.parse_ok_rate, t.jsonl.parse_ok_rate],
        "truncated": [t.json.truncated, t.jsonl.truncated],
        "salvaged_total": [t.json.salvaged_total, t.jsonl.salvaged_total],
        "recall": [recall(&t.json), recall(&t.jsonl)],
        "f1": [f1(&t.json), f1(&t.jsonl)],
    })
}

/// Peak resident memory of this process (Linux `VmHWM`), for the totals.
fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A finished run on its way to the writer.
struct Finished {
    planned: Planned,
    record: RunRecord,
    analysis: Analysis,
}

/// What the spawner needs.
struct Runs {
    /// The shared target (`None` with `replay`: each input has its own).
    provider: Option<Target>,
    plans: Arc<Vec<PromptPlan>>,
    pending: Vec<Planned>,
    concurrency: usize,
    /// The command line's level of the precedence.
    cli: crate::llm::params::Layer,
    headers: Vec<(String, String)>,
    tx: tokio::sync::mpsc::Sender<Finished>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
}

/// Start every pending run, never more than `concurrency` at once. A task
/// holds its permit until its result is handed to the writer, so finished
/// transcripts waiting to be written are bounded too.
async fn spawn_runs(r: Runs) {
    let sem = Arc::new(tokio::sync::Semaphore::new(r.concurrency));
    for p in r.pending {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            return;
        };
        let Some(provider) = r.plans[p.prompt].replays[p.input]
            .clone()
            .or_else(|| r.provider.clone())
        else {
            continue;
        };
        let tx = r.tx.clone();
        let in_flight = r.in_flight.clone();
        let max_in_flight = r.max_in_flight.clone();
        let spec = eval_spec(
            &r.plans[p.prompt].cfg,
            &r.plans[p.prompt].inputs[p.input].vars,
            &r.cli,
            &r.headers,
        )
        .limit(p.limit);
        tokio::spawn(async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            max_in_flight.fetch_max(now, Ordering::SeqCst);
            let mut result = crate::run::execute(&provider, &spec, None, |_, _| {}).await;
            // A pooled keep-alive connection the server closed just as it was
            // reused fails before any byte is sent back: nothing was
            // generated, so the run is simply sent again (twice at most).
            for _ in 0..2 {
                match &result {
                    Ok(o)
                        if o.record.text.is_empty()
                            && o.record.error.as_ref().is_some_and(|e| e.kind == ErrorKind::Connect) =>
                    {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        result = crate::run::execute(&provider, &spec, None, |_, _| {}).await;
                    }
                    _ => break,
                }
            }
            in_flight.fetch_sub(1, Ordering::SeqCst);
            let finished = match result {
                Ok(Outcome { record, analysis, .. }) => Finished {
                    planned: p,
                    record,
                    analysis,
                },
                Err(e) => {
                    // The plan rendered every prompt already; this is a
                    // prompt whose schema does not compile.
                    let t = crate::llm::Transcript {
                        finish: Some(crate::llm::FinishReason::Error),
                        error: Some(LlmError::new(ErrorKind::BadRequest, e.to_string())),
                        ..crate::llm::Transcript::default()
                    };
                    let Ok(plan) = crate::run::plan(&spec, &provider) else {
                        return;
                    };
                    let info = provider.provider.info();
                    let Ok(o) = crate::run::finish(info, &spec, &plan, crate::session::now_ms(), &t, None) else {
                        return;
                    };
                    Finished {
                        planned: p,
                        record: o.record,
                        analysis: o.analysis,
                    }
                }
            };
            let _ = tx.send(finished).await;
            drop(permit);
        });
    }
}

/// The spec of one prompt × input: the command line's level set, no limit
/// yet (each run sets its own).
fn eval_spec(
    cfg: &PromptConfig,
    vars: &Map<String, Value>,
    cli: &crate::llm::params::Layer,
    headers: &[(String, String)],
) -> Spec {
    let mut spec = Spec::new(cfg.clone(), vars.clone());
    spec.cli = cli.clone();
    spec.headers = headers.to_vec();
    spec
}

/// The `--structured` choice as the session id's identity saw it before
/// the one run path (kept, so existing eval sessions still resume).
fn structured_words(s: Option<StructuredArg>) -> Option<Structured> {
    match s {
        None | Some(StructuredArg::Off) => None,
        Some(StructuredArg::Native) => Some(Structured::Native),
        Some(StructuredArg::Prompt) => Some(Structured::Prompt),
    }
}
