//! `cutline migrate PROMPT [--write PATH] [--format toml|trustgraph] [--id ID]`
//!
//! Migrates a JSON-array prompt to JSONL (see `prompt::migrate`). JSONL
//! records: one `unconvertible` per schema part with no per-line form, one
//! `flag` per template place to check by hand (with its line), then one
//! `migrated` with the new prompt's text. The envelope's `data` is
//! `{id, format, toml | trustgraph, flags, unconvertible, written}`; pretty
//! prints the migrated file. `--write PATH` writes it atomically (temp file +
//! rename) and refuses when part of the schema was not converted. `--check`
//! runs both prompts on the sample inputs and compares their items (see
//! `migrate_check`).

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};

/// Arguments of `migrate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt id (from the prompts dir) or path; a `json` prompt.
    pub prompt: String,
    /// Write the migrated prompt to this file (atomically).
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// Format of the migrated prompt.
    #[arg(long, value_enum, default_value_t = MigrateFormat::Toml)]
    pub format: MigrateFormat,
    /// Id of the migrated prompt (default: the source id with `-jsonl`).
    #[arg(long)]
    pub id: Option<String>,
    /// Run the original and the migrated prompt on the sample inputs and
    /// report whether they extract the same items (exit 8 when not).
    #[arg(long)]
    pub check: bool,
    /// With --check: `local`, `replay` (a recorded run of exactly the
    /// rendered prompt) or a provider configured in cutline.toml.
    #[arg(long, default_value = "local", requires = "check")]
    pub provider: String,
    /// With --check: the max-token limit of both runs (generous by
    /// default so neither is cut; `none` for no limit).
    #[arg(long, requires = "check", value_parser = parse_limit)]
    pub max_tokens: Option<Limit>,
    /// With --check: only this sample input (default: every one).
    #[arg(long, requires = "check")]
    pub input: Option<String>,
    /// With --check: key fields that identify an item (default: the
    /// per-line schema's required string fields).
    #[arg(long = "key", value_name = "FIELD", requires = "check")]
    pub keys: Vec<String>,
    /// With --check: do not record the runs in a session.
    #[arg(long, requires = "check")]
    pub no_record: bool,
}

/// A max-token limit on the command line: a number or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit(pub Option<u32>);

fn parse_limit(s: &str) -> Result<Limit, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(Limit(None));
    }
    match s.parse::<u32>() {
        Ok(0) | Err(_) => Err(format!(
            "{s:?} is not a max-token limit: use a positive number or `none`"
        )),
        Ok(n) => Ok(Limit(Some(n))),
    }
}

/// Output formats of `migrate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MigrateFormat {
    /// cutline TOML.
    Toml,
    /// A TrustGraph config bundle holding the one prompt.
    Trustgraph,
}

/// Run `migrate`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let src = crate::store::resolve(&args.prompt, &cli.prompts)
        .map_err(|e| CliError::new(Category::ConfigInvalid, e.to_string()))?;
    let m = crate::prompt::migrate(&src, args.id.as_deref()).map_err(|e| CliError::new(Category::Usage, e))?;
    let (key, text) = match args.format {
        MigrateFormat::Toml => ("toml", crate::prompt::to_toml(&m.config)),
        MigrateFormat::Trustgraph => {
            let bundle = crate::prompt::to_trustgraph_bundle(std::slice::from_ref(&m.config), &m.config.system);
            let mut s = serde_json::to_string_pretty(&bundle).unwrap_or_default();
            s.push('\n');
            ("trustgraph", s)
        }
    };
    for u in &m.unconvertible {
        out.record(&json!({"type": "unconvertible", "pointer": u.pointer, "message": u.message}))
            .map_err(|e| io_err(&e))?;
        if out.format() == super::out::Format::Pretty {
            eprintln!(
                "unconvertible: {} {}",
                if u.pointer.is_empty() { "/" } else { &u.pointer },
                u.message
            );
        }
    }
    for f in &m.flags {
        out.record(&json!({"type": "flag", "part": f.part, "line": f.line, "message": f.message}))
            .map_err(|e| io_err(&e))?;
        if out.format() == super::out::Format::Pretty {
            eprintln!("flag: {} line {}: {}", f.part, f.line, f.message);
        }
    }
    let mut written = None;
    if let Some(path) = &args.write {
        if !m.unconvertible.is_empty() {
            let mut err = CliError::new(
                Category::ConfigInvalid,
                format!(
                    "not written: {} part(s) of the schema of `{}` have no per-line form",
                    m.unconvertible.len(),
                    src.id
                ),
            );
            err.detail = Some(json!({"unconvertible": m.unconvertible, "flags": m.flags}));
            return Err(err);
        }
        crate::store::write_atomic(path, text.as_bytes())
            .map_err(|e| CliError::new(Category::InputError, format!("{}: cannot write: {e}", path.display())))?;
        written = Some(path.display().to_string());
    }
    out.record(&json!({"type": "migrated", "id": m.config.id, "format": key, key: text, "written": written}))
        .map_err(|e| io_err(&e))?;
    if !args.check {
        out.pretty(&text).map_err(|e| io_err(&e))?;
    }
    let mut data = json!({
        "id": m.config.id,
        "format": key,
        key: text,
        "flags": m.flags,
        "unconvertible": m.unconvertible,
        "written": written,
    });
    if args.check {
        let check = super::migrate_check::CheckArgs {
            provider: &args.provider,
            max_tokens: args
                .max_tokens
                .map_or(Some(super::migrate_check::DEFAULT_MAX_TOKENS), |l| l.0),
            input: args.input.as_deref(),
            keys: &args.keys,
            record: !args.no_record,
        };
        match super::migrate_check::run(&src, &m.config, &check, cli, out) {
            Ok(c) => data["check"] = c,
            Err(mut e) => {
                if let Some(detail) = e.detail.take() {
                    data["check"] = detail;
                }
                e.detail = Some(data);
                return Err(e);
            }
        }
    }
    Ok(data)
}
