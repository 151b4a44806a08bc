//! What an eval runs on: the prompts and their twins, their inputs and
//! gold sets, and who answers (one shared target, or a recording per input
//! with `replay`). Shared by the plain matrix and `--strategy`.

use std::path::Path;

use serde_json::{Map, Value};

use super::{Args, Cli};
use crate::cli::out::{Category, CliError};
use crate::eval::inputs::{self, RawInput};
use crate::eval::{Gold, Input};
use crate::llm::ErrorKind;
use crate::llm::registry::{Choice, Target};
use crate::prompt::PromptConfig;

/// The prompts named, plus their twins, each once, in the order given.
pub(super) fn resolve_prompts(args: &Args, ws: &crate::store::Workspace) -> Result<Vec<PromptConfig>, CliError> {
    let mut out: Vec<PromptConfig> = Vec::new();
    for reference in &args.prompt {
        let reference = reference.trim();
        if reference.is_empty() {
            return Err(CliError::new(Category::Usage, "--prompt: an empty prompt id"));
        }
        let cfg = ws.resolve(reference)?;
        let twin = cfg.twin.clone();
        if !out.iter().any(|p| p.id == cfg.id) {
            out.push(cfg);
        }
        if let (false, Some(t)) = (args.no_twins, twin)
            && !out.iter().any(|p| p.id == t)
        {
            let tcfg = ws.resolve(&t).map_err(|e| {
                CliError::new(
                    Category::ConfigInvalid,
                    format!("twin {t:?} of {reference:?}: {e} (or pass --no-twins)"),
                )
                .because(e)
            })?;
            out.push(tcfg);
        }
    }
    Ok(out)
}

/// The gold set of `cfg`: `<dir>/<id>.jsonl`, else its twin's, annotating
/// the prompt's first sample input.
pub(super) fn gold_for(cfg: &PromptConfig, dir: &Path, fields: &[String]) -> Result<Option<Gold>, CliError> {
    crate::eval::inputs::gold_of(cfg, dir, fields).map_err(CliError::from)
}

/// Who answers an eval: one target for the whole matrix (built now, no
/// network; the local server starts on the first pending run), or with
/// `replay` one recording per prompt × input, found while planning.
pub(super) struct Who {
    pub(super) shared: Option<Target>,
    pub(super) model: String,
    pub(super) is_local: bool,
    pub(super) replay: bool,
}

pub(super) fn who(args: &Args) -> Result<Who, CliError> {
    let choice = crate::cli::params::choice(&args.provider)?;
    let replay = choice == Choice::Replay;
    let shared: Option<Target> = if replay {
        None
    } else {
        let registry = crate::cli::params::registry()?;
        let t = registry.target(&choice, None).map_err(|e| match e.kind {
            ErrorKind::BadRequest if matches!(choice, Choice::Named(_)) => CliError::new(Category::Usage, e.message),
            _ => CliError::from(&e),
        })?;
        Some(t)
    };
    Ok(Who {
        model: shared.as_ref().map(|t| t.provider.info().model).unwrap_or_default(),
        is_local: !replay && crate::cli::params::registry()?.is_local(&choice),
        shared,
        replay,
    })
}

/// The inputs of `cfg`: `--inputs` shaped for it, else its sample inputs;
/// `--vars` laid over each.
/// `raw` owned when `cfg` is the last prompt to use it (moved, not copied).
pub(super) fn inputs_of(
    cfg: &PromptConfig,
    raw: Option<std::borrow::Cow<'_, [RawInput]>>,
    overlay: Option<&Map<String, Value>>,
) -> Result<Vec<Input>, CliError> {
    let mut inputs: Vec<Input> = match raw {
        Some(std::borrow::Cow::Owned(raw)) => raw.into_iter().map(|r| r.into_prompt(cfg)).collect(),
        Some(std::borrow::Cow::Borrowed(raw)) => raw.iter().map(|r| r.for_prompt(cfg)).collect(),
        None => inputs::samples(cfg),
    };
    if let Some(over) = overlay {
        for i in &mut inputs {
            i.vars.extend(over.clone());
        }
    }
    if inputs.is_empty() {
        return Err(CliError::new(
            Category::Usage,
            format!("prompt {:?} has no sample inputs; pass --inputs DIR|FILE.jsonl", cfg.id),
        ));
    }
    Ok(inputs)
}

/// With `--provider replay`: the recording of exactly the request `cfg`
/// makes on `input` with the command line's settings, as a target; an
/// input none answers stops the eval before any run, naming the nearest
/// recording and what differs.
pub(super) fn recording(cli: &Cli, args: &Args, cfg: &PromptConfig, input: &Input) -> Result<Target, CliError> {
    let mut spec = crate::run::Spec::new(cfg.clone(), input.vars.clone());
    spec.cli = args
        .sampling
        .layer(None, args.structured.map(crate::cli::run::StructuredArg::level));
    crate::run::target::replay_for(&spec, &cli.sessions).map_err(|e| {
        let mut err = CliError::from(e);
        err.message = format!("input {:?}: {}", input.id, err.message);
        err
    })
}

/// The command line's choice of inputs: `--inputs` read, `--vars` read.
pub(super) type Loaded = (Option<Vec<RawInput>>, Option<Map<String, Value>>);

pub(super) fn loaded(args: &Args) -> Result<Loaded, CliError> {
    let overlay = args
        .vars_file
        .as_deref()
        .map(crate::cli::input::vars_object)
        .transpose()?;
    let raw = args
        .inputs
        .as_deref()
        .map(inputs::load)
        .transpose()
        .map_err(CliError::from)?;
    Ok((raw, overlay))
}
