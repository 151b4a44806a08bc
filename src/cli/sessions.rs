//! `cutline sessions`: every recorded session with its runs, one `session`
//! record each; the envelope's `data.sessions` is a list.

use std::fmt::Write as _;
use std::io::Write;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};

/// Arguments of `sessions`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `sessions`.
pub fn run<W: Write>(_args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let mut list = Vec::new();
    let mut text = String::new();
    let paths = crate::session::list_dir(&cli.sessions).map_err(|e| {
        CliError::new(
            Category::InputError,
            format!("{}: cannot read sessions directory: {e}", cli.sessions.display()),
        )
    })?;
    for path in paths {
        // Run by run: one line about each is kept, never the session.
        let mut runs: Vec<(u64, Value)> = Vec::new();
        let mut each = |r: crate::session::RunRecord| {
            let number = crate::session::run_number(&r, runs.len());
            runs.push((
                number,
                json!({
                    "ref": Value::Null,
                    "prompt": r.prompt_id,
                    "response_type": r.response_type,
                    "provider": r.provider.name,
                    "model": r.provider.model,
                    "max_tokens": r.params.max_tokens,
                    "finish_reason": r.finish,
                    "tokens": r.usage.completion_tokens.or_else(|| u32::try_from(r.pieces.len()).ok()),
                    "analysis": r.analysis,
                }),
            ));
        };
        let s = match crate::session::each_run(&path, &mut each) {
            Ok(s) => s,
            Err(e) => {
                out.warn(format!("{}: {e}", path.display())).map_err(|e| io_err(&e))?;
                continue;
            }
        };
        for w in &s.warnings {
            out.warn(w.clone()).map_err(|e| io_err(&e))?;
        }
        let runs: Vec<Value> = runs
            .into_iter()
            .map(|(n, mut r)| {
                r["ref"] = Value::String(format!("{}#{n}", s.header.id));
                r
            })
            .collect();
        for r in &runs {
            let _ = writeln!(
                text,
                "{:<48} {:<34} {:<8} {}",
                r["ref"].as_str().unwrap_or(""),
                r["prompt"].as_str().unwrap_or(""),
                r["finish_reason"].as_str().unwrap_or(""),
                r["tokens"]
            );
        }
        let rec = json!({
            "id": s.header.id,
            "path": path.display().to_string(),
            "created_ms": s.header.created_ms,
            "runs": runs,
        });
        let mut line = rec.clone();
        line["type"] = "session".into();
        out.record(&line).map_err(|e| io_err(&e))?;
        list.push(rec);
    }
    out.pretty(&text).map_err(|e| io_err(&e))?;
    Ok(json!({"dir": cli.sessions.display().to_string(), "sessions": list}))
}
