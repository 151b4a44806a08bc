//! The runner's part of the Prompts tab: loading the prompts directory.

use tokio::sync::mpsc::UnboundedSender;

use crate::tui::Event;

/// Load every prompt file of the workspace off the UI task (a bad file does
/// not hide the others) and send [`Event::PromptsLoaded`].
pub(in crate::tui) fn spawn_load(tx: UnboundedSender<Event>, workspace: crate::store::Workspace) {
    tokio::task::spawn_blocking(move || {
        let dir = &workspace.dir;
        let (prompts, errors, warnings) = workspace.load();
        tracing::info!(
            "loaded {} prompts, {} errors from {}",
            prompts.len(),
            errors.len(),
            dir.display()
        );
        let _ = tx.send(Event::PromptsLoaded {
            prompts,
            errors: errors.iter().map(ToString::to_string).collect(),
            warnings: warnings.iter().map(ToString::to_string).collect(),
        });
    });
}
