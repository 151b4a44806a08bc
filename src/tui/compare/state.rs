//! What the Compare tab holds: the report on the pair on show and its gold
//! set.

use serde_json::Value;

use crate::compare::Report;

/// Why the Compare tab shows no report (its lines drawn in the tab).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoReport {
    /// No pair is on show: twins or a pin make one.
    #[error("{}", rust_i18n::t!("tui.msg.compare_needs_pair", twins = twins, pin = pin))]
    NeedsPair {
        /// The key that shows twins.
        twins: String,
        /// The key that pins a run.
        pin: String,
    },
    /// A side of the pair is still running.
    #[error("{}", rust_i18n::t!("tui.msg.pair_running"))]
    Running,
    /// A JSON side ended without an answer to compare.
    #[error("{prompt} has no finished answer to compare")]
    Unfinished {
        /// The side's prompt id.
        prompt: String,
    },
}

/// The Compare tab: the last pair's report and the gold set found for it.
#[derive(Debug, Default)]
pub struct CompareView {
    /// The report of the pair on show, or why there is none yet.
    pub report: Option<Result<Box<Report>, NoReport>>,
    /// Labels of sides A and B (response type · prompt id).
    pub labels: [String; 2],
    /// Run ids the report is of.
    pub ids: Option<(u64, u64)>,
    /// Prompt ids the gold set was looked up for.
    pub gold_for: Vec<String>,
    /// The gold set: file and items.
    pub gold: Option<(String, Vec<Value>)>,
    /// Why the gold set did not load.
    pub gold_error: Option<crate::eval::inputs::InputsError>,
    /// The per-line schema of the pair (the JSONL side's), for item keys.
    pub line_schema: Option<Value>,
    /// With a gold set: why each side missed the gold items it missed
    /// (computed with the report, not per frame).
    pub loss: Option<[crate::compare::loss::Loss; 2]>,
    /// First visible row.
    pub top: usize,
}
