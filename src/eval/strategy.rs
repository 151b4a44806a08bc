//! What getting every item costs, strategy by strategy: one call at the
//! limit (`single`), the retry loop users write around a JSON array
//! (`retry-double`: again from scratch with twice the limit while cut), and
//! continuation of a JSONL answer (`continue`). Pure: the calls and items
//! of each strategy run in, rows and the headline out.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::{limit_label, pct};
use crate::compare::loss::{Counts, Loss};
use crate::prompt::ResponseType;
use crate::run::continuation::{Call, Ended};

/// How to get the items a limit cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// One call at the limit.
    Single,
    /// While cut, again from scratch with twice the limit.
    RetryDouble,
    /// While cut, continue a JSONL answer after its complete lines.
    Continue,
}

impl Strategy {
    /// The word on the command line and in records.
    pub fn word(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::RetryDouble => "retry-double",
            Self::Continue => "continue",
        }
    }

    /// Parse `single,retry-double,continue`: each once, in the order given.
    pub fn parse_list(s: &str) -> Result<Vec<Self>, String> {
        let mut out = Vec::new();
        for w in s.split(',').map(str::trim) {
            let st = [Self::Single, Self::RetryDouble, Self::Continue]
                .into_iter()
                .find(|x| x.word() == w)
                .ok_or_else(|| format!("{w:?} is not a strategy; give some of single,retry-double,continue"))?;
            if out.contains(&st) {
                return Err(format!("{w:?} is given twice"));
            }
            out.push(st);
        }
        Ok(out)
    }
}

/// One prompt × input × limit, got by one strategy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyRun {
    /// Prompt id.
    pub prompt: String,
    /// `json` or `jsonl`.
    pub response_type: ResponseType,
    /// Input id.
    pub input: String,
    /// The starting limit.
    pub max_tokens: Option<u32>,
    /// The strategy.
    pub strategy: Strategy,
    /// Distinct items recovered (by the schema's key fields, so a loop's
    /// repeats count once): the last answer's kept items (`single`,
    /// `retry-double`) or the stitched items (`continue`).
    pub items: usize,
    /// Every call, the first included (shared by the strategies of a cell,
    /// and billed to each).
    pub calls: Vec<Call>,
    /// Why it stopped.
    pub ended: Ended,
    /// Input plus output tokens over every call.
    pub tokens_billed: u64,
    /// False when some call's usage was not reported (then
    /// `tokens_billed` counts only the calls that reported it).
    pub usage_complete: bool,
    /// Milliseconds the calls took, summed.
    pub wall_ms: u64,
    /// Loss causes against the gold set, when one annotates this input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<Loss>,
}

impl StrategyRun {
    /// Fill the billing from `calls`.
    #[must_use]
    pub fn billed(mut self) -> Self {
        self.tokens_billed = self.calls.iter().filter_map(Call::billed).sum();
        self.usage_complete = self.calls.iter().all(|c| c.billed().is_some());
        self.wall_ms = self.calls.iter().map(|c| c.total_ms).sum();
        self
    }
}

/// A prompt × limit × strategy, over its inputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyRow {
    /// Prompt id.
    pub prompt: String,
    /// `json` or `jsonl`.
    pub response_type: ResponseType,
    /// The twin, when it is in the eval too.
    pub twin: Option<String>,
    /// The starting limit.
    pub max_tokens: Option<u32>,
    /// The strategy.
    pub strategy: Strategy,
    /// Inputs run.
    pub runs: usize,
    /// Runs that ended with the model's own end (`finished`).
    pub finished: usize,
    /// Items recovered over the inputs.
    pub items: usize,
    /// Calls over the inputs.
    pub calls: usize,
    /// Tokens billed over the inputs.
    pub tokens_billed: u64,
    /// Every call reported its usage.
    pub usage_complete: bool,
    /// Milliseconds over the inputs.
    pub wall_ms: u64,
    /// Loss counts summed over the inputs with a gold set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<Counts>,
    /// Gold recall: found / gold over those inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall: Option<f64>,
}

/// A prompt as the table lists it: id, response type, twin in the eval.
pub type Listed<'a> = (&'a str, ResponseType, Option<&'a str>);

/// Rows per prompt × limit × strategy, in the order given.
pub fn table(
    prompts: &[Listed<'_>],
    limits: &[Option<u32>],
    strategies: &[Strategy],
    runs: &[StrategyRun],
) -> Vec<StrategyRow> {
    let mut rows = Vec::new();
    for &(prompt, response_type, twin) in prompts {
        for &limit in limits {
            for &strategy in strategies {
                let of: Vec<&StrategyRun> = runs
                    .iter()
                    .filter(|r| r.prompt == prompt && r.max_tokens == limit && r.strategy == strategy)
                    .collect();
                let losses: Vec<&Loss> = of.iter().filter_map(|r| r.loss.as_ref()).collect();
                let loss = (!losses.is_empty()).then(|| {
                    let mut c = Counts::default();
                    for l in &losses {
                        c.add(&l.total);
                    }
                    c
                });
                #[allow(
                    clippy::cast_precision_loss,
                    reason = "counts and milliseconds far below 2^52: exact as f64"
                )]
                let recall = loss.filter(|c| c.gold > 0).map(|c| c.found as f64 / c.gold as f64);
                rows.push(StrategyRow {
                    prompt: prompt.to_owned(),
                    response_type,
                    twin: twin.map(str::to_owned),
                    max_tokens: limit,
                    strategy,
                    runs: of.len(),
                    finished: of.iter().filter(|r| r.ended == Ended::Finished).count(),
                    items: of.iter().map(|r| r.items).sum(),
                    calls: of.iter().map(|r| r.calls.len()).sum(),
                    tokens_billed: of.iter().map(|r| r.tokens_billed).sum(),
                    usage_complete: of.iter().all(|r| r.usage_complete),
                    wall_ms: of.iter().map(|r| r.wall_ms).sum(),
                    loss,
                    recall,
                });
            }
        }
    }
    rows
}

/// The migration's headline at one limit: JSON with doubling against its
/// JSONL twin with continuation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    /// The starting limit.
    pub max_tokens: Option<u32>,
    /// The JSON prompt's `retry-double` row.
    pub json: StrategyRow,
    /// The JSONL twin's `continue` row.
    pub jsonl: StrategyRow,
}

impl Headline {
    /// The sentence in English, as records carry it: "JSONL + continue: 12
    /// items, 2 calls, 900 tokens; JSON + retry-double: 12 items, 3 calls,
    /// 2,400 tokens (2.7x)".
    pub fn sentence(&self) -> String {
        self.words_in("en")
    }

    /// The sentence in the UI language, for people (the workbench and
    /// `--output pretty`).
    pub fn words(&self) -> String {
        self.words_in(&rust_i18n::locale())
    }

    fn words_in(&self, locale: &str) -> String {
        let part = |r: &StrategyRow| {
            let partly = if r.usage_complete {
                String::new()
            } else {
                rust_i18n::t!("pretty.headline_partly", locale = locale).into_owned()
            };
            rust_i18n::t!(
                "pretty.headline_part",
                locale = locale,
                items = r.items,
                calls = r.calls,
                tokens = r.tokens_billed,
                partly = partly
            )
            .into_owned()
        };
        #[allow(
            clippy::cast_precision_loss,
            reason = "counts and milliseconds far below 2^52: exact as f64"
        )]
        let ratio = if self.jsonl.tokens_billed > 0 {
            format!(
                " ({:.1}x)",
                self.json.tokens_billed as f64 / self.jsonl.tokens_billed as f64
            )
        } else {
            String::new()
        };
        let limit = self.max_tokens.map_or_else(
            || rust_i18n::t!("pretty.headline_none", locale = locale).into_owned(),
            |n| n.to_string(),
        );
        rust_i18n::t!(
            "pretty.headline",
            locale = locale,
            json = self.json.prompt,
            jsonl = self.jsonl.prompt,
            limit = limit,
            jsonl_part = part(&self.jsonl),
            json_part = part(&self.json),
            ratio = ratio
        )
        .into_owned()
    }
}

/// One headline per JSON prompt whose JSONL twin is in the table, at every
/// limit, when both strategies ran.
pub fn headlines(rows: &[StrategyRow]) -> Vec<Headline> {
    let find = |p: &str, l: Option<u32>, s: Strategy| {
        rows.iter()
            .find(|r| r.prompt == p && r.max_tokens == l && r.strategy == s && r.runs > 0)
    };
    rows.iter()
        .filter(|r| r.response_type == ResponseType::Json && r.strategy == Strategy::RetryDouble && r.runs > 0)
        .filter_map(|j| {
            let l = find(j.twin.as_deref()?, j.max_tokens, Strategy::Continue)?;
            Some(Headline {
                max_tokens: j.max_tokens,
                json: j.clone(),
                jsonl: l.clone(),
            })
        })
        .collect()
}

/// The table for people, headlines last.
pub fn pretty(rows: &[StrategyRow]) -> String {
    let w = rows.iter().map(|r| r.prompt.chars().count()).max().unwrap_or(6).max(6);
    let mut s = super::header(
        &[
            ("prompt", w, false),
            ("type", 5, false),
            ("max", 5, true),
            ("strategy", 12, false),
            ("runs", 4, true),
            ("items", 6, true),
            ("calls", 5, true),
            ("tokens", 8, true),
            ("wall", 8, true),
            ("recall", 6, true),
            ("cut", 5, true),
            ("rejected", 5, true),
            ("never", 5, true),
        ],
        &[],
    );
    for r in rows.iter().filter(|r| r.runs > 0) {
        let loss = |f: fn(&Counts) -> usize| r.loss.as_ref().map_or_else(|| "-".into(), |c| f(c).to_string());
        let _ = writeln!(
            s,
            "{:<w$}  {:<5} {:>5} {:<12} {:>4} {:>6} {:>5} {:>8} {:>7.1}s {:>6} {:>5} {:>5} {:>5}",
            r.prompt,
            r.response_type,
            limit_label(r.max_tokens),
            r.strategy.word(),
            r.runs,
            r.items,
            r.calls,
            format!("{}{}", r.tokens_billed, if r.usage_complete { "" } else { "+" }),
            Duration(r.wall_ms).secs(),
            pct(r.recall),
            loss(|c| c.cut_by_limit),
            loss(|c| c.schema_rejected),
            loss(|c| c.never_produced),
        );
    }
    for h in headlines(rows) {
        let _ = writeln!(s, "{}", h.words());
    }
    s
}

/// Milliseconds shown as seconds.
struct Duration(u64);

impl Duration {
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts and milliseconds far below 2^52: exact as f64"
    )]
    fn secs(&self) -> f64 {
        self.0 as f64 / 1000.0
    }
}

/// Count strategy runs by how they ended, for the totals record.
pub fn endings(runs: &[StrategyRun]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in runs {
        let word = serde_json::to_value(r.ended)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        *m.entry(word).or_insert(0) += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::FinishReason;
    use crate::run::continuation::How;

    fn call(how: How, limit: u32, prompt: u32, out: u32, finish: FinishReason) -> Call {
        Call {
            how,
            max_tokens: Some(limit),
            run_id: String::new(),
            items_added: 0,
            duplicates_dropped: 0,
            prompt_tokens: Some(prompt),
            completion_tokens: Some(out),
            finish_reason: finish,
            total_ms: 500,
        }
    }

    fn run(prompt: &str, ty: ResponseType, strategy: Strategy, items: usize, calls: Vec<Call>) -> StrategyRun {
        StrategyRun {
            prompt: prompt.into(),
            response_type: ty,
            input: "i".into(),
            max_tokens: Some(64),
            strategy,
            items,
            calls,
            ended: Ended::Finished,
            tokens_billed: 0,
            usage_complete: false,
            wall_ms: 0,
            loss: None,
        }
        .billed()
    }

    #[test]
    fn strategies_parse_strictly() {
        assert_eq!(
            Strategy::parse_list("single, retry-double,continue"),
            Ok(vec![Strategy::Single, Strategy::RetryDouble, Strategy::Continue])
        );
        assert!(Strategy::parse_list("single,single").unwrap_err().contains("twice"));
        assert!(Strategy::parse_list("double").unwrap_err().contains("not a strategy"));
    }

    #[test]
    fn billing_sums_every_call_and_the_headline_compares_the_twins() {
        use FinishReason::{Length, Stop};
        let json = run(
            "defs",
            ResponseType::Json,
            Strategy::RetryDouble,
            5,
            vec![
                call(How::First, 64, 100, 64, Length),
                call(How::Doubled, 128, 100, 128, Length),
                call(How::Doubled, 256, 100, 180, Stop),
            ],
        );
        let jsonl = run(
            "defs-jsonl",
            ResponseType::Jsonl,
            Strategy::Continue,
            5,
            vec![
                call(How::First, 64, 100, 64, Length),
                call(How::Prefill, 64, 160, 50, Stop),
            ],
        );
        assert_eq!((json.tokens_billed, jsonl.tokens_billed), (672, 374));
        assert_eq!(json.wall_ms, 1500);
        let prompts = [
            ("defs", ResponseType::Json, Some("defs-jsonl")),
            ("defs-jsonl", ResponseType::Jsonl, Some("defs")),
        ];
        let strategies = [Strategy::RetryDouble, Strategy::Continue];
        let rows = table(&prompts, &[Some(64)], &strategies, &[json, jsonl]);
        assert_eq!(rows.len(), 4);
        let h = headlines(&rows);
        assert_eq!(h.len(), 1);
        assert_eq!(
            h[0].sentence(),
            "defs → defs-jsonl at 64: JSONL + continue: 5 items, 2 calls, 374 tokens; \
             JSON + retry-double: 5 items, 3 calls, 672 tokens (1.8x)"
        );
        let text = pretty(&rows);
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(text.contains("retry-double"), "{text}");
    }
}
