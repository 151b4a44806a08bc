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
use super::{Cli, io_err};
use crate::llm::structured::Path;
use crate::llm::{self, ErrorKind, LlmError, Provider, Timeouts};
use crate::prompt::PromptConfig;
use crate::run::{Outcome, Spec};
use crate::session::Recorder;

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt id (from the prompts dir) or path.
    pub prompt: String,
    /// Provider: `local` (the embedded llama-server), `replay` (a recorded
    /// run of this prompt and input from the sessions dir), or a configured name.
    #[arg(long, default_value = "local")]
    pub provider: String,
    /// Max tokens to generate; omit for no limit.
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
    /// support, the schema added to the prompt, or off (default: off; a
    /// provider's `structured` setting can force it).
    #[arg(long, value_enum)]
    pub structured: Option<StructuredArg>,
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

/// The structured path a run takes on provider `name` when `requested`.
pub fn structured_for(name: &str, requested: Option<StructuredArg>) -> Option<Path> {
    let req = match requested {
        None | Some(StructuredArg::Off) => Path::None,
        Some(StructuredArg::Native) => Path::Native,
        Some(StructuredArg::Prompt) => Path::Prompt,
    };
    match name {
        // llama-server's /completion takes a JSON schema natively.
        "local" => (req != Path::None).then_some(req),
        "replay" => None,
        other => match crate::llm::config::Config::load()
            .ok()
            .and_then(|c| c.get(other).cloned())
        {
            Some(p) => p.structured_path((req != Path::None).then_some(req)),
            None => (req != Path::None).then_some(req),
        },
    }
}

/// A provider by name for `prompt` with `vars`.
pub async fn provider_for(
    name: &str,
    prompt: &PromptConfig,
    vars: &serde_json::Map<String, Value>,
    sessions: &std::path::Path,
) -> Result<Box<dyn Provider>, LlmError> {
    match name {
        "local" => Ok(Box::new(llm::local::provider(Timeouts::default()).await?)),
        "replay" => {
            let (rec, source) = crate::session::find_recording(sessions, &prompt.id, Some(vars))
                .ok_or_else(|| {
                    LlmError::new(
                        ErrorKind::BadRequest,
                        format!(
                            "no recorded run of prompt {:?} with these variables in {}; record one with `cutline run {} --provider local`",
                            prompt.id,
                            sessions.display(),
                            prompt.id
                        ),
                    )
                })?;
            Ok(Box::new(llm::replay::Replay {
                transcript: rec.transcript(),
                original: rec.provider.clone(),
                source,
            }))
        }
        other => {
            let cfg =
                crate::llm::config::Config::load().map_err(|e| LlmError::new(ErrorKind::BadRequest, e.to_string()))?;
            let p = cfg.get(other).ok_or_else(|| {
                let known: Vec<&str> = cfg.providers.iter().map(|p| p.name.as_str()).collect();
                LlmError::new(
                    ErrorKind::BadRequest,
                    format!(
                        "unknown provider {other:?}: use `local`, `replay` or one configured in cutline.toml (configured: {})",
                        if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                    ),
                )
            })?;
            crate::llm::config::build(p)
        }
    }
}

/// A provider failure as a CLI error (`setup_required` when the local model is missing).
pub fn llm_err(e: &LlmError) -> CliError {
    let cat = if e.kind == ErrorKind::SetupRequired {
        Category::SetupRequired
    } else {
        Category::ProviderError
    };
    CliError::new(cat, e.to_string())
}

/// Run `run`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let cfg = crate::store::resolve(&args.prompt, &cli.prompts)
        .map_err(|e| CliError::new(Category::ConfigInvalid, e.to_string()))?;
    let vars = super::input::vars(&cfg, args.input.as_deref(), &args.vars, args.vars_file.as_deref())?;
    let spec = Spec {
        prompt: cfg,
        vars,
        max_tokens: args.max_tokens,
        temperature: None,
        structured: structured_for(&args.provider, args.structured),
    };
    let mut recorder = if args.no_record {
        None
    } else {
        let stem = args
            .session
            .clone()
            .unwrap_or_else(|| format!("{}-{}", spec.prompt.id, crate::session::now_ms()));
        Some(
            open_session(&cli.sessions, &stem)
                .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", cli.sessions.display())))?,
        )
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("tokio runtime: {e}")))?;
    let outcome = rt.block_on(async {
        let provider = provider_for(&args.provider, &spec.prompt, &spec.vars, &cli.sessions)
            .await
            .map_err(|e| llm_err(&e))?;
        let mut write_err = None;
        let result = crate::run::execute(provider.as_ref(), &spec, recorder.as_mut(), |ev, _| {
            if let llm::Event::Delta { text, .. } = ev
                && write_err.is_none()
                && let Err(e) = out.record(&json!({"type": "delta", "text": text}))
            {
                write_err = Some(e);
            }
        })
        .await
        .map_err(|e| CliError::new(Category::ConfigInvalid, e.to_string()))?;
        if let Some(e) = write_err {
            return Err(io_err(&e));
        }
        Ok::<Outcome, CliError>(result)
    })?;
    drop(rt);
    let data = report(&outcome, recorder.as_ref().map(Recorder::path), out)?;
    // A provider failure is exit 5 (`provider_error`), with everything that
    // arrived before it still in the error's detail, analysed and recorded.
    match &outcome.record.error {
        Some(e) => {
            let mut err = llm_err(e);
            err.message = format!("{} (what arrived is kept and recorded)", err.message);
            err.detail = Some(data);
            Err(err)
        }
        None => Ok(data),
    }
}

/// Open (append to) an existing session by id, or create a new one.
pub fn open_session(dir: &std::path::Path, stem: &str) -> std::io::Result<Recorder> {
    let existing = dir.join(format!("{stem}.jsonl"));
    if existing.is_file() {
        Recorder::open(&existing)
    } else {
        Recorder::create(dir, stem)
    }
}

/// Print a finished run's records and build its envelope data.
pub fn report<W: Write>(o: &Outcome, session: Option<&std::path::Path>, out: &mut Out<W>) -> Result<Value, CliError> {
    let r = &o.record;
    for item in o.analysis.items() {
        out.record(&json!({"type": "item", "value": item}))
            .map_err(|e| io_err(&e))?;
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
        "analysis": o.analysis.data(&r.text),
        "session": session_ref,
    });
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
    out.record(&rec).map_err(|e| io_err(&e))?;
    out.pretty(&pretty(o)).map_err(|e| io_err(&e))?;
    if let Some(e) = &r.error {
        out.warn(format!(
            "the provider failed mid-run; what arrived is kept and analysed: {e}"
        ))
        .map_err(|e| io_err(&e))?;
    }
    Ok(data)
}

fn pretty(o: &Outcome) -> String {
    use std::fmt::Write as _;
    let r = &o.record;
    let mut s = String::new();
    let _ = writeln!(s, "{}", r.text);
    let _ = writeln!(s, "---");
    let _ = writeln!(
        s,
        "finish: {}  tokens: {}  time: {} ms  provider: {} ({})",
        r.finish.as_str(),
        r.usage.completion_tokens.map_or_else(|| "?".into(), |n| n.to_string()),
        r.total_ms,
        r.provider.name,
        r.provider.model
    );
    match &o.analysis {
        crate::run::Analysis::Json(a) => s.push_str(&super::parse::pretty_json(a)),
        crate::run::Analysis::Jsonl(a) => s.push_str(&super::parse::pretty_jsonl(a)),
        crate::run::Analysis::Text => {}
    }
    s
}
