//! `cutline parse FILE|- --as text|json|jsonl [--schema FILE | --prompt P]`
//!
//! JSONL records: `line` (jsonl, one per response line, with the kept
//! `item`), `item`/`element` (json), then one `summary`. The envelope's
//! `data` has `items`, and `lines` (jsonl) or `status`, `error`, `salvaged`,
//! `elements` (json). A JSONL response is read line by line in JSONL mode, so
//! a huge file is analysed in bounded memory.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;

use rust_i18n::t;
use serde::Serialize;
use serde_json::{Value, json};

use super::input;
use super::out::{Category, CliError, Format, Out};
use super::{Cli, io_err};
use crate::output::json::{self as json_out, JsonSchemas, OutlineView};
use crate::output::jsonl::{self, JsonlAnalysis, LineCounts, LineOutcome, LineStatus};
use crate::output::loops::Loop;
use crate::output::schema::CompiledSchema;
use crate::output::tg::TgPython;
use crate::output::verdict::{Fails, Mark, Salvage, Strict, Tally, Voice};
use crate::prompt::ResponseType;

/// Arguments of `parse`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Response file, or `-` for stdin.
    pub file: String,
    /// How to read the response (default: the prompt's response type).
    #[arg(long = "as", value_enum)]
    pub as_: Option<As>,
    /// JSON Schema file (for jsonl: the schema of each line).
    #[arg(long, conflicts_with = "prompt")]
    pub schema: Option<PathBuf>,
    /// Prompt id (from the prompts dir) or path, for its response type and schema.
    #[arg(long)]
    pub prompt: Option<String>,
}

/// Response types on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum As {
    /// As is.
    Text,
    /// One JSON value (strict), plus array salvage.
    Json,
    /// One JSON value per line.
    Jsonl,
}

impl From<ResponseType> for As {
    fn from(r: ResponseType) -> Self {
        match r {
            ResponseType::Text => Self::Text,
            ResponseType::Json => Self::Json,
            ResponseType::Jsonl => Self::Jsonl,
        }
    }
}

/// How to read a response: the kind, the schema applied, where it came
/// from (for messages), and a prompt's `object-schema`, which TrustGraph
/// ignores and so is only reported against, never applied.
type Reading = (As, Option<Value>, String, Option<Value>);

/// Resolve `--as` and the schema from the flags.
pub fn kind_and_schema(
    as_: Option<As>,
    schema: Option<&PathBuf>,
    prompt: Option<&str>,
    cli: &Cli,
) -> Result<Reading, CliError> {
    if let Some(p) = prompt {
        let cfg = cli.workspace()?.resolve(p)?;
        let kind = as_.unwrap_or_else(|| cfg.response_type.into());
        return Ok((
            kind,
            cfg.schema.clone(),
            format!("prompt {:?}", cfg.id),
            cfg.object_schema,
        ));
    }
    let kind = as_.ok_or_else(|| {
        CliError::new(
            Category::Usage,
            "say how to read the response: --as text|json|jsonl, or --prompt P",
        )
    })?;
    match schema {
        Some(path) => Ok((kind, Some(input::schema_file(path)?), path.display().to_string(), None)),
        None => Ok((kind, None, String::new(), None)),
    }
}

/// Run `parse`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let (kind, schema, origin, object_schema) =
        kind_and_schema(args.as_, args.schema.as_ref(), args.prompt.as_deref(), cli)?;
    // A prompt's schema that does not compile rejects every value, as
    // TrustGraph's `validate` does at run time; so does a --schema file
    // that only Python refuses (a `pattern` its `re` cannot compile). One
    // that is not a schema at all is an error.
    let broken = schema
        .as_ref()
        .and_then(CompiledSchema::compile_python)
        .and_then(|s| s.broken().cloned());
    if let (Some(e), None, Some(s)) = (&broken, &args.prompt, &schema)
        && CompiledSchema::compile(s).is_err()
    {
        return Err(input::compile_err(&origin, e));
    }
    if let Some(e) = broken {
        out.warn(format!(
            "{origin}: {e}; every value is rejected, as TrustGraph rejects them"
        ))
        .map_err(io_err)?;
    }
    let label = if args.file == "-" {
        "<stdin>"
    } else {
        args.file.as_str()
    };
    match kind {
        As::Text => {
            let bytes = input::read_all(&args.file)?;
            let (text, warn) = input::lossy(label, &bytes);
            if let Some(w) = warn {
                out.warn(w).map_err(io_err)?;
            }
            out.record(&json!({"type": "text", "text": text})).map_err(io_err)?;
            out.pretty(&text).map_err(io_err)?;
            Ok(json!({"response_type": "text", "items": [text]}))
        }
        As::Json => parse_json(args, schema.as_ref(), cli.tg_python, label, out),
        As::Jsonl => parse_jsonl(args, schema.as_ref(), cli.tg_python, object_schema.as_ref(), out),
    }
}

/// `parse --as json`: the records and the envelope are written from the
/// outline (spans and verdicts; values read again from the text as they are
/// written), so a response of any size costs little more than its bytes.
fn parse_json<W: Write>(
    args: &Args,
    schema: Option<&Value>,
    py: TgPython,
    label: &str,
    out: &mut Out<W>,
) -> Result<Value, CliError> {
    let schemas = JsonSchemas::compile_python(schema);
    let (text, warn) = input::into_text(label, input::read_all(&args.file)?);
    if let Some(w) = warn {
        out.warn(w).map_err(io_err)?;
    }
    if out.format() == Format::Pretty {
        let mut a = json_out::analyse(&text, &schemas);
        let rejected = a.status == crate::output::json::JsonStatus::SchemaInvalid;
        a.raises = crate::output::tg::json_raises(&text, schemas.whole.as_ref(), py, rejected);
        out.pretty(&pretty_json(&a)).map_err(io_err)?;
        return Ok(Value::Null);
    }
    let outline = json_out::outline(text.as_bytes(), &schemas);
    let rejected = outline.status == crate::output::json::JsonStatus::SchemaInvalid;
    let raises = crate::output::tg::json_raises(&text, schemas.whole.as_ref(), py, rejected);
    if let Some(r) = &raises {
        out.warn(r.verdict()).map_err(io_err)?;
    }
    let looped = loop_in(text.as_bytes(), 0, outline.error.as_ref().is_some_and(|e| e.truncated));
    let view = OutlineView {
        outline: &outline,
        text: text.as_bytes(),
    };
    json_records(view, looped.as_ref(), out).map_err(io_err)?;
    out.envelope(&JsonData {
        analysis: view,
        response_type: "json",
        raises,
        looped,
    });
    // Only the JSON envelope carries `data`, written above.
    Ok(Value::Null)
}

/// `parse --as jsonl`: the envelope analyses the whole file; records and
/// pretty output stream it line by line.
fn parse_jsonl<W: Write>(
    args: &Args,
    schema: Option<&Value>,
    py: TgPython,
    object_schema: Option<&Value>,
    out: &mut Out<W>,
) -> Result<Value, CliError> {
    let compiled = schema.and_then(CompiledSchema::compile_python);
    let ignored = object_schema.and_then(|s| CompiledSchema::compile(s).ok());
    if out.format() == Format::Json {
        let bytes = input::read_all(&args.file)?;
        let analysis = jsonl::analyse_py(&bytes, compiled.as_ref(), py);
        let label = if args.file == "-" { "<stdin>" } else { &args.file };
        for w in analysis.lines.iter().filter_map(|l| jsonl::utf8_warning(label, l)) {
            out.warn(w).map_err(io_err)?;
        }
        let rejects = ignored.as_ref().map(|s| object_schema_rejects(&analysis, s));
        if let Some(r) = &rejects {
            out.warn(ignored_warning(r)).map_err(io_err)?;
        }
        if let Some(r) = analysis.raises {
            out.warn(r.verdict(analysis.counts.ok)).map_err(io_err)?;
        }
        // Serialised straight into the envelope: no `Value` copy of
        // the items and outcomes (the bytes are pinned by
        // tests/output_bytes.rs).
        let looped = loop_in(&bytes, 0, analysis.counts.truncated > 0);
        out.envelope(&JsonlData {
            response_type: "jsonl",
            items: &analysis.items,
            lines: &analysis.lines,
            counts: analysis.counts,
            object_schema: rejects.as_ref().map(ignored_report),
            raises: analysis.raises,
            looped,
        });
        return Ok(Value::Null);
    }
    let (analysis, rejects, tail) = stream_jsonl(&args.file, compiled.as_ref(), ignored.as_ref(), py, out)?;
    let looped = loop_in(&tail.bytes, tail.offset, analysis.counts.truncated > 0);
    if out.format() == Format::Pretty {
        out.pretty(&pretty_jsonl(&analysis)).map_err(io_err)?;
    }
    let c = analysis.counts;
    let mut summary = json!({"type": "summary", "response_type": "jsonl", "items": c.ok, "counts": c, "loop": looped});
    let mut data = json!({"response_type": "jsonl", "items": analysis.items, "lines": analysis.lines,
        "counts": c, "loop": looped});
    if let Some(r) = analysis.raises {
        summary["raises"] = json!(r);
        data["raises"] = json!(r);
        out.warn(r.verdict(c.ok)).map_err(io_err)?;
    }
    if let Some(r) = &rejects {
        summary["object_schema_rejects"] = r.iter().map(|(l, _)| json!(l)).collect();
        data["object_schema"] = ignored_report(r);
        out.warn(ignored_warning(r)).map_err(io_err)?;
    }
    out.record(&summary).map_err(io_err)?;
    Ok(data)
}

/// Read a JSONL response line by line, emitting each line's record as it is
/// judged; only the counts are kept (and, for pretty output, the outcomes).
/// The lines a prompt's `object-schema` would reject, with why.
type Rejects = Vec<(usize, Vec<crate::output::schema::Violation>)>;

/// The lines `object-schema` would reject (see `output::jsonl`).
pub(super) use crate::output::jsonl::object_schema_rejects;

/// The warning naming them.
pub(super) use crate::output::jsonl::object_schema_warning as ignored_warning;

/// `data.object_schema`: that TrustGraph ignores it, and what it would reject.
pub(super) fn ignored_report(rejects: &Rejects) -> Value {
    let would: Vec<Value> = rejects.iter().map(|(l, e)| json!({"line": l, "errors": e})).collect();
    json!({"ignored_by_trustgraph": true, "would_reject": would})
}

fn stream_jsonl<W: Write>(
    path: &str,
    schema: Option<&CompiledSchema>,
    ignored: Option<&CompiledSchema>,
    py: TgPython,
    out: &mut Out<W>,
) -> Result<(JsonlAnalysis, Option<Rejects>, Tail), CliError> {
    let reader: Box<dyn Read> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            crate::limits::open_regular(std::path::Path::new(path))
                .map_err(|e| CliError::new(Category::InputError, format!("{path}: {e}")).because(e))?,
        )
    };
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let keep = out.format() == Format::Pretty;
    let mut analysis = JsonlAnalysis::default();
    let mut judge = jsonl::LineJudge::with_python(schema, py);
    let mut write_err: Option<std::io::Error> = None;
    let mut rejects: Rejects = Vec::new();
    let label = if path == "-" { "<stdin>" } else { path };
    let mut emit = |outcome: LineOutcome, value: Option<Value>| {
        if let Some(w) = jsonl::utf8_warning(label, &outcome)
            && write_err.is_none()
            && let Err(e) = out.warn(w)
        {
            write_err = Some(e);
        }
        let errors = match (ignored, &value, &outcome.status) {
            (Some(s), Some(v), LineStatus::Ok { .. }) => s.validate(v).err(),
            _ => None,
        };
        if write_err.is_none()
            && let Err(e) = out.record(&LineRecord {
                outcome: &outcome,
                item: value.as_ref(),
                ignored: errors.as_deref(),
            })
        {
            write_err = Some(e);
        }
        if let Some(e) = errors {
            rejects.push((outcome.line, e));
        }
        if keep {
            analysis.push(outcome, value);
        } else {
            // Count without keeping: memory stays flat however long the file.
            analysis.count(&outcome);
        }
    };
    let mut line = Vec::with_capacity(1024);
    let mut tail = Tail::default();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| CliError::new(Category::InputError, format!("{path}: {e}")).because(e))?;
        if n == 0 {
            break;
        }
        tail.push(&line);
        let terminated = line.last() == Some(&b'\n');
        let body = if terminated { &line[..line.len() - 1] } else { &line[..] };
        judge.line(body, terminated, &mut emit);
    }
    let offset = judge.tg_line_offset();
    judge.finish(&mut emit);
    if let Some(e) = write_err {
        return Err(io_err(e));
    }
    analysis.tg_line_offset = offset;
    Ok((analysis, ignored.map(|_| rejects), tail))
}

/// The last bytes of a streamed file (what loop detection looks at), at
/// most twice [`crate::output::loops::MAX_TAIL`], and where they start.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    offset: usize,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        let max = crate::output::loops::MAX_TAIL;
        if self.bytes.len() > 2 * max {
            let drop = self.bytes.len() - max;
            self.bytes.drain(..drop);
            self.offset += drop;
        }
    }
}

/// The `data` of a jsonl envelope, in its key order.
#[derive(Serialize)]
struct JsonlData<'a> {
    response_type: &'static str,
    items: &'a [Value],
    lines: &'a [LineOutcome],
    counts: LineCounts,
    #[serde(skip_serializing_if = "Option::is_none")]
    object_schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raises: Option<jsonl::Raises>,
    #[serde(rename = "loop")]
    looped: Option<Loop>,
}

/// The `data` of a json envelope: the analysis, then `response_type`.
#[derive(Serialize)]
struct JsonData<'a> {
    #[serde(flatten)]
    analysis: OutlineView<'a>,
    response_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    raises: Option<crate::output::tg::JsonRaises>,
    #[serde(rename = "loop")]
    looped: Option<Loop>,
}

/// The runaway loop a cut answer ends in (`data.loop`): only an answer
/// that was cut can have been running away. `tail` is the end of the text,
/// `offset` where it starts in the whole.
fn loop_in(tail: &[u8], offset: usize, cut: bool) -> Option<Loop> {
    if !cut {
        return None;
    }
    let text = String::from_utf8_lossy(tail);
    crate::output::loops::detect(&text, None).map(|mut l| {
        l.start_byte += offset;
        l
    })
}

/// One `line` record, serialised without building a `Value`. Its keys come
/// in the order the record always had: the outcome's (`line`, `status`, the
/// status's fields, where an `ok` line's `item` index is replaced in place
/// by the kept value), then `type`.
struct LineRecord<'a> {
    outcome: &'a LineOutcome,
    item: Option<&'a Value>,
    /// What the ignored `object-schema` would reject in a kept line.
    ignored: Option<&'a [crate::output::schema::Violation]>,
}

impl Serialize for LineRecord<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("line", &self.outcome.line)?;
        m.serialize_entry("status", self.outcome.status.word())?;
        match &self.outcome.status {
            LineStatus::Ok { item } => match self.item {
                Some(v) => m.serialize_entry("item", v)?,
                None => m.serialize_entry("item", item)?,
            },
            LineStatus::Empty | LineStatus::Fence => {}
            LineStatus::InvalidJson { column, message } | LineStatus::Truncated { column, message } => {
                m.serialize_entry("column", column)?;
                m.serialize_entry("message", message)?;
            }
            LineStatus::TooDeep { column, depth, message } => {
                m.serialize_entry("column", column)?;
                m.serialize_entry("depth", depth)?;
                m.serialize_entry("message", message)?;
            }
            LineStatus::IntTooLong {
                column,
                digits,
                message,
            } => {
                m.serialize_entry("column", column)?;
                m.serialize_entry("digits", digits)?;
                m.serialize_entry("message", message)?;
            }
            LineStatus::SchemaInvalid { errors } => m.serialize_entry("errors", errors)?,
        }
        if !self.outcome.not_standard.is_empty() {
            m.serialize_entry("not_standard", &self.outcome.not_standard)?;
        }
        if let Some(errors) = self.ignored {
            m.serialize_entry("object_schema_errors", errors)?;
        }
        m.serialize_entry("type", "line")?;
        if let (Some(v), false) = (self.item, matches!(self.outcome.status, LineStatus::Ok { .. })) {
            m.serialize_entry("item", v)?;
        }
        m.end()
    }
}

fn json_records<W: Write>(view: OutlineView<'_>, looped: Option<&Loop>, out: &mut Out<W>) -> std::io::Result<()> {
    if out.format() != Format::Jsonl {
        return Ok(());
    }
    let a = view.outline;
    let mut failed = None;
    a.for_each_item(view.text, &mut |item| {
        if failed.is_none()
            && let Err(e) = out.record(&json!({"type": "item", "value": item}))
        {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if a.status != json_out::JsonStatus::Ok {
        for rec in view.element_records() {
            out.record(&rec)?;
        }
    }
    let mut summary = json!({
        "type": "summary", "response_type": "json", "status": a.status, "error": a.error,
        "violations": a.violations, "items": a.item_count(), "salvaged": a.salvaged_count(),
        "salvage_stop": a.salvage_stop, "loop": looped,
    });
    if !a.broken.is_empty() {
        summary["broken"] = json!(a.broken);
    }
    out.record(&summary)
}

/// Human view of a json analysis: the strict verdict, then, when it
/// failed, what salvage recovered, element by element.
pub fn pretty_json(a: &json_out::JsonAnalysis) -> String {
    use std::fmt::Write as _;
    let pretty = Voice::Pretty;
    let mut s = String::new();
    let strict = Strict::of(Some(a), false);
    if let Some(w) = strict.sentence(pretty) {
        let _ = writeln!(s, "{w}");
    }
    for w in strict.details(pretty) {
        let _ = writeln!(s, "  {w}");
    }
    if a.status != json_out::JsonStatus::Ok {
        let _ = writeln!(s, "{}", Salvage::of(&a.elements).sentence(pretty));
        for b in &a.broken {
            let _ = writeln!(s, "{}", Mark::Skipped(b).sentence(pretty).unwrap_or_default());
        }
        for el in &a.elements {
            let m = Mark::element(el, false);
            let words = m.sentence(pretty).unwrap_or_default();
            let _ = writeln!(
                s,
                "  {} {} {:>4}  {words}",
                m.sign().glyph(pretty),
                t!("pretty.line"),
                el.line
            );
        }
    }
    if let Some(w) = Fails::json(a).and_then(|f| f.sentence(pretty)) {
        let _ = writeln!(s, "{w}");
    }
    s
}

/// Human view of a jsonl analysis: each line's mark, the tally, and
/// TrustGraph's verdict when its service fails the whole response.
pub fn pretty_jsonl(a: &JsonlAnalysis) -> String {
    use std::fmt::Write as _;
    let pretty = Voice::Pretty;
    let mut s = String::new();
    for l in &a.lines {
        let m = Mark::line_of(l, a);
        let words = m.sentence(pretty).unwrap_or_default();
        let _ = writeln!(s, "{} {:>5}  {words}", m.sign().glyph(pretty), l.line);
    }
    let _ = writeln!(s, "{}", Tally::of(a.counts).sentence(pretty));
    if let Some(w) = Fails::jsonl(a).and_then(|f| f.sentence(pretty)) {
        let _ = writeln!(s, "{w}");
    }
    s
}
