//! `cutline probe PROVIDER [--model M]`: find out what the model accepts
//! with at most eight tiny requests, print it as a table, and keep it
//! where refusals are kept (`cutline models` lists it). JSONL: one
//! `finding` record each, then `probe`.

use std::fmt::Write as _;
use std::io::Write;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};
use crate::llm::registry::Choice;

/// Arguments of `probe`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A provider configured in cutline.toml.
    pub provider: String,
    /// Probe this model instead of the configured one.
    #[arg(long)]
    pub model: Option<String>,
}

/// Run `probe`.
pub fn run<W: Write>(args: &Args, _cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let choice = super::params::choice(&args.provider)?;
    if !matches!(choice, Choice::Named(_)) {
        return Err(CliError::new(
            Category::Usage,
            format!(
                "`{}` is not probed: name a provider configured in cutline.toml",
                args.provider
            ),
        ));
    }
    let target = super::params::registry()?
        .target(&choice, args.model.as_deref())
        .map_err(CliError::from)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let report = rt.block_on(crate::run::probe::run(&target));
    let info = target.provider.info();
    let mut text = format!("{} ({}, {})\n", info.name, info.model, info.kind);
    for f in &report.findings {
        let mut rec = serde_json::to_value(f).unwrap_or(Value::Null);
        rec["type"] = "finding".into();
        out.record(&rec).map_err(io_err)?;
        let _ = writeln!(text, "  {:<24} {:<40} {}", f.capability, f.found, f.how);
    }
    let _ = writeln!(text, "{} requests", report.calls);
    let kept = crate::llm::learned::file().map(|p| p.display().to_string());
    out.record(&json!({"type": "probe", "calls": report.calls, "kept_in": kept}))
        .map_err(io_err)?;
    out.pretty(&text).map_err(io_err)?;
    Ok(json!({
        "provider": info,
        "findings": report.findings,
        "calls": report.calls,
        "kept_in": kept,
    }))
}
