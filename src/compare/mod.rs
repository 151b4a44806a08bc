//! Extraction quality: two answers (JSON array or JSONL, any mix) compared
//! item by item, optionally against a gold set. Pure: analyses in, a report
//! out.
//!
//! Items are matched by key: by default the per-line schema's required
//! string fields (per branch for a `type` union, `type` itself excluded),
//! normalised — lowercased, whitespace collapsed, trimmed. Items of a JSON
//! object of arrays are typed by their property's singular (`definitions` →
//! `definition`), so they meet the JSONL twin's `type` tags. Each side's
//! items are the ones its response type's consumer keeps; what truncation
//! cost is reported beside them.

pub mod loss;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::output::Analysis;
use crate::output::json::JsonStatus;
use crate::output::jsonl::LineStatus;
use crate::prompt::migrate::singular;

/// The type name of items when the schema is not a `type` union.
pub const UNTYPED: &str = "item";

/// One side of a comparison, reduced to what the report needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// A label (session reference or file).
    pub label: String,
    /// The items the consumer keeps; union items carry their `type`.
    #[serde(skip)]
    pub items: Vec<Value>,
    /// How many items are kept.
    pub kept: usize,
    /// Judged values (JSON elements; JSONL lines that are not blank or
    /// fences) and how many of them satisfy the schema.
    pub judged: usize,
    /// Schema-valid among `judged`.
    pub valid: usize,
    /// `valid / judged`, when anything was judged.
    pub valid_rate: Option<f64>,
    /// The answer was cut: the run finished with `length`, or the analysis
    /// shows a cut (JSON that ends early, a cut last JSONL line).
    pub truncated: bool,
    /// Items lost to truncation: for `json`, the valid elements salvage
    /// recovered that the strict consumer did not keep; for `jsonl`, the cut
    /// last line.
    pub lost_to_truncation: usize,
    /// Every judged value: its `type` where one is known, and its verdict.
    #[serde(skip)]
    pub verdicts: Vec<(Option<String>, bool)>,
}

/// How many of `values` differ: a runaway loop's repeats counted once
/// (its repeats are byte-identical, so equal values are equal text).
pub fn distinct<'a>(values: impl IntoIterator<Item = &'a Value>) -> usize {
    let mut seen = std::collections::HashSet::new();
    values.into_iter().filter(|v| seen.insert(v.to_string())).count()
}

/// Reduce an analysis to a side. `finish_length`: the run was cut by its
/// max-token limit (known for session runs).
pub fn side(label: &str, analysis: &Analysis, finish_length: bool) -> Side {
    let (items, verdicts, cut, lost) = match analysis {
        Analysis::Text => (Vec::new(), Vec::new(), false, 0),
        Analysis::Json(a) => {
            let items = match (&a.status, &a.value) {
                (JsonStatus::Ok, Some(Value::Object(obj))) => obj
                    .iter()
                    .filter_map(|(k, v)| v.as_array().map(|arr| (k, arr)))
                    .flat_map(|(k, arr)| arr.iter().map(move |e| tagged(e, &singular(k))))
                    .collect(),
                _ => a.items.clone(),
            };
            let valid_elements = a.elements.iter().filter(|e| e.valid).count();
            let verdicts: Vec<(Option<String>, bool)> = if a.elements.is_empty() && a.status == JsonStatus::Ok {
                items.iter().map(|i| (type_of(i), true)).collect()
            } else {
                a.elements
                    .iter()
                    .map(|e| (e.property.as_deref().map(singular), e.valid))
                    .collect()
            };
            let cut = a.error.as_ref().is_some_and(|e| e.truncated);
            let lost = valid_elements.saturating_sub(items.len());
            (items, verdicts, cut, lost)
        }
        Analysis::Jsonl(a) => {
            let verdicts = a
                .lines
                .iter()
                .filter_map(|l| match &l.status {
                    LineStatus::Ok { item } => Some((a.items.get(*item).and_then(type_of), true)),
                    LineStatus::SchemaInvalid { errors } => Some((errors.iter().find_map(|e| e.branch.clone()), false)),
                    LineStatus::Empty | LineStatus::Fence => None,
                    _ => Some((None, false)),
                })
                .collect();
            (a.items.clone(), verdicts, a.counts.truncated > 0, a.counts.truncated)
        }
    };
    let judged = verdicts.len();
    let valid = verdicts.iter().filter(|(_, v)| *v).count();
    Side {
        label: label.to_owned(),
        kept: items.len(),
        items,
        judged,
        valid,
        valid_rate: rate(valid, judged),
        truncated: finish_length || cut,
        lost_to_truncation: lost,
        verdicts,
    }
}

fn type_of(item: &Value) -> Option<String> {
    item.get("type").and_then(Value::as_str).map(str::to_owned)
}

fn tagged(e: &Value, tag: &str) -> Value {
    match e {
        Value::Object(m) => {
            let mut t = Map::new();
            t.insert("type".into(), Value::String(tag.to_owned()));
            t.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
            Value::Object(t)
        }
        other => other.clone(),
    }
}

#[allow(
    clippy::cast_precision_loss,
    reason = "counts and milliseconds far below 2^52: exact as f64"
)]
fn rate(n: usize, d: usize) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

/// Which fields make an item's key, per type.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Keys {
    /// Key fields per union `type`; empty when the schema is not a union.
    pub per_type: BTreeMap<String, Vec<String>>,
    /// Key fields of untyped items (or of a type the schema does not name);
    /// empty means the whole item.
    pub default: Vec<String>,
}

impl Keys {
    /// Keys from a per-line schema (`fields` given: those, for every type).
    pub fn of(line_schema: Option<&Value>, fields: &[String]) -> Self {
        let mut keys = Self {
            default: fields.to_vec(),
            ..Self::default()
        };
        let Some(schema) = line_schema else { return keys };
        if let Some(Value::Array(branches)) = schema.get("oneOf").or_else(|| schema.get("anyOf")) {
            for b in branches {
                if let Some(tag) = b.pointer("/properties/type/const").and_then(Value::as_str) {
                    let f = if fields.is_empty() {
                        required_strings(b)
                    } else {
                        fields.to_vec()
                    };
                    keys.per_type.insert(tag.to_owned(), f);
                }
            }
        } else if fields.is_empty() {
            keys.default = required_strings(schema);
        }
        keys
    }

    /// True when items are told apart by `type`.
    pub fn is_union(&self) -> bool {
        !self.per_type.is_empty()
    }

    fn type_of<'a>(&self, item: &'a Value) -> &'a str {
        if self.is_union() {
            item.get("type").and_then(Value::as_str).unwrap_or("")
        } else {
            UNTYPED
        }
    }

    fn fields(&self, ty: &str) -> &[String] {
        self.per_type.get(ty).unwrap_or(&self.default)
    }

    /// The normalised key of `item`.
    pub fn key(&self, item: &Value) -> String {
        let fields = self.fields(self.type_of(item));
        if fields.is_empty() {
            let mut v = item.clone();
            if let Value::Object(m) = &mut v {
                m.remove("type");
            }
            return normalise(&canonical(&v));
        }
        fields
            .iter()
            .map(|f| match item.get(f) {
                Some(Value::String(s)) => normalise(s),
                Some(other) => normalise(&canonical(other)),
                None => String::new(),
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

fn required_strings(schema: &Value) -> Vec<String> {
    let Some(Value::Array(req)) = schema.get("required") else {
        return Vec::new();
    };
    req.iter()
        .filter_map(Value::as_str)
        .filter(|f| *f != "type")
        .filter(|f| {
            schema
                .pointer(&format!("/properties/{}/type", f.replace('~', "~0").replace('/', "~1")))
                .and_then(Value::as_str)
                == Some("string")
        })
        .map(str::to_owned)
        .collect()
}

/// Canonical JSON (object keys sorted) for keys built from whole values.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, String> = m.iter().map(|(k, v)| (k, canonical(v))).collect();
            let parts: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap_or_default()))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Lowercase, whitespace runs collapsed to one space, trimmed.
pub fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Precision, recall and F1 of one side against the gold set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    /// Distinct keys of the side that are in the gold set.
    pub true_positives: usize,
    /// Distinct keys of the side.
    pub predicted: usize,
    /// Distinct gold keys.
    pub gold: usize,
    /// `tp / predicted` (None when nothing was predicted).
    pub precision: Option<f64>,
    /// `tp / gold` (None when the gold set is empty).
    pub recall: Option<f64>,
    /// Harmonic mean of precision and recall (0 when both are 0).
    pub f1: Option<f64>,
}

fn score(side: &BTreeSet<String>, gold: &BTreeSet<String>) -> Score {
    let tp = side.intersection(gold).count();
    let precision = rate(tp, side.len());
    let recall = rate(tp, gold.len());
    let f1 = match (precision, recall) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    Score {
        true_positives: tp,
        predicted: side.len(),
        gold: gold.len(),
        precision,
        recall,
        f1,
    }
}

/// Overlap (and gold scores) of one type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypeReport {
    /// The union `type`, or `item`.
    #[serde(rename = "type")]
    pub ty: String,
    /// Key fields (empty: the whole item).
    pub key: Vec<String>,
    /// Items of this type A keeps, and their distinct keys.
    pub a_items: usize,
    /// Items of this type B keeps.
    pub b_items: usize,
    /// Schema-valid rate of A's judged values of this type (values whose
    /// type is unknown, such as lines that are not JSON, count only in the
    /// side's overall rate).
    pub a_valid_rate: Option<f64>,
    /// Schema-valid rate of B's judged values of this type.
    pub b_valid_rate: Option<f64>,
    /// Distinct keys in both.
    pub both: usize,
    /// Distinct keys only A has.
    pub only_a: usize,
    /// Distinct keys only B has.
    pub only_b: usize,
    /// The keys only A has.
    pub only_a_keys: Vec<String>,
    /// The keys only B has.
    pub only_b_keys: Vec<String>,
    /// Gold scores of A and B, with a gold set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<[Score; 2]>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Side A.
    pub a: Side,
    /// Side B.
    pub b: Side,
    /// Per type, in name order.
    pub types: Vec<TypeReport>,
    /// Totals over types.
    pub total: Totals,
}

/// Totals over every type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    /// Distinct keys in both.
    pub both: usize,
    /// Distinct keys only A has.
    pub only_a: usize,
    /// Distinct keys only B has.
    pub only_b: usize,
    /// Gold scores of A and B over every type (micro-averaged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<[Score; 2]>,
}

type ByType = BTreeMap<String, BTreeSet<String>>;

fn by_type(items: &[Value], keys: &Keys) -> (ByType, BTreeMap<String, usize>) {
    let mut sets = ByType::new();
    let mut counts = BTreeMap::new();
    for it in items {
        let ty = keys.type_of(it).to_owned();
        *counts.entry(ty.clone()).or_insert(0) += 1;
        sets.entry(ty).or_default().insert(keys.key(it));
    }
    (sets, counts)
}

fn tagged_union(sets: &ByType) -> BTreeSet<String> {
    sets.iter()
        .flat_map(|(t, s)| s.iter().map(move |k| format!("{t}\u{1f}{k}")))
        .collect()
}

fn type_rate(side: &Side, ty: &str, keys: &Keys) -> Option<f64> {
    let of_type: Vec<bool> = side
        .verdicts
        .iter()
        .filter(|(t, _)| {
            if keys.is_union() {
                t.as_deref() == Some(ty)
            } else {
                ty == UNTYPED
            }
        })
        .map(|(_, v)| *v)
        .collect();
    rate(of_type.iter().filter(|v| **v).count(), of_type.len())
}

/// Compare two sides (and score them against `gold` items, when given).
pub fn compare(a: Side, b: Side, keys: &Keys, gold: Option<&[Value]>) -> Report {
    let (sa, ca) = by_type(&a.items, keys);
    let (sb, cb) = by_type(&b.items, keys);
    let sg = gold.map(|g| by_type(g, keys).0);
    let mut types: BTreeSet<String> = sa.keys().chain(sb.keys()).cloned().collect();
    types.extend(keys.per_type.keys().cloned());
    if let Some(g) = &sg {
        types.extend(g.keys().cloned());
    }
    if !keys.is_union() && types.is_empty() {
        types.insert(UNTYPED.to_owned());
    }
    let empty = BTreeSet::new();
    let mut reports = Vec::new();
    for ty in types {
        let ka = sa.get(&ty).unwrap_or(&empty);
        let kb = sb.get(&ty).unwrap_or(&empty);
        let gold_scores = sg.as_ref().map(|g| {
            let kg = g.get(&ty).unwrap_or(&empty);
            [score(ka, kg), score(kb, kg)]
        });
        reports.push(TypeReport {
            key: keys.fields(&ty).to_vec(),
            a_items: ca.get(&ty).copied().unwrap_or(0),
            b_items: cb.get(&ty).copied().unwrap_or(0),
            a_valid_rate: type_rate(&a, &ty, keys),
            b_valid_rate: type_rate(&b, &ty, keys),
            both: ka.intersection(kb).count(),
            only_a: ka.difference(kb).count(),
            only_b: kb.difference(ka).count(),
            only_a_keys: ka.difference(kb).cloned().collect(),
            only_b_keys: kb.difference(ka).cloned().collect(),
            gold: gold_scores,
            ty,
        });
    }
    let (ua, ub) = (tagged_union(&sa), tagged_union(&sb));
    let total = Totals {
        both: ua.intersection(&ub).count(),
        only_a: ua.difference(&ub).count(),
        only_b: ub.difference(&ua).count(),
        gold: sg.as_ref().map(|g| {
            let ug = tagged_union(g);
            [score(&ua, &ug), score(&ub, &ug)]
        }),
    };
    Report {
        a,
        b,
        types: reports,
        total,
    }
}
