//! What the Sweep tab holds, and the jobs and results that fill it.

use std::sync::Arc;

use crate::output::sweep::{SweepPoint, SweepSchemas};
use crate::tui::runs::Cut;

/// The sweep of the runs on show.
#[derive(Debug, Default)]
pub enum Sweep {
    /// None asked for (or the runs on show changed).
    #[default]
    Idle,
    /// Being computed by the runner.
    Pending,
    /// Computed.
    Ready(Box<SweepView>),
}

impl Sweep {
    /// The computed sweep, if there is one.
    pub fn ready(&self) -> Option<&SweepView> {
        match self {
            Self::Ready(v) => Some(v),
            Self::Idle | Self::Pending => None,
        }
    }

    /// The computed sweep, to move its cursor.
    pub fn ready_mut(&mut self) -> Option<&mut SweepView> {
        match self {
            Self::Ready(v) => Some(v),
            Self::Idle | Self::Pending => None,
        }
    }
}

/// The sweep of the runs on show.
#[derive(Debug)]
pub struct SweepView {
    /// The computed points and boundaries.
    pub data: SweepData,
    /// The cut under the cursor, in tokens.
    pub cursor: usize,
    /// The JSON side cut at the cursor.
    pub json_cut: Option<Cut>,
    /// The JSONL side cut at the cursor.
    pub jsonl_cut: Option<Cut>,
}

impl SweepView {
    /// The largest token count of either side.
    pub fn max_tokens(&self) -> usize {
        self.data
            .json_bounds
            .len()
            .max(self.data.jsonl_bounds.len())
            .saturating_sub(1)
    }

    /// (strict, salvage, jsonl) items at `k` tokens.
    pub fn at(&self, k: usize) -> (usize, usize, usize) {
        let pick = |pts: &[SweepPoint]| pts.get(k.min(pts.len().saturating_sub(1))).copied();
        let j = pick(&self.data.json_points);
        let l = pick(&self.data.jsonl_points);
        (
            j.map_or(0, |p| p.json_items),
            j.map_or(0, |p| p.salvaged_items),
            l.map_or(0, |p| p.jsonl_items),
        )
    }

    /// The recommended limits (`cutline budget` at [`BUDGET_TARGET`]) of
    /// the answers on show: (strict JSON, JSONL), each when its answer has
    /// items to keep.
    pub fn budgets(&self) -> (Option<usize>, Option<usize>) {
        let of = |pts: &[SweepPoint], jsonl: bool| {
            let last = pts.last()?;
            let items = if jsonl { last.jsonl_items } else { last.json_items };
            (items > 0).then(|| crate::eval::budget::of_input("", pts, jsonl, BUDGET_TARGET, None).limit)
        };
        (of(&self.data.json_points, false), of(&self.data.jsonl_points, true))
    }
}

/// The share of an answer's items the Sweep tab's budget marker keeps.
pub const BUDGET_TARGET: f64 = 0.95;

/// One side of a sweep.
#[derive(Debug, Clone)]
pub struct SweepInput {
    /// Run id.
    pub id: u64,
    /// The response text.
    pub text: String,
    /// Token boundaries from recorded pieces, when they are real tokens.
    pub boundaries: Option<Vec<usize>>,
    /// Schemas.
    pub schemas: Arc<SweepSchemas>,
}

/// A sweep to compute: the JSON side and the JSONL side (the same run for a
/// single run, the pair for twins).
#[derive(Debug, Clone)]
pub struct SweepJob {
    /// The run read as a JSON array.
    pub json: SweepInput,
    /// The run read as JSONL.
    pub jsonl: SweepInput,
}

/// A computed sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepData {
    /// Run id of the JSON side.
    pub json_id: u64,
    /// Its token boundaries.
    pub json_bounds: Vec<usize>,
    /// Its points.
    pub json_points: Vec<SweepPoint>,
    /// Run id of the JSONL side.
    pub jsonl_id: u64,
    /// Its token boundaries.
    pub jsonl_bounds: Vec<usize>,
    /// Its points.
    pub jsonl_points: Vec<SweepPoint>,
    /// True when boundaries came from a tokenizer, not recorded tokens.
    pub estimated: bool,
}
