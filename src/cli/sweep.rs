//! `cutline sweep FILE|- (--prompt P | --schema ITEM_SCHEMA) [--tokenizer T]`
//!
//! Items recovered at every token cut from 0 to the full response, by strict
//! JSON, array salvage and JSONL. One `point` record per cut, then a
//! `summary`; the envelope's `data.points` holds them all.

use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;

use super::input;
use super::out::{Category, CliError, Out};
use super::{Cli, io_err};
use crate::output::sweep::{Cuts, Sweep, SweepPoint, SweepSchemas};
use crate::output::tokens::{Tokenizer, boundaries, boundaries_from_pieces, boundaries_u32};
use crate::prompt::ResponseType;
use crate::session::RunRecord;

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
            let (session, idx) = crate::session::resolve(r, &cli.sessions)?;
            Some(session.runs[idx].clone())
        }
        None => None,
    };
    let schemas = schemas_for(args, cli, recorded.as_ref())?;
    let (text, cuts, cut_source) = cut_points(args, recorded.as_ref(), out)?;
    let reasoning = recorded.as_ref().and_then(|r| r.usage.reasoning_tokens);
    if let Some(n) = reasoning {
        out.warn(format!(
            "the sweep cuts only the visible answer: this run also spent {n} output tokens on reasoning, \
             which count against the same limit, so a limit of L leaves about L - {n} for the answer"
        ))
        .map_err(io_err)?;
    }
    let sweep = Sweep::new(text.as_bytes(), cuts.view(), &schemas);
    // The points are streamed, never held (a response of a million tokens
    // is a million points): one pass for the records, the summary's figures
    // and the pretty table, a second for the envelope.
    let mut tally = Tally::default();
    let mut table = Table::new(cuts.len());
    for p in sweep.points(cuts.view()) {
        out.record(&PointRecord {
            point: &p,
            kind: "point",
        })
        .map_err(io_err)?;
        tally.add(&p);
        table.add(&p);
    }
    let summary = Summary {
        tokens: cuts.len().saturating_sub(1),
        tokenizer: args.tokenizer,
        cuts_from: cut_source,
        last: tally.last,
        json_complete_at: tally.json.complete_at(),
        jsonl_complete_at: tally.jsonl.complete_at(),
        reasoning_tokens: reasoning,
    };
    let mut rec = serde_json::to_value(&summary).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut rec {
        m.insert("type".into(), "summary".into());
    }
    out.record(&rec).map_err(io_err)?;
    out.pretty(&table.text).map_err(io_err)?;
    out.envelope(&Data {
        summary: &summary,
        points: Points {
            sweep: &sweep,
            cuts: cuts.view(),
        },
    });
    Ok(Value::Null)
}

/// The schemas the sweep judges by: the recorded run's prompt (neither
/// `--prompt` nor `--schema` given), `--prompt`, or `--schema`.
fn schemas_for(args: &Args, cli: &Cli, recorded: Option<&RunRecord>) -> Result<SweepSchemas, CliError> {
    if let (None, None, Some(rec)) = (&args.prompt, &args.schema, recorded) {
        let cfg = super::replay::prompt_of(rec)?;
        from_prompt(cfg.response_type, cfg.schema.as_ref())
            .map_err(|e| input::compile_err(&format!("prompt {:?}", cfg.id), &e))
    } else if let Some(p) = &args.prompt {
        let cfg = cli.workspace()?.resolve(p)?;
        from_prompt(cfg.response_type, cfg.schema.as_ref())
            .map_err(|e| input::compile_err(&format!("prompt {:?}", cfg.id), &e))
    } else if let Some(path) = &args.schema {
        let item = input::schema_file(path)?;
        from_item_schema(&item).map_err(|e| input::compile_err(&path.display().to_string(), &e))
    } else {
        Err(CliError::new(
            Category::Usage,
            "give --prompt P or --schema ITEM_SCHEMA",
        ))
    }
}

/// The text to cut, where it may be cut, and where those cuts come from:
/// a recorded run's own token pieces, else the tokenizer's estimate.
fn cut_points<W: Write>(
    args: &Args,
    recorded: Option<&RunRecord>,
    out: &mut Out<W>,
) -> Result<(String, OwnedCuts, String), CliError> {
    Ok(match (recorded, &args.file) {
        (Some(rec), _) if rec.transcript().has_token_pieces() => {
            let pieces: Vec<&str> = rec.pieces.iter().map(|p| p.text.as_str()).collect();
            (
                rec.text.clone(),
                OwnedCuts::Wide(boundaries_from_pieces(&pieces)),
                "recorded pieces".to_owned(),
            )
        }
        (Some(rec), _) => {
            let cuts = OwnedCuts::of(&rec.text, args.tokenizer);
            (rec.text.clone(), cuts, format!("{:?}", args.tokenizer))
        }
        (None, Some(file)) => {
            let bytes = input::read_all(file)?;
            let label = if file == "-" { "<stdin>" } else { file.as_str() };
            let (text, warn) = input::into_text(label, bytes);
            if let Some(w) = warn {
                out.warn(w).map_err(io_err)?;
            }
            let cuts = OwnedCuts::of(&text, args.tokenizer);
            (text, cuts, format!("{:?}", args.tokenizer))
        }
        (None, None) => return Err(CliError::new(Category::Usage, "give a response FILE or --session REF")),
    })
}

/// The figures of the summary: the last point, and for each parser the
/// first limit at which it reaches its final count.
#[derive(Default)]
struct Tally {
    last: Option<SweepPoint>,
    json: FirstAt,
    jsonl: FirstAt,
}

impl Tally {
    fn add(&mut self, p: &SweepPoint) {
        self.json.add(p.tokens, p.json_items);
        self.jsonl.add(p.tokens, p.jsonl_items);
        self.last = Some(*p);
    }
}

/// The first limit at which each count was seen, so the limit at which
/// the final count was first reached is known once the last point is: one
/// entry per distinct count (at most one per item), not one per point.
#[derive(Default)]
struct FirstAt {
    first: std::collections::HashMap<usize, usize>,
    last: usize,
}

impl FirstAt {
    fn add(&mut self, tokens: usize, count: usize) {
        self.first.entry(count).or_insert(tokens);
        self.last = count;
    }

    fn complete_at(&self) -> Option<usize> {
        (self.last > 0).then(|| self.first.get(&self.last).copied()).flatten()
    }
}

/// The summary record and the envelope's fields beside `points`.
#[derive(serde::Serialize)]
struct Summary {
    tokens: usize,
    tokenizer: Tokenizer,
    cuts_from: String,
    #[serde(rename = "final")]
    last: Option<SweepPoint>,
    json_complete_at: Option<usize>,
    jsonl_complete_at: Option<usize>,
    reasoning_tokens: Option<u32>,
}

/// One `point` record.
#[derive(serde::Serialize)]
struct PointRecord<'a> {
    #[serde(flatten)]
    point: &'a SweepPoint,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The envelope's data: the summary's fields, then every point.
#[derive(serde::Serialize)]
struct Data<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    points: Points<'a>,
}

/// Every point, serialised as it is read from the sweep.
struct Points<'a> {
    sweep: &'a Sweep,
    cuts: Cuts<'a>,
}

/// The cuts of a response, held as `u32` offsets when the text allows.
enum OwnedCuts {
    Wide(Vec<usize>),
    Narrow(Vec<u32>),
}

impl OwnedCuts {
    /// The tokenizer's cuts of `text`.
    fn of(text: &str, tokenizer: Tokenizer) -> Self {
        boundaries_u32(text, tokenizer).map_or_else(|| Self::Wide(boundaries(text, tokenizer)), Self::Narrow)
    }

    fn view(&self) -> Cuts<'_> {
        match self {
            Self::Wide(c) => Cuts::Wide(c),
            Self::Narrow(c) => Cuts::Narrow(c),
        }
    }

    fn len(&self) -> usize {
        self.view().len()
    }
}

impl serde::Serialize for Points<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.sweep.points(self.cuts))
    }
}

/// The pretty table: about 40 rows, and the last point.
struct Table {
    text: String,
    step: usize,
    len: usize,
}

impl Table {
    fn new(len: usize) -> Self {
        Self {
            text: format!("{}\n", rust_i18n::t!("pretty.sweep_header")),
            step: (len / 40).max(1),
            len,
        }
    }

    fn add(&mut self, p: &SweepPoint) {
        use std::fmt::Write as _;
        if p.tokens.is_multiple_of(self.step) || p.tokens + 1 == self.len {
            let _ = writeln!(
                self.text,
                "{:>6} {:>6} {:>8} {:>6}",
                p.tokens, p.json_items, p.salvaged_items, p.jsonl_items
            );
        }
    }
}
