//! `cutline batches [SESSION] [--cancel]`: the provider batches of batch
//! evals (their manifests beside the sessions): each with its id, round,
//! state and counts, polled live where the provider is still working on
//! it; `--cancel` asks the provider to cancel those, and the next eval
//! collects what they answered and sends the rest again. JSONL: one
//! `batch` record each.
//!
//! Listing never writes the manifest (a copy read before an eval's write
//! would be written back over it); `--cancel` writes it only under the
//! session's lock, read afresh under it, so an eval running on the session
//! makes it fail at once rather than lose a batch that eval submitted.

use std::fmt::Write as _;
use std::io::Write;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};
use crate::eval::batch::{EntryState, Manifest, manifest};
use crate::llm::registry::Choice;

/// Arguments of `batches`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A session id or file (default: every batch eval in the sessions directory).
    pub session: Option<String>,
    /// Cancel the batches the provider is still working on.
    #[arg(long)]
    pub cancel: bool,
}

/// Run `batches`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let sessions: Vec<std::path::PathBuf> = match &args.session {
        Some(s) => {
            let session = if std::path::Path::new(s)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"))
            {
                std::path::PathBuf::from(s)
            } else {
                crate::session::file_for(&cli.sessions, s)
            };
            vec![session]
        }
        None => crate::session::list_dir(&cli.sessions)
            .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", cli.sessions.display())).because(e))?
            .into_iter()
            .filter(|p| manifest::path_for(p).is_file())
            .collect(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let mut all = Vec::new();
    let mut text = String::new();
    for session in sessions {
        let path = manifest::path_for(&session);
        let lock = if args.cancel { Some(lock(&session)?) } else { None };
        let mut m = Manifest::load(&path)?
            .ok_or_else(|| CliError::new(Category::InputError, format!("{}: no batch manifest", path.display())))?;
        rt.block_on(refresh(&mut m, args.cancel, out))?;
        if lock.is_some() {
            m.save(&path)?;
        }
        drop(lock);
        for e in &m.batches {
            let rec = json!({
                "type": "batch",
                "session": m.session,
                "provider": m.provider,
                "local": e.local,
                "id": e.batch.as_ref().map(|b| b.id.clone()),
                "round": e.round,
                "state": e.state,
                "requests": e.requests.len(),
                "status": e.status,
            });
            out.record(&rec).map_err(io_err)?;
            let _ = writeln!(
                text,
                "{:<24} {:<4} {:<32} {:<10} {:>6} requests  {}",
                m.session,
                e.local,
                e.batch.as_ref().map_or("-", |b| b.id.as_str()),
                format!("{:?}", e.state).to_lowercase(),
                e.requests.len(),
                e.status.as_ref().map_or_else(String::new, |s| format!(
                    "{} ({}/{} done, {} failed)",
                    s.state, s.done, s.total, s.failed
                ))
            );
            all.push(rec);
        }
    }
    if all.is_empty() {
        text.push_str("no batches\n");
    }
    out.pretty(&text).map_err(io_err)?;
    Ok(json!({"batches": all}))
}

/// The lock of `session`, for `--cancel`: held while the manifest is read,
/// changed and written, so no eval writes it meanwhile.
fn lock(session: &std::path::Path) -> Result<crate::session::SessionLock, CliError> {
    crate::session::SessionLock::take(session).map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::WouldBlock {
            "an eval is recording into this session now; nothing was cancelled (stop that eval, or cancel once it has \
             returned)"
                .to_owned()
        } else {
            e.to_string()
        };
        CliError::new(Category::InputError, format!("{}: {why}", session.display()))
    })
}

/// Poll (and with `cancel`, cancel) every batch the provider still works
/// on; a provider that is not configured any more leaves the last word. A
/// cancelled batch stays `cancelling` in the manifest: the next `eval`
/// collects what it answered before the cancel took, so nothing paid for
/// is lost.
async fn refresh<W: Write>(m: &mut Manifest, cancel: bool, out: &mut Out<W>) -> Result<(), CliError> {
    let open = m.batches.iter().any(|e| e.state.polled());
    if !open {
        return Ok(());
    }
    let api = super::params::registry()
        .ok()
        .and_then(|r| r.target(&Choice::parse(&m.provider), Some(&m.model)).ok())
        .and_then(|t| crate::llm::batch::api(t.provider.as_ref(), m.window));
    let Some(api) = api else {
        out.warn(format!(
            "provider {:?} is not configured here: the states shown are the last ones seen",
            m.provider
        ))
        .map_err(io_err)?;
        return Ok(());
    };
    for e in m.batches.iter_mut().filter(|e| e.state.polled()) {
        let Some(b) = e.batch.clone() else { continue };
        if cancel && e.state == EntryState::Submitted {
            // One refusal does not leave the others uncancelled, nor the
            // manifest unsaved: it is said, and the batch stays submitted.
            match api.cancel(b.clone()).await {
                Ok(()) => e.state = EntryState::Cancelling,
                Err(err) => out.warn(format!("{}: not cancelled: {err}", e.local)).map_err(io_err)?,
            }
        }
        match api.status(b).await {
            Ok(s) => e.status = Some(s),
            Err(err) => out.warn(format!("{}: {err}", e.local)).map_err(io_err)?,
        }
    }
    Ok(())
}
