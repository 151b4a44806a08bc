//! `cutline replay SESSION[#RUN] [--max-tokens N]`
//!
//! Plays a recorded run back cut at another max-token limit: with greedy
//! decoding that is exactly what the model returns under that limit, at no
//! cost. The run is re-analysed with the prompt snapshot it was recorded
//! with, and printed like `run` (not recorded again).

use std::io::Write;

use serde_json::Value;

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};
use crate::prompt::PromptConfig;
use crate::run::Spec;

/// Arguments of `replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session id (in the sessions dir) or path, optionally `#N` for run N (default: the last).
    pub session: String,
    /// Cut the recording at this many tokens (default: as recorded).
    #[arg(long)]
    pub max_tokens: Option<u32>,
}

/// The prompt a run was recorded with, rebuilt from its snapshot.
pub fn prompt_of(run: &crate::session::RunRecord) -> Result<PromptConfig, CliError> {
    Ok(run.prompt_config()?)
}

/// Run `replay`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let (session, idx) = crate::session::resolve(&args.session, &cli.sessions)?;
    for w in &session.warnings {
        out.warn(w.clone()).map_err(io_err)?;
    }
    let rec = &session.runs[idx];
    let prompt = prompt_of(rec)?;
    let max_tokens = args.max_tokens.or(rec.params.max_tokens);
    let source = session.reference(idx);
    let (_, _, known) = crate::llm::replay::cut(&rec.transcript(), max_tokens);
    if !known {
        out.warn(format!(
            "the recording was itself cut at {} tokens; past that, replay cannot know what the model says",
            rec.params.max_tokens.unwrap_or(0)
        ))
        .map_err(io_err)?;
    }
    if !crate::run::replay_exact(rec) {
        let why = rec
            .adjustments
            .iter()
            .find(|a| {
                matches!(
                    a,
                    crate::llm::params::Adjustment::NotGreedy { .. }
                        | crate::llm::params::Adjustment::NotSent {
                            param: crate::llm::profile::Param::Temperature,
                            ..
                        }
                )
            })
            .map(|a| format!(" ({})", a.describe()))
            .unwrap_or_default();
        out.warn(format!(
            "this run was not recorded with greedy decoding and token pieces (temperature 0 on a server that \
             reports tokens), so a cut replay is not exactly what the model would say at that limit{why}"
        ))
        .map_err(io_err)?;
    }
    let mut spec = Spec::new(prompt, rec.variables.clone()).limit(max_tokens);
    spec.tg_python = cli.tg_python;
    let target = crate::run::target::replay_of(rec, source.clone());
    let mut plan = crate::run::Plan::recorded(rec, max_tokens);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let transcript = rt.block_on(crate::run::stream(&target, &mut plan, &mut |_, _| {}));
    let outcome = crate::run::finish(
        target.provider.info(),
        &spec,
        &plan,
        crate::session::now_ms(),
        &transcript,
        None,
    );
    let mut data = super::run::report(&outcome, None, out)?;
    super::run::object_schema_report(&mut data, &outcome, &spec.prompt, out)?;
    data["replayed_from"] = Value::String(source);
    Ok(data)
}
