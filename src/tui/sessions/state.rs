//! What the Sessions tab holds: the recorded sessions and the row chosen.

use crate::session::Session;

/// The sessions tab.
#[derive(Debug, Default)]
pub struct SessionsView {
    /// Loaded sessions, by file name.
    pub sessions: Vec<Session>,
    /// Selected row (session headers and their runs, flattened).
    pub selected: usize,
    /// True once the directory was read.
    pub loaded: bool,
}

impl SessionsView {
    /// The rows: (session, run) with `None` for a session's header row.
    pub fn rows(&self) -> Vec<(usize, Option<usize>)> {
        let mut out = Vec::new();
        for (i, s) in self.sessions.iter().enumerate() {
            out.push((i, None));
            out.extend((0..s.runs.len()).map(|r| (i, Some(r))));
        }
        out
    }

    /// The selected row.
    pub fn selected_row(&self) -> Option<(usize, Option<usize>)> {
        self.rows().get(self.selected).copied()
    }
}
