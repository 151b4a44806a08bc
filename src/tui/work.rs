//! What every job the runner starts shares (the registry in force and the
//! session being recorded): its own module, so the features' effects and
//! the runner that starts them both read it without reading each other.

use std::sync::{Arc, Mutex};

use crate::llm::config::ProvidersFileError;
use crate::llm::registry::Registry;
use crate::session::Recorder;

/// What every run task shares: the registry in force and the session.
#[derive(Clone)]
pub(in crate::tui) struct RunContext {
    pub(in crate::tui) registry: Arc<Result<Registry, ProvidersFileError>>,
    pub(in crate::tui) recorder: Arc<Mutex<Option<Recorder>>>,
}
