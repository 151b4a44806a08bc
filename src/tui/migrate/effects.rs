//! The runner's part of the Migrate tab: writing the migrated prompt.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use super::WriteOutcome;
use crate::prompt::PromptConfig;
use crate::tui::Event;

/// Write `config` off the UI task and send [`Event::MigrateWritten`].
pub(in crate::tui) fn spawn_write(
    tx: UnboundedSender<Event>,
    dir: PathBuf,
    config: Box<PromptConfig>,
    overwrite: bool,
) {
    tokio::task::spawn_blocking(move || {
        let outcome = write_migrated(&config, &dir, overwrite);
        tracing::info!("write migrated {}: {outcome:?}", config.id);
        let _ = tx.send(Event::MigrateWritten(outcome));
    });
}

/// Write a migrated prompt to its `origin.file` (atomically, through the
/// store), which must lie inside the prompts directory `dir`; an existing
/// file is only replaced when `overwrite`.
pub fn write_migrated(config: &PromptConfig, dir: &Path, overwrite: bool) -> WriteOutcome {
    let file = config.origin.file.clone();
    if let Err(e) = crate::store::check_inside(Path::new(&file), dir) {
        return WriteOutcome::Failed(e.to_string());
    }
    if !overwrite && Path::new(&file).exists() {
        return WriteOutcome::Exists(file);
    }
    match crate::store::save_in(config, dir) {
        Ok(()) => WriteOutcome::Written(file),
        Err(e) => WriteOutcome::Failed(e.to_string()),
    }
}
