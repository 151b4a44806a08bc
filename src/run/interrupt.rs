//! SIGINT, SIGTERM and SIGHUP (the terminal closed) during a headless run
//! (`cutline run`): the request in
//! flight ends as if the stream had failed, with what arrived kept, so the
//! run is analysed and recorded as cut by the user instead of the process
//! dying with only the session header on disk. A second signal ends the
//! process at once.
//!
//! The state is process-wide, as signals are: [`arm`] starts listening
//! (only commands that want it call it; the workbench handles signals
//! itself), and [`until_interrupted`] wraps every event stream of the one
//! run path.

use std::sync::OnceLock;

use futures_util::StreamExt;
use tokio::sync::watch;

use crate::llm::{ErrorKind, Event, EventStream, LlmError};

/// The exit code of a run cut by SIGINT or SIGTERM (documented in the
/// README): 128 + SIGINT, as shells report an interrupted command.
pub const EXIT_CODE: i32 = 130;

/// The signal that arrived, once one did.
static FIRED: OnceLock<watch::Sender<Option<&'static str>>> = OnceLock::new();

fn sender() -> &'static watch::Sender<Option<&'static str>> {
    FIRED.get_or_init(|| watch::channel(None).0)
}

/// Listen for SIGINT, SIGTERM and SIGHUP on the current tokio runtime (a
/// closed terminal or SSH session must not lose the answer so far either,
/// where the default action would kill the process). The first
/// ends the request in flight (see [`until_interrupted`]); a second exits
/// at once with [`EXIT_CODE`].
pub fn arm() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    sender();
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        let mut seen = 0;
        loop {
            let name = tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
                _ = hup.recv() => "SIGHUP",
            };
            seen += 1;
            if seen > 1 {
                std::process::exit(EXIT_CODE);
            }
            tracing::warn!("{name}: ending the request; what arrived is kept and recorded");
            sender().send_replace(Some(name));
        }
    });
    Ok(())
}

/// The signal that cut the run, when one did.
pub fn fired() -> Option<&'static str> {
    *sender().borrow()
}

/// The error a run cut by `signal` ends with.
pub fn cut_by_user(signal: &str) -> LlmError {
    LlmError::new(ErrorKind::Cancelled, format!("cut by the user ({signal})"))
}

/// `events` until a signal arrives (see [`arm`]); then one
/// [`ErrorKind::Cancelled`] error event, so the transcript keeps what
/// arrived and ends there. Unarmed, `events` as they are.
pub fn until_interrupted(events: EventStream) -> EventStream {
    let Some(tx) = FIRED.get() else {
        return events;
    };
    let rx = tx.subscribe();
    Box::pin(futures_util::stream::unfold(Some((events, rx)), |state| async move {
        let (mut events, mut rx) = state?;
        let cut = tokio::select! {
            biased;
            fired = rx.wait_for(Option::is_some) => Err(fired.ok().and_then(|s| *s).unwrap_or("a signal")),
            ev = events.next() => Ok(ev),
        };
        match cut {
            Err(signal) => Some((Event::Error(cut_by_user(signal)), None)),
            Ok(ev) => ev.map(|e| (e, Some((events, rx)))),
        }
    }))
}
