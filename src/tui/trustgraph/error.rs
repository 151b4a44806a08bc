//! Why the TrustGraph component pushes nothing: the error of the layer
//! that failed, typed, turned into the lines a refusal shows only where
//! the view draws them.

use rust_i18n::t;

use crate::prompt::ConfigError;
use crate::tg::TgError;
use crate::tg::local::LocalError;
use crate::tg::push::PushError;

/// Why `T` has no prompt to push (said on the status line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoTarget {
    /// The Migrate tab shows no migration.
    #[error("{}", t!("tui.msg.migrate_nothing"))]
    MigrateNothing,
    /// The migration on show did not convert its schema.
    #[error("{}", t!("tui.msg.migrate_unconverted"))]
    MigrateUnconverted,
    /// No prompt is open or selected.
    #[error("{}", t!("tui.tg.no_prompt"))]
    NoPrompt,
}

/// Why a push was not checked or not written. Its message is the refusal's
/// lines joined by newlines; [`Self::lines`] gives them one by one, as the
/// view shows them.
#[derive(Debug, thiserror::Error)]
pub enum PushRefused {
    /// `pull.json` or the pulled workspace file does not read.
    #[error("{0}")]
    Local(#[from] LocalError),
    /// The deployment is unusable or did not answer.
    #[error("{0}")]
    Deployment(#[from] TgError),
    /// The workspace file with the migration in it does not load.
    #[error("{0}")]
    Export(#[from] ConfigError),
    /// The workspace file does not read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The workspace file with the migration in it could not be written.
    #[error("{file}: cannot write: {source}")]
    Write {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The workspace file is not JSON.
    #[error("{file}: not JSON: {source}")]
    NotJson {
        /// The file.
        file: String,
        /// serde_json's error.
        source: serde_json::Error,
    },
    /// The migration cannot be put in the workspace file.
    #[error("{file}: cannot put {id} in it: {source}")]
    PutIn {
        /// The file.
        file: String,
        /// The prompt id.
        id: String,
        /// Why.
        source: crate::prompt::trustgraph::NotABundle,
    },
    /// The prompt is neither in the pull nor in the workspace file.
    #[error("{}", t!("tui.tg.not_pulled_prompt", id = id, file = file))]
    NotPulled {
        /// The prompt id.
        id: String,
        /// The workspace file.
        file: String,
    },
    /// The push would write nothing.
    #[error("{}", t!("tui.tg.nothing", key = key))]
    Nothing {
        /// The prompt's config key.
        key: String,
    },
    /// The workspace file changed since the question was asked.
    #[error("{}", t!("tui.tg.file_changed", file = file))]
    FileChanged {
        /// The file.
        file: String,
    },
    /// The live workspace changed since the question was asked.
    #[error("{}", t!("tui.tg.changed_since"))]
    ChangedSince,
    /// The push's plan, checks or write refused.
    #[error("{}", push_lines(.0).join("\n"))]
    Push(#[source] PushError),
    /// The migration was written into the workspace file, the push was not.
    #[error("{source}\n{}", t!("tui.tg.written_not_pushed", file = file))]
    WrittenNotPushed {
        /// The workspace file written.
        file: String,
        /// Why the push was not.
        source: Box<PushRefused>,
    },
}

impl PushRefused {
    /// The refusal as the view shows it, one reason a line: each key a
    /// check refused on its own line.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Self::Push(e) => push_lines(e),
            Self::WrittenNotPushed { file, source } => {
                let mut lines = source.lines();
                lines.push(t!("tui.tg.written_not_pushed", file = file).into_owned());
                lines
            }
            other => vec![other.to_string()],
        }
    }
}

/// A push error as lines: a refusal's header, then each refused key.
fn push_lines(e: &PushError) -> Vec<String> {
    match e {
        PushError::Refused { problems } => std::iter::once(t!("tui.tg.refused").into_owned())
            .chain(problems.iter().map(|(k, why)| format!("{k}: {why}")))
            .collect(),
        other => vec![other.to_string()],
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn a_refusal_shows_its_header_a_key_a_line_then_the_note() {
        let refused = PushRefused::Push(PushError::Refused {
            problems: vec![("template.a".into(), "bad".into())],
        });
        let r = PushRefused::WrittenNotPushed {
            file: "w.json".into(),
            source: Box::new(refused),
        };
        let lines = r.lines();
        assert_eq!(
            lines,
            vec![
                t!("tui.tg.refused").into_owned(),
                "template.a: bad".to_owned(),
                t!("tui.tg.written_not_pushed", file = "w.json").into_owned(),
            ]
        );
        assert_eq!(r.to_string(), lines.join("\n"));
        // The push's refusal is kept under it, its message the lines above the note.
        let under = r.source().map(ToString::to_string);
        assert_eq!(under, Some(lines[..2].join("\n")));
        assert_eq!(PushRefused::ChangedSince.lines(), vec![t!("tui.tg.changed_since").into_owned()]);
    }
}
