//! `cutline eval --strategy single,retry-double,continue`: per prompt ×
//! input × limit, one first call at the limit shared by every strategy,
//! then each strategy's own calls; every call recorded in one session.
//!
//! JSONL records: `plan`, one `strategy_run` per cell × strategy as it
//! finishes, one `strategy` row per prompt × limit × strategy, one
//! `headline` per JSON/JSONL twin pair × limit, `totals`. Not resumable:
//! each invocation runs anew and appends to its session.

use std::io::Write;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{Args, Cli, StructuredArg, Who};
use crate::cli::io_err;
use crate::cli::out::{Category, CliError, Out};
use crate::eval::cell::{Cell, Done, Shared, run_cell};
use crate::eval::strategy::{self, Strategy, StrategyRun};
use crate::prompt::PromptConfig;
use crate::run::continuation::Ended;

/// Run the strategies and report.
pub fn run<W: Write>(args: &Args, strategies: &[Strategy], cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let (cells, listed, is_local) = cells(args, cli)?;
    let ids: Vec<&str> = listed.iter().map(|p| p.id.as_str()).collect();
    let explicit = args.session.as_deref().map(crate::session::safe_stem);
    let mut recorder = super::super::run::session_for(&cli.sessions, explicit.as_deref(), "strategy")
        .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", cli.sessions.display())))?;
    let session_ref = json!({"id": recorder.id(), "path": recorder.path().display().to_string()});
    let io = |e: std::io::Error| io_err(&e);
    let words: Vec<&str> = strategies.iter().map(|s| s.word()).collect();
    out.record(
        &json!({"type": "plan", "session": session_ref, "prompts": ids, "strategies": words,
        "max_tokens": args.max_tokens.0, "provider": args.provider, "cells": cells.len(),
        "retries": args.retries, "continue": args.continue_calls}),
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
    let concurrency = args.concurrency.map_or(if is_local { 1 } else { 4 }, |c| c as usize);
    let mut written = Written::default();
    execute(cells, common, concurrency, is_local, |done| {
        for r in write(done, &mut recorder, &mut written.unrecorded) {
            written.failed += usize::from(r.ended == Ended::Failed);
            out.record(&super::tagged("strategy_run", &r)).map_err(io)?;
            written.runs.push(r);
        }
        Ok(())
    })?;
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
    let data = report(args, strategies, &listed, &written, &session_ref, out)?;
    written.verdict(data, recorder.path())
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

/// Every prompt × input × limit, the prompts listed, and whether the
/// target is the local model.
type Planned = (Vec<Cell>, Vec<Arc<PromptConfig>>, bool);

/// Plan the cells.
fn cells(args: &Args, cli: &Cli) -> Result<Planned, CliError> {
    let prompts = super::setup::resolve_prompts(args, &cli.workspace()?)?;
    let (raw, overlay) = super::setup::loaded(args)?;
    let Who {
        shared,
        is_local,
        replay,
        ..
    } = super::setup::who(args)?;
    let gold_dir = args.gold.clone().unwrap_or_else(|| cli.prompts.join("gold"));
    let mut cells = Vec::new();
    let mut listed = Vec::new();
    for cfg in prompts {
        let inputs = super::setup::inputs_of(&cfg, raw.as_deref(), overlay.as_ref())?;
        let gold = super::setup::gold_for(&cfg, &gold_dir, &args.keys)?.map(Arc::new);
        let cfg = Arc::new(cfg);
        listed.push(cfg.clone());
        for input in inputs {
            let target = match (&shared, replay) {
                (Some(t), false) => t.clone(),
                _ => super::setup::recording(cli, &cfg, &input)?,
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
    Ok((cells, listed, is_local))
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
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")))?;
    let common = Arc::new(common);
    rt.block_on(async {
        if is_local {
            crate::llm::local::installed().map_err(|e| super::llm_err(&e))?;
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
                Some(Err(e)) => return Err(CliError::new(Category::ConfigInvalid, e.to_string())),
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
    session_ref: &Value,
    out: &mut Out<W>,
) -> Result<Value, CliError> {
    let io = |e: std::io::Error| io_err(&e);
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
    let totals = json!({"type": "totals", "runs": written.runs.len(), "failed": written.failed,
        "ended": strategy::endings(&written.runs), "session": session_ref});
    out.record(&totals).map_err(io)?;
    out.pretty(&format!(
        "{}{}\n",
        strategy::pretty(&rows),
        rust_i18n::t!(
            "pretty.session",
            path = session_ref["path"].as_str().unwrap_or_default()
        )
    ))
    .map_err(io)?;
    Ok(json!({"session": session_ref, "runs": written.runs, "summary": rows, "headlines": headlines, "totals": totals}))
}

/// Record a cell's calls in order and give its runs their run ids; a
/// write that failed is counted in `unrecorded`.
fn write(done: Done, recorder: &mut crate::session::Recorder, unrecorded: &mut Vec<String>) -> Vec<StrategyRun> {
    let mut ids = Vec::with_capacity(done.records.len());
    for mut r in done.records {
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
