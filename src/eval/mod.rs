//! Batch evaluation: prompts × inputs × max-token limits, each run recorded,
//! reduced to a small [`RunSummary`], and aggregated into a table of items
//! recovered and valid rate per prompt and limit (JSON against its JSONL
//! twin), with gold precision / recall / F1 where a gold set applies.
//!
//! This module is pure: planning keys, summarising one run's analysis and
//! aggregating the table do no IO, so they are tested without a model.
//! Reading inputs is in [`inputs`]; running the matrix is `cli::eval`.
//!
//! A run's key names exactly what was asked: the prompt (id and a hash of
//! its snapshot: template, schema, stop), the input (a hash of its variables
//! and of the rendered text, so changed defaults re-run too), the limit, the
//! provider and model, and the structured-output path. Every part can be
//! recomputed from a recorded [`RunRecord`], so a session needs no extra
//! field to be resumed: a rerun skips keys already recorded without error.

pub mod batch;
pub mod budget;
pub mod cell;
pub mod engine;
pub mod inputs;
pub mod strategy;
mod table;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::compare::{self, Keys};
use crate::llm::{FinishReason, LlmError};
use crate::output::json::JsonStatus;
use crate::prompt::{PromptConfig, ResponseType};
use crate::run::Analysis;
use crate::session::RunRecord;

pub use inputs::Input;
pub use table::{GoldScore, Row, TablePrompt, TwinRow, pretty_table, table, twins};
pub(crate) use table::{header, pct};

/// Parse `--max-tokens`: comma-separated positive integers and `none` (no
/// limit), e.g. `64,128,256,none`. Duplicates and empty entries are errors,
/// so a typo never silently shrinks the matrix.
pub fn parse_limits(s: &str) -> Result<Vec<Option<u32>>, LimitsError> {
    let mut out: Vec<Option<u32>> = Vec::new();
    for (i, part) in s.split(',').enumerate() {
        let p = part.trim();
        let limit = if p.eq_ignore_ascii_case("none") {
            None
        } else if p.is_empty() {
            return Err(LimitsError::Empty(i + 1));
        } else {
            match p.parse::<u32>() {
                Ok(0) => return Err(LimitsError::Zero(p.to_owned())),
                Ok(n) => Some(n),
                Err(_) => return Err(LimitsError::NotALimit(p.to_owned())),
            }
        };
        if out.contains(&limit) {
            return Err(LimitsError::Twice(p.to_owned()));
        }
        out.push(limit);
    }
    Ok(out)
}

/// A `--max-tokens` list that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// Entry N (1-based) is empty.
    #[error("entry {0} is empty; give limits like 64,128,256,none")]
    Empty(usize),
    /// A limit of 0.
    #[error("{0:?}: a limit must be at least 1 token (or `none`)")]
    Zero(String),
    /// Neither a number nor `none`.
    #[error("{0:?} is not a number of tokens or `none`; give limits like 64,128,256,none")]
    NotALimit(String),
    /// Given twice.
    #[error("{0:?} is given twice")]
    Twice(String),
}

/// `none` or the number, as shown in keys and tables.
pub fn limit_label(l: Option<u32>) -> String {
    l.map_or_else(|| "none".into(), |n| n.to_string())
}

/// FNV-1a, 64 bits: stable across platforms and releases (unlike std's
/// hasher), which is what resumable keys need; not cryptographic.
pub fn fnv64(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            // A separator, so ("ab","c") and ("a","bc") differ.
            h ^= 0xff;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        for b in *p {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Canonical JSON text: object keys sorted, no whitespace; numbers as their
/// exact text. Equal values hash equal whatever their key order.
pub fn canonical(v: &Value) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn hex12(h: u64) -> String {
    let mut s = format!("{h:016x}");
    s.truncate(12);
    s
}

/// Hash of a prompt snapshot (`run::snapshot`): template, response type,
/// schema, system, stop.
pub fn prompt_hash(snapshot: &Value) -> String {
    hex12(fnv64(&[canonical(snapshot).as_bytes()]))
}

/// Hash of an input: its variables and the rendered system and prompt text.
pub fn input_hash(vars: &Map<String, Value>, system: &str, rendered: &str) -> String {
    let v = canonical(&Value::Object(vars.clone()));
    hex12(fnv64(&[v.as_bytes(), system.as_bytes(), rendered.as_bytes()]))
}

/// Everything a run key is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyParts<'a> {
    /// Prompt id.
    pub prompt_id: &'a str,
    /// [`prompt_hash`] of its snapshot.
    pub prompt_hash: &'a str,
    /// [`input_hash`] of the input.
    pub input_hash: &'a str,
    /// The limit.
    pub max_tokens: Option<u32>,
    /// Provider name.
    pub provider: &'a str,
    /// Model id.
    pub model: &'a str,
    /// Structured path: `none`, `native`, `prompt`.
    pub structured: &'a str,
}

impl KeyParts<'_> {
    /// The key: `prompt@hash:input-hash:limit:provider/model:structured`.
    pub fn key(&self) -> String {
        format!(
            "{}@{}:{}:{}:{}/{}:{}",
            self.prompt_id,
            self.prompt_hash,
            self.input_hash,
            limit_label(self.max_tokens),
            self.provider,
            self.model,
            self.structured
        )
    }
}

/// The key of a recorded run, recomputed from what the record holds.
pub fn record_key(r: &RunRecord) -> String {
    let ph = prompt_hash(&r.prompt);
    let ih = input_hash(&r.variables, &r.system, &r.rendered);
    let structured = r.structured_path.as_str();
    KeyParts {
        prompt_id: &r.prompt_id,
        prompt_hash: &ph,
        input_hash: &ih,
        max_tokens: r.params.max_tokens,
        provider: &r.provider.name,
        model: &r.provider.model,
        structured,
    }
    .key()
}

/// The session id an eval records into by default, from the identities
/// the caller gives (`cli::eval`: `prompt|provider/model|structured` per
/// prompt, no content hashes, no inputs or limits): the same eval gets the
/// same id, so rerunning it resumes, extending it with inputs or limits
/// reuses what is recorded, and editing a prompt re-runs that prompt's
/// runs in the same session.
pub fn default_session_id(identities: &[String]) -> String {
    let mut sorted: Vec<&str> = identities.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let parts: Vec<&[u8]> = sorted.iter().map(|k| k.as_bytes()).collect();
    format!("eval-{}", hex12(fnv64(&parts)))
}

/// A gold set for one prompt: hand-annotated items of one input.
#[derive(Debug, Clone)]
pub struct Gold {
    /// Where it came from (for messages).
    pub file: String,
    /// The items.
    pub items: Vec<Value>,
    /// Key fields that match items.
    pub keys: Keys,
    /// Canonical variables of the annotated input: gold applies to a run
    /// whose variables are exactly these.
    pub vars: String,
}

impl Gold {
    /// A gold set of `items` for the input with variables `vars`, matched
    /// with the per-item schema of `prompt` (the JSON form's element schema,
    /// or the JSONL form's line schema), by `fields` when given.
    pub fn new(
        file: String,
        items: Vec<Value>,
        prompt: &PromptConfig,
        vars: &Map<String, Value>,
        fields: &[String],
    ) -> Self {
        Self {
            file,
            items,
            keys: Keys::of(item_schema(prompt).as_ref(), fields),
            vars: canonical(&Value::Object(vars.clone())),
        }
    }

    /// Whether this gold set annotates the input with `vars`.
    pub fn applies(&self, vars: &Map<String, Value>) -> bool {
        canonical(&Value::Object(vars.clone())) == self.vars
    }
}

/// The schema of one item: the line schema of a `jsonl` prompt, the element
/// schema of a `json` one.
pub fn item_schema(p: &PromptConfig) -> Option<Value> {
    match p.response_type {
        ResponseType::Json => p.schema.as_ref().and_then(crate::prompt::migrate::line_schema),
        ResponseType::Jsonl => p.schema.clone(),
        ResponseType::Text => None,
    }
}

/// Gold counts of one run: distinct keys predicted, in gold, and both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GoldCounts {
    /// Distinct predicted keys that are gold.
    pub true_positives: usize,
    /// Distinct predicted keys.
    pub predicted: usize,
    /// Distinct gold keys.
    pub gold: usize,
}

/// One run, reduced to what the JSONL record and the table need; the
/// transcript itself is in the session file, not in memory.
#[allow(clippy::struct_excessive_bools, reason = "independent facts of one run")]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// The run key.
    pub key: String,
    /// Prompt id.
    pub prompt: String,
    /// `json`, `jsonl` or `text`.
    pub response_type: ResponseType,
    /// Input id (file stem, `id` field, line label or sample input name).
    pub input: String,
    /// The limit.
    pub max_tokens: Option<u32>,
    /// Recorded by an earlier eval and not run again.
    pub skipped: bool,
    /// Normalised finish reason.
    pub finish_reason: FinishReason,
    /// Items the response type's consumer keeps (strict JSON: all or none).
    pub items: usize,
    /// Values judged against the schema (JSON: salvaged elements; JSONL:
    /// lines that are not blank or fences).
    pub judged: usize,
    /// Schema-valid among `judged`.
    pub valid: usize,
    /// `judged - valid`.
    pub invalid: usize,
    /// The answer was cut (finish `length`, or the text ends mid-value).
    pub truncated: bool,
    /// The whole answer parsed without a problem (JSON: strict status `ok`;
    /// JSONL: every judged line valid).
    pub parse_ok: bool,
    /// JSON: valid elements salvage recovers from the array; JSONL: `items`.
    pub salvaged: usize,
    /// Gold counts when a gold set annotates this input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<GoldCounts>,
    /// Why gold items were missed, when a gold set annotates this input
    /// (`compare::loss`; a cut run's misses are blamed on the limit, as no
    /// uncut run is at hand here — `--strategy` has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<crate::compare::loss::Loss>,
    /// Generated tokens, when the provider said.
    pub completion_tokens: Option<u32>,
    /// The part of them spent reasoning, when the provider said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
    /// True when `reasoning_tokens` is an estimate from the thinking text.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_estimated: bool,
    /// Prompt tokens, when the provider said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u32>,
    /// The part of them served from the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    /// Where the reported finish disagrees with the evidence
    /// (`run::evidence`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<crate::llm::mismatch::Mismatch>,
    /// Whole repeats of the runaway loop the limit cut (`run::loop_of`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_repeats: Option<usize>,
    /// Items of a looping answer that repeated one before: counted once in
    /// `items` and `salvaged`, so a loop never outscores an answer that
    /// said more.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repeats_dropped: usize,
    /// Milliseconds the run took.
    pub total_ms: u64,
    /// The provider failure, if the run failed.
    pub error: Option<LlmError>,
    /// `session#n` of the record.
    pub run_id: String,
}

impl RunSummary {
    /// Whether the run failed (it is re-run by the next eval).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Summarise a finished run from its record and analysis.
pub fn summarise(
    key: String,
    input: &str,
    record: &RunRecord,
    analysis: &Analysis,
    gold: Option<&Gold>,
    skipped: bool,
) -> RunSummary {
    let side = compare::side(&record.run_id, analysis, record.finish == FinishReason::Length);
    let looped = crate::run::loop_of(record);
    // A loop's repeats are counted once; any other answer as it came.
    let count = |values: &mut dyn Iterator<Item = &Value>| {
        if looped.is_some() {
            compare::distinct(values)
        } else {
            values.count()
        }
    };
    let (parse_ok, salvaged) = match analysis {
        Analysis::Text => (true, 0),
        Analysis::Json(a) => (
            a.status == JsonStatus::Ok,
            count(&mut a.elements.iter().filter(|e| e.valid).map(|e| &e.value)),
        ),
        Analysis::Jsonl(a) => (
            a.counts.invalid_json + a.counts.schema_invalid + a.counts.truncated == 0,
            count(&mut a.items.iter()),
        ),
    };
    let items = count(&mut side.items.iter());
    let raw = match analysis {
        Analysis::Json(a) => a.elements.iter().filter(|e| e.valid).count(),
        _ => side.kept,
    };
    let repeats_dropped = raw
        - if matches!(analysis, Analysis::Json(_)) {
            salvaged
        } else {
            items
        };
    let gold = gold.filter(|g| g.applies(&record.variables));
    let loss = gold.map(|g| {
        let run = crate::compare::loss::Run {
            analysis,
            text: &record.text,
            cut: record.finish == FinishReason::Length,
        };
        crate::compare::loss::of(run, &g.items, &g.keys, None)
    });
    let gold = gold.map(|g| {
        let empty = compare::side("", &Analysis::Text, false);
        let report = compare::compare(side.clone(), empty, &g.keys, Some(&g.items));
        report.total.gold.map_or_else(GoldCounts::default, |[s, _]| GoldCounts {
            true_positives: s.true_positives,
            predicted: s.predicted,
            gold: s.gold,
        })
    });
    RunSummary {
        key,
        prompt: record.prompt_id.clone(),
        response_type: record.response_type,
        input: input.to_owned(),
        max_tokens: record.params.max_tokens,
        skipped,
        finish_reason: record.finish,
        items,
        judged: side.judged,
        valid: side.valid,
        invalid: side.judged - side.valid,
        truncated: side.truncated,
        parse_ok,
        salvaged,
        gold,
        loss,
        completion_tokens: record.usage.completion_tokens,
        reasoning_tokens: record.usage.reasoning_tokens,
        reasoning_estimated: record.usage.reasoning_estimated,
        prompt_tokens: record.usage.prompt_tokens,
        cached_tokens: record.usage.cached_tokens,
        loop_repeats: looped.map(|l| l.repeats),
        repeats_dropped,
        checks: record.checks.clone(),
        total_ms: record.total_ms,
        error: record.error.clone(),
        run_id: record.run_id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_share_over_runs_that_report_it() {
        let mut a = summary("p", Some(64), 2, true, false);
        a.reasoning_tokens = Some(60);
        let mut b = summary("p", Some(64), 3, true, false);
        b.reasoning_tokens = Some(20);
        let c = summary("p", Some(64), 1, true, false);
        let prompts = [TablePrompt {
            id: "p".into(),
            response_type: ResponseType::Jsonl,
            twin: None,
        }];
        let rows = table(&prompts, &[Some(64)], &BTreeMap::new(), [&a, &b, &c]);
        assert_eq!(rows[0].reasoning_share, Some(0.4));
        let text = pretty_table(&rows);
        assert!(text.lines().next().unwrap().ends_with("reasoning"), "{text}");
        assert!(text.lines().nth(1).unwrap().ends_with("40%"), "{text}");
        let plain = table(&prompts, &[Some(64)], &BTreeMap::new(), [&c]);
        assert_eq!(plain[0].reasoning_share, None);
        assert!(!pretty_table(&plain).contains("reasoning"));
    }

    #[test]
    fn limits_parse_strictly() {
        assert_eq!(
            parse_limits("64,128, 256,none"),
            Ok(vec![Some(64), Some(128), Some(256), None])
        );
        assert_eq!(parse_limits("64,,128"), Err(LimitsError::Empty(2)));
        assert_eq!(
            parse_limits("64,abc").unwrap_err().to_string(),
            "\"abc\" is not a number of tokens or `none`; give limits like 64,128,256,none"
        );
        assert_eq!(parse_limits("0"), Err(LimitsError::Zero("0".into())));
        assert_eq!(parse_limits("64,64"), Err(LimitsError::Twice("64".into())));
        assert_eq!(parse_limits("-5"), Err(LimitsError::NotALimit("-5".into())));
    }

    #[test]
    fn canonical_ignores_key_order() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,2],"x":"s"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":"s","y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&a), r#"{"a":{"x":"s","y":[1,2]},"b":1}"#);
    }

    #[test]
    fn fnv_is_the_reference_and_separates_parts() {
        // FNV-1a 64 of "a" (reference value).
        assert_eq!(fnv64(&[b"a"]), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv64(&[b"ab", b"c"]), fnv64(&[b"a", b"bc"]));
    }

    fn summary(prompt: &str, limit: Option<u32>, items: usize, ok: bool, err: bool) -> RunSummary {
        RunSummary {
            key: format!("{prompt}:{items}"),
            prompt: prompt.into(),
            response_type: ResponseType::Jsonl,
            input: "i".into(),
            max_tokens: limit,
            skipped: false,
            finish_reason: FinishReason::Stop,
            items,
            judged: items + usize::from(!ok),
            valid: items,
            invalid: usize::from(!ok),
            truncated: !ok,
            parse_ok: ok,
            salvaged: items,
            gold: Some(GoldCounts {
                true_positives: items.min(2),
                predicted: items,
                gold: 4,
            }),
            loss: None,
            completion_tokens: Some(100),
            reasoning_tokens: None,
            reasoning_estimated: false,
            prompt_tokens: None,
            cached_tokens: None,
            loop_repeats: None,
            repeats_dropped: 0,
            checks: Vec::new(),
            total_ms: 0,
            error: err.then(|| LlmError::new(crate::llm::ErrorKind::Server, "x")),
            run_id: String::new(),
        }
    }

    #[test]
    fn table_aggregates_completed_runs_only() {
        let prompts = vec![TablePrompt {
            id: "p".into(),
            response_type: ResponseType::Jsonl,
            twin: None,
        }];
        let runs = [
            summary("p", Some(64), 3, false, false),
            summary("p", Some(64), 1, true, false),
            summary("p", Some(64), 9, true, true),
        ];
        let per: BTreeMap<String, usize> = [("p".to_owned(), 3)].into();
        let rows = table(&prompts, &[Some(64), None], &per, &runs);
        assert_eq!(rows.len(), 2);
        let r = &rows[0];
        assert_eq!((r.runs, r.completed, r.failed), (3, 2, 1));
        assert_eq!((r.items_total, r.valid, r.judged), (4, 4, 5));
        assert_eq!(r.items_mean, Some(2.0));
        assert_eq!(r.valid_rate, Some(0.8));
        assert_eq!((r.parse_ok, r.truncated), (1, 1));
        let g = r.gold.as_ref().unwrap();
        assert_eq!((g.true_positives, g.predicted, g.gold), (3, 4, 8));
        assert_eq!(g.recall, Some(3.0 / 8.0));
        assert_eq!(rows[1].completed, 0);
        assert_eq!(rows[1].items_mean, None);
    }
}
