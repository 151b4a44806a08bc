//! Stopping a run in the workbench (Esc, `q`, SIGINT, SIGTERM, SIGHUP) the
//! way a headless run is stopped: its stream ends with a `cancelled`
//! error, so what arrived is analysed and recorded as cut by the user,
//! rather than the task being dropped with nothing of it kept.

use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::watch;

use crate::llm::registry::Target;
use crate::llm::{BatchWire, Describe, Event, EventStream, Provider, ProviderInfo, Request};

/// The stop switch of one run: `true` ends its stream.
pub(in crate::tui) type Stop = watch::Sender<bool>;

/// A provider whose streams end when the run's switch is turned.
struct Stoppable {
    inner: Arc<dyn Provider>,
    stop: watch::Receiver<bool>,
}

impl Provider for Stoppable {
    fn info(&self) -> ProviderInfo {
        self.inner.info()
    }

    fn stream(&self, req: Request) -> EventStream {
        let events = self.inner.stream(req);
        let stop = self.stop.clone();
        Box::pin(futures_util::stream::unfold(Some((events, stop)), |state| async move {
            let (mut events, mut stop) = state?;
            let stopped = tokio::select! {
                biased;
                _ = stop.wait_for(|s| *s) => None,
                ev = events.next() => Some(ev),
            };
            match stopped {
                None => Some((
                    Event::Error(crate::run::interrupt::cut_by_user("stopped in the workbench")),
                    None,
                )),
                Some(ev) => ev.map(|e| (e, Some((events, stop)))),
            }
        }))
    }

    fn prefills(&self) -> bool {
        self.inner.prefills()
    }

    fn wire(&self, req: &Request) -> Option<(String, Value)> {
        self.inner.wire(req)
    }

    fn describe(&self) -> Option<Describe> {
        self.inner.describe()
    }

    fn batch_wire(&self) -> Option<BatchWire> {
        self.inner.batch_wire()
    }
}

/// `target` with its streams ended by `stop`.
pub(in crate::tui) fn stoppable(target: Target, stop: watch::Receiver<bool>) -> Target {
    Target {
        provider: Arc::new(Stoppable {
            inner: target.provider,
            stop,
        }),
        ..target
    }
}
