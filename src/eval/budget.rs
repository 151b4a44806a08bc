//! A recommended max-token budget: from one uncut answer per input, the
//! smallest limit at which the response type's consumer keeps at least a
//! target share of the uncut answer's items. Pure: sweep points in, limits
//! out.

use serde::Serialize;

use crate::output::sweep::SweepPoint;

/// One input's budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputBudget {
    /// The input.
    pub input: String,
    /// Output tokens of the uncut answer (its visible text).
    pub tokens_uncut: usize,
    /// Items the consumer keeps from the uncut answer.
    pub items_uncut: usize,
    /// Items the target asks for (`ceil(target × items_uncut)`).
    pub items_needed: usize,
    /// The smallest limit of visible tokens that keeps them.
    pub visible_limit: usize,
    /// Reasoning tokens the uncut run spent (they count against the same
    /// limit), when the provider reported them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
    /// The limit to set: visible plus reasoning.
    pub limit: usize,
    /// Visible tokens per item of the uncut answer.
    pub tokens_per_item: Option<f64>,
}

/// The consumer's item count at a point (`jsonl`: kept lines; else strict
/// JSON, all or nothing).
fn items(p: &SweepPoint, jsonl: bool) -> usize {
    if jsonl { p.jsonl_items } else { p.json_items }
}

/// The budget of one uncut answer swept at every cut (`points` in cut
/// order, the last the whole answer).
pub fn of_input(input: &str, points: &[SweepPoint], jsonl: bool, target: f64, reasoning: Option<u32>) -> InputBudget {
    let last = points.last().copied().unwrap_or_default();
    let items_uncut = items(&last, jsonl);
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "an item count times a fraction in 0..=1, rounded up: non-negative and no larger than the count"
    )]
    let items_needed = ((target * items_uncut as f64) - 1e-9).ceil().max(0.0) as usize;
    let visible_limit = points
        .iter()
        .find(|p| items(p, jsonl) >= items_needed)
        .map_or(last.tokens, |p| p.tokens);
    let extra = reasoning.map_or(0, |r| usize::try_from(r).unwrap_or(usize::MAX));
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts and milliseconds far below 2^52: exact as f64"
    )]
    let tokens_per_item = (items_uncut > 0).then(|| last.tokens as f64 / items_uncut as f64);
    InputBudget {
        input: input.to_owned(),
        tokens_uncut: last.tokens,
        items_uncut,
        items_needed,
        visible_limit,
        reasoning_tokens: reasoning,
        limit: visible_limit.saturating_add(extra),
        tokens_per_item,
    }
}

/// The recommendation over every input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// The limit that serves every input: the largest per-input limit.
    pub recommended_max_tokens: usize,
    /// The 95th percentile of the per-input limits (20 inputs or more).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p95_max_tokens: Option<usize>,
    /// Visible tokens per item over every input.
    pub tokens_per_item: Option<f64>,
    /// The most reasoning tokens an input's run spent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens_max: Option<u32>,
}

/// Combine the inputs' budgets.
pub fn recommend(inputs: &[InputBudget]) -> Recommendation {
    let mut limits: Vec<usize> = inputs.iter().map(|b| b.limit).collect();
    limits.sort_unstable();
    let p95_max_tokens = (limits.len() >= 20).then(|| {
        // Nearest rank: the smallest value with at least 95% at or below it.
        let rank = (limits.len() * 95).div_ceil(100);
        limits[rank.max(1) - 1]
    });
    let tokens: usize = inputs.iter().map(|b| b.tokens_uncut).sum();
    let items: usize = inputs.iter().map(|b| b.items_uncut).sum();
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts and milliseconds far below 2^52: exact as f64"
    )]
    let tokens_per_item = (items > 0).then(|| tokens as f64 / items as f64);
    Recommendation {
        recommended_max_tokens: limits.last().copied().unwrap_or(0),
        p95_max_tokens,
        tokens_per_item,
        reasoning_tokens_max: inputs.iter().filter_map(|b| b.reasoning_tokens).max(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(tokens: usize, jsonl: usize, json: usize) -> SweepPoint {
        SweepPoint {
            tokens,
            bytes: tokens * 4,
            json_items: json,
            salvaged_items: 0,
            jsonl_items: jsonl,
        }
    }

    #[test]
    fn the_smallest_limit_that_keeps_the_target_share() {
        let points = [
            pt(0, 0, 0),
            pt(10, 1, 0),
            pt(20, 2, 0),
            pt(30, 3, 0),
            pt(40, 4, 0),
            pt(45, 4, 4),
        ];
        let b = of_input("a", &points, true, 0.75, None);
        assert_eq!(
            (b.items_uncut, b.items_needed, b.visible_limit, b.limit),
            (4, 3, 30, 30)
        );
        let b = of_input("a", &points, true, 0.95, Some(100));
        assert_eq!((b.items_needed, b.visible_limit, b.limit), (4, 40, 140));
        // Strict JSON keeps nothing until the whole value.
        let b = of_input("a", &points, false, 0.5, None);
        assert_eq!(b.visible_limit, 45);
        assert_eq!(b.tokens_per_item, Some(45.0 / 4.0));
    }

    #[test]
    fn the_maximum_and_the_p95_over_inputs() {
        let few: Vec<InputBudget> = (1..=3)
            .map(|i| of_input("x", &[pt(0, 0, 0), pt(i * 10, 1, 1)], true, 1.0, None))
            .collect();
        let r = recommend(&few);
        assert_eq!((r.recommended_max_tokens, r.p95_max_tokens), (30, None));
        let many: Vec<InputBudget> = (1..=40)
            .map(|i| of_input("x", &[pt(0, 0, 0), pt(i * 10, 1, 1)], true, 1.0, None))
            .collect();
        let r = recommend(&many);
        assert_eq!((r.recommended_max_tokens, r.p95_max_tokens), (400, Some(380)));
    }
}
