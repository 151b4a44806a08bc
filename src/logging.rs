//! Diagnostics through `tracing`, routed by where cutline runs.
//!
//! A headless command logs to stderr (warnings by default), where it sits
//! beside the command's own output without mixing into stdout. The
//! workbench logs to a file in cutline's cache directory instead: anything
//! printed while it holds the terminal would garble the screen, and a run
//! that the Runs tab started warns through the same run path a CLI run does.
//! `CUTLINE_LOG` takes an `EnvFilter` directive (`debug`,
//! `cutline::llm=trace`) to see more; the run path logs each request, retry
//! and finish at `debug`. Nothing logged carries a key: requests are logged
//! by provider, model and limit, never by header or body.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// The variable that sets the filter, in `EnvFilter`'s syntax.
pub const FILTER_VAR: &str = "CUTLINE_LOG";

fn filter(default: &str) -> EnvFilter {
    EnvFilter::try_from_env(FILTER_VAR).unwrap_or_else(|_| EnvFilter::new(default))
}

/// Log to stderr at `warn` (or as `CUTLINE_LOG` says), without timestamps:
/// a command's diagnostics, read by the person or script that ran it. A
/// second call (a test that runs commands in-process) keeps the first.
pub fn to_stderr() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter("warn"))
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false)
        .with_ansi(false)
        .try_init();
}

/// The workbench's log: `<cache>/cutline/tui.log`.
pub fn workbench_path() -> PathBuf {
    crate::llm::local::cache_dir().join("tui.log")
}

/// Append the log to `path` at `info` (or as `CUTLINE_LOG` says), with
/// timestamps. Without the file, nothing is logged: the screen is never
/// the fallback.
pub fn to_file(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = crate::limits::open_write(path, true)?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter("info"))
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .try_init();
    Ok(())
}
