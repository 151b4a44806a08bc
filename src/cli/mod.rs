//! The command line: `cutline` with no subcommand opens the workbench;
//! subcommands run headless on the output contract in `out.rs` (JSONL by
//! default, `--output json` for one envelope, `--output pretty` for people).

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use serde_json::Value;

pub mod batches;
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
pub mod tg;

use out::{Category, CliError, Format, Out};

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn command_names_are_the_parsers_subcommands() {
        let names: Vec<String> = super::Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        assert_eq!(names, super::COMMAND_NAMES);
    }
}

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
    /// Print the shell completion script for SHELL and exit (e.g. `cutline
    /// --completions bash > ~/.local/share/bash-completion/completions/cutline`).
    #[arg(long, value_name = "SHELL")]
    pub completions: Option<clap_complete::Shell>,
    /// Print the man page (roff) and exit (`cutline --man > cutline.1`).
    #[arg(long)]
    pub man: bool,
    /// Provider for the workbench (a configured name, `local` or `replay`).
    #[arg(long)]
    pub provider: Option<String>,
    /// Language of the text for people (the workbench and `--output
    /// pretty`): en, zh or es. Default: from LC_ALL, LC_MESSAGES, LANG.
    /// Machine output is never translated.
    #[arg(long, global = true, value_name = "LANG")]
    pub lang: Option<String>,
    /// The workspace's system prompt, for single TrustGraph prompts (one
    /// template, no system of their own), which TrustGraph renders with
    /// their workspace's. Without it: the system the prompts directory's
    /// bundles share.
    #[arg(long, global = true, value_name = "FILE")]
    pub system: Option<PathBuf>,
    /// Which TrustGraph loader reads bundles: `prefix` (2.8.14 and later: every
    /// `template.<id>` key) or `index` (2.8.13 and older: only the ids in
    /// `template-index`).
    #[arg(long, global = true, value_enum, default_value_t = TgLoaderArg::Prefix)]
    pub tg_loader: TgLoaderArg,
    /// The Python TrustGraph's prompt service runs on (3.13 in its
    /// containers, or 3.11): its nesting limits decide which responses fail
    /// whole, in every verdict cutline gives, the workbench's included.
    #[arg(long, global = true, default_value = "3.13")]
    pub tg_python: crate::output::tg::TgPython,
    /// The subcommand; none opens the workbench.
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The effective output format (`--no-stream` means `json`).
    pub fn format(&self) -> Format {
        if self.no_stream { Format::Json } else { self.output }
    }

    /// The prompts directory as the TrustGraph workspace the options
    /// describe; a `--system` file that cannot be read or is not UTF-8 is an
    /// error naming it.
    pub fn workspace(&self) -> Result<crate::store::Workspace, CliError> {
        let system = match &self.system {
            None => None,
            Some(path) => {
                let label = path.display().to_string();
                let bytes = input::read_all(&label)?;
                let text = String::from_utf8(bytes).map_err(|e| {
                    let at = e.utf8_error().valid_up_to();
                    CliError::new(
                        Category::ConfigInvalid,
                        format!("{label}: --system: the file is not UTF-8 (invalid byte at offset {at})"),
                    )
                })?;
                Some((label, text))
            }
        };
        Ok(crate::store::Workspace {
            dir: self.prompts.clone(),
            loader: self.tg_loader.into(),
            system,
        })
    }
}

/// `--tg-loader`: the TrustGraph release whose loader reads bundles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TgLoaderArg {
    /// TrustGraph 2.8.14 and later (the current releases): every `template.<id>` key.
    Prefix,
    /// TrustGraph 2.8.13 and older: the ids `template-index` lists.
    Index,
}

impl From<TgLoaderArg> for crate::prompt::TgLoader {
    fn from(a: TgLoaderArg) -> Self {
        match a {
            TgLoaderArg::Prefix => Self::Prefix,
            TgLoaderArg::Index => Self::Indexed,
        }
    }
}

/// Headless subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the prompt configs.
    #[command(after_long_help = "Examples:\n  cutline prompts --output pretty\n  cutline --prompts tg/default prompts")]
    Prompts(prompts::Args),
    /// Render a prompt with variables or a named sample input.
    #[command(
        after_long_help = "Examples:\n  cutline render extract-definitions --input photosynthesis\n  cutline render extract-definitions --var text='A delta is a landform.'"
    )]
    Render(render::Args),
    /// Analyse a response as text, json (strict + array salvage) or jsonl.
    #[command(
        after_long_help = "Examples:\n  cutline parse answer.txt --as jsonl --prompt extract-definitions-jsonl\n  cutline parse - --as json --schema schema.json < answer.txt"
    )]
    Parse(parse::Args),
    /// Items recovered at every token cut by strict JSON, salvage and JSONL.
    #[command(after_long_help = "Examples:\n  cutline sweep --session demo#4 --output pretty")]
    Sweep(sweep::Args),
    /// Run a prompt on a model, analyse the answer and record it in a session.
    #[command(
        after_long_help = "Examples:\n  cutline run extract-definitions-jsonl --provider replay --max-tokens 256\n  cutline run extract-definitions --provider local --max-tokens 512 --output pretty"
    )]
    Run(run::Args),
    /// Replay a recorded run, cut at another max-token limit.
    #[command(after_long_help = "Examples:\n  cutline replay demo#4 --max-tokens 128")]
    Replay(replay::Args),
    /// List recorded sessions.
    #[command(after_long_help = "Examples:\n  cutline sessions --output pretty")]
    Sessions(sessions::Args),
    /// Install the local model (llama-server + Gemma 3 270M).
    #[command(after_long_help = "Examples:\n  cutline setup local")]
    Setup(setup::Args),
    /// Migrate a JSON-array prompt to JSONL (schema per line, template rewritten, places to check flagged).
    #[command(
        after_long_help = "Examples:\n  cutline migrate extract-definitions --output pretty\n  cutline migrate extract-definitions --check --provider local"
    )]
    Migrate(migrate::Args),
    /// Compare two answers item by item (sessions or response files), optionally against a gold set.
    #[command(
        after_long_help = "Examples:\n  cutline compare demo#3 demo#4 --gold prompts/gold/extract-definitions.jsonl"
    )]
    Compare(compare::Args),
    /// Batch evaluation: prompts × inputs × max-token limits, concurrent and resumable, with a summary table.
    #[command(
        after_long_help = "Examples:\n  cutline eval --prompt extract-definitions --max-tokens 128,256,none --provider replay --output pretty"
    )]
    Eval(eval::Args),
    /// The smallest max-token limit that keeps a target share of the uncut answer's items.
    #[command(after_long_help = "Examples:\n  cutline budget extract-definitions-jsonl --provider replay")]
    Budget(budget::Args),
    /// Write a self-contained HTML report (or one SVG chart) of a session or some of its runs.
    #[command(after_long_help = "Examples:\n  cutline report demo -o demo.html")]
    Report(report::Args),
    /// Find out what a configured provider's model accepts, with at most eight tiny requests; kept for later runs.
    #[command(after_long_help = "Examples:\n  cutline probe my-openai")]
    Probe(probe::Args),
    /// What cutline learned of each model (Models API, refusals, probes); --forget drops it.
    #[command(
        after_long_help = "Examples:\n  cutline models --output pretty\n  cutline models --forget https://api.openai.com/v1"
    )]
    Models(models::Args),
    /// The provider batches of batch evals, with their states; --cancel cancels the running ones.
    #[command(after_long_help = "Examples:\n  cutline batches --output pretty\n  cutline batches my-eval --cancel")]
    Batches(batches::Args),
    /// A running TrustGraph deployment's prompts: pull, diff, push (checked as its loader would), undo.
    #[command(
        after_long_help = "Examples:\n  cutline tg pull -u http://localhost:8888/ --output pretty\n  cutline tg diff --output pretty\n  cutline tg push --dry-run\n  cutline tg undo"
    )]
    Tg(tg::Args),
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
            Self::Batches(_) => "batches",
            Self::Tg(_) => "tg",
        }
    }
}

/// An IO failure writing output (a closed pipe, a full disk), kept as
/// its source.
pub fn io_err(e: std::io::Error) -> CliError {
    CliError::new(Category::Internal, format!("writing output: {e}")).because(e)
}

/// Parse the process arguments and run; returns the exit code.
pub fn main() -> i32 {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) if e.use_stderr() => return usage_failure(&e, &args, std::io::stdout().lock()),
        // `--help`, `--version`: not failures.
        Err(e) => {
            let _ = e.print();
            return 0;
        }
    };
    match crate::i18n::Lang::choose(cli.lang.as_deref(), |v| std::env::var(v).ok()) {
        Ok(lang) => lang.apply(),
        Err(e) => {
            let name = cli.command.as_ref().map_or("cutline", Command::name);
            let out = Out::new(std::io::stdout().lock(), cli.format(), name);
            let err = CliError::caused(Category::Usage, e);
            if out.fail(&err).is_err() {
                out::say("error", &err.message);
            }
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
    if let Some(shell) = cli.completions {
        return print_generated(w, |buf| {
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "cutline", buf);
            Ok(())
        });
    }
    if cli.man {
        return print_generated(w, |buf| {
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(buf)
        });
    }
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
        Command::Batches(a) => batches::run(a, cli, &mut out),
        Command::Tg(a) => tg::run(a, cli, &mut out),
    };
    // When stdout itself fails (a closed pipe, a full disk), stderr says so
    // and the exit code is not 0, in every output format.
    match result {
        Ok(data) => match out.finish(&data) {
            Ok(()) => 0,
            Err(e) => {
                out::say("error", &io_err(e).message);
                Category::Internal.exit_code()
            }
        },
        Err(err) => {
            let code = err.category.exit_code();
            if out.fail(&err).is_err() {
                out::say("error", &err.message);
            }
            code
        }
    }
}

/// Write what `gen` generates (a completion script, the man page) as is:
/// text for a shell or `man`, not a data command's output.
fn print_generated<W: Write>(mut w: W, generate: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> i32 {
    let mut buf = Vec::new();
    match generate(&mut buf)
        .and_then(|()| w.write_all(&buf))
        .and_then(|()| w.flush())
    {
        Ok(()) => 0,
        Err(e) => {
            out::say("error", &io_err(e).message);
            Category::Internal.exit_code()
        }
    }
}

/// A command line the parser refused, on the output contract: the format
/// and command are read from the arguments as far as they parse (clap's
/// lenient mode), and the error is one `usage` failure in that format (an
/// envelope, a JSONL error record with clap's text on stderr, or that text
/// alone); exit 2.
pub fn usage_failure<W: Write>(e: &clap::Error, args: &[std::ffi::OsString], w: W) -> i32 {
    let (format, command) = lenient_parse(args);
    let text = e.render().to_string();
    let message = text
        .split("\n\nFor more information")
        .next()
        .unwrap_or(&text)
        .trim()
        .trim_start_matches("error: ");
    let mut err = CliError::new(Category::Usage, message);
    err.detail = Some(serde_json::json!({"kind": e.kind().to_string()}));
    match format {
        Format::Json => {
            if Out::new(w, format, command).fail(&err).is_err() {
                let _ = e.print();
            }
        }
        Format::Jsonl => {
            let mut out = Out::new(w, format, command);
            // `fail` puts one line on stderr; clap's own text says more.
            let _ = out.record(&serde_json::json!({"type": "error", "category": err.category, "message": err.message, "detail": err.detail}));
            let _ = e.print();
        }
        Format::Pretty => {
            let _ = e.print();
        }
    }
    Category::Usage.exit_code()
}

/// The output format and the subcommand a refused command line asked for:
/// the format from `--output F`, `--output=F` and `--no-stream` wherever
/// they stand (the parser stops at the first error, which may come before
/// them), the command as far as clap can tell with errors ignored; else
/// `jsonl` and `cutline`.
fn lenient_parse(args: &[std::ffi::OsString]) -> (Format, &'static str) {
    use clap::{CommandFactory, ValueEnum};
    let mut format = Format::Jsonl;
    let mut no_stream = false;
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(w) = words.next() {
        let value = match w.as_ref() {
            "--" => break,
            "--no-stream" => {
                no_stream = true;
                continue;
            }
            "--output" => words.next(),
            other => other.strip_prefix("--output=").map(|v| v.to_owned().into()),
        };
        if let Some(f) = value.and_then(|v| Format::from_str(&v, false).ok()) {
            format = f;
        }
    }
    if no_stream {
        format = Format::Json;
    }
    let command = Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(args)
        .ok()
        .and_then(|m| {
            let name = m.subcommand_name()?;
            COMMAND_NAMES.iter().find(|c| **c == name).copied()
        })
        .unwrap_or("cutline");
    (format, command)
}

/// Every subcommand's name (checked against the parser by a test).
pub const COMMAND_NAMES: [&str; 17] = [
    "prompts", "render", "parse", "sweep", "run", "replay", "sessions", "setup", "migrate", "compare", "eval",
    "budget", "report", "probe", "models", "batches", "tg",
];

fn workbench(cli: &Cli) -> i32 {
    let workspace = match cli.workspace() {
        Ok(w) => w,
        Err(e) => {
            out::say("cutline", &e.message);
            return e.category.exit_code();
        }
    };
    crate::tui::main(crate::tui::TuiOptions {
        workspace,
        tg_python: cli.tg_python,
        sessions_dir: cli.sessions.clone(),
        provider: cli.provider.clone(),
    })
}
