//! Who answers prompts: [`ProviderChoice`] (replay, the local model, a
//! provider of cutline.toml with the model chosen here) and the picker
//! (`p`) that chooses it, with `e` to type a model and `w` to save it
//! into the config file (`save_model`).
//!
//! `state` holds the choice, the picker and its rows, `update` its keys,
//! `view` the popup, `effects` reads cutline.toml (whether each key
//! variable is set, never a key) and writes a saved model.

mod effects;
pub(super) mod save_model;
mod state;
pub(super) mod update;
pub mod view;

pub use effects::{SaveModelCause, SaveModelError, load_providers, save_model};
pub(super) use effects::{registry_choice, spawn_load};
pub use save_model::SaveModel;
pub use state::{PickerRow, ProviderChoice, ProviderEntry, ProviderPicker};
