//! The command line: `cutline` with no subcommand opens the workbench;
//! subcommands run headless on the output contract in `out.rs` (JSONL by
//! default, `--output json` for one envelope, `--output pretty` for people).

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use serde_json::Value;

pub mod budget;
pub mod compare;
pub mod eval;
pub mod input;
pub mod manifest;
pub mod migrate;
pub mod migrate_check;
pub mod models;
pub mod out;
pub mod params;
pub mod parse;
pub mod probe;
pub mod prompts;
pub mod render;
pub mod replay;
pub mod report;
pub mod run;
pub mod sessions;
pub mod setup;
pub mod sweep;

use out::{Category, CliError, Format, Out};

const AFTER_HELP: &str = "Output: data commands print JSONL by default (a preamble line \
{\"_format\":\"jsonl\",\"_schema\":\"cutline.<command>/1\",\"_version\":1}, then one record per line). \
Use --output json (or --no-stream) for one envelope {ok,data,error,warnings,meta}, \
--output pretty for people. `cutline --manifest` lists every command.";

/// cutline: author LLM extraction prompts and test how their output survives truncation.
#[derive(Debug, Parser)]
#[command(name = "cutline", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    /// Directory of prompt configs.
    #[arg(long, global = true, env = "CUTLINE_PROMPTS", default_value = "prompts")]
    pub prompts: PathBuf,
    /// Directory of recorded sessions.
    #[arg(long, global = true, env = "CUTLINE_SESSIONS", default_value = "sessions")]
    pub sessions: PathBuf,
    /// Output format of data commands. Default: JSONL (preamble line + one record per line).
    #[arg(long, global = true, value_enum, default_value_t = Format::Jsonl)]
    pub output: Format,
    /// Alias of `--output json`: one buffered envelope instead of JSONL.
    #[arg(long, global = true)]
    pub no_stream: bool,
    /// Print the command manifest (every command, its streaming default and output schema) and exit.
    #[arg(long)]
    pub manifest: bool,
    /// Provider for the workbench (a configured name, `local` or `replay`).
    #[arg(long)]
    pub provider: Option<String>,
    /// Language of the text for people (the workbench and `--output
    /// pretty`): en, zh or es. Default: from LC_ALL, LC_MESSAGES, LANG.
    /// Machine output is never translated.
    #[arg(long, global = true, value_name = "LANG")]
    pub lang: Option<String>,
    /// The subcommand; none opens the workbench.
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The effective output format (`--no-stream` means `json`).
    pub fn format(&self) -> Format {
        if self.no_stream { Format::Json } else { self.output }
    }
}

/// Headless subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the prompt configs.
    Prompts(prompts::Args),
    /// Render a prompt with variables or a named sample input.
    Render(render::Args),
    /// Analyse a response as text, json (strict + array salvage) or jsonl.
    Parse(parse::Args),
    /// Items recovered at every token cut by strict JSON, salvage and JSONL.
    Sweep(sweep::Args),
    /// Run a prompt on a model, analyse the answer and record it in a session.
    Run(run::Args),
    /// Replay a recorded run, cut at another max-token limit.
    Replay(replay::Args),
    /// List recorded sessions.
    Sessions(sessions::Args),
    /// Install the local model (llama-server + Gemma 3 270M).
    Setup(setup::Args),
    /// Migrate a JSON-array prompt to JSONL (schema per line, template rewritten, places to check flagged).
    Migrate(migrate::Args),
    /// Compare two answers item by item (sessions or response files), optionally against a gold set.
    Compare(compare::Args),
    /// Batch evaluation: prompts × inputs × max-token limits, concurrent and resumable, with a summary table.
    Eval(eval::Args),
    /// The smallest max-token limit that keeps a target share of the uncut answer's items.
    Budget(budget::Args),
    /// Write a self-contained HTML report (or one SVG chart) of a session or some of its runs.
    Report(report::Args),
    /// Find out what a configured provider's model accepts, with at most eight tiny requests; kept for later runs.
    Probe(probe::Args),
    /// What cutline learned of each model (Models API, refusals, probes); --forget drops it.
    Models(models::Args),
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Self::Prompts(_) => "prompts",
            Self::Render(_) => "render",
            Self::Parse(_) => "parse",
            Self::Sweep(_) => "sweep",
            Self::Run(_) => "run",
            Self::Replay(_) => "replay",
            Self::Sessions(_) => "sessions",
            Self::Setup(_) => "setup",
            Self::Migrate(_) => "migrate",
            Self::Compare(_) => "compare",
            Self::Eval(_) => "eval",
            Self::Report(_) => "report",
            Self::Budget(_) => "budget",
            Self::Probe(_) => "probe",
            Self::Models(_) => "models",
        }
    }
}

/// An IO failure writing output (a closed pipe, a full disk).
pub fn io_err(e: &std::io::Error) -> CliError {
    CliError::new(Category::Internal, format!("writing output: {e}"))
}

/// Parse the process arguments and run; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { Category::Usage.exit_code() } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match crate::i18n::Lang::choose(cli.lang.as_deref(), |v| std::env::var(v).ok()) {
        Ok(lang) => lang.apply(),
        Err(e) => {
            eprintln!("error: {e}");
            return Category::Usage.exit_code();
        }
    }
    // The workbench logs to its file instead (`tui::main`).
    if cli.command.is_some() {
        crate::logging::to_stderr();
    }
    if let Some(path) = crate::llm::learned::file_from_env(|v| std::env::var_os(v)) {
        crate::llm::learned::persist_to(path);
    }
    let code = dispatch(&cli, std::io::stdout().lock());
    crate::llm::local::shutdown();
    code
}

/// Run a parsed command line, writing to `w`; returns the exit code.
pub fn dispatch<W: Write>(cli: &Cli, w: W) -> i32 {
    if cli.manifest {
        let mut o = Out::new(w, Format::Json, "manifest");
        return match o.raw(&manifest::manifest()) {
            Ok(()) => 0,
            Err(_) => 1,
        };
    }
    let Some(command) = &cli.command else {
        return workbench(cli);
    };
    let mut out = Out::new(w, cli.format(), command.name());
    let result: Result<Value, CliError> = match command {
        Command::Prompts(a) => prompts::run(a, cli, &mut out),
        Command::Render(a) => render::run(a, cli, &mut out),
        Command::Parse(a) => parse::run(a, cli, &mut out),
        Command::Sweep(a) => sweep::run(a, cli, &mut out),
        Command::Run(a) => run::run(a, cli, &mut out),
        Command::Replay(a) => replay::run(a, cli, &mut out),
        Command::Sessions(a) => sessions::run(a, cli, &mut out),
        Command::Setup(a) => setup::run(a, cli, &mut out),
        Command::Migrate(a) => migrate::run(a, cli, &mut out),
        Command::Compare(a) => compare::run(a, cli, &mut out),
        Command::Eval(a) => eval::run(a, cli, &mut out),
        Command::Report(a) => report::run(a, cli, &mut out),
        Command::Budget(a) => budget::run(a, cli, &mut out),
        Command::Probe(a) => probe::run(a, cli, &mut out),
        Command::Models(a) => models::run(a, cli, &mut out),
    };
    // When stdout itself fails (a closed pipe, a full disk), stderr says so
    // and the exit code is not 0, in every output format.
    match result {
        Ok(data) => match out.finish(&data) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {}", io_err(&e));
                Category::Internal.exit_code()
            }
        },
        Err(err) => {
            let code = err.category.exit_code();
            if out.fail(&err).is_err() {
                eprintln!("error: {err}");
            }
            code
        }
    }
}

fn workbench(cli: &Cli) -> i32 {
    crate::tui::main(crate::tui::TuiOptions {
        prompts_dir: cli.prompts.clone(),
        sessions_dir: cli.sessions.clone(),
        provider: cli.provider.clone(),
    })
}
