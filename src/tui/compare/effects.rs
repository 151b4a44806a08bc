//! The runner's part of the Compare tab: finding the pair's gold set.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use crate::eval::inputs::InputsError;
use crate::tui::Event;

/// Look for the gold set of `ids` under `dir` off the UI task and send
/// [`Event::GoldLoaded`].
pub(in crate::tui) fn spawn_load_gold(tx: UnboundedSender<Event>, dir: PathBuf, ids: Vec<String>) {
    tokio::task::spawn_blocking(move || {
        let result = load_gold(&dir, &ids);
        let _ = tx.send(Event::GoldLoaded { ids, result });
    });
}

/// The first gold set `dir/<id>.jsonl` among `ids`: its file and items,
/// `None` when there is none, or where it is malformed (`file:line: cause`).
pub fn load_gold(dir: &Path, ids: &[String]) -> Result<Option<(String, Vec<serde_json::Value>)>, InputsError> {
    crate::eval::inputs::find_gold(dir, ids)
}
