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
        let line = self.line(in_flight, self.started.elapsed());
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[2K{line}");
        let _ = e.flush();
        self.drawn = true;
    }

    /// The bar after `elapsed`: done of total, failed, skipped, in flight,
    /// the rate of runs this command ran, and the time left at that rate.
    fn line(&self, in_flight: usize, elapsed: Duration) -> String {
        let width = 30;
        let filled = (self.done * width).checked_div(self.total).unwrap_or(width);
        let ran = self.done - self.skipped;
        let secs = elapsed.as_secs_f64();
        #[allow(
            clippy::cast_precision_loss,
            reason = "counts and milliseconds far below 2^52: exact as f64"
        )]
        let rate = if secs > 0.0 { ran as f64 / secs } else { 0.0 };
        #[allow(
            clippy::cast_precision_loss,
            reason = "counts and milliseconds far below 2^52: exact as f64"
        )]
        let eta = if rate > 0.0 {
            format!("{:.0}s", (self.total - self.done) as f64 / rate)
        } else {
            "?".into()
        };
        format!(
            "eval [{}{}] {}/{}  failed {}  skipped {}  in flight {}  {:.1}/s  eta {}",
            "#".repeat(filled),
            ".".repeat(width - filled),
            self.done,
            self.total,
            self.failed,
            self.skipped,
            in_flight,
            rate,
            eta
        )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_counts_runs_rate_and_time_left() {
        let mut p = Progress::new(100, 20, false);
        assert_eq!(
            p.line(0, Duration::ZERO),
            "eval [######........................] 20/100  failed 0  skipped 20  in flight 0  0.0/s  eta ?"
        );
        for i in 0..30 {
            p.finished(i % 10 == 0);
        }
        // 30 ran in 10 s: 3 a second, 50 left, about 17 s.
        assert_eq!(
            p.line(8, Duration::from_secs(10)),
            "eval [###############...............] 50/100  failed 3  skipped 20  in flight 8  3.0/s  eta 17s"
        );
    }
}
