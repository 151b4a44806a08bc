//! The Compare tab: the pair on show (twins, or the pinned run against the
//! run on show) compared item by item with `compare::compare`, with its
//! gold set and the loss of each side; the report is computed in the
//! reducer when the pair or the gold set changes, never per frame.
//!
//! `state` holds [`CompareView`], `update` the pin, the gold set and the
//! report, `view` draws the tab, `effects` finds the gold set. The
//! strategy table under the report is its own feature (`tui::costs`).

mod effects;
mod state;
pub(super) mod update;
pub mod view;

pub use effects::load_gold;
pub(super) use effects::spawn_load_gold;
pub use state::CompareView;
