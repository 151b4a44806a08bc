//! The runner's part of the editor: saving a prompt through the store
//! (atomically, inside the prompts directory). The external editor
//! (`external`) is run by the event loop itself, which owns the terminal.

use std::path::PathBuf;

use tokio::sync::mpsc::UnboundedSender;

use crate::prompt::PromptConfig;
use crate::tui::Event;

/// Save `p` off the UI task and send [`Event::Saved`].
pub(in crate::tui) fn spawn_save(tx: UnboundedSender<Event>, dir: PathBuf, p: Box<PromptConfig>) {
    tokio::task::spawn_blocking(move || {
        let r = crate::store::save_in(&p, &dir).map(|()| p.origin.file.clone());
        tracing::info!("save {}: {r:?}", p.id);
        let _ = tx.send(Event::Saved(r));
    });
}
