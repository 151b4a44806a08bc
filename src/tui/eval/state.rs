//! What the eval view holds: the limits, where it is scrolled, and the
//! eval from asking to its table. Whether it is on show is the root's
//! `State::overlay`.

use std::collections::BTreeMap;

use crate::eval::{Row, RunSummary, TablePrompt, TwinRow};

/// The eval view.
#[derive(Debug)]
pub struct EvalView {
    /// The limits the next eval runs at.
    pub limits: Vec<Option<u32>>,
    /// First visible row.
    pub top: usize,
    /// The eval.
    pub run: EvalRun,
}

impl Default for EvalView {
    fn default() -> Self {
        Self {
            limits: crate::eval::parse_limits(super::DEFAULT_LIMITS).unwrap_or_default(),
            top: 0,
            run: EvalRun::Idle,
        }
    }
}

/// An eval, from asking to the table.
#[derive(Debug, Default)]
pub enum EvalRun {
    /// None asked for yet.
    #[default]
    Idle,
    /// Asked for: the runner resolves the provider, plans, reads the session.
    Planning {
        /// The eval's id.
        id: u64,
        /// The prompts.
        prompts: Vec<String>,
        /// What the reducer saw to say (a twin not loaded).
        notes: Vec<String>,
    },
    /// Running.
    Running(Box<Progress>),
    /// Over: what it did, and how it ended.
    Ended(Box<Progress>, Ending),
    /// It could not start or go on.
    Failed {
        /// The prompts.
        prompts: Vec<String>,
        /// Why (provider, session, local model, prompt).
        error: String,
    },
}

impl EvalRun {
    /// The id of the eval in flight.
    pub fn live(&self) -> Option<u64> {
        match self {
            Self::Planning { id, .. } => Some(*id),
            Self::Running(p) => Some(p.id),
            _ => None,
        }
    }

    /// What ran (or runs), once planned.
    pub fn progress(&self) -> Option<&Progress> {
        match self {
            Self::Running(p) | Self::Ended(p, _) => Some(p),
            _ => None,
        }
    }
}

/// How an eval ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Every run of the matrix is recorded.
    Complete,
    /// Esc: runs in flight were dropped, runs recorded stay.
    Cancelled,
    /// Runs could not be recorded (the first error).
    Unrecorded(usize, String),
}

/// An eval planned: counts, the summaries so far and their table.
#[derive(Debug)]
pub struct Progress {
    /// The eval's id.
    pub id: u64,
    /// The provider, and its model when it has one.
    pub provider: String,
    /// The limits.
    pub limits: Vec<Option<u32>>,
    /// The session's id.
    pub session: String,
    /// Its file.
    pub path: String,
    /// Runs in the matrix.
    pub total: usize,
    /// Runs the session already held.
    pub skipped: usize,
    /// Runs run now.
    pub ran: usize,
    /// Runs run now that failed (the next eval runs them again).
    pub failed: usize,
    /// Runs in flight.
    pub in_flight: usize,
    /// Workbench clock when the runs began.
    pub started_ms: u64,
    /// Workbench clock when the eval ended.
    pub ended_ms: Option<u64>,
    /// The prompts as the table lists them.
    pub prompts: Vec<TablePrompt>,
    /// Runs per table row, per prompt.
    pub per_prompt: BTreeMap<String, usize>,
    /// Every summary: skipped ones first, then in the order they finished.
    pub summaries: Vec<RunSummary>,
    /// The table over them (recomputed as each run finishes).
    pub rows: Vec<Row>,
    /// JSON against JSONL at each limit.
    pub twins: Vec<TwinRow>,
    /// Warnings, in the order they came.
    pub warnings: Vec<String>,
}

impl Progress {
    /// Runs done, skipped ones included.
    pub fn done(&self) -> usize {
        self.skipped + self.ran
    }

    /// Milliseconds the runs took (so far, at `now_ms`).
    pub fn elapsed_ms(&self, now_ms: u64) -> u64 {
        self.ended_ms.unwrap_or(now_ms).saturating_sub(self.started_ms)
    }

    /// Runs per second run now, once any ran.
    pub fn rate(&self, now_ms: u64) -> Option<f64> {
        let ms = self.elapsed_ms(now_ms);
        #[allow(clippy::cast_precision_loss, reason = "counts and milliseconds of an eval")]
        (self.ran > 0 && ms > 0).then(|| self.ran as f64 * 1000.0 / ms as f64)
    }

    /// Seconds left at the rate so far.
    pub fn left_secs(&self, now_ms: u64) -> Option<f64> {
        #[allow(clippy::cast_precision_loss, reason = "counts of an eval")]
        self.rate(now_ms)
            .map(|r| self.total.saturating_sub(self.done()) as f64 / r)
    }

    /// The first failure, as people read it.
    pub fn first_failure(&self) -> Option<String> {
        self.summaries.iter().find_map(|s| {
            s.error.as_ref().map(|e| {
                format!(
                    "{} · {} @ {}: {e}",
                    s.prompt,
                    s.input,
                    crate::eval::limit_label(s.max_tokens)
                )
            })
        })
    }

    /// Fold in a finished run: counts, the table and the twins.
    pub fn add(&mut self, s: RunSummary) {
        self.ran += 1;
        self.failed += usize::from(s.failed());
        self.summaries.push(s);
        self.retable();
    }

    /// The table and the twins over the summaries.
    pub fn retable(&mut self) {
        self.rows = crate::eval::table(&self.prompts, &self.limits, &self.per_prompt, &self.summaries);
        self.twins = crate::eval::twins(&self.rows);
    }
}
