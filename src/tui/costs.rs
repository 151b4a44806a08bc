//! The Compare tab's strategy table: what getting every item of the pair on
//! show costs, strategy by strategy (`S`). The same cells and rows as
//! `cutline eval --strategy`, for one input: the pair's own.

use crate::eval::strategy::{self, Strategy, StrategyRow, StrategyRun};
use crate::prompt::ResponseType;

/// The strategies a side runs: a JSONL answer is continued, anything else
/// is retried with twice the limit (the loop users write around a JSON
/// array); both against one call at the limit.
pub fn strategies_for(response_type: ResponseType) -> [Strategy; 2] {
    match response_type {
        ResponseType::Jsonl => [Strategy::Single, Strategy::Continue],
        _ => [Strategy::Single, Strategy::RetryDouble],
    }
}

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

/// One side of the pair as the table lists it.
#[derive(Debug, Clone, Copy)]
pub struct SideOf<'a> {
    /// Prompt id.
    pub prompt: &'a str,
    /// Its response type.
    pub response_type: ResponseType,
    /// The limit it ran at.
    pub limit: Option<u32>,
}

/// The rows and headline of the pair's strategy runs.
pub fn table(sides: [SideOf<'_>; 2], runs: &[StrategyRun]) -> (Vec<StrategyRow>, Option<String>) {
    let word = |t: ResponseType| match t {
        ResponseType::Json => "json",
        ResponseType::Jsonl => "jsonl",
        ResponseType::Text => "text",
    };
    let mut rows = Vec::new();
    for (i, side) in sides.iter().enumerate() {
        let other = sides[1 - i].prompt;
        let listed = [(side.prompt, word(side.response_type), Some(other))];
        rows.extend(strategy::table(
            &listed,
            &[side.limit],
            &strategies_for(side.response_type),
            runs,
        ));
    }
    let headline = strategy::headlines(&rows).first().map(strategy::Headline::sentence);
    (rows, headline)
}
