//! `cutline run PROMPT [--provider P] [--max-tokens N] [--var …] [--input NAME]`
//!
//! Renders the prompt, streams it through a provider, analyses the answer by
//! the prompt's response type and records the run in a session. JSONL
//! records: `delta` per streamed chunk, `item` per item as it completes,
//! then `result`. The envelope's `data` has `finish_reason`, `usage`,
//! `analysis` (shaped like `parse`'s data) and `session`.

use std::io::Write;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::params::Sampling;
use super::{Cli, io_err};
use crate::llm::params::Structured;
use crate::llm::registry::{Choice, Target};
use crate::llm::{self, ErrorKind};
use crate::run::target::ResolveError;
use crate::run::{Outcome, Spec};
use crate::session::Recorder;

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt id (from the prompts dir) or path.
    pub prompt: String,
    /// Provider: `local` (the embedded llama-server), `replay` (the
    /// recording of exactly this request from the sessions dir; refused
    /// when none answers it), or a configured name.
    #[arg(long, default_value = "local")]
    pub provider: String,
    /// Max tokens to generate (default: the prompt's, the provider's, else
    /// none where the wire allows it).
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// A variable: `k=v`, or `k=@file` to read the value from a file.
    #[arg(long = "var", value_name = "K=V")]
    pub vars: Vec<String>,
    /// A JSON file holding an object of variables of any JSON type.
    #[arg(long = "vars", value_name = "FILE.json")]
    pub vars_file: Option<std::path::PathBuf>,
    /// A named sample input of the prompt (default: the first one).
    #[arg(long)]
    pub input: Option<String>,
    /// Record into this session id (default: a new session named after the prompt).
    #[arg(long)]
    pub session: Option<String>,
    /// Do not record the run.
    #[arg(long)]
    pub no_record: bool,
    /// Structured output for a json prompt: the provider's native schema
    /// support, the schema added to the prompt, or off (default: the
    /// prompt's `structured`, the provider's, else off).
    #[arg(long, value_enum)]
    pub structured: Option<StructuredArg>,
    /// When a JSONL answer is cut by the limit, keep its complete lines and
    /// ask for the rest, up to N more calls (prefilled where the provider
    /// can, else a follow-up turn); items are stitched without duplicates.
    #[arg(long = "continue", value_name = "N")]
    pub continue_calls: Option<u32>,
    /// Temperature, top_p, stop sequences, extra headers.
    #[command(flatten)]
    pub sampling: Sampling,
    /// An undefined variable is an error, not empty (TrustGraph renders it
    /// empty, and every one touched is a warning).
    #[arg(long)]
    pub strict_vars: bool,
}

/// `--structured` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StructuredArg {
    /// Native wire support (`response_format`, `output_config`, …).
    Native,
    /// The schema appended to the system prompt; checked afterwards.
    Prompt,
    /// No structured output.
    Off,
}

impl StructuredArg {
    /// The precedence value it sets.
    pub fn level(self) -> Structured {
        match self {
            Self::Native => Structured::Native,
            Self::Prompt => Structured::Prompt,
            Self::Off => Structured::Off,
        }
    }
}

/// The target for `--provider WORD` on `spec` (a replay finds the
/// recording of exactly the request `spec` makes in `sessions`).
pub fn target_for(word: &str, spec: &Spec, sessions: &std::path::Path) -> Result<Target, CliError> {
    let choice = super::params::choice(word)?;
    // A replay needs no providers file: a broken one does not stop it.
    let none = crate::llm::registry::Registry::default();
    let registry = if choice == Choice::Replay {
        &none
    } else {
        super::params::registry()?
    };
    crate::run::target::resolve(registry, &choice, None, (spec, sessions))
        .map(|r| r.target)
        .map_err(|e| match e {
            ResolveError::Provider(e) => CliError::from(e),
            ResolveError::Replay(e) => CliError::from(e),
        })
}

/// Run `run`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let spec = spec_of(args, cli)?;
    let target = target_for(&args.provider, &spec, &cli.sessions)?;
    let mut recorder = if args.no_record {
        None
    } else {
        Some(
            session_for(&cli.sessions, args.session.as_deref(), &spec.prompt.id).map_err(|e| {
                CliError::new(Category::InputError, format!("{}: {e}", cli.sessions.display())).because(e)
            })?,
        )
    };
    let (outcome, continued) = execute(args, (&target, &spec), recorder.as_mut(), out)?;
    if let Some(w) = crate::run::plan::schema_problem(spec.prompt.schema.as_ref()) {
        out.warn(format!("prompt {:?}: {w}", spec.prompt.id)).map_err(io_err)?;
    }
    for name in &outcome.undefined {
        out.warn(super::input::undefined_warning(&spec.prompt.id, name))
            .map_err(io_err)?;
    }
    let mut data = report(&outcome, recorder.as_ref().map(Recorder::path), out)?;
    object_schema_report(&mut data, &outcome, &spec.prompt, out)?;
    data["undefined"] = json!(outcome.undefined);
    let resumed = continued
        .as_ref()
        .is_some_and(|c| c.calls.len() > 1 && c.ended == crate::run::continuation::Ended::Finished);
    let refused = match continued {
        Some(c) => {
            stitched(&mut data, &c, &spec, out)?;
            if c.calls.len() > 1 && outcome.record.params.temperature != Some(0.0) {
                out.warn(
                    "the run is not greedy (no temperature 0 sent: see its adjustments), so the continued answer is \
                     a likely continuation, not the one an uncut run would give",
                )
                .map_err(io_err)?;
            }
            refused_call(&c)
        }
        None => None,
    };
    verdict(&outcome, refused, resumed, data, out)
}

/// The prompt, its variables and the command line's settings.
fn spec_of(args: &Args, cli: &Cli) -> Result<Spec, CliError> {
    let cfg = cli.workspace()?.resolve(&args.prompt)?;
    let vars = super::input::vars(&cfg, args.input.as_deref(), &args.vars, args.vars_file.as_deref())?;
    let mut spec = Spec::new(cfg, vars);
    spec.cli = args
        .sampling
        .layer(args.max_tokens, args.structured.map(StructuredArg::level));
    spec.headers.clone_from(&args.sampling.headers);
    if args.strict_vars {
        spec.undefined = crate::prompt::render::Undefined::Strict;
    }
    spec.tg_python = cli.tg_python;
    Ok(spec)
}

/// The run, each delta written as it comes, then (`--continue N`) its
/// continuation.
fn execute<W: Write>(
    args: &Args,
    (target, spec): (&Target, &Spec),
    mut recorder: Option<&mut Recorder>,
    out: &mut Out<W>,
) -> Result<(Outcome, Option<crate::run::continuation::Continued>), CliError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")).because(e))?;
    let outcome = rt.block_on(async {
        // SIGINT / SIGTERM end the request, not the process: the partial
        // run is analysed and recorded as cut by the user (exit 130).
        crate::run::interrupt::arm()
            .map_err(|e| CliError::new(Category::Internal, format!("signals: {e}")).because(e))?;
        let mut write_err = None;
        let result = crate::run::execute(target, spec, recorder.as_deref_mut(), |ev, _| {
            if let llm::Event::Delta { text, .. } = ev
                && write_err.is_none()
                && let Err(e) = out.record(&json!({"type": "delta", "text": text}))
            {
                write_err = Some(e);
            }
        })
        .await?;
        if let Some(e) = write_err {
            return Err(io_err(e));
        }
        Ok::<Outcome, CliError>(result)
    })?;
    let continued = match args.continue_calls {
        // A stream that broke after a checkpoint (Gemini's token) is
        // resumed from it, as the SDK resumes it.
        Some(n) if outcome.record.error.is_none() || outcome.record.continuation_token.is_some() => {
            Some(rt.block_on(crate::run::continuation::run(target, spec, &outcome, n, recorder))?)
        }
        _ => None,
    };
    Ok((outcome, continued))
}

/// A provider failure is exit 5 (`provider_error`), with everything that
/// arrived before it still in the error's detail, analysed and recorded;
/// so is a continuation call the provider refused, whose recovery failed.
fn verdict<W: Write>(
    outcome: &Outcome,
    refused: Option<CliError>,
    resumed: bool,
    data: Value,
    out: &mut Out<W>,
) -> Result<Value, CliError> {
    match (&outcome.record.error, refused) {
        (Some(e), None) if resumed => {
            out.warn(format!(
                "the first call broke ({e}); it was resumed from the provider's latest continuation token and \
                 the answer finished"
            ))
            .map_err(io_err)?;
            Ok(data)
        }
        (Some(e), _) => {
            let mut err = CliError::from(e);
            err.message = format!("{} (what arrived is kept and recorded)", err.message);
            err.detail = Some(data);
            Err(err)
        }
        (None, Some(mut err)) => {
            out.warn(err.message.clone()).map_err(io_err)?;
            err.detail = Some(data);
            Err(err)
        }
        (None, None) => Ok(data),
    }
}

/// The failure of a continuation that ended because a call failed (a 400
/// to an assistant prefill, say): which call, how it was asked, the
/// server's words, and what is kept.
fn refused_call(c: &crate::run::continuation::Continued) -> Option<CliError> {
    if c.ended != crate::run::continuation::Ended::Failed {
        return None;
    }
    let call = c.calls.last()?;
    let how = serde_json::to_value(call.how).ok()?;
    let error = c.records.last()?.error.as_ref()?;
    let mut err = CliError::from(error);
    let what = if error.kind == ErrorKind::Cancelled {
        "was cut"
    } else {
        "was refused"
    };
    err.message = format!(
        "continuation call {} ({}) {what}: {error}; the {} items of the calls before it are kept",
        c.calls.len(),
        how.as_str().unwrap_or("?"),
        c.items.len(),
    );
    Some(err)
}

/// What TrustGraph's consumer would make of a JSONL answer beyond its
/// lines, as `parse` says it: where it raises on the whole response
/// (`data.analysis.raises`), and, for a prompt with an `object-schema`
/// (which TrustGraph ignores), which kept lines that schema would reject
/// (`data.object_schema`), each with a warning.
pub fn object_schema_report<W: Write>(
    data: &mut Value,
    o: &Outcome,
    prompt: &crate::prompt::PromptConfig,
    out: &mut Out<W>,
) -> Result<(), CliError> {
    if let crate::run::Analysis::Json(a) = &o.analysis
        && let Some(r) = &a.raises
    {
        out.warn(r.verdict()).map_err(io_err)?;
    }
    let crate::run::Analysis::Jsonl(a) = &o.analysis else {
        return Ok(());
    };
    if let Some(r) = a.raises {
        out.warn(r.verdict(a.counts.ok)).map_err(io_err)?;
    }
    let Some(schema) = &prompt.object_schema else {
        return Ok(());
    };
    let Ok(ignored) = crate::output::schema::CompiledSchema::compile(schema) else {
        return Ok(());
    };
    let rejects = super::parse::object_schema_rejects(a, &ignored);
    out.warn(super::parse::ignored_warning(&rejects)).map_err(io_err)?;
    data["object_schema"] = super::parse::ignored_report(&rejects);
    Ok(())
}

/// A continued run's report: one `continuation` record per call after the
/// first; the envelope's `analysis` is the stitched answer's, its `items`
/// the deduplicated items of every call, and `continuation` says how.
fn stitched<W: Write>(
    data: &mut Value,
    c: &crate::run::continuation::Continued,
    spec: &Spec,
    out: &mut Out<W>,
) -> Result<(), CliError> {
    for call in c.calls.iter().skip(1) {
        let mut rec = serde_json::to_value(call).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut rec {
            m.insert("type".into(), "continuation".into());
        }
        out.record(&rec).map_err(io_err)?;
    }
    let p = &spec.prompt;
    let schema = crate::run::analysis_schema(crate::llm::structured::Path::None, p.schema.as_ref());
    let analysis = crate::run::Analysis::of(p.response_type, schema.as_ref(), &c.text, spec.tg_python);
    let mut a = analysis.data(&c.text);
    a["items"] = serde_json::to_value(&c.items).unwrap_or(Value::Null);
    data["analysis"] = a;
    data["text"] = Value::String(c.text.clone());
    data["continuation"] = json!({"ended": c.ended, "calls": c.calls, "items": c.items.len()});
    out.record(&json!({"type": "continued", "ended": c.ended, "calls": c.calls.len(), "items": c.items.len()}))
        .map_err(io_err)?;
    Ok(())
}

/// Open (append to) an existing session by id, or create a new one; the id
/// is a name inside `dir`, never a path ([`crate::session::file_for`]).
pub fn open_session(dir: &std::path::Path, stem: &str) -> std::io::Result<Recorder> {
    Recorder::open_or_create(dir, stem)
}

/// The session a command records into: `--session ID` when given (appended
/// to, or created), else a new session `<prefix>-<unix ms>`. The default is
/// always a file of its own: [`Recorder::create`] never opens an existing
/// file but takes the next free `-N`, so processes started in the same
/// millisecond never share (or fight over) one session.
pub fn session_for(dir: &std::path::Path, explicit: Option<&str>, prefix: &str) -> std::io::Result<Recorder> {
    match explicit {
        Some(id) => open_session(dir, id),
        None => Recorder::create(dir, &format!("{prefix}-{}", crate::session::now_ms())),
    }
}

/// Print a finished run's records and build its envelope data.
pub fn report<W: Write>(o: &Outcome, session: Option<&std::path::Path>, out: &mut Out<W>) -> Result<Value, CliError> {
    let r = &o.record;
    for item in o.analysis.items() {
        out.record(&json!({"type": "item", "value": item})).map_err(io_err)?;
    }
    let session_ref = session.map(|p| json!({"path": p.display().to_string(), "run_id": r.run_id}));
    let mut data = json!({
        "prompt": r.prompt_id,
        "provider": r.provider,
        "max_tokens": r.params.max_tokens,
        "finish_reason": r.finish,
        "raw_reason": r.raw_reason,
        "usage": r.usage,
        "error": r.error,
        "text": r.text,
        "first_token_ms": r.first_token_ms,
        "total_ms": r.total_ms,
        "structured_path": r.structured_path,
        "greedy": r.params.temperature == Some(0.0),
        "params": r.params,
        "adjustments": r.adjustments,
        "loop": crate::run::loop_of(r),
        "checks": r.checks,
        "analysis": o.analysis.data(&r.text),
        "session": session_ref,
    });
    if !r.thinking.is_empty() {
        data["thinking"] = Value::String(r.thinking.clone());
    }
    if let Some(p) = &o.parsed {
        data["parsed"] = p.clone();
    }
    if let Some(e) = &o.structured_error {
        data["structured_output_invalid"] = serde_json::to_value(e).unwrap_or(Value::Null);
    }
    let mut rec = json!({
        "type": "result",
        "finish_reason": r.finish,
        "usage": r.usage,
        "items": o.analysis.items().len(),
        "analysis": o.analysis.summary(),
        "session": data["session"],
    });
    if let Some(e) = &r.error {
        rec["error"] = json!(e);
    }
    out.record(&rec).map_err(io_err)?;
    out.pretty(&pretty(o)).map_err(io_err)?;
    if let Some(e) = &r.error {
        out.warn(format!(
            "the provider failed mid-run; what arrived is kept and analysed: {e}"
        ))
        .map_err(io_err)?;
    }
    for a in &r.adjustments {
        out.warn(a.describe()).map_err(io_err)?;
    }
    for m in &r.checks {
        out.warn(m.describe()).map_err(io_err)?;
    }
    if let Some(note) = crate::run::budget_note(r).filter(|n| n.contains("spent on reasoning")) {
        out.warn(note).map_err(io_err)?;
    }
    Ok(data)
}

fn pretty(o: &Outcome) -> String {
    use std::fmt::Write as _;

    use rust_i18n::t;
    let r = &o.record;
    let mut s = String::new();
    let _ = writeln!(s, "{}", r.text);
    let _ = writeln!(s, "---");
    let _ = writeln!(
        s,
        "{}: {}  {}: {}  {}: {} ms  {}: {} ({})",
        t!("pretty.finish"),
        r.finish.as_str(),
        t!("pretty.tokens"),
        r.usage.completion_tokens.map_or_else(|| "?".into(), |n| n.to_string()),
        t!("pretty.time"),
        r.total_ms,
        t!("pretty.provider"),
        r.provider.name,
        r.provider.model
    );
    for note in crate::run::budget_note(r).into_iter().chain(crate::run::cache_note(r)) {
        let _ = writeln!(s, "{note}");
    }
    match &o.analysis {
        crate::run::Analysis::Json(a) => s.push_str(&super::parse::pretty_json(a)),
        crate::run::Analysis::Jsonl(a) => s.push_str(&super::parse::pretty_jsonl(a)),
        crate::run::Analysis::Text => {}
    }
    s
}
