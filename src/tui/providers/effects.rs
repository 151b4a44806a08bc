//! The runner's part of the picker: reading cutline.toml (which keys are
//! set, never their values) and writing a model into it.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::UnboundedSender;

use super::{ProviderEntry, SaveModel};
use crate::llm::config::{ProvidersFileError, WithModelError};
use crate::llm::registry::Registry;
use crate::tui::Event;

/// Read the providers again (the one explicit reload: the picker opening),
/// keep the registry in `slot` for the runs that follow, and send
/// [`Event::ProvidersLoaded`].
pub(in crate::tui) fn spawn_load(
    tx: UnboundedSender<Event>,
    slot: Arc<Mutex<Arc<Result<Registry, ProvidersFileError>>>>,
) {
    tokio::task::spawn_blocking(move || {
        let registry = Registry::load();
        let r = registry.as_ref().map(entries).map_err(Clone::clone);
        if let Err(e) = &r {
            tracing::warn!("providers: {e}");
        }
        if let Ok(mut g) = slot.lock() {
            *g = Arc::new(registry);
        }
        let _ = tx.send(Event::ProvidersLoaded(r));
    });
}

/// The configured providers with whether each one's key variable is set
/// (the key itself is never read here), or the config's error.
pub fn load_providers() -> Result<Vec<ProviderEntry>, ProvidersFileError> {
    Registry::load().map(|r| entries(&r))
}

fn entries(registry: &Registry) -> Vec<ProviderEntry> {
    registry
        .config()
        .providers
        .iter()
        .cloned()
        .map(|config| {
            let key_set = config
                .key_env()
                .is_none_or(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
            ProviderEntry { config, key_set }
        })
        .collect()
}

/// Why a model typed in the picker was not saved: the file and what went
/// wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct SaveModelError {
    /// The providers file.
    pub path: std::path::PathBuf,
    /// What went wrong (kept as the source; the message says it).
    pub source: SaveModelCause,
}

/// What went wrong saving a model into a providers file.
#[derive(Debug, thiserror::Error)]
pub enum SaveModelCause {
    /// The file could not be read (or is not UTF-8).
    #[error("{0}")]
    Read(#[source] std::io::Error),
    /// Its text has no such provider, or is not TOML.
    #[error("{0}")]
    Edit(#[from] WithModelError),
    /// The edited file could not be written.
    #[error("{0}")]
    Write(#[source] std::io::Error),
}

/// Write `job.model` into the provider's config file: read, edit (every
/// other byte kept), write atomically.
pub fn save_model(job: &SaveModel) -> Result<String, SaveModelError> {
    let path = &job.file;
    let at = |source| SaveModelError {
        path: path.clone(),
        source,
    };
    let text = crate::limits::read(path)
        .and_then(|b| String::from_utf8(b).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
        .map_err(|e| at(SaveModelCause::Read(e)))?;
    let out = crate::llm::config::with_model(&text, &job.provider, &job.model).map_err(|e| at(e.into()))?;
    crate::store::write_atomic(path, out.as_bytes()).map_err(|e| at(SaveModelCause::Write(e)))?;
    Ok(rust_i18n::t!(
        "tui.status.save_model_saved",
        model = job.model,
        provider = job.provider,
        file = path.display()
    )
    .into_owned())
}
