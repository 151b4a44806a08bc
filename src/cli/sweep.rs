//! `cutline sweep FILE|- (--prompt P | --schema ITEM_SCHEMA) [--tokenizer T]`
//!
//! Items recovered at every token cut from 0 to the full response, by strict
//! JSON, array salvage and JSONL. One `point` record per cut, then a
//! `summary`; the envelope's `data.points` holds them all.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::input;
use super::out::{Category, CliError, Out};
use super::{Cli, io_err};
use crate::output::sweep::{SweepSchemas, sweep};
use crate::output::tokens::{Tokenizer, boundaries, boundaries_from_pieces};
use crate::prompt::ResponseType;

/// Arguments of `sweep`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["file", "session"])))]
pub struct Args {
    /// Response file, or `-` for stdin.
    pub file: Option<String>,
    /// A recorded run (`session[#run]`) instead of a file: its own token
    /// pieces are the cuts, and its prompt snapshot gives the schema.
    #[arg(long, conflicts_with = "file")]
    pub session: Option<String>,
    /// Prompt id or path: its schema is used for all three parsers.
    #[arg(long)]
    pub prompt: Option<String>,
    /// Schema of one item (one JSONL line, one array element).
    #[arg(long)]
    pub schema: Option<PathBuf>,
    /// Tokenizer giving the cut points.
    #[arg(long, value_enum, default_value = "o200k_base")]
    pub tokenizer: Tokenizer,
}

/// Schemas for the three parsers from one item schema.
pub fn from_item_schema(item: &Value) -> Result<SweepSchemas, crate::output::schema::SchemaCompileError> {
    SweepSchemas::of_item(item)
}

/// Schemas for the three parsers from a prompt's response type and schema.
pub fn from_prompt(
    kind: ResponseType,
    schema: Option<&Value>,
) -> Result<SweepSchemas, crate::output::schema::SchemaCompileError> {
    SweepSchemas::of_response(kind == ResponseType::Jsonl, schema)
}

/// Run `sweep`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let recorded = match &args.session {
        Some(r) => {
            let (session, idx) =
                crate::session::resolve(r, &cli.sessions).map_err(|e| CliError::new(Category::InputError, e))?;
            Some(session.runs[idx].clone())
        }
        None => None,
    };
    let schemas = if let (None, None, Some(rec)) = (&args.prompt, &args.schema, &recorded) {
        let cfg = super::replay::prompt_of(rec)?;
        from_prompt(cfg.response_type, cfg.schema.as_ref())
            .map_err(|e| input::compile_err(&format!("prompt {:?}", cfg.id), &e))?
    } else if let Some(p) = &args.prompt {
        let cfg = crate::store::resolve(p, &cli.prompts)
            .map_err(|e| CliError::new(Category::ConfigInvalid, e.to_string()))?;
        from_prompt(cfg.response_type, cfg.schema.as_ref())
            .map_err(|e| input::compile_err(&format!("prompt {:?}", cfg.id), &e))?
    } else if let Some(path) = &args.schema {
        let item = input::schema_file(path)?;
        from_item_schema(&item).map_err(|e| input::compile_err(&path.display().to_string(), &e))?
    } else {
        return Err(CliError::new(
            Category::Usage,
            "give --prompt P or --schema ITEM_SCHEMA",
        ));
    };
    let (text, cuts, cut_source) = match (&recorded, &args.file) {
        (Some(rec), _) if rec.transcript().has_token_pieces() => {
            let pieces: Vec<&str> = rec.pieces.iter().map(|p| p.text.as_str()).collect();
            (
                rec.text.clone(),
                boundaries_from_pieces(&pieces),
                "recorded pieces".to_owned(),
            )
        }
        (Some(rec), _) => {
            let cuts = boundaries(&rec.text, args.tokenizer);
            (rec.text.clone(), cuts, format!("{:?}", args.tokenizer))
        }
        (None, Some(file)) => {
            let bytes = input::read_all(file)?;
            let label = if file == "-" { "<stdin>" } else { file.as_str() };
            let (text, warn) = input::lossy(label, &bytes);
            if let Some(w) = warn {
                out.warn(w).map_err(|e| io_err(&e))?;
            }
            let cuts = boundaries(&text, args.tokenizer);
            (text, cuts, format!("{:?}", args.tokenizer))
        }
        (None, None) => return Err(CliError::new(Category::Usage, "give a response FILE or --session REF")),
    };
    let reasoning = recorded.as_ref().and_then(|r| r.usage.reasoning_tokens);
    if let Some(n) = reasoning {
        out.warn(format!(
            "the sweep cuts only the visible answer: this run also spent {n} output tokens on reasoning, \
             which count against the same limit, so a limit of L leaves about L - {n} for the answer"
        ))
        .map_err(|e| io_err(&e))?;
    }
    let points = sweep(text.as_bytes(), &cuts, &schemas);
    for p in &points {
        let mut rec = serde_json::to_value(p).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut rec {
            m.insert("type".into(), "point".into());
        }
        out.record(&rec).map_err(|e| io_err(&e))?;
    }
    let last = points.last().copied();
    let first_full = |f: fn(&crate::output::sweep::SweepPoint) -> usize| {
        let max = last.map_or(0, |l| f(&l));
        points.iter().find(|p| f(p) == max && max > 0).map(|p| p.tokens)
    };
    let summary = json!({
        "tokens": cuts.len().saturating_sub(1),
        "tokenizer": args.tokenizer,
        "cuts_from": cut_source,
        "final": last,
        "json_complete_at": first_full(|p| p.json_items),
        "jsonl_complete_at": first_full(|p| p.jsonl_items),
        "reasoning_tokens": reasoning,
    });
    let mut rec = summary.clone();
    if let Value::Object(m) = &mut rec {
        m.insert("type".into(), "summary".into());
    }
    out.record(&rec).map_err(|e| io_err(&e))?;
    out.pretty(&pretty(&points)).map_err(|e| io_err(&e))?;
    let mut data = summary;
    if let Value::Object(m) = &mut data {
        m.insert("points".into(), serde_json::to_value(&points).unwrap_or(Value::Null));
    }
    Ok(data)
}

fn pretty(points: &[crate::output::sweep::SweepPoint]) -> String {
    use std::fmt::Write as _;
    let mut s = format!("{}\n", rust_i18n::t!("pretty.sweep_header"));
    let step = (points.len() / 40).max(1);
    for (i, p) in points.iter().enumerate() {
        if i % step == 0 || i + 1 == points.len() {
            let _ = writeln!(
                s,
                "{:>6} {:>6} {:>8} {:>6}",
                p.tokens, p.json_items, p.salvaged_items, p.jsonl_items
            );
        }
    }
    s
}
