//! `cutline prompts [--dir D]`: the prompt configs, one record each, plus a
//! record per file that failed to load (the others still list).

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};
use crate::output::schema::summary;
use crate::prompt::PromptConfig;

/// Arguments of `prompts`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory of prompt configs (default: --prompts, i.e. ./prompts).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// The shape a prompt came from: `toml`, `trustgraph-prompt`,
/// `config-store` or `configurator`, the bundle shapes suffixed
/// `/no-index` when the bundle has no `template-index` (TrustGraph 2.8).
pub fn shape(cfg: &PromptConfig) -> String {
    let word = cfg.origin.format.as_str();
    if cfg.origin.indexed == Some(false) {
        format!("{word}/no-index")
    } else {
        word.to_owned()
    }
}

fn record(cfg: &PromptConfig) -> Value {
    json!({
        "id": cfg.id,
        "response_type": cfg.response_type.to_string(),
        "path": cfg.origin.file,
        "shape": shape(cfg),
        "description": cfg.description,
        "schema": summary(cfg.schema.as_ref()),
        "object_schema": cfg.object_schema.as_ref().map(|s| summary(Some(s))),
        "twin": cfg.twin,
        "inputs": cfg.inputs.iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
    })
}

/// Run `prompts`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let mut ws = cli.workspace()?;
    if let Some(d) = &args.dir {
        ws.dir.clone_from(d);
    }
    let dir = &ws.dir;
    let (prompts, errors, warnings) = ws.load();
    // A directory that cannot be read is an input error, not an empty list.
    if let [e] = errors.as_slice()
        && prompts.is_empty()
        && e.file == dir.display().to_string()
    {
        return Err(CliError::new(Category::InputError, e.to_string()).because(e.clone()));
    }
    for w in &warnings {
        out.warn(w.to_string()).map_err(io_err)?;
    }
    let mut list = Vec::with_capacity(prompts.len());
    for p in &prompts {
        let mut rec = record(p);
        list.push(rec.clone());
        if let Value::Object(m) = &mut rec {
            m.insert("type".into(), "prompt".into());
        }
        out.record(&rec).map_err(io_err)?;
    }
    let errs: Vec<Value> = errors
        .iter()
        .map(|e| json!({"category": "config_invalid", "message": e.to_string()}))
        .collect();
    for e in &errs {
        let mut rec = e.clone();
        if let Value::Object(m) = &mut rec {
            m.insert("type".into(), "error".into());
        }
        out.record(&rec).map_err(io_err)?;
    }
    let mut text = String::new();
    for p in &prompts {
        let _ = writeln!(
            text,
            "{:<32} {:<6} {:<24} {}{}",
            p.id,
            p.response_type.to_string(),
            shape(p),
            summary(p.schema.as_ref()),
            p.object_schema
                .as_ref()
                .map(|s| rust_i18n::t!("pretty.object_schema_ignored", schema = summary(Some(s))).into_owned())
                .unwrap_or_default()
        );
    }
    for e in &errors {
        let _ = writeln!(text, "{}: {e}", rust_i18n::t!("pretty.error"));
    }
    out.pretty(&text).map_err(io_err)?;
    Ok(json!({"dir": dir.display().to_string(), "prompts": list, "errors": errs}))
}
