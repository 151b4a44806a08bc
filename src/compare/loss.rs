//! Why gold items were lost: every gold item a run missed gets one cause,
//! and every item it kept that is not gold is `invented`. Pure: the run's
//! analysis and text, the gold items and (when there is one) a reference
//! run of the same input that was not cut, in; counts out.
//!
//! The causes, in the order they are tried:
//! - `schema_rejected`: the run produced it, but the schema rejected it
//!   (an invalid JSON element or JSONL line with the item's key);
//! - `cut_by_limit`: the run was cut and the item is in the reference (the
//!   uncut or continued run), or in the cut line itself, or there is no
//!   reference to say otherwise — the limit stopped the model before it;
//! - `never_produced`: the model ended without it (or was cut, and the
//!   reference, which ended on its own, lacks it too).
//!
//! So `found + cut_by_limit + schema_rejected + never_produced` is always
//! the number of distinct gold items.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::{Keys, normalise};
use crate::output::Analysis;
use crate::output::jsonl::LineStatus;

/// Why one gold item is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The max-token limit cut the answer before it.
    CutByLimit,
    /// Produced, but rejected by the schema.
    SchemaRejected,
    /// The model ended its answer without it.
    NeverProduced,
}

/// Counts of one type (or of all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Distinct gold items.
    pub gold: usize,
    /// Gold items the run kept.
    pub found: usize,
    /// Missed because the limit cut the answer.
    pub cut_by_limit: usize,
    /// Missed because the schema rejected them.
    pub schema_rejected: usize,
    /// Missed because the model never produced them.
    pub never_produced: usize,
    /// Distinct kept items that are not gold.
    pub invented: usize,
}

impl Counts {
    fn add_cause(&mut self, c: Cause) {
        match c {
            Cause::CutByLimit => self.cut_by_limit += 1,
            Cause::SchemaRejected => self.schema_rejected += 1,
            Cause::NeverProduced => self.never_produced += 1,
        }
    }

    /// Sum two counts (rows of a table).
    pub fn add(&mut self, o: &Self) {
        self.gold += o.gold;
        self.found += o.found;
        self.cut_by_limit += o.cut_by_limit;
        self.schema_rejected += o.schema_rejected;
        self.never_produced += o.never_produced;
        self.invented += o.invented;
    }
}

/// One missed gold item and its cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missed {
    /// Its type (`item` when the schema is not a union).
    #[serde(rename = "type")]
    pub ty: String,
    /// Its normalised key.
    pub key: String,
    /// Why it is missing.
    pub cause: Cause,
}

/// Loss causes of one run against a gold set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// Over every type.
    pub total: Counts,
    /// Per type, in name order.
    pub per_type: BTreeMap<String, Counts>,
    /// Every missed gold item with its cause.
    pub missed: Vec<Missed>,
}

/// The run to explain.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// Its analysis.
    pub analysis: &'a Analysis,
    /// Its text.
    pub text: &'a str,
    /// Whether it was cut by its limit.
    pub cut: bool,
}

/// Explain what `run` lost of `gold`. `reference`: the items of a run of
/// the same input that ended on its own (uncut or continued), when known.
pub fn of(run: Run<'_>, gold: &[Value], keys: &Keys, reference: Option<&[Value]>) -> Loss {
    let kept = typed_keys(run.analysis.items(), keys);
    let rejected = typed_keys(&rejected(run.analysis, run.text), keys);
    let referenced = reference.map(|r| typed_keys(r, keys));
    let fragment = if run.cut {
        cut_fragment(run.analysis, run.text)
    } else {
        None
    };
    let literals = fragment.map(literals).unwrap_or_default();
    let mut loss = Loss::default();
    let mut seen = BTreeSet::new();
    for g in gold {
        let (ty, key) = (keys.type_of(g).to_owned(), keys.key(g));
        if !seen.insert((ty.clone(), key.clone())) {
            continue;
        }
        let counts = loss.per_type.entry(ty.clone()).or_default();
        counts.gold += 1;
        let tk = (ty.clone(), key.clone());
        if kept.contains(&tk) {
            counts.found += 1;
            continue;
        }
        let cause = if rejected.contains(&tk) {
            Cause::SchemaRejected
        } else if run.cut && (referenced.as_ref().is_none_or(|r| r.contains(&tk)) || in_fragment(g, keys, &literals)) {
            Cause::CutByLimit
        } else {
            Cause::NeverProduced
        };
        counts.add_cause(cause);
        loss.missed.push(Missed { ty, key, cause });
    }
    for (ty, key) in &kept {
        if !seen.contains(&(ty.clone(), key.clone())) {
            loss.per_type.entry(ty.clone()).or_default().invented += 1;
        }
    }
    for c in loss.per_type.values() {
        loss.total.add(c);
    }
    loss
}

fn typed_keys(items: &[Value], keys: &Keys) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|i| (keys.type_of(i).to_owned(), keys.key(i)))
        .collect()
}

/// Values the run produced that the schema rejected: invalid JSON elements,
/// JSONL lines that parse but fail the line schema.
fn rejected(analysis: &Analysis, text: &str) -> Vec<Value> {
    match analysis {
        Analysis::Text => Vec::new(),
        Analysis::Json(a) => a
            .elements
            .iter()
            .filter(|e| !e.valid)
            .map(|e| e.value.clone())
            .collect(),
        Analysis::Jsonl(a) => {
            let lines: Vec<&str> = text.split('\n').collect();
            a.lines
                .iter()
                .filter(|l| matches!(l.status, LineStatus::SchemaInvalid { .. }))
                .filter_map(|l| lines.get(l.line.checked_sub(1)?))
                .filter_map(|l| serde_json::from_str(l.trim()).ok())
                .collect()
        }
    }
}

/// The text of the element or line the limit cut: JSONL's truncated last
/// line; for JSON, what follows the last complete object.
fn cut_fragment<'t>(analysis: &Analysis, text: &'t str) -> Option<&'t str> {
    match analysis {
        Analysis::Text => None,
        Analysis::Jsonl(a) => {
            let l = a
                .lines
                .iter()
                .rev()
                .find(|l| matches!(l.status, LineStatus::Truncated { .. }))?;
            text.split('\n').nth(l.line.checked_sub(1)?)
        }
        Analysis::Json(_) => Some(text.rfind('}').map_or(text, |i| &text[i + 1..])),
    }
}

/// The string literals of a JSON fragment, normalised; the last may be
/// unterminated (cut inside it), and is marked so.
fn literals(fragment: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut chars = fragment.chars();
    while chars.by_ref().any(|c| c == '"') {
        let mut s = String::new();
        let mut closed = false;
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    closed = true;
                    break;
                }
                '\\' => {
                    if let Some(e) = chars.next() {
                        s.push(e);
                    }
                }
                c => s.push(c),
            }
        }
        out.push((normalise(&s), closed));
    }
    out
}

/// Whether the cut fragment holds the start of gold item `g`: one of its
/// key values whole, or the cut literal is a beginning of one.
fn in_fragment(g: &Value, keys: &Keys, literals: &[(String, bool)]) -> bool {
    let values: Vec<String> = keys
        .fields(keys.type_of(g))
        .iter()
        .filter_map(|f| g.get(f).and_then(Value::as_str))
        .map(normalise)
        .filter(|v| !v.is_empty())
        .collect();
    literals.iter().any(|(lit, closed)| {
        values.iter().any(|v| {
            if *closed {
                lit == v
            } else {
                !lit.is_empty() && v.starts_with(lit.as_str())
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::prompt::ResponseType;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"term": {"type": "string"}, "n": {"type": "integer"}},
               "required": ["term", "n"]})
    }

    fn loss_of(text: &str, cut: bool, gold: &[Value], reference: Option<&[Value]>) -> Loss {
        let s = schema();
        let a = Analysis::of(
            ResponseType::Jsonl,
            Some(&s),
            text,
            crate::output::tg::TgPython::default(),
        );
        of(
            Run {
                analysis: &a,
                text,
                cut,
            },
            gold,
            &Keys::of(Some(&s), &[]),
            reference,
        )
    }

    fn gold() -> Vec<Value> {
        ["alpha", "beta", "gamma", "delta", "epsilon"]
            .iter()
            .map(|t| json!({"term": t, "n": 1}))
            .collect()
    }

    #[test]
    fn every_gold_item_gets_one_cause() {
        // alpha kept; beta rejected (n is a string); "Gam" cut mid-line;
        // zeta invented; delta in the reference; epsilon nowhere.
        let text = "{\"term\":\"alpha\",\"n\":1}\n{\"term\":\"beta\",\"n\":\"x\"}\n{\"term\":\"zeta\",\"n\":1}\n{\"term\":\"Gam";
        let reference = vec![json!({"term": "alpha", "n": 1}), json!({"term": "delta", "n": 1})];
        let l = loss_of(text, true, &gold(), Some(&reference));
        let t = l.total;
        assert_eq!(
            (
                t.gold,
                t.found,
                t.schema_rejected,
                t.cut_by_limit,
                t.never_produced,
                t.invented
            ),
            (5, 1, 1, 2, 1, 1)
        );
        let causes: Vec<(&str, Cause)> = l.missed.iter().map(|m| (m.key.as_str(), m.cause)).collect();
        assert_eq!(
            causes,
            [
                ("beta", Cause::SchemaRejected),
                ("gamma", Cause::CutByLimit),
                ("delta", Cause::CutByLimit),
                ("epsilon", Cause::NeverProduced)
            ]
        );
        assert_eq!(t.found + t.cut_by_limit + t.schema_rejected + t.never_produced, t.gold);
    }

    #[test]
    fn a_run_that_ended_on_its_own_never_blames_the_limit() {
        let l = loss_of("{\"term\":\"alpha\",\"n\":1}\n", false, &gold(), None);
        assert_eq!((l.total.found, l.total.never_produced, l.total.cut_by_limit), (1, 4, 0));
    }

    #[test]
    fn a_cut_run_without_a_reference_blames_the_limit() {
        let l = loss_of("{\"term\":\"alpha\",\"n\":1}\n{\"te", true, &gold(), None);
        assert_eq!((l.total.found, l.total.cut_by_limit, l.total.never_produced), (1, 4, 0));
    }

    #[test]
    fn duplicate_gold_items_count_once() {
        let mut g = gold();
        g.push(json!({"term": "ALPHA ", "n": 1}));
        assert_eq!(loss_of("", false, &g, None).total.gold, 5);
    }

    #[test]
    fn literals_mark_the_cut_one() {
        assert_eq!(
            literals(r#"{"term":"Big  Cat","d":"a\"b"#),
            vec![
                ("term".into(), true),
                ("big cat".into(), true),
                ("d".into(), true),
                ("a\"b".into(), false)
            ]
        );
    }
}
