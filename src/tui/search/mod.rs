//! `/` in the Run and Sweep tabs' panes: find a text in the focused pane's
//! rows as drawn, `n`/`N` between hits, `Esc` ends it. Elsewhere `/`
//! filters the prompt list (`tui::prompts`).
//!
//! [`Search`] is its state (in `State.search`, the typing in
//! `Mode::Search`), `update` its keys, `view` marks the hit.

pub(super) mod update;
pub mod view;

use crate::tui::state::OutPane;

/// A search found in a pane: `n`/`N` move between its hits, `Esc` ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// The pane searched.
    pub pane: OutPane,
    /// What was searched for (matched case-insensitively).
    pub query: String,
    /// The row of the current hit.
    pub row: usize,
}
