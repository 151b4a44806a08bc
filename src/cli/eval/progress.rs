//! The eval's progress bar on stderr: runs done, failed, in flight.

use std::io::Write;
use std::time::{Duration, Instant};

/// A one-line progress bar on stderr, drawn only on a terminal.
pub(super) struct Progress {
    on: bool,
    total: usize,
    done: usize,
    failed: usize,
    skipped: usize,
    started: Instant,
    last: Option<Instant>,
    drawn: bool,
}

impl Progress {
    pub(super) fn new(total: usize, skipped: usize, on: bool) -> Self {
        Self {
            on,
            total,
            done: skipped,
            failed: 0,
            skipped,
            started: Instant::now(),
            last: None,
            drawn: false,
        }
    }

    pub(super) fn finished(&mut self, failed: bool) {
        self.done += 1;
        self.failed += usize::from(failed);
    }

    /// Redraw (at most every 100 ms unless `force`).
    pub(super) fn draw(&mut self, in_flight: usize, force: bool) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        if !force
            && self
                .last
                .is_some_and(|l| now.duration_since(l) < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(now);
        let width = 30;
        let filled = (self.done * width).checked_div(self.total).unwrap_or(width);
        let ran = self.done - self.skipped;
        let secs = self.started.elapsed().as_secs_f64();
        #[allow(clippy::cast_precision_loss)]
        let rate = if secs > 0.0 { ran as f64 / secs } else { 0.0 };
        #[allow(clippy::cast_precision_loss)]
        let eta = if rate > 0.0 {
            format!("{:.0}s", (self.total - self.done) as f64 / rate)
        } else {
            "?".into()
        };
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r\x1b[2Keval [{}{}] {}/{}  failed {}  skipped {}  in flight {}  {:.1}/s  eta {}",
            "#".repeat(filled),
            ".".repeat(width - filled),
            self.done,
            self.total,
            self.failed,
            self.skipped,
            in_flight,
            rate,
            eta
        );
        let _ = e.flush();
        self.drawn = true;
    }

    /// Erase the bar (before other output on the terminal).
    pub(super) fn clear(&mut self) {
        if self.drawn {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[2K");
            let _ = e.flush();
            self.drawn = false;
        }
    }
}
