//! The session an eval records into by default: one definition for
//! `cutline eval` and the workbench's eval view, so either resumes what the
//! other recorded for the same prompts on the same provider.

use std::path::{Path, PathBuf};

use crate::llm::params::Structured;
use crate::llm::structured::Path as StructuredPath;
use crate::session::Recorder;

/// One prompt of an eval as its default session id sees it:
/// `prompt|provider/model|structured`. No content hashes, inputs or
/// limits: editing a prompt or adding limits keeps the session.
pub fn identity(prompt: &str, provider: &str, model: &str, structured: Option<StructuredPath>) -> String {
    format!("{prompt}|{provider}/{model}|{structured:?}")
}

/// The default session id of an eval of `prompts` (their order does not
/// matter) on `provider` (the `--provider` word) and `model`.
pub fn session_id(prompts: &[&str], provider: &str, model: &str, structured: Option<StructuredPath>) -> String {
    let identities: Vec<String> = prompts
        .iter()
        .map(|p| identity(p, provider, model, structured))
        .collect();
    crate::eval::default_session_id(&identities)
}

/// The structured-output level asked for, as the session id words it
/// (asking for none and asking for off are the same eval).
pub fn structured_word(level: Option<Structured>) -> Option<StructuredPath> {
    match level {
        None | Some(Structured::Off) => None,
        Some(Structured::Native) => Some(StructuredPath::Native),
        Some(Structured::Prompt) => Some(StructuredPath::Prompt),
    }
}

/// Open (and lock) the session `id` in `dir`, creating it when new; and
/// its file. The id is made a safe file stem first.
pub fn open(dir: &Path, id: &str) -> std::io::Result<(Recorder, PathBuf)> {
    let id = crate::session::session_stem(id);
    let recorder = Recorder::open_or_create(dir, &id)?;
    Ok((recorder, crate::session::file_for(dir, &id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_the_one_eval_always_computed() {
        // The identities `cli::eval` built before this module: the same
        // eval keeps resuming its old session.
        let old = crate::eval::default_session_id(&["b|local/gemma|None".to_owned(), "a|local/gemma|None".to_owned()]);
        assert_eq!(session_id(&["a", "b"], "local", "gemma", None), old);
        assert_eq!(session_id(&["b", "a"], "local", "gemma", None), old);
        assert_ne!(
            session_id(&["a", "b"], "local", "gemma", Some(StructuredPath::Native)),
            old
        );
        assert_eq!(
            identity("a", "p", "m", structured_word(Some(Structured::Prompt))),
            "a|p/m|Some(Prompt)"
        );
        assert_eq!(structured_word(Some(Structured::Off)), None);
    }
}
