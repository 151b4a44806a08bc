//! Who answers: the provider chosen, and the picker that chooses it.

use crate::llm::config::ProviderConfig;
use crate::tui::choice::ProviderChoice;

/// A configured provider as the picker shows it. Holds whether its key
/// variable is set, never the key.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderEntry {
    /// The provider's config (the name of its key variable, no key).
    pub config: ProviderConfig,
    /// True when its key variable is set (or the kind needs no key).
    pub key_set: bool,
}

/// The provider picker: `replay`, `local`, then every configured provider.
#[derive(Debug, Default)]
pub struct ProviderPicker {
    /// Configured providers (cutline.toml), with whether their key is set.
    pub entries: Vec<ProviderEntry>,
    /// Why the config did not load (`file:line:col: cause`), if it did not.
    pub error: Option<String>,
    /// True once the config was read.
    pub loaded: bool,
    /// Row under the cursor (0 replay, 1 local, 2.. configured).
    pub selected: usize,
    /// Models typed per configured provider name (override the config's).
    pub models: Vec<(String, String)>,
    /// A save asked for and not yet confirmed (`w` again writes it).
    pub save: Option<SaveModel>,
}

impl ProviderPicker {
    /// Rows: replay, local, then the configured providers.
    pub fn len(&self) -> usize {
        2 + self.entries.len()
    }

    /// Never empty (replay and local are always there).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The model in force for a configured provider: typed, else configured.
    pub fn model_of(&self, e: &ProviderEntry) -> Option<String> {
        self.models
            .iter()
            .find(|(n, _)| *n == e.config.name)
            .map(|(_, m)| m.clone())
            .or_else(|| e.config.model.clone())
    }

    /// The choice a row stands for.
    pub fn choice(&self, row: usize) -> Option<ProviderChoice> {
        Some(match self.row(row)? {
            PickerRow::Replay => ProviderChoice::Replay,
            PickerRow::Local => ProviderChoice::Local,
            PickerRow::Configured(e) => ProviderChoice::Configured {
                name: e.config.name.clone(),
                model: self.model_of(e),
            },
        })
    }

    /// What row `i` is.
    pub fn row(&self, i: usize) -> Option<PickerRow<'_>> {
        match i {
            0 => Some(PickerRow::Replay),
            1 => Some(PickerRow::Local),
            n => self.entries.get(n - 2).map(PickerRow::Configured),
        }
    }

    /// The row under the cursor.
    pub fn selected_row(&self) -> Option<PickerRow<'_>> {
        self.row(self.selected)
    }
}

/// A row of the provider picker.
#[derive(Debug, Clone, Copy)]
pub enum PickerRow<'a> {
    /// Recorded runs.
    Replay,
    /// The local model.
    Local,
    /// A provider from cutline.toml.
    Configured(&'a ProviderEntry),
}

/// A model to save for a configured provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveModel {
    /// The provider's name.
    pub provider: String,
    /// The model typed.
    pub model: String,
    /// The config file that defines the provider.
    pub file: std::path::PathBuf,
}
