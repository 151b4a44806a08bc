//! `cutline sessions`: every recorded session with its runs, one `session`
//! record each; the envelope's `data.sessions` is a list.
//!
//! A session may hold 100,000 runs: each run is kept as one typed row
//! (never a `Value` tree), the pretty text is built only in pretty mode and
//! the envelope's list only in JSON mode.

use std::fmt::Write as _;
use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::out::{Category, CliError, Format, Out};
use super::{Cli, io_err};
use crate::llm::FinishReason;
use crate::prompt::ResponseType;
use crate::session::RunRecord;

/// Arguments of `sessions`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// One line about a run.
#[derive(Serialize)]
struct RunRow {
    /// `session#N`, filled in once the header has named the session.
    #[serde(rename = "ref")]
    reference: String,
    #[serde(skip)]
    number: u64,
    prompt: String,
    response_type: ResponseType,
    provider: String,
    model: String,
    max_tokens: Option<u32>,
    finish_reason: FinishReason,
    tokens: Option<u32>,
    analysis: Value,
}

impl RunRow {
    fn of(number: u64, r: RunRecord) -> Self {
        Self {
            reference: String::new(),
            number,
            tokens: r.usage.completion_tokens.or_else(|| u32::try_from(r.pieces.len()).ok()),
            prompt: r.prompt_id,
            response_type: r.response_type,
            provider: r.provider.name,
            model: r.provider.model,
            max_tokens: r.params.max_tokens,
            finish_reason: r.finish,
            analysis: r.analysis,
        }
    }
}

/// One session: the record line adds `"type": "session"` last.
#[derive(Serialize)]
struct SessionRow {
    id: String,
    path: String,
    created_ms: u64,
    runs: Vec<RunRow>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
}

/// The envelope's data.
#[derive(Serialize)]
struct Data {
    dir: String,
    sessions: Vec<SessionRow>,
}

/// Run `sessions`.
pub fn run<W: Write>(_args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let format = out.format();
    let mut list = Vec::new();
    let mut text = String::new();
    let paths = crate::session::list_dir(&cli.sessions).map_err(|e| {
        CliError::new(
            Category::InputError,
            format!("{}: cannot read sessions directory: {e}", cli.sessions.display()),
        )
        .because(e)
    })?;
    for path in paths {
        // Run by run: one row about each is kept, never the session.
        let mut runs: Vec<RunRow> = Vec::new();
        let mut each = |r: RunRecord| runs.push(RunRow::of(crate::session::run_number(&r, runs.len()), r));
        let s = match crate::session::each_run(&path, &mut each) {
            Ok(s) => s,
            Err(e) => {
                out.warn(format!("{}: {e}", path.display())).map_err(io_err)?;
                continue;
            }
        };
        for w in &s.warnings {
            out.warn(w.clone()).map_err(io_err)?;
        }
        let id = s.header.id;
        for r in &mut runs {
            r.reference = format!("{id}#{}", r.number);
        }
        if format == Format::Pretty {
            for r in &runs {
                let tokens = r.tokens.map_or_else(|| "null".to_owned(), |t| t.to_string());
                let _ = writeln!(
                    text,
                    "{:<48} {:<34} {:<8} {tokens}",
                    r.reference,
                    r.prompt,
                    r.finish_reason.as_str()
                );
            }
        }
        let mut row = SessionRow {
            id,
            path: path.display().to_string(),
            created_ms: s.header.created_ms,
            runs,
            kind: Some("session"),
        };
        out.record(&row).map_err(io_err)?;
        if format == Format::Json {
            row.kind = None;
            list.push(row);
        }
    }
    out.pretty(&text).map_err(io_err)?;
    out.envelope(&Data {
        dir: cli.sessions.display().to_string(),
        sessions: list,
    });
    Ok(Value::Null)
}
