//! The summary table: one row per prompt × limit over the runs' summaries
//! (items, salvage, valid and parse-ok rates, cut runs, gold scores
//! micro-averaged), the JSON/JSONL twin rows, and the table for people.
//! Pure: summaries in, rows and text out.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::{GoldCounts, RunSummary, limit_label};
use crate::prompt::ResponseType;

/// Gold scores of a table row, micro-averaged over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoldScore {
    /// Runs that had a gold set.
    pub runs: usize,
    /// Summed counts.
    pub true_positives: usize,
    /// Summed distinct predicted keys.
    pub predicted: usize,
    /// Summed distinct gold keys.
    pub gold: usize,
    /// `tp / predicted`.
    pub precision: Option<f64>,
    /// `tp / gold`.
    pub recall: Option<f64>,
    /// Harmonic mean (0 when precision and recall are both 0).
    pub f1: Option<f64>,
}

/// One row of the summary table: a prompt at a limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Prompt id.
    pub prompt: String,
    /// `json`, `jsonl` or `text`.
    pub response_type: ResponseType,
    /// The prompt's twin, when it is in the eval too.
    pub twin: Option<String>,
    /// The limit.
    pub max_tokens: Option<u32>,
    /// Runs in the matrix for this row.
    pub runs: usize,
    /// Runs that finished without a provider error (run now or earlier).
    pub completed: usize,
    /// Runs that failed (not counted in the numbers below).
    pub failed: usize,
    /// Runs recorded by an earlier eval and skipped.
    pub skipped: usize,
    /// Items kept over the completed runs.
    pub items_total: usize,
    /// Mean items kept per completed run.
    pub items_mean: Option<f64>,
    /// Valid judged values over completed runs.
    pub valid: usize,
    /// Judged values over completed runs.
    pub judged: usize,
    /// `valid / judged` (JSONL: valid lines / lines; JSON: valid elements /
    /// elements).
    pub valid_rate: Option<f64>,
    /// Completed runs whose whole answer parsed cleanly.
    pub parse_ok: usize,
    /// `parse_ok / completed` (for JSON, the strict consumer's success rate).
    pub parse_ok_rate: Option<f64>,
    /// Completed runs that were cut.
    pub truncated: usize,
    /// JSON: valid elements salvage would recover; JSONL: items.
    pub salvaged_total: usize,
    /// Gold scores, when any run had a gold set.
    pub gold: Option<GoldScore>,
    /// Loss causes summed over the runs with a gold set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<crate::compare::loss::Counts>,
    /// Completed runs the limit cut in a runaway loop.
    pub loops: usize,
    /// Completed runs whose reported finish disagrees with their evidence.
    pub finish_mismatches: usize,
    /// Share of the output tokens spent reasoning, over the completed runs
    /// whose provider reported both counts (reasoning models only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_share: Option<f64>,
    /// True when any run's reasoning count in that share is an estimate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_estimated: bool,
    /// Share of the prompt tokens served from the provider's cache, over
    /// the completed runs that report both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_share: Option<f64>,
}

/// Cached prompt tokens over prompt tokens, summed over the runs that
/// report both.
fn cached_share(runs: &[&&RunSummary]) -> Option<f64> {
    let both: Vec<(u32, u32)> = runs
        .iter()
        .filter_map(|s| Some((s.cached_tokens?, s.prompt_tokens?)))
        .collect();
    let cached: u64 = both.iter().map(|(c, _)| u64::from(*c)).sum();
    let prompt: u64 = both.iter().map(|(_, p)| u64::from(*p)).sum();
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts and milliseconds far below 2^52: exact as f64"
    )]
    (!both.is_empty() && prompt > 0).then(|| cached as f64 / prompt as f64)
}

/// Reasoning tokens over output tokens, summed over the runs that report both.
fn reasoning_share(runs: &[&&RunSummary]) -> Option<f64> {
    let both: Vec<(u32, u32)> = runs
        .iter()
        .filter_map(|s| Some((s.reasoning_tokens?, s.completion_tokens?)))
        .collect();
    let reasoning: u64 = both.iter().map(|(r, _)| u64::from(*r)).sum();
    let output: u64 = both.iter().map(|(_, c)| u64::from(*c)).sum();
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts and milliseconds far below 2^52: exact as f64"
    )]
    (!both.is_empty() && output > 0).then(|| reasoning as f64 / output as f64)
}

#[allow(
    clippy::cast_precision_loss,
    reason = "counts and milliseconds far below 2^52: exact as f64"
)]
fn ratio(n: usize, d: usize) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

/// A prompt as the table lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TablePrompt {
    /// Id.
    pub id: String,
    /// Response type.
    pub response_type: ResponseType,
    /// Twin id, when the twin is in the eval.
    pub twin: Option<String>,
}

/// Gold scores micro-averaged over the runs with a gold set: precision,
/// recall and F1 of the summed counts; `None` when no run has one.
fn gold_score(done: &[&&RunSummary]) -> Option<GoldScore> {
    let with_gold: Vec<GoldCounts> = done.iter().filter_map(|s| s.gold).collect();
    if with_gold.is_empty() {
        return None;
    }
    let tp = with_gold.iter().map(|g| g.true_positives).sum();
    let predicted = with_gold.iter().map(|g| g.predicted).sum();
    let g = with_gold.iter().map(|g| g.gold).sum();
    let precision = ratio(tp, predicted);
    let recall = ratio(tp, g);
    let f1 = match (precision, recall) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        // Nothing right, or nothing predicted against a non-empty gold
        // set: F1 is 0.
        (_, Some(_)) => Some(0.0),
        _ => None,
    };
    Some(GoldScore {
        runs: with_gold.len(),
        true_positives: tp,
        predicted,
        gold: g,
        precision,
        recall,
        f1,
    })
}

/// Aggregate run summaries into rows, one per prompt × limit, in the order
/// of `prompts` then `limits`. `runs_per_prompt` is the matrix size per row
/// (the number of inputs of that prompt).
pub fn table<'a>(
    prompts: &[TablePrompt],
    limits: &[Option<u32>],
    runs_per_prompt: &BTreeMap<String, usize>,
    summaries: impl IntoIterator<Item = &'a RunSummary>,
) -> Vec<Row> {
    let mut by: BTreeMap<(String, Option<u32>), Vec<&RunSummary>> = BTreeMap::new();
    for s in summaries {
        by.entry((s.prompt.clone(), s.max_tokens)).or_default().push(s);
    }
    let mut rows = Vec::new();
    for p in prompts {
        for &limit in limits {
            let runs = by.get(&(p.id.clone(), limit)).map(Vec::as_slice).unwrap_or_default();
            let done: Vec<&&RunSummary> = runs.iter().filter(|s| !s.failed()).collect();
            let items_total = done.iter().map(|s| s.items).sum();
            let valid = done.iter().map(|s| s.valid).sum();
            let judged = done.iter().map(|s| s.judged).sum();
            let parse_ok = done.iter().filter(|s| s.parse_ok).count();
            let gold = gold_score(&done);
            let losses: Vec<_> = done.iter().filter_map(|s| s.loss.as_ref()).collect();
            let loss = (!losses.is_empty()).then(|| {
                let mut c = crate::compare::loss::Counts::default();
                for l in &losses {
                    c.add(&l.total);
                }
                c
            });
            rows.push(Row {
                prompt: p.id.clone(),
                loss,
                response_type: p.response_type,
                twin: p.twin.clone(),
                max_tokens: limit,
                runs: runs_per_prompt.get(&p.id).copied().unwrap_or(runs.len()),
                completed: done.len(),
                failed: runs.len() - done.len(),
                skipped: runs.iter().filter(|s| s.skipped).count(),
                items_total,
                items_mean: ratio(items_total, done.len()),
                valid,
                judged,
                valid_rate: ratio(valid, judged),
                parse_ok,
                parse_ok_rate: ratio(parse_ok, done.len()),
                truncated: done.iter().filter(|s| s.truncated).count(),
                salvaged_total: done.iter().map(|s| s.salvaged).sum(),
                gold,
                reasoning_share: reasoning_share(&done),
                reasoning_estimated: done
                    .iter()
                    .any(|s| s.reasoning_estimated && s.reasoning_tokens.is_some()),
                cached_share: cached_share(&done),
                loops: done.iter().filter(|s| s.loop_repeats.is_some()).count(),
                finish_mismatches: done.iter().filter(|s| !s.checks.is_empty()).count(),
            });
        }
    }
    rows
}

/// JSON against JSONL at one limit: the two rows of a twin pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwinRow {
    /// The limit.
    pub max_tokens: Option<u32>,
    /// The JSON prompt's row.
    pub json: Row,
    /// The JSONL twin's row.
    pub jsonl: Row,
}

/// Pair every JSON row with its JSONL twin's row at the same limit.
pub fn twins(rows: &[Row]) -> Vec<TwinRow> {
    rows.iter()
        .filter(|r| r.response_type == ResponseType::Json)
        .filter_map(|j| {
            let t = j.twin.as_deref()?;
            let l = rows
                .iter()
                .find(|r| r.prompt == t && r.max_tokens == j.max_tokens && r.response_type == ResponseType::Jsonl)?;
            Some(TwinRow {
                max_tokens: j.max_tokens,
                json: j.clone(),
                jsonl: l.clone(),
            })
        })
        .collect()
}

/// A table header in the UI language: `(key, width, right-aligned)` per
/// column (the first two columns are two spaces apart, the rest one, as
/// the rows are), and an optional last column.
pub(crate) fn header(cols: &[(&str, usize, bool)], extra: &[Option<(&str, usize)>]) -> String {
    use crate::i18n::{left, right};
    let mut s = String::new();
    for (i, (key, width, r)) in cols.iter().enumerate() {
        let label = rust_i18n::t!(format!("pretty.{key}"));
        s.push_str(match i {
            0 => "",
            1 => "  ",
            _ => " ",
        });
        s.push_str(&if *r {
            right(&label, *width)
        } else {
            left(&label, *width)
        });
    }
    for (key, width) in extra.iter().flatten() {
        s.push(' ');
        s.push_str(&right(&rust_i18n::t!(format!("pretty.{key}")), *width));
    }
    s.push('\n');
    s
}

pub(crate) fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{:.0}%", x * 100.0))
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{x:.1}"))
}

/// The table for people: one line per prompt × limit, twins adjacent.
pub fn pretty_table(rows: &[Row]) -> String {
    let mut order: Vec<&Row> = Vec::new();
    for r in rows {
        if order.iter().any(|o| std::ptr::eq(*o, r)) {
            continue;
        }
        // A JSON row is followed by its twin's row at the same limit.
        order.push(r);
        if r.response_type == ResponseType::Json
            && let Some(t) = r.twin.as_deref()
            && let Some(l) = rows.iter().find(|x| x.prompt == t && x.max_tokens == r.max_tokens)
            && !order.iter().any(|o| std::ptr::eq(*o, l))
        {
            order.push(l);
        }
    }
    let w = rows.iter().map(|r| r.prompt.chars().count()).max().unwrap_or(6).max(6);
    // A reasoning column only when some provider reported reasoning tokens
    // (`~` marks an estimate), a cached one when some reported its cache.
    let reasons = rows.iter().any(|r| r.reasoning_share.is_some());
    let cached = rows.iter().any(|r| r.cached_share.is_some());
    let mut s = header(
        &[
            ("prompt", w, false),
            ("type", 5, false),
            ("max", 5, true),
            ("runs", 5, true),
            ("fail", 4, true),
            ("items", 6, true),
            ("mean", 6, true),
            ("salvage", 7, true),
            ("valid", 6, true),
            ("parse_ok", 8, true),
            ("cut", 4, true),
            ("recall", 6, true),
            ("f1", 6, true),
        ],
        &[reasons.then_some(("reasoning", 9)), cached.then_some(("cached", 6))],
    );
    for r in order {
        let (recall, f1) = r
            .gold
            .as_ref()
            .map_or(("-".into(), "-".into()), |g| (pct(g.recall), pct(g.f1)));
        let _ = writeln!(
            s,
            "{:<w$}  {:<5} {:>5} {:>5} {:>4} {:>6} {:>6} {:>7} {:>6} {:>8} {:>4} {:>6} {:>6}",
            r.prompt,
            r.response_type,
            limit_label(r.max_tokens),
            r.runs,
            r.failed,
            r.items_total,
            num(r.items_mean),
            if r.response_type == ResponseType::Json {
                r.salvaged_total.to_string()
            } else {
                "-".into()
            },
            pct(r.valid_rate),
            pct(r.parse_ok_rate),
            r.truncated,
            recall,
            f1
        );
        if reasons {
            s.pop();
            let est = if r.reasoning_estimated { "~" } else { "" };
            let _ = writeln!(s, " {:>9}", format!("{est}{}", pct(r.reasoning_share)));
        }
        if cached {
            s.pop();
            let _ = writeln!(s, " {:>6}", pct(r.cached_share));
        }
    }
    s
}
