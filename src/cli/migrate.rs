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
use crate::prompt::PromptConfig;

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
    /// The source's own id migrates in place: a TrustGraph bundle export
    /// then replaces the prompt where it stands, so clients keep calling it.
    #[arg(long)]
    pub id: Option<String>,
    /// Migrate (and write) even when the schema is neither an array nor an
    /// object of arrays, or parts of it have no per-line form.
    #[arg(long)]
    pub force: bool,
    /// Run the original and the migrated prompt on the sample inputs and
    /// report whether they extract the same items (exit 8 when not).
    #[arg(long)]
    pub check: bool,
    /// With --check: `local`, `replay` (the recording of exactly each
    /// request, under any prompt id) or a provider configured in cutline.toml.
    #[arg(long, default_value = "local", requires = "check")]
    pub provider: String,
    /// With --check: the max-token limit of both runs (generous by
    /// default so neither is cut; `none` for no limit).
    #[arg(long, requires = "check", value_parser = parse_limit)]
    pub max_tokens: Option<Limit>,
    /// With --check: only this sample input (default: every one).
    #[arg(long, requires = "check")]
    pub input: Option<String>,
    /// With --check: a JSON object of variables (any JSON type) laid over
    /// every sample input, or the only input when the prompt has none.
    #[arg(long = "vars", value_name = "FILE.json", requires = "check")]
    pub vars_file: Option<PathBuf>,
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
    /// TrustGraph, in the source's shape: a single prompt stays a single
    /// prompt; a prompt from a bundle (config store or configurator) gives
    /// the whole bundle with the prompt added or replaced in place; a TOML
    /// prompt gives a config-store bundle of the whole workspace (see
    /// [`workspace_bundle`]).
    Trustgraph,
}

/// The config-store bundle a TOML prompt's migration deploys as: every
/// prompt of the workspace with `m` added (or replacing its id), so that
/// merged into a live config store it serves both loaders — current
/// TrustGraph reads the `template.<id>` keys, 2.8.13 and older read a
/// `template-index` that lists every prompt and names only keys the bundle
/// carries (a bundle of one would un-index every other prompt there).
/// TrustGraph has one system per workspace: `m`'s, or the workspace's when
/// `m` has none; the warnings say what did not fit.
fn workspace_bundle(ws: &crate::store::Workspace, m: &crate::prompt::PromptConfig) -> (Value, Vec<String>) {
    let (mut prompts, errors, _) = ws.load();
    let mut warnings: Vec<String> = errors
        .iter()
        .map(|e| format!("{e}: not in the exported bundle"))
        .collect();
    prompts.retain(|p| p.id != m.id);
    let system = if m.system.is_empty() {
        prompts
            .iter()
            .map(|p| p.system.clone())
            .find(|s| !s.is_empty())
            .unwrap_or_default()
    } else {
        m.system.clone()
    };
    let others: Vec<&str> = prompts
        .iter()
        .filter(|p| !p.system.is_empty() && p.system != system)
        .map(|p| p.id.as_str())
        .collect();
    if !others.is_empty() {
        warnings.push(format!(
            "TrustGraph has one system prompt per workspace: the bundle carries {}, and {} other prompt(s) ({}) had \
             another",
            if m.system.is_empty() {
                "the workspace's"
            } else {
                "the migrated prompt's"
            },
            others.len(),
            others.join(", ")
        ));
    }
    prompts.push(m.clone());
    (crate::prompt::to_trustgraph_bundle(&prompts, &system), warnings)
}

/// The TrustGraph export of `m` in `src`'s shape (see [`MigrateFormat::Trustgraph`]),
/// with what the caller must warn about.
fn trustgraph_export(
    src: &crate::prompt::PromptConfig,
    m: &crate::prompt::PromptConfig,
    ws: &crate::store::Workspace,
) -> Result<(String, Vec<String>), CliError> {
    use crate::prompt::SourceFormat;
    let mut warnings = Vec::new();
    let value = match src.origin.format {
        SourceFormat::TrustgraphPrompt => crate::prompt::to_trustgraph_prompt(m),
        SourceFormat::TrustgraphBundle | SourceFormat::TrustgraphConfig => {
            let file = &src.origin.file;
            let bytes = super::input::read_all(file)?;
            let text = String::from_utf8_lossy(&bytes);
            // A `tg-show-config` dump starts with a `Version:` line; the export is the JSON.
            let json = text
                .strip_prefix("Version:")
                .and_then(|rest| rest.split_once('\n'))
                .map_or(&*text, |(_, rest)| rest);
            let mut root: Value = serde_json::from_str(json)
                .map_err(|e| CliError::new(Category::ConfigInvalid, format!("{file}: cannot export: {e}")))?;
            crate::prompt::trustgraph::put_in_bundle(&mut root, m, false)
                .map_err(|e| CliError::new(Category::ConfigInvalid, format!("{file}: cannot export: {e}")))?;
            root
        }
        SourceFormat::Toml => {
            let (bundle, w) = workspace_bundle(ws, m);
            warnings = w;
            bundle
        }
    };
    let mut s = serde_json::to_string_pretty(&value).unwrap_or_default();
    s.push('\n');
    Ok((s, warnings))
}

/// An `unconvertible` error when the schema's root has no per-line form
/// (one object is a different contract than a list of lines).
fn refuse_unconvertible(src: &crate::prompt::PromptConfig, m: &crate::prompt::Migration) -> Result<(), CliError> {
    if src.schema.is_none() || m.config.schema.is_some() {
        return Ok(());
    }
    let why: Vec<&str> = m.unconvertible.iter().map(|u| u.message.as_str()).collect();
    let mut err = CliError::new(
        Category::Unconvertible,
        format!(
            "unconvertible: the schema of `{}` is neither an array nor an object of arrays ({}); its callers \
                 expect one value, not a list of lines, so a JSONL twin is a different contract (--force migrates \
                 anyway)",
            src.id,
            why.join("; ")
        ),
    );
    err.detail = Some(json!({"unconvertible": m.unconvertible}));
    Err(err)
}

/// The migrated prompt in `format`: its key in the envelope and its text;
/// what an export could not keep is warned about.
fn migrated_text<W: Write>(
    format: MigrateFormat,
    src: &crate::prompt::PromptConfig,
    m: &crate::prompt::PromptConfig,
    ws: &crate::store::Workspace,
    out: &mut Out<W>,
) -> Result<(&'static str, String), CliError> {
    match format {
        MigrateFormat::Toml => Ok(("toml", crate::prompt::to_toml(m))),
        MigrateFormat::Trustgraph => {
            let (text, warnings) = trustgraph_export(src, m, ws)?;
            for w in warnings {
                out.warn(&w).map_err(|e| io_err(&e))?;
            }
            Ok(("trustgraph", text))
        }
    }
}

/// Run `migrate`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let ws = cli.workspace()?;
    let src = ws.resolve(&args.prompt)?;
    if let Some(id) = &args.id {
        crate::prompt::check_id(id).map_err(|e| CliError::new(Category::Usage, format!("--id: {e}")))?;
    }
    let m =
        crate::prompt::migrate(&src, args.id.as_deref()).map_err(|e| CliError::new(Category::Usage, e.to_string()))?;
    if !args.force {
        refuse_unconvertible(&src, &m)?;
    }
    let (key, text) = migrated_text(args.format, &src, &m.config, &ws, out)?;
    let bundled = matches!(
        src.origin.format,
        crate::prompt::SourceFormat::TrustgraphBundle | crate::prompt::SourceFormat::TrustgraphConfig
    );
    if args.format == MigrateFormat::Trustgraph && bundled && m.config.system != src.system {
        out.warn(
            "the migration rewrote array wording in the bundle's shared `system`; the export keeps `system` \
             unchanged (it is every prompt's), so check it by hand",
        )
        .map_err(|e| io_err(&e))?;
    }
    report_parts(&m, out)?;
    let written = write(args, &src, &m, &text)?;
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
        check(args, (&src, &m.config), cli, &mut data, out)?;
    }
    Ok(data)
}

/// Each schema part with no per-line form and each flag, as records (and
/// on stderr for people).
fn report_parts<W: Write>(m: &crate::prompt::migrate::Migration, out: &mut Out<W>) -> Result<(), CliError> {
    for u in &m.unconvertible {
        out.record(&json!({"type": "unconvertible", "pointer": u.pointer, "message": u.message}))
            .map_err(|e| io_err(&e))?;
        if out.format() == super::out::Format::Pretty {
            let pointer = if u.pointer.is_empty() { "/" } else { &u.pointer };
            super::out::say("unconvertible", &format!("{pointer} {}", u.message));
        }
    }
    for f in &m.flags {
        out.record(&json!({"type": "flag", "part": f.part, "line": f.line, "message": f.message}))
            .map_err(|e| io_err(&e))?;
        if out.format() == super::out::Format::Pretty {
            super::out::say("flag", &format!("{} line {}: {}", f.part, f.line, f.message));
        }
    }
    Ok(())
}

/// `--write PATH`: the migrated text written atomically, refused while a
/// schema part has no per-line form (unless `--force`); the path written.
fn write(
    args: &Args,
    src: &PromptConfig,
    m: &crate::prompt::migrate::Migration,
    text: &str,
) -> Result<Option<String>, CliError> {
    let Some(path) = &args.write else {
        return Ok(None);
    };
    if !m.unconvertible.is_empty() && !args.force {
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
    Ok(Some(path.display().to_string()))
}

/// `--check`: both prompts run on the provider and compared; the result
/// (or the failure's detail) goes in `data["check"]`.
fn check<W: Write>(
    args: &Args,
    (src, migrated): (&PromptConfig, &PromptConfig),
    cli: &Cli,
    data: &mut Value,
    out: &mut Out<W>,
) -> Result<(), CliError> {
    let check = super::migrate_check::CheckArgs {
        provider: &args.provider,
        max_tokens: args
            .max_tokens
            .map_or(Some(super::migrate_check::DEFAULT_MAX_TOKENS), |l| l.0),
        input: args.input.as_deref(),
        keys: &args.keys,
        record: !args.no_record,
        vars: args.vars_file.as_deref(),
    };
    match super::migrate_check::run(src, migrated, &check, cli, out) {
        Ok(c) => data["check"] = c,
        Err(mut e) => {
            if let Some(detail) = e.detail.take() {
                data["check"] = detail;
            }
            e.detail = Some(data.take());
            return Err(e);
        }
    }
    Ok(())
}
