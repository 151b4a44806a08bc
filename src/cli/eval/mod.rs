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

mod batch;
mod progress;
mod records;
mod setup;
mod strategy;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::out::{Category, CliError, Format, Out};
use super::params::Sampling;
use super::run::StructuredArg;
use super::{Cli, io_err};
use crate::eval::engine::{self, Ask, Matrix, Planned, PromptPlan};
use crate::eval::strategy::Strategy;
use crate::eval::{self, RunSummary};
use crate::llm::structured::Path as Structured;
use crate::session::Recorder;
use progress::Progress;
use records::{batch_price, peak_rss_kib, run_record, tagged, twin_record};
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
    /// Provider: `local` (the embedded llama-server), `replay` (the recording of each prompt × input's exact
    /// request, cut at every limit), or a name configured in cutline.toml.
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
    /// Run by the provider's batch API (half the price, a 24-hour window):
    /// every run not yet recorded is sent as batches, polled, collected and
    /// recorded; the same command again resumes. See also `cutline batches`.
    #[command(flatten)]
    pub batch: batch::BatchArgs,
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

fn limits_arg(s: &str) -> Result<Limits, eval::LimitsError> {
    eval::parse_limits(s).map(Limits)
}

/// Run `eval`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    if let Some(Strategies(strategies)) = &args.strategy {
        return strategy::run(args, strategies, cli, out);
    }
    let who = who(args)?;
    let ask = Arc::new(ask_of(args, cli, &who));
    let batching = batch::prepare(args, &who)?;
    let io = io_err;
    let (m, warnings) = engine::plan(prompt_plans(args, cli, &who, out)?, &ask)?;
    for w in warnings {
        out.warn(w).map_err(io)?;
    }
    let m = Arc::new(m);
    let (mut recorder, session_ref, session_path) = open(args, cli, &m, &who)?;
    let (done, session_warnings) = engine::resume(&m, &session_path)
        .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", session_path.display())).because(e))?;
    for w in session_warnings {
        out.warn(w).map_err(io)?;
    }
    let (pending, skipped_runs) = m.split(done);
    let (pending, held) = hold_in_batches(args, pending, &session_path, out)?;
    let concurrency = args
        .concurrency
        .map_or(if who.is_local { 1 } else { 4 }, |c| c as usize);
    let plan_rec = records::plan(
        (&m, &ask, &session_ref),
        concurrency,
        batching.as_ref().map(|b| b.api.name()),
        pending.len(),
    );
    out.record(&plan_rec).map_err(io)?;
    // Skipped runs first, in plan order. Not sized to the plan: a batch
    // file's runs have no summary here (a ~400-byte slot per run, 40 MB at
    // 100,000 runs, was reserved for nothing; issue 37).
    let mut summaries: Vec<RunSummary> = Vec::new();
    for s in skipped_runs {
        out.record(&run_record(&s)).map_err(io)?;
        summaries.push(s);
    }
    if let Some(file) = &args.batch.batch_file {
        return batch::write_file(&m, &ask, &pending, file, out);
    }
    let skipped = summaries.len();
    let mut events = CliEvents {
        out,
        progress: Progress::new(
            m.planned.len(),
            skipped,
            std::io::stderr().is_terminal() && !args.no_progress,
        ),
    };
    let work = Work {
        pending,
        concurrency,
        batching,
    };
    let mut executed = execute(args, &m, &ask, work, (&session_path, &mut recorder), &mut events, &who)?;
    executed.pending += held;
    events.progress.clear();
    // Moved, never copied: 100,000 summaries are ~40 MB.
    if summaries.is_empty() {
        summaries = std::mem::take(&mut executed.summaries);
    } else {
        summaries.extend(std::mem::take(&mut executed.summaries));
    }
    let where_recorded = Recorded {
        session_ref: &session_ref,
        plan_rec: &plan_rec,
        recorder: &recorder,
    };
    finish(args, &m, &ask, &summaries, &executed, &where_recorded, events.out)
}

/// Runs still in provider batches are never sent again by any path: an
/// eval that does not collect batches (streamed, `--batch-file`) leaves
/// them out, says so, and counts them pending (exit 10). `--batch-results`
/// sends nothing, so it may record them.
fn hold_in_batches<W: Write>(
    args: &Args,
    pending: Vec<Planned>,
    session: &Path,
    out: &mut Out<W>,
) -> Result<(Vec<Planned>, usize), CliError> {
    if args.batch.batch || args.batch.batch_results.is_some() {
        return Ok((pending, 0));
    }
    let (pending, held) = engine::hold_in_batches(pending, &engine::in_batches(session)?);
    if held > 0 {
        out.warn(format!(
            "{held} runs are still in provider batches of this session: not sent again; `eval --batch` on it \
             collects them"
        ))
        .map_err(io_err)?;
    }
    Ok((pending, held))
}

/// How every run of the matrix is asked, whoever answers.
fn ask_of(args: &Args, cli: &Cli, who: &Who) -> Ask {
    Ask {
        provider: args.provider.clone(),
        model: who.model.clone(),
        shared: who.shared.clone(),
        cli: args.sampling.layer(None, args.structured.map(StructuredArg::level)),
        headers: args.sampling.headers.clone(),
        limits: args.max_tokens.0.clone(),
        tg_python: cli.tg_python,
    }
}

/// The runs left to do and how: concurrently streamed, or by batches.
struct Work {
    pending: Vec<Planned>,
    concurrency: usize,
    batching: Option<batch::Batch>,
}

/// Where the eval recorded, for its last records and exit code.
struct Recorded<'a> {
    session_ref: &'a Value,
    plan_rec: &'a Value,
    recorder: &'a Recorder,
}

/// The prompts of the matrix with their inputs, gold sets and (with
/// `replay`) each input's recording.
fn prompt_plans<W: Write>(args: &Args, cli: &Cli, who: &Who, out: &mut Out<W>) -> Result<Vec<PromptPlan>, CliError> {
    let (mut raw_inputs, overlay) = loaded(args)?;
    let gold_dir = args.gold.clone().unwrap_or_else(|| cli.prompts.join("gold"));
    let mut plans = Vec::new();
    let prompts = resolve_prompts(args, &cli.workspace()?)?;
    let last = prompts.len().saturating_sub(1);
    for (k, cfg) in prompts.into_iter().enumerate() {
        // The last prompt takes the inputs read; the others copy them.
        let raw = if k == last {
            raw_inputs.take().map(std::borrow::Cow::Owned)
        } else {
            raw_inputs.as_deref().map(std::borrow::Cow::Borrowed)
        };
        let inputs = inputs_of(&cfg, raw, overlay.as_ref())?;
        if let Some(w) = crate::run::plan::schema_problem(cfg.schema.as_ref()) {
            out.warn(format!("prompt {:?}: {w}", cfg.id)).map_err(io_err)?;
        }
        let gold = gold_for(&cfg, &gold_dir, &args.keys)?;
        // Empty unless replaying: a slot per input for nothing was ~250
        // bytes a run.
        let replays = if who.replay {
            inputs
                .iter()
                .map(|input| recording(cli, args, &cfg, input).map(Some))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        plans.push(PromptPlan {
            cfg,
            inputs,
            gold,
            replays,
        });
    }
    Ok(plans)
}

/// The session: `--session`, else an id of the prompts and provider only,
/// so the same eval (or one extended with inputs or limits) resumes it.
/// Opened (and locked) before it is read, so a second eval on it fails at
/// once instead of repeating runs.
fn open(args: &Args, cli: &Cli, m: &Matrix, who: &Who) -> Result<(Recorder, Value, PathBuf), CliError> {
    let ids: Vec<&str> = m.plans.iter().map(|p| p.cfg.id.as_str()).collect();
    let session_id = crate::session::session_stem(&args.session.clone().unwrap_or_else(|| {
        engine::session::session_id(&ids, &args.provider, &who.model, structured_words(args.structured))
    }));
    let path = crate::session::file_for(&cli.sessions, &session_id);
    let recorder = super::run::open_session(&cli.sessions, &session_id)
        .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", cli.sessions.display())).because(e))?;
    let session_ref = json!({"id": recorder.id(), "path": recorder.path().display().to_string()});
    Ok((recorder, session_ref, path))
}

/// Execute the pending runs: streamed, or by the provider's batches, or
/// recorded from an OpenAI batch output file, into the session at
/// `session_path`.
fn execute<W: Write>(
    args: &Args,
    m: &Arc<Matrix>,
    ask: &Arc<Ask>,
    work: Work,
    (session_path, recorder): (&Path, &mut Recorder),
    events: &mut CliEvents<'_, W>,
    who: &Who,
) -> Result<engine::Executed, CliError> {
    let Work {
        pending,
        concurrency,
        batching,
    } = work;
    if pending.is_empty() && batching.is_none() {
        return Ok(engine::Executed::default());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let result = rt.block_on(async {
        if who.is_local {
            crate::llm::local::installed()?;
        }
        if let Some(file) = &args.batch.batch_results {
            return batch::record_file(m, ask, pending, file, recorder, events);
        }
        match batching {
            Some(b) => batch::execute(args, (m, ask), pending, b, (session_path, recorder), events).await,
            None => engine::stream::execute(m.clone(), ask.clone(), pending, concurrency, recorder, events)
                .await
                .map_err(CliError::from),
        }
    });
    drop(rt);
    result
}

/// The engine's events as records on the output contract and a progress
/// bar on stderr.
struct CliEvents<'o, W: Write> {
    out: &'o mut Out<W>,
    progress: Progress,
}

impl<W: Write> engine::Events for CliEvents<'_, W> {
    fn finished(&mut self, s: &RunSummary) -> std::io::Result<()> {
        self.progress.finished(s.failed());
        self.progress.clear();
        self.out.record(&run_record(s))
    }

    fn warn(&mut self, message: String) -> std::io::Result<()> {
        self.progress.clear();
        self.out.warn(message)
    }

    fn progress(&mut self, in_flight: usize) {
        self.progress.draw(in_flight, false);
    }

    fn batch(&mut self, note: &crate::eval::batch::Note) -> std::io::Result<()> {
        self.progress.clear();
        self.out.record(&batch::note_record(note))
    }
}

/// The table, the totals and the exit: 10 while batches are pending, 4
/// when runs could not be recorded, 5 when some run failed.
fn finish<W: Write>(
    args: &Args,
    m: &Matrix,
    ask: &Ask,
    summaries: &[RunSummary],
    executed: &engine::Executed,
    recorded: &Recorded<'_>,
    out: &mut Out<W>,
) -> Result<Value, CliError> {
    let &Recorded {
        session_ref,
        plan_rec,
        recorder,
    } = recorded;
    let io = io_err;
    let (rows, twin_recs) = tables(m, ask, summaries, out)?;
    let failed = summaries.iter().filter(|s| s.failed()).count();
    let skipped = summaries.iter().filter(|s| s.skipped).count();
    let billed: u64 = summaries
        .iter()
        .filter(|s| !s.skipped)
        .map(|s| u64::from(s.prompt_tokens.unwrap_or(0)) + u64::from(s.completion_tokens.unwrap_or(0)))
        .sum();
    let mut totals = json!({
        "type": "totals",
        "runs": summaries.len(),
        "completed": summaries.len() - failed,
        "ran": summaries.len() - skipped,
        "skipped": skipped,
        "failed": failed,
        "pending": executed.pending,
        "tokens_billed": billed,
        "max_in_flight": executed.max_in_flight,
        "peak_rss_kib": peak_rss_kib(),
        "session": session_ref,
    });
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
    // A provider's batch API bills at its batch price; the offline files
    // ran on a server of the user's, which gives no discount.
    if args.batch.batch {
        batch_price(billed, &mut totals, &mut text);
    }
    out.record(&totals).map_err(io)?;
    out.pretty(&text).map_err(io)?;
    // Serialised straight from the summaries: 100,000 runs never become a
    // `Value` tree (BENCHMARKS.md, "Sessions of 100,000 runs").
    let data = Data {
        session: session_ref,
        plan: plan_rec,
        runs: summaries,
        summary: &rows,
        twins: &twin_recs,
        totals: &totals,
    };
    match exit(summaries, executed, recorder, args.batch.batch) {
        Some((category, message)) => {
            let mut err = CliError::new(category, message);
            err.detail = Some(if out.format() == Format::Json {
                serde_json::to_value(&data).unwrap_or(Value::Null)
            } else {
                totals.clone()
            });
            Err(err)
        }
        None => {
            out.envelope(&data);
            Ok(Value::Null)
        }
    }
}

/// The envelope's data: the session, the plan, every run's summary, the
/// table, the twins and the totals.
#[derive(serde::Serialize)]
struct Data<'a> {
    session: &'a Value,
    plan: &'a Value,
    runs: &'a [RunSummary],
    summary: &'a [eval::Row],
    twins: &'a [Value],
    totals: &'a Value,
}

/// The summary and twin records of the table.
fn tables<W: Write>(
    m: &Matrix,
    ask: &Ask,
    summaries: &[RunSummary],
    out: &mut Out<W>,
) -> Result<(Vec<eval::Row>, Vec<Value>), CliError> {
    let (table_prompts, per_prompt) = m.table_prompts(ask.limits.len());
    let rows = eval::table(&table_prompts, &ask.limits, &per_prompt, summaries);
    for r in &rows {
        out.record(&tagged("summary", r)).map_err(io_err)?;
    }
    let twin_recs: Vec<Value> = eval::twins(&rows).iter().map(twin_record).collect();
    for t in &twin_recs {
        out.record(t).map_err(io_err)?;
    }
    Ok((rows, twin_recs))
}

/// The failure an eval ends with, if any: a full session or unrecorded
/// runs first (exit 4: what was paid for is not in the session yet), then
/// batches pending, then failed runs.
fn exit(
    summaries: &[RunSummary],
    executed: &engine::Executed,
    recorder: &Recorder,
    batch: bool,
) -> Option<(Category, String)> {
    let ran = summaries.iter().filter(|s| !s.skipped).count();
    if let Some(why) = &executed.full {
        let rest = if batch {
            "its batch is left uncollected: the same command with the limit raised records it from there, sending \
             nothing again"
        } else {
            "run the rest with another --session"
        };
        return Some((
            Category::InputError,
            format!(
                "{why}; the eval stopped after {ran} runs ({} not recorded); {rest}",
                executed.unrecorded.0
            ),
        ));
    }
    if let (n @ 1.., Some(first)) = &executed.unrecorded {
        return Some((
            Category::InputError,
            format!(
                "{n} of {ran} runs were not recorded in {} (first: {first}); a rerun will run them again",
                recorder.path().display()
            ),
        ));
    }
    if executed.pending > 0 {
        let how = if batch {
            "run the same command again to collect them"
        } else {
            "run it with --batch to collect them"
        };
        return Some((
            Category::BatchPending,
            format!(
                "{} runs are still in provider batches; {how} (`cutline batches` lists them)",
                executed.pending
            ),
        ));
    }
    let failed = summaries.iter().filter(|s| s.failed()).count();
    (failed > 0).then(|| {
        let first = summaries
            .iter()
            .find_map(|s| s.error.as_ref().map(|e| format!("{} on {}: {e}", s.prompt, s.input)))
            .unwrap_or_default();
        (
            Category::ProviderError,
            format!(
                "{failed} of {} runs failed (first: {first}); the others are recorded; rerun the same command to retry only the failed ones",
                summaries.len()
            ),
        )
    })
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
