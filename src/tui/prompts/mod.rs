//! The Prompts tab: every prompt of the prompts directory (a file that does
//! not load is listed with its error), filtered by `/`, opened by Enter.
//!
//! `state` holds [`PromptList`], `update` takes the loaded directory and
//! the filter's keys, `view` draws the list and the selected prompt,
//! `effects` loads the directory through the store.

mod effects;
mod state;
pub(super) mod update;
pub mod view;

pub(super) use effects::spawn_load;
pub use state::PromptList;
