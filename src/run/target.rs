//! From a provider choice to a [`Target`], for every caller: configured and
//! local providers come from the [`Registry`]; a replay finds the recorded
//! run of exactly the request the spec makes in the sessions directory.

use std::path::Path;

use crate::llm::LlmError;
use crate::llm::registry::{Choice, Registry, Target};
use crate::llm::replay::Replay;
use crate::session::RunRecord;

/// A resolved target and, for a replay, a note naming what it plays.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The target.
    pub target: Target,
    /// For a person: which recording a replay plays, or the model chosen.
    pub note: Option<String>,
}

/// Why [`resolve`] has no target.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The configured or local provider could not be set up.
    #[error(transparent)]
    Provider(#[from] LlmError),
    /// No recording answers the request (or the prompt does not render).
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// Resolve `choice` for a run of `spec`, the one decision every caller
/// that runs one prompt makes (`cutline run`, the workbench's runner): a
/// configured or local provider comes from the registry (`model` in place
/// of its own); a replay plays the recording, among every session in
/// `sessions`, of exactly the request `spec` makes ([`replay_found`]).
pub fn resolve(
    registry: &Registry,
    choice: &Choice,
    model: Option<&str>,
    (spec, sessions): (&crate::run::Spec, &Path),
) -> Result<Resolved, ResolveError> {
    if *choice == Choice::Replay {
        return Ok(replay_found(spec, sessions)?);
    }
    if registry.is_local(choice) {
        crate::llm::local::installed()?;
    }
    let target = registry.target(choice, model)?;
    Ok(Resolved {
        note: model.map(|m| format!("model {m}")),
        target,
    })
}

/// The replay target of one recorded run. It answers only the request
/// the run answered ([`super::recorded::asked_of`]); any other is refused
/// with what differs.
pub fn replay_of(rec: &RunRecord, source: String) -> Target {
    Target::replay(Replay {
        transcript: rec.transcript(),
        original: rec.provider.clone(),
        asked: Some(super::recorded::asked_of(rec)),
        source,
    })
}

/// The replay target for `spec`: the recording, among every session in
/// `sessions`, of exactly the request `spec` makes (planned as a replay
/// plans it), whatever prompt id it was recorded under; or why there is
/// none, naming the nearest recording and what differs.
pub fn replay_for(spec: &crate::run::Spec, sessions: &Path) -> Result<Target, ReplayError> {
    replay_found(spec, sessions).map(|r| r.target)
}

/// [`replay_for`], with a note naming the recording played
/// (`replay of SESSION#N`), for the workbench's status line.
pub fn replay_found(spec: &crate::run::Spec, sessions: &Path) -> Result<Resolved, ReplayError> {
    let probe = Target::replay(Replay {
        source: String::new(),
        transcript: crate::llm::Transcript::default(),
        original: crate::llm::ProviderInfo {
            name: "replay".into(),
            kind: "replay".into(),
            model: String::new(),
            base_url: None,
        },
        asked: None,
    });
    let plan = crate::run::plan(spec, &probe)?;
    let asked = crate::llm::replay::Asked::of(&plan.request);
    let wanted = super::recorded::Wanted {
        asked: &asked,
        settings: &plan.settings,
        prompt_id: &spec.prompt.id,
        vars: &spec.vars,
    };
    let (rec, source) = super::recorded::find(sessions, wanted)?;
    Ok(Resolved {
        note: Some(format!("replay of {source}")),
        target: replay_of(&rec, source),
    })
}

/// Why [`replay_for`] has no target.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The prompt does not render.
    #[error(transparent)]
    Start(#[from] crate::run::StartError),
    /// No recording answers the request.
    #[error(transparent)]
    NoRecording(#[from] Box<super::recorded::NoRecording>),
}
