//! `cutline eval --strategy single,retry-double,continue`: per prompt ×
//! input × limit, one first call at the limit shared by every strategy,
//! then each strategy's own calls; every call recorded in one session.
//! With `--batch` the calls go as successive batch rounds
//! (`eval::engine::rounds`): the same command resumes a stopped one.
//!
//! JSONL records: `plan`, one `strategy_run` per cell × strategy as it
//! finishes, one `strategy` row per prompt × limit × strategy, one
//! `headline` per JSON/JSONL twin pair × limit, `totals`. Streamed, not
//! resumable: each invocation runs anew and appends to its session.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use serde_json::{Value, json};

use super::batch::Batch;
use super::setup::Who;
use super::{Args, Cli, StructuredArg};
use crate::cli::io_err;
use crate::cli::out::{Category, CliError, Out};
use crate::eval::batch::{Answers, Manifest, Note, answers, manifest};
use crate::eval::cell::{Cell, Done, Shared, run_cell};
use crate::eval::engine::rounds;
use crate::eval::strategy::{self, Strategy, StrategyRun};
use crate::prompt::PromptConfig;
use crate::run::StartError;
use crate::run::continuation::Ended;
use crate::session::Recorder;

/// Run the strategies and report.
pub fn run<W: Write>(args: &Args, strategies: &[Strategy], cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    if args.batch.batch_file.is_some() || args.batch.batch_results.is_some() {
        return Err(CliError::new(
            Category::Usage,
            "--batch-file and --batch-results carry one call per run, but a strategy's calls depend on each \
             other's answers: use --batch (successive batch rounds) or drop --strategy",
        ));
    }
    let (cells, listed, who) = cells(args, cli)?;
    let batching = super::batch::prepare(args, &who)?;
    let ids: Vec<&str> = listed.iter().map(|p| p.id.as_str()).collect();
    let recorder = open(args, cli, &ids, strategies, batching.is_some())?;
    let session_ref = json!({"id": recorder.id(), "path": recorder.path().display().to_string()});
    let io = io_err;
    let words: Vec<&str> = strategies.iter().map(|s| s.word()).collect();
    out.record(
        &json!({"type": "plan", "session": session_ref, "prompts": ids, "strategies": words,
        "max_tokens": args.max_tokens.0, "provider": args.provider, "cells": cells.len(),
        "retries": args.retries, "continue": args.continue_calls,
        "batch": batching.as_ref().map(|b| b.api.name())}),
    )
    .map_err(io)?;
    let common = Shared {
        strategies: strategies.to_vec(),
        retries: args.retries,
        continue_calls: args.continue_calls,
        layer: args.sampling.layer(None, args.structured.map(StructuredArg::level)),
        headers: args.sampling.headers.clone(),
        tg_python: cli.tg_python,
    };
    let mut w = Writer::new(out, recorder)?;
    let batched = batching.is_some();
    match batching {
        None => {
            let concurrency = args
                .concurrency
                .map_or(if who.is_local { 1 } else { 4 }, |c| c as usize);
            execute(cells, common, concurrency, who.is_local, |done| {
                w.write(done).map_err(io)
            })?;
        }
        Some(b) => by_rounds(args, (cells, &who.model), common, b, &mut w)?,
    }
    let Writer {
        out, recorder, written, ..
    } = w;
    let listed: Vec<strategy::Listed<'_>> = listed
        .iter()
        .map(|p| {
            (
                p.id.as_str(),
                p.response_type,
                p.twin.as_deref().filter(|t| ids.contains(t)),
            )
        })
        .collect();
    let data = report(args, strategies, &listed, &written, (&session_ref, batched), out)?;
    written.verdict(data, recorder.path())
}

/// The session: `--session`, else with `--batch` one of the prompts,
/// provider, strategies and their bounds (so the same command resumes
/// its rounds), else a new one.
fn open(args: &Args, cli: &Cli, ids: &[&str], strategies: &[Strategy], batched: bool) -> Result<Recorder, CliError> {
    let explicit = args.session.as_deref().map(crate::session::session_stem);
    let opened = match (explicit, batched) {
        (Some(id), _) => super::super::run::open_session(&cli.sessions, &id),
        (None, true) => {
            let words: Vec<&str> = strategies.iter().map(|s| s.word()).collect();
            let identity: Vec<String> = ids
                .iter()
                .map(|id| {
                    format!(
                        "{id}|{}|{}|{}|{}",
                        args.provider,
                        words.join(","),
                        args.retries,
                        args.continue_calls
                    )
                })
                .collect();
            let id = crate::eval::default_session_id(&identity).replacen("eval-", "strategy-", 1);
            super::super::run::open_session(&cli.sessions, &id)
        }
        (None, false) => super::super::run::session_for(&cli.sessions, None, "strategy"),
    };
    opened.map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", cli.sessions.display())).because(e))
}

/// Run the cells' calls as successive batch rounds, the manifest and the
/// answers kept beside the session; a wait that runs out is exit 10.
fn by_rounds<W: Write>(
    args: &Args,
    (cells, model): (Vec<Cell>, &str),
    common: Shared,
    b: Batch,
    w: &mut Writer<'_, W>,
) -> Result<(), CliError> {
    let session_path = w.recorder.path().to_owned();
    let mpath = manifest::path_for(&session_path);
    let mut mf = Manifest::load_for(&mpath, (w.recorder.id(), &args.provider, model), b.api.name(), b.window)?;
    let mut kept = Answers::open(&answers::path_for(&session_path))?;
    let batching = rounds::Batching {
        api: b.api,
        opts: b.opts,
        manifest: &mut mf,
        path: &mpath,
        answers: &mut kept,
    };
    let common = Arc::new(common);
    let labelled: Vec<(String, crate::llm::registry::Target, Cell)> = cells
        .into_iter()
        .map(|c| {
            let label = format!("{}|{}|{}", c.prompt.id, c.input.id, crate::eval::limit_label(c.limit));
            (label, c.target.clone(), c)
        })
        .collect();
    let work = move |cell: Cell, target| {
        let common = common.clone();
        async move { run_cell(&Cell { target, ..cell }, &common).await }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let ended = rt
        .block_on(rounds::execute(labelled, work, batching, w))
        .map_err(CliError::from)?;
    if let Some(e) = w.start_error.take() {
        return Err(e.into());
    }
    if ended.pending > 0 {
        return Err(CliError::new(
            Category::BatchPending,
            format!(
                "{} strategy calls are still in provider batches; run the same command again to collect them and \
                 go on (`cutline batches {}` lists them)",
                ended.pending,
                w.recorder.id()
            ),
        ));
    }
    Ok(())
}

/// Records each finished cell: its calls in the session (a call a batch
/// answered that an earlier command already recorded keeps that record),
/// its `strategy_run` records on the output.
struct Writer<'o, W: Write> {
    out: &'o mut Out<W>,
    recorder: Recorder,
    written: Written,
    /// Run ids of the session's batch-answered runs, by custom id.
    seen: HashMap<String, String>,
    /// A cell that could not start (its prompt does not render).
    start_error: Option<StartError>,
}

impl<'o, W: Write> Writer<'o, W> {
    fn new(out: &'o mut Out<W>, recorder: Recorder) -> Result<Self, CliError> {
        let mut seen = HashMap::new();
        crate::session::each_run(recorder.path(), &mut |r| {
            if let Some(b) = r.batch {
                seen.insert(b.custom_id, r.run_id);
            }
        })
        .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", recorder.path().display())).because(e))?;
        Ok(Self {
            out,
            recorder,
            written: Written::default(),
            seen,
            start_error: None,
        })
    }

    fn write(&mut self, done: Done) -> std::io::Result<()> {
        for r in write(done, &mut self.recorder, &mut self.written.unrecorded, &self.seen) {
            self.written.failed += usize::from(r.ended == Ended::Failed);
            self.out.record(&super::tagged("strategy_run", &r))?;
            self.written.runs.push(r);
        }
        Ok(())
    }
}

impl<W: Write> rounds::Handler<Result<Done, StartError>> for Writer<'_, W> {
    fn done(&mut self, result: Result<Done, StartError>) -> std::io::Result<()> {
        match result {
            Ok(done) => self.write(done),
            Err(e) => {
                self.start_error.get_or_insert(e);
                Ok(())
            }
        }
    }

    fn note(&mut self, note: &Note) -> std::io::Result<()> {
        self.out.record(&super::batch::note_record(note))
    }
}

/// What the writer kept: the runs, how many failed, the calls it could not
/// record.
#[derive(Default)]
struct Written {
    runs: Vec<StrategyRun>,
    failed: usize,
    unrecorded: Vec<String>,
}

impl Written {
    /// The envelope, or the error that says what failed with it as detail.
    fn verdict(self, data: Value, session: &std::path::Path) -> Result<Value, CliError> {
        let err = if let Some(first) = self.unrecorded.first() {
            CliError::new(
                Category::InputError,
                format!(
                    "{} calls were not recorded in {} (first: {first})",
                    self.unrecorded.len(),
                    session.display()
                ),
            )
        } else if self.failed > 0 {
            CliError::new(
                Category::ProviderError,
                format!(
                    "{} of {} strategy runs failed at the provider; the others are recorded",
                    self.failed,
                    self.runs.len()
                ),
            )
        } else {
            return Ok(data);
        };
        Err(CliError {
            detail: Some(data),
            ..err
        })
    }
}

/// Every prompt × input × limit, the prompts listed, and who answers.
type Planned = (Vec<Cell>, Vec<Arc<PromptConfig>>, Who);

/// Plan the cells.
fn cells(args: &Args, cli: &Cli) -> Result<Planned, CliError> {
    let prompts = super::setup::resolve_prompts(args, &cli.workspace()?)?;
    let (raw, overlay) = super::setup::loaded(args)?;
    let who = super::setup::who(args)?;
    let gold_dir = args.gold.clone().unwrap_or_else(|| cli.prompts.join("gold"));
    let mut cells = Vec::new();
    let mut listed = Vec::new();
    for cfg in prompts {
        let inputs = super::setup::inputs_of(&cfg, raw.as_deref().map(std::borrow::Cow::Borrowed), overlay.as_ref())?;
        let gold = super::setup::gold_for(&cfg, &gold_dir, &args.keys)?.map(Arc::new);
        let cfg = Arc::new(cfg);
        listed.push(cfg.clone());
        for input in inputs {
            let target = match (&who.shared, who.replay) {
                (Some(t), false) => t.clone(),
                _ => super::setup::recording(cli, args, &cfg, &input)?,
            };
            for &limit in &args.max_tokens.0 {
                cells.push(Cell {
                    prompt: cfg.clone(),
                    gold: gold.clone(),
                    input: input.clone(),
                    limit,
                    target: target.clone(),
                });
            }
        }
    }
    Ok((cells, listed, who))
}

/// Run the cells, `concurrency` at once, handing each finished cell to
/// `on_done` in plan order.
fn execute(
    cells: Vec<Cell>,
    common: Shared,
    concurrency: usize,
    is_local: bool,
    mut on_done: impl FnMut(Done) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let common = Arc::new(common);
    rt.block_on(async {
        if is_local {
            crate::llm::local::installed()?;
        }
        let sem = Arc::new(tokio::sync::Semaphore::new(concurrency));
        let mut tasks = Vec::new();
        for cell in cells {
            let (sem, common) = (sem.clone(), common.clone());
            tasks.push(tokio::spawn(async move {
                let _permit = sem.acquire_owned().await.ok()?;
                Some(run_cell(&cell, &common).await)
            }));
        }
        for t in tasks {
            match t.await.ok().flatten() {
                Some(Ok(done)) => on_done(done)?,
                Some(Err(e)) => return Err(e.into()),
                None => return Err(CliError::new(Category::Internal, "a strategy task ended early")),
            }
        }
        Ok(())
    })
}

/// The rows, headlines and totals: records, the table, the envelope.
fn report<W: Write>(
    args: &Args,
    strategies: &[Strategy],
    listed: &[strategy::Listed<'_>],
    written: &Written,
    (session_ref, batched): (&Value, bool),
    out: &mut Out<W>,
) -> Result<Value, CliError> {
    let io = io_err;
    let rows = strategy::table(listed, &args.max_tokens.0, strategies, &written.runs);
    for r in rows.iter().filter(|r| r.runs > 0) {
        out.record(&super::tagged("strategy", r)).map_err(io)?;
    }
    let headlines: Vec<Value> = strategy::headlines(&rows)
        .iter()
        .map(|h| {
            let mut rec = super::tagged("headline", h);
            rec["sentence"] = h.sentence().into();
            rec
        })
        .collect();
    for h in &headlines {
        out.record(h).map_err(io)?;
    }
    let mut totals = json!({"type": "totals", "runs": written.runs.len(), "failed": written.failed,
        "ended": strategy::endings(&written.runs), "session": session_ref});
    let mut text = format!(
        "{}{}\n",
        strategy::pretty(&rows),
        rust_i18n::t!(
            "pretty.session",
            path = session_ref["path"].as_str().unwrap_or_default()
        )
    );
    if batched {
        // Every call billed once, whichever strategies share it.
        let billed = written
            .runs
            .iter()
            .flat_map(|r| &r.calls)
            .map(|c| (&c.run_id, c.billed()));
        let billed: HashMap<&String, u64> = billed.filter_map(|(id, b)| Some((id, b?))).collect();
        super::batch_price(billed.values().sum(), &mut totals, &mut text);
    }
    out.record(&totals).map_err(io)?;
    out.pretty(&text).map_err(io)?;
    Ok(json!({"session": session_ref, "runs": written.runs, "summary": rows, "headlines": headlines, "totals": totals}))
}

/// Record a cell's calls in order and give its runs their run ids; a
/// write that failed is counted in `unrecorded`.
fn write(
    done: Done,
    recorder: &mut Recorder,
    unrecorded: &mut Vec<String>,
    seen: &HashMap<String, String>,
) -> Vec<StrategyRun> {
    let mut ids = Vec::with_capacity(done.records.len());
    for mut r in done.records {
        if let Some(id) = r.batch.as_ref().and_then(|b| seen.get(&b.custom_id)) {
            ids.push(id.clone());
            continue;
        }
        r.run_id = recorder.next_run_id();
        if let Err(e) = recorder.record(&r) {
            unrecorded.push(e.to_string());
        }
        ids.push(r.run_id);
    }
    done.runs
        .into_iter()
        .map(|(mut run, at)| {
            for (call, i) in run.calls.iter_mut().zip(at) {
                call.run_id.clone_from(&ids[i]);
            }
            run
        })
        .collect()
}
