//! The runner's part of the Sessions tab: reading the sessions directory.

use std::path::PathBuf;

use tokio::sync::mpsc::UnboundedSender;

use crate::tui::Event;

/// Read every session under `dir` off the UI task (a session that does not
/// load is logged and left out) and send [`Event::SessionsLoaded`].
pub(in crate::tui) fn spawn_load(tx: UnboundedSender<Event>, dir: PathBuf) {
    tokio::task::spawn_blocking(move || {
        let sessions: Vec<_> = crate::session::list(&dir)
            .iter()
            .filter_map(|p| match crate::session::load(p) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!("session {}: {e}", p.display());
                    None
                }
            })
            .collect();
        let _ = tx.send(Event::SessionsLoaded(sessions));
    });
}
