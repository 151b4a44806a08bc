//! Why a run of the workbench could not start or finish: the error of the
//! layer that failed, turned into the status line's text only by its
//! `Display` (where the reducer shows it).

use crate::llm::LlmError;
use crate::llm::config::ProvidersFileError;

/// Why a run failed before it had an answer.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A configured provider was chosen but the providers file did not
    /// load (its file, line and column).
    #[error("provider config: {0}")]
    Config(ProvidersFileError),
    /// Replay has no recording of this exact request (what differs from
    /// the nearest one is in the message).
    #[error("{0}; switch to the local model (p)")]
    Replay(#[source] Box<crate::run::target::ReplayError>),
    /// Replay found no recording to play.
    #[error("{}; switch to the local model (p)", .0.message)]
    NoRecording(LlmError),
    /// The named provider could not be set up.
    #[error("provider {name}: {source}")]
    Provider {
        /// The provider's name in cutline.toml.
        name: String,
        /// Why.
        source: LlmError,
    },
    /// The local model could not be started.
    #[error("{}", .0.message)]
    Local(LlmError),
    /// The prompt does not render or its schema does not compile.
    #[error(transparent)]
    Start(#[from] crate::run::StartError),
    /// A native answer's wrapped schema did not compile.
    #[error(transparent)]
    Schema(#[from] crate::output::schema::SchemaCompileError),
    /// A recorded run's prompt snapshot did not load.
    #[error(transparent)]
    Snapshot(#[from] crate::session::SnapshotError),
    /// The task setting the provider up did not finish.
    #[error(transparent)]
    Join(#[from] tokio::task::JoinError),
    /// The run panicked (caught; the log has the panic).
    #[error("internal error: the run panicked (see the log)")]
    Panicked,
}
