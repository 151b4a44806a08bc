//! The records `eval` writes on its output contract (`plan`, `run`,
//! `twins`, the totals' batch price), built from the engine's values.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::eval::engine::{Ask, Matrix};
use crate::eval::{self, RunSummary};

/// The `plan` record: the session, each prompt with its inputs and gold
/// set, the limits, who answers and how, and how many runs are left.
pub(super) fn plan(
    (m, ask, session_ref): (&Matrix, &Ask, &Value),
    concurrency: usize,
    batch: Option<&str>,
    pending: usize,
) -> Value {
    json!({
        "type": "plan",
        "session": session_ref,
        "prompts": m.plans.iter().map(|p| json!({"id": p.cfg.id, "response_type": p.cfg.response_type.to_string(), "inputs": p.inputs.len(), "gold": p.gold.as_ref().map(|g| g.file.clone())})).collect::<Vec<_>>(),
        "max_tokens": ask.limits,
        "provider": ask.provider,
        "model": ask.model,
        "concurrency": concurrency,
        "batch": batch,
        "runs": m.planned.len(),
        "pending": pending,
        "skipped": m.planned.len() - pending,
    })
}

/// The batch APIs bill half the streamed price: the totals and the
/// table's footer say what `billed` tokens cost.
pub(super) fn batch_price(billed: u64, totals: &mut Value, text: &mut String) {
    totals["batch_price_factor"] = json!(0.5);
    totals["tokens_at_streamed_price"] = json!(billed / 2);
    let _ = writeln!(
        text,
        "{billed} tokens billed at the batch price (half the streamed price: as {} streamed tokens)",
        billed / 2
    );
}

/// A record: `type` first, then the fields of `body`.
pub(super) fn tagged(kind: &str, body: &impl serde::Serialize) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), kind.into());
    if let Ok(Value::Object(fields)) = serde_json::to_value(body) {
        m.extend(fields);
    }
    Value::Object(m)
}

pub(super) fn run_record(s: &RunSummary) -> Value {
    tagged("run", s)
}

pub(super) fn twin_record(t: &eval::TwinRow) -> Value {
    let f1 = |r: &eval::Row| r.gold.as_ref().and_then(|g| g.f1);
    let recall = |r: &eval::Row| r.gold.as_ref().and_then(|g| g.recall);
    json!({
        "type": "twins",
        "max_tokens": t.max_tokens,
        "json_prompt": t.json.prompt,
        "jsonl_prompt": t.jsonl.prompt,
        "items_total": [t.json.items_total, t.jsonl.items_total],
        "items_mean": [t.json.items_mean, t.jsonl.items_mean],
        "valid_rate": [t.json.valid_rate, t.jsonl.valid_rate],
        "parse_ok_rate": [t.json.parse_ok_rate, t.jsonl.parse_ok_rate],
        "truncated": [t.json.truncated, t.jsonl.truncated],
        "salvaged_total": [t.json.salvaged_total, t.jsonl.salvaged_total],
        "recall": [recall(&t.json), recall(&t.jsonl)],
        "f1": [f1(&t.json), f1(&t.jsonl)],
    })
}

/// Peak resident memory of this process (Linux `VmHWM`), for the totals.
pub(super) fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
