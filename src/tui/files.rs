//! The workbench's own files, written and read by the runner: what it
//! remembers between sessions, a model saved from the picker, and the
//! report `x` writes.

use std::path::Path;

/// The file beside the sessions that keeps the last tab and pin.
pub const REMEMBERED_FILE: &str = ".cutline-workbench.json";

/// Keep `r` for the next session (only where the sessions directory
/// exists: the workbench creates no directory to remember a tab).
pub fn remember(dir: &Path, r: &crate::tui::event::Remembered) {
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
pub fn remembered(dir: &Path) -> Option<crate::tui::event::Remembered> {
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

/// Write `job.model` into the provider's config file: read, edit (every
/// other byte kept), write atomically.
pub fn save_model(job: &crate::tui::event::SaveModel) -> Result<String, String> {
    let path = &job.file;
    let text = crate::limits::read(path)
        .and_then(|b| String::from_utf8(b).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let out = crate::llm::config::with_model(&text, &job.provider, &job.model)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    crate::store::write_atomic(path, out.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(rust_i18n::t!(
        "tui.status.save_model_saved",
        model = job.model,
        provider = job.provider,
        file = path.display()
    )
    .into_owned())
}

/// Write the HTML report of `runs` (numbers) of session `session` beside
/// the sessions, as `cutline report` would; what the status says.
pub fn write_report(sessions: &Path, prompts: &Path, session: &str, runs: &[usize]) -> Result<String, String> {
    let (loaded, _) = crate::session::resolve(session, sessions)?;
    let input = crate::report::load::input(loaded, runs, prompts);
    let page = crate::report::html::page(&crate::report::build(&input));
    let numbers: Vec<String> = runs.iter().map(ToString::to_string).collect();
    let name = format!(
        "{}-{}.html",
        crate::session::safe_stem(session),
        crate::session::safe_stem(&numbers.join(","))
    );
    let path = sessions.join(name);
    crate::store::write_atomic(&path, page.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(rust_i18n::t!(
        "tui.status.report_written",
        path = path.display(),
        kb = page.len().div_ceil(1024),
        runs = runs.len()
    )
    .into_owned())
}
