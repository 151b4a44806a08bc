//! The runner's part of `x`: writing the HTML report beside the sessions.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use crate::tui::Event;

/// Write the report of `runs` of `session` off the UI task and send
/// [`Event::ReportWritten`].
pub(in crate::tui) fn spawn(
    tx: UnboundedSender<Event>,
    sessions: PathBuf,
    prompts: PathBuf,
    session: String,
    runs: Vec<usize>,
    py: crate::output::tg::TgPython,
) {
    tokio::task::spawn_blocking(move || {
        let r = write_report(&sessions, &prompts, &session, &runs, py);
        tracing::info!("report of {session} {runs:?}: {r:?}");
        let _ = tx.send(Event::ReportWritten(r));
    });
}

/// Why the report was not written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The session is not in the sessions directory.
    #[error(transparent)]
    Locate(#[from] crate::session::SessionError),
    /// The session could not be read.
    #[error(transparent)]
    Load(#[from] crate::report::load::LoadError),
    /// The page could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The page's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Write the HTML report of `runs` (numbers) of session `session` beside
/// the sessions, as `cutline report` would; what the status says.
pub fn write_report(
    sessions: &Path,
    prompts: &Path,
    session: &str,
    runs: &[usize],
    py: crate::output::tg::TgPython,
) -> Result<String, ReportError> {
    // The same loader as `cutline report`: run by run, keeping the runs
    // picked and their twins.
    let path = crate::session::locate(session, sessions)?;
    let picked = runs.to_vec();
    let input = crate::report::load::from_file(&path, prompts, py, |_| {
        Ok::<_, std::convert::Infallible>(crate::report::load::Pick::Runs(picked))
    })?;
    let page = crate::report::html::page(&crate::report::build(&input));
    let numbers: Vec<String> = runs.iter().map(ToString::to_string).collect();
    let name = format!(
        "{}-{}.html",
        crate::session::safe_stem(session),
        crate::session::safe_stem(&numbers.join(","))
    );
    let path = sessions.join(name);
    if let Err(source) = crate::store::write_atomic(&path, page.as_bytes()) {
        return Err(ReportError::Write { path, source });
    }
    Ok(rust_i18n::t!(
        "tui.status.report_written",
        path = path.display(),
        kb = page.len().div_ceil(1024),
        runs = runs.len()
    )
    .into_owned())
}
