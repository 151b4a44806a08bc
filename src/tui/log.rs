//! The workbench's log: a file in cutline's cache directory, never the
//! screen (anything printed would garble the terminal).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static LOG: Mutex<Option<File>> = Mutex::new(None);

/// The log file: `<cache>/cutline/tui.log`.
pub fn default_path() -> PathBuf {
    crate::llm::local::cache_dir().join("tui.log")
}

/// Open (append to) the log at `path`. Without it, logging is a no-op.
pub fn init(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let f = OpenOptions::new().create(true).append(true).open(path)?;
    if let Ok(mut g) = LOG.lock() {
        *g = Some(f);
    }
    Ok(())
}

/// Append one line, stamped with Unix milliseconds.
pub fn log(msg: impl std::fmt::Display) {
    let Ok(mut g) = LOG.lock() else { return };
    if let Some(f) = g.as_mut() {
        let _ = writeln!(f, "{} {msg}", crate::session::now_ms());
    }
}
