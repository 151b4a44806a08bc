//! From a provider choice to a [`Target`], for every caller: configured and
//! local providers come from the [`Registry`]; a replay finds the recorded
//! run of the prompt with the same variables in the sessions directory.

use std::path::Path;

use serde_json::{Map, Value};

use crate::llm::registry::{Choice, Registry, Target};
use crate::llm::replay::Replay;
use crate::llm::{ErrorKind, LlmError};
use crate::session::RunRecord;

/// How a replay looks for its recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// A run of the prompt with exactly these variables.
    SameInput,
    /// That, else any run of the prompt (the workbench, with a note).
    AnyInput,
}

/// A resolved target and, for a replay, a note naming what it plays.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The target.
    pub target: Target,
    /// For a person: which recording a replay plays, or the model chosen.
    pub note: Option<String>,
}

/// Resolve `choice` for a run of `prompt_id` with `vars`.
pub fn resolve(
    registry: &Registry,
    choice: &Choice,
    model: Option<&str>,
    recorded: (&str, &Map<String, Value>, &Path, Recording),
) -> Result<Resolved, LlmError> {
    let (prompt_id, vars, sessions, how) = recorded;
    if *choice != Choice::Replay {
        if registry.is_local(choice) {
            crate::llm::local::installed()?;
        }
        let target = registry.target(choice, model)?;
        return Ok(Resolved {
            note: model.map(|m| format!("model {m}")),
            target,
        });
    }
    let exact = crate::session::find_recording(sessions, prompt_id, Some(vars));
    let (rec, source, same) = match (exact, how) {
        (Some((r, s)), _) => (r, s, true),
        (None, Recording::AnyInput) => match crate::session::find_recording(sessions, prompt_id, None) {
            Some((r, s)) => (r, s, false),
            None => return Err(no_recording(prompt_id, sessions)),
        },
        (None, Recording::SameInput) => return Err(no_recording(prompt_id, sessions)),
    };
    let note = if same {
        format!("replay of {source}")
    } else {
        format!("replay of {source} (recorded with another input)")
    };
    Ok(Resolved {
        target: replay_of(&rec, source),
        note: Some(note),
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

fn no_recording(prompt_id: &str, sessions: &Path) -> LlmError {
    LlmError::new(
        ErrorKind::BadRequest,
        format!(
            "no recorded run of prompt {prompt_id:?} with these variables in {}; record one with `cutline run {prompt_id} --provider local`",
            sessions.display()
        ),
    )
}
