//! What the Compare tab knows of the strategies on the pair on show.

use crate::eval::strategy::StrategyRow;

/// The table for a pair, from asking to the rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Costs {
    /// Not asked for the pair on show.
    #[default]
    Idle,
    /// Running on the pair with these run ids.
    Running((u64, u64)),
    /// The rows (side A's strategies, then side B's) and the headline.
    Ready {
        /// The pair's run ids.
        ids: (u64, u64),
        /// One row per side × strategy.
        rows: Vec<StrategyRow>,
        /// "JSONL + continue: … ; JSON + retry-double: … (2.7x)", when the
        /// pair is a JSON prompt and its JSONL twin at one limit.
        headline: Option<String>,
    },
    /// Why the strategies could not run.
    Failed {
        /// The pair's run ids.
        ids: (u64, u64),
        /// The provider's or the run path's word.
        error: String,
    },
}
