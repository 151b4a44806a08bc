//! What the Compare tab holds: the report on the pair on show and its gold
//! set.

use serde_json::Value;

use crate::compare::Report;

/// The Compare tab: the last pair's report and the gold set found for it.
#[derive(Debug, Default)]
pub struct CompareView {
    /// The report of the pair on show, or why there is none yet.
    pub report: Option<Result<Box<Report>, String>>,
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
