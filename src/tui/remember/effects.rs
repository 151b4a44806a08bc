//! The runner's part: the file beside the sessions that keeps what the
//! workbench remembers.

use std::path::Path;

use super::Remembered;

/// The file beside the sessions that keeps the last tab and pin.
pub const REMEMBERED_FILE: &str = ".cutline-workbench.json";

/// Keep `r` for the next session (only where the sessions directory
/// exists: the workbench creates no directory to remember a tab).
pub fn remember(dir: &Path, r: &Remembered) {
    if !dir.is_dir() {
        return;
    }
    let path = dir.join(REMEMBERED_FILE);
    let written = serde_json::to_vec(r)
        .map_err(std::io::Error::other)
        .and_then(|bytes| crate::store::write_atomic(&path, &bytes));
    if let Err(e) = written {
        tracing::warn!("{}: {e}", path.display());
    }
}

/// What the last session kept, if anything readable (a missing or damaged
/// file is nothing to restore, never an error in the person's way).
pub fn remembered(dir: &Path) -> Option<Remembered> {
    let path = dir.join(REMEMBERED_FILE);
    let meta = std::fs::metadata(&path).ok()?;
    if meta.len() > 64 * 1024 {
        tracing::warn!("{}: {} bytes, ignored", path.display(), meta.len());
        return None;
    }
    let bytes = crate::limits::read(&path).ok()?;
    serde_json::from_slice(&bytes)
        .map_err(|e| tracing::warn!("{}: {e}", path.display()))
        .ok()
}
