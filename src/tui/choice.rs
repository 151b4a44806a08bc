//! Who answers prompts: the provider choice every component reads (the
//! Run tab's runs, the eval view, the strategy table, the status line) and
//! the picker changes. Shared, so none of them imports the picker.

use crate::llm::config::ProvidersFileError;
use crate::llm::registry::{Choice, Registry};

/// Which provider runs prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderChoice {
    /// Recorded runs from the sessions directory, cut at the limit.
    Replay,
    /// The managed llama-server with Gemma 3 270M.
    Local,
    /// A provider configured in cutline.toml, by name, with the model chosen
    /// in the workbench (`None`: the configured one). The runner reads the
    /// config and builds it per run, so an edited config or a missing key
    /// is a failed run with its message, never a crash.
    Configured {
        /// The provider's name in cutline.toml.
        name: String,
        /// The model chosen in the workbench.
        model: Option<String>,
    },
}

impl ProviderChoice {
    /// Its name.
    pub fn label(&self) -> &str {
        match self {
            Self::Replay => "replay",
            Self::Local => "local",
            Self::Configured { name, .. } => name,
        }
    }
}

/// What a run on `pick` asks the registry for: its choice and the model
/// chosen in the workbench, and the registry to ask. A providers file
/// that does not load stops only a configured provider (its error is the
/// run's); replay and local run on the defaults.
pub(in crate::tui) fn registry_choice(
    pick: &ProviderChoice,
    loaded: &Result<Registry, ProvidersFileError>,
) -> Result<(Registry, Choice, Option<String>), ProvidersFileError> {
    let (choice, model) = match pick {
        ProviderChoice::Replay => (Choice::Replay, None),
        ProviderChoice::Local => (Choice::Local, None),
        ProviderChoice::Configured { name, model } => (Choice::Named(name.clone()), model.clone()),
    };
    let registry = match (&choice, loaded) {
        (Choice::Named(_), Err(e)) => return Err(e.clone()),
        (_, Ok(r)) => r.clone(),
        (_, Err(_)) => Registry::default(),
    };
    Ok((registry, choice, model))
}
