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
use crate::llm::replay::Replay;
use crate::llm::{Provider, Request};
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
    let label = format!("session run {}", run.run_id);
    let bytes = serde_json::to_vec(&run.prompt).unwrap_or_default();
    let (mut prompts, _) = crate::prompt::load_bytes(&format!("{label}.json"), &bytes)
        .map_err(|e| CliError::new(Category::ConfigInvalid, e.to_string()))?;
    let mut p = prompts
        .pop()
        .ok_or_else(|| CliError::new(Category::ConfigInvalid, format!("{label}: no prompt snapshot")))?;
    p.id.clone_from(&run.prompt_id);
    if let Some(s) = run.prompt.get("system").and_then(Value::as_str) {
        s.clone_into(&mut p.system);
    }
    Ok(p)
}

/// Run `replay`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let (session, idx) =
        crate::session::resolve(&args.session, &cli.sessions).map_err(|e| CliError::new(Category::InputError, e))?;
    for w in &session.warnings {
        out.warn(w.clone()).map_err(|e| io_err(&e))?;
    }
    let rec = &session.runs[idx];
    let prompt = prompt_of(rec)?;
    let max_tokens = args.max_tokens.or(rec.params.max_tokens);
    let replay = Replay {
        source: session.reference(idx),
        transcript: rec.transcript(),
        original: rec.provider.clone(),
    };
    let (_, _, known) = crate::llm::replay::cut(&replay.transcript, max_tokens);
    if !known {
        out.warn(format!(
            "the recording was itself cut at {} tokens; past that, replay cannot know what the model says",
            rec.params.max_tokens.unwrap_or(0)
        ))
        .map_err(|e| io_err(&e))?;
    }
    let spec = Spec {
        prompt,
        vars: rec.variables.clone(),
        max_tokens,
        temperature: rec.params.temperature,
        structured: None,
    };
    let req = Request {
        system: rec.system.clone(),
        prompt: rec.rendered.clone(),
        max_tokens,
        stop: rec.params.stop.clone(),
        temperature: rec.params.temperature,
        response_schema: None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")))?;
    let transcript = rt.block_on(async { crate::llm::collect(replay.stream(req.clone()), |_, _| {}).await });
    let outcome = crate::run::finish(
        replay.info(),
        &spec,
        &req,
        crate::llm::structured::Path::None,
        crate::session::now_ms(),
        &transcript,
        None,
    )
    .map_err(|e| CliError::new(Category::ConfigInvalid, e.to_string()))?;
    let mut data = super::run::report(&outcome, None, out)?;
    data["replayed_from"] = Value::String(replay.source);
    Ok(data)
}
