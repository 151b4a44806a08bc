//! `cutline models [--forget [MODEL|BASE_URL]]`: what cutline learned of
//! each model, per base URL: from its Models API (thinking, effort,
//! structured outputs, lifecycle and retirement), from refusals, and from
//! `cutline probe`, each fact with its evidence. `--forget` drops entries
//! (all of them, or one model's or one base URL's). JSONL: one `model`
//! record each.

use std::fmt::Write as _;
use std::io::Write;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};

/// Arguments of `models`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Forget what was learned: of every model, or of the model (or base
    /// URL) named.
    #[arg(long, value_name = "MODEL|BASE_URL", num_args = 0..=1, default_missing_value = "")]
    pub forget: Option<String>,
}

/// Run `models`.
pub fn run<W: Write>(args: &Args, _cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let path = crate::llm::learned::file();
    let file = path.as_ref().map(|p| p.display().to_string());
    // A file a newer cutline wrote is never changed, and said so.
    if let Some((p, v)) = path
        .as_ref()
        .and_then(|p| crate::llm::learned::newer_version(p).map(|v| (p, v)))
    {
        let words = crate::llm::learned::newer_words(p, v);
        if args.forget.is_some() {
            return Err(CliError::new(Category::InputError, words));
        }
        out.warn(words).map_err(io_err)?;
    }
    if let Some(what) = &args.forget {
        let what = Some(what.as_str()).filter(|w| !w.is_empty());
        let n = crate::llm::learned::forget(what);
        if let (Some(w), 0) = (what, n) {
            out.warn(format!(
                "nothing learned is of model or base URL {w:?}: nothing forgotten (`cutline models` lists what is known)"
            ))
            .map_err(io_err)?;
        }
        out.record(&json!({"type": "forgot", "entries": n})).map_err(io_err)?;
        out.pretty(&format!("forgot {n} entries\n")).map_err(io_err)?;
        return Ok(json!({"forgot": n, "file": file}));
    }
    let entries = crate::llm::learned::entries();
    let mut text = String::new();
    for e in &entries {
        let mut rec = serde_json::to_value(e).unwrap_or(Value::Null);
        rec["type"] = "model".into();
        out.record(&rec).map_err(io_err)?;
        let _ = writeln!(text, "{} at {}", e.model, e.base_url);
        if let Some(a) = &e.api {
            let life = a.lifecycle.as_deref().unwrap_or("?");
            let retires = a
                .retires_at
                .as_deref()
                .map(|d| format!(", retires {d}"))
                .unwrap_or_default();
            let _ = writeln!(text, "  models api: {life}{retires}");
        }
        for ev in &e.evidence {
            let _ = writeln!(text, "  {:<44} {}", ev.fact, ev.source.as_str());
        }
    }
    if entries.is_empty() {
        text.push_str("nothing learned yet\n");
    }
    out.pretty(&text).map_err(io_err)?;
    Ok(json!({"models": entries, "file": file}))
}
