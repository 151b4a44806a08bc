//! Why an eval of the workbench could not start or go on: the error of the
//! layer that failed, turned into text only where the view shows it.

use std::path::PathBuf;

use crate::llm::LlmError;
use crate::llm::config::ProvidersFileError;

/// Why the eval view has no prompt to run.
#[derive(Debug, thiserror::Error)]
pub enum NoPrompt {
    /// No prompt is open in the editor.
    #[error("{}", rust_i18n::t!("tui.eval.choose_first"))]
    NoneOpen,
    /// The editor's prompt does not load.
    #[error("{}", rust_i18n::t!("tui.msg.cannot_run", error = source))]
    Invalid {
        /// Why: the editor's own error (boxed: a component does not name
        /// another's types).
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Why an eval could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A configured provider was chosen but the providers file did not
    /// load (its file, line and column).
    #[error("provider config: {0}")]
    Config(#[source] ProvidersFileError),
    /// The named provider could not be set up.
    #[error("provider {name}: {source}")]
    Provider {
        /// The provider's name in cutline.toml.
        name: String,
        /// Why.
        source: LlmError,
    },
    /// The local model could not be set up or is not installed.
    #[error(transparent)]
    Setup(LlmError),
    /// A prompt's gold set is malformed (file, line, column).
    #[error(transparent)]
    Gold(#[from] crate::eval::inputs::InputsError),
    /// A prompt does not render on an input.
    #[error(transparent)]
    Plan(#[from] crate::eval::engine::PlanError),
    /// Nothing is left to run; the first note says why, when there is one.
    #[error("{}", .0.as_deref().unwrap_or("nothing to run"))]
    NothingToRun(Option<String>),
    /// The session could not be opened or read back.
    #[error("{}: {source}", path.display())]
    Session {
        /// The sessions directory or the session file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Running the matrix failed (writing, a batch).
    #[error(transparent)]
    Exec(#[from] crate::eval::engine::ExecError),
    /// The eval's own runtime did not start.
    #[error("tokio runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The eval's thread did not start.
    #[error("cannot start the eval: {0}")]
    Thread(#[source] std::io::Error),
    /// The eval panicked (caught; the log has the panic).
    #[error("internal error: the eval panicked (see the log)")]
    Panicked,
}
