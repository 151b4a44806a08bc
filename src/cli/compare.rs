//! `cutline compare A B [--prompt-a P] [--prompt-b P] [--gold FILE] [--key FIELD…]`
//!
//! A and B are session runs (`session[#run]`) or, with `--prompt-a` /
//! `--prompt-b`, response files read as that prompt's response type. JSONL
//! records: one `side` per answer (kept items, schema-valid rate,
//! truncation), one `overlap` per item type (`item_type`; in both, only in
//! A, only in B, valid rates, gold scores), then one `total`, and with a
//! gold set one `loss` per side: every missed gold item's cause (cut by the
//! limit, rejected by the schema, never produced) and the invented items.
//! The envelope's `data` is the report `{a, b, types, total, loss}`.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::input;
use super::out::{CliError, Out};
use super::{Cli, io_err};
use rust_i18n::t;

use crate::compare::loss::{self, Loss};
use crate::compare::{self, Keys, Side};
use crate::prompt::ResponseType;
use crate::run::Analysis;

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Answer A: a session reference (`session[#run]`), or a response file with `--prompt-a`.
    pub a: String,
    /// Answer B: a session reference (`session[#run]`), or a response file with `--prompt-b`.
    pub b: String,
    /// Read A as a response file of this prompt (id or path).
    #[arg(long)]
    pub prompt_a: Option<String>,
    /// Read B as a response file of this prompt (id or path).
    #[arg(long)]
    pub prompt_b: Option<String>,
    /// Gold set: a JSONL file of items (with `type` for unions).
    #[arg(long)]
    pub gold: Option<PathBuf>,
    /// Key fields that identify an item (default: the schema's required string fields).
    #[arg(long = "key", value_name = "FIELD")]
    pub keys: Vec<String>,
}

/// One loaded side: its analysis, whether the run was cut, and its per-line schema.
struct Loaded {
    label: String,
    analysis: Analysis,
    text: String,
    finish_length: bool,
    line_schema: Option<Value>,
}

fn line_schema(kind: ResponseType, schema: Option<&Value>) -> Option<Value> {
    match kind {
        ResponseType::Json => schema.and_then(crate::prompt::migrate::line_schema),
        ResponseType::Jsonl => schema.cloned(),
        ResponseType::Text => None,
    }
}

fn load(reference: &str, prompt: Option<&str>, cli: &Cli) -> Result<Loaded, CliError> {
    if let Some(p) = prompt {
        let cfg = cli.workspace()?.resolve(p)?;
        let bytes = input::read_all(reference)?;
        let (text, _) = input::lossy(reference, &bytes);
        let schema = crate::run::analysis_schema(crate::llm::structured::Path::None, cfg.schema.as_ref());
        let analysis = Analysis::of(cfg.response_type, schema.as_ref(), &text, cli.tg_python);
        return Ok(Loaded {
            label: reference.to_owned(),
            analysis,
            text,
            finish_length: false,
            line_schema: line_schema(cfg.response_type, cfg.schema.as_ref()),
        });
    }
    let (session, idx) = crate::session::resolve(reference, &cli.sessions)?;
    let run = &session.runs[idx];
    let kind = run.response_type;
    let schema = run.prompt.get("schema").filter(|s| !s.is_null());
    let analysis = Analysis::of(kind, schema, &run.text, cli.tg_python);
    Ok(Loaded {
        label: session.reference(idx),
        analysis,
        text: run.text.clone(),
        finish_length: run.finish == crate::llm::FinishReason::Length,
        line_schema: line_schema(kind, schema),
    })
}

/// Read a gold set: one JSON item per line, blank lines skipped; a bad line
/// is an `input_error` naming `file:line`.
pub fn read_gold(path: &std::path::Path) -> Result<Vec<Value>, CliError> {
    crate::eval::inputs::read_gold(path).map_err(CliError::from)
}

/// A JSONL record: `type` first, then `head`, then the fields of `body`.
fn record(kind: &str, head: &[(&str, Value)], body: &impl serde::Serialize) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), kind.into());
    for (k, v) in head {
        m.insert((*k).to_owned(), v.clone());
    }
    if let Ok(Value::Object(fields)) = serde_json::to_value(body) {
        for (k, v) in fields {
            if k == "type" {
                continue;
            }
            m.insert(k, v);
        }
    }
    Value::Object(m)
}

fn side_record(s: &Side, which: &str) -> Value {
    record("side", &[("side", which.into())], s)
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{:.1}%", x * 100.0))
}

/// Run `compare`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let a = load(&args.a, args.prompt_a.as_deref(), cli)?;
    let b = load(&args.b, args.prompt_b.as_deref(), cli)?;
    let gold = args.gold.as_deref().map(read_gold).transpose()?;
    let keys = Keys::of(a.line_schema.as_ref().or(b.line_schema.as_ref()), &args.keys);
    let report = compare::compare(
        compare::side(&a.label, &a.analysis, a.finish_length),
        compare::side(&b.label, &b.analysis, b.finish_length),
        &keys,
        gold.as_deref(),
    );
    let io = io_err;
    out.record(&side_record(&report.a, "a")).map_err(io)?;
    out.record(&side_record(&report.b, "b")).map_err(io)?;
    let mut text = String::new();
    for (name, s) in [("A", &report.a), ("B", &report.b)] {
        let _ = writeln!(
            text,
            "{name}: {}  {} {}  {} {}  {} {}  {} {}",
            s.label,
            t!("pretty.kept"),
            s.kept,
            t!("pretty.valid"),
            pct(s.valid_rate),
            t!("pretty.truncated"),
            s.truncated,
            t!("pretty.lost"),
            s.lost_to_truncation
        );
    }
    for t in &report.types {
        out.record(&record("overlap", &[("item_type", t.ty.clone().into())], t))
            .map_err(io)?;
        let _ = write!(text, "{}", overlap_line(&t.ty, t.both, t.only_a, t.only_b));
        if let Some([ga, gb]) = &t.gold {
            let _ = write!(text, "  F1 A {}  F1 B {}", pct(ga.f1), pct(gb.f1));
        }
        text.push('\n');
    }
    out.record(&record("total", &[], &report.total)).map_err(io)?;
    let _ = writeln!(
        text,
        "{}",
        overlap_line(
            &t!("pretty.total"),
            report.total.both,
            report.total.only_a,
            report.total.only_b
        )
    );
    let mut data = serde_json::to_value(&report).unwrap_or(Value::Null);
    if let Some(g) = &gold {
        let [la, lb] = losses(&a, &b, &report, g, &keys);
        for (which, l) in [("a", &la), ("b", &lb)] {
            out.record(&record("loss", &[("side", which.into())], l)).map_err(io)?;
            let t = &l.total;
            let _ = writeln!(
                text,
                "{}",
                t!(
                    "pretty.lost_by",
                    side = which.to_uppercase(),
                    cut = t.cut_by_limit,
                    rejected = t.schema_rejected,
                    never = t.never_produced,
                    invented = t.invented
                )
            );
        }
        data["loss"] = json!({"a": la, "b": lb});
    }
    out.pretty(&text).map_err(io)?;
    data["keys"] = json!(keys);
    Ok(data)
}

/// One overlap line: a type (or the total), then in both, only A, only B.
fn overlap_line(ty: &str, both: usize, only_a: usize, only_b: usize) -> String {
    format!(
        "{} {} {both:>4}  {} {only_a:>4}  {} {only_b:>4}",
        crate::i18n::left(ty, 16),
        t!("pretty.both"),
        t!("pretty.only_a"),
        t!("pretty.only_b")
    )
}

/// Why each side lost gold items; a side that was cut is explained
/// against the other when that one ended on its own (same input, so its
/// items are what the cut side would have gone on to say).
fn losses(a: &Loaded, b: &Loaded, report: &compare::Report, gold: &[Value], keys: &Keys) -> [Loss; 2] {
    let of = |s: &Loaded, cut: bool, other: &Loaded, other_cut: bool| {
        let run = loss::Run {
            analysis: &s.analysis,
            text: &s.text,
            cut,
        };
        loss::of(run, gold, keys, (!other_cut).then(|| other.analysis.items()))
    };
    [
        of(a, report.a.truncated, b, report.b.truncated),
        of(b, report.b.truncated, a, report.a.truncated),
    ]
}
