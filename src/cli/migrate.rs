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
    /// Id of the migrated prompt (default: the first of `<id>-jsonl`,
    /// `<id>-jsonl-2`, … that no prompt of the prompts directory has).
    /// The source's own id migrates in place: a TrustGraph bundle export
    /// then replaces the prompt where it stands, so clients keep calling it.
    #[arg(long)]
    pub id: Option<String>,
    /// Migrate (and write) even when the schema is neither an array nor an
    /// object of arrays, or parts of it have no per-line form; and write
    /// over an existing file, or replace a prompt of the migration's id.
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
            let mut root: Value = serde_json::from_str(json).map_err(|e| {
                CliError::new(Category::ConfigInvalid, format!("{file}: cannot export: {e}")).because(e)
            })?;
            crate::prompt::trustgraph::put_in_bundle(&mut root, m, false).map_err(|e| {
                CliError::new(Category::ConfigInvalid, format!("{file}: cannot export: {e}")).because(e)
            })?;
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
                out.warn(&w).map_err(io_err)?;
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
        crate::prompt::check_id(id).map_err(|e| CliError::new(Category::Usage, format!("--id: {e}")).because(e))?;
    }
    let (prompts, _, _) = ws.load();
    let id = args
        .id
        .clone()
        .unwrap_or_else(|| crate::prompt::migrate::free_id(&src.id, |id| prompts.iter().any(|p| p.id == id)));
    let m = crate::prompt::migrate(&src, Some(&id))
        .map_err(|e| CliError::new(Category::Usage, e.to_string()).because(e))?;
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
        .map_err(io_err)?;
    }
    report_parts(&m, out)?;
    let (written, replaced) = write(args, (&src, &m), &prompts, &text)?;
    if let Some(path) = &written
        && out.format() == super::out::Format::Pretty
    {
        super::out::say("wrote", &wrote_line(path, &m.config.id, key, replaced.as_ref()));
    }
    out.record(
        &json!({"type": "migrated", "id": m.config.id, "format": key, key: text, "written": written,
        "replaced": replaced}),
    )
    .map_err(io_err)?;
    if !args.check {
        out.pretty(&text).map_err(io_err)?;
    }
    let mut data = json!({
        "id": m.config.id,
        "format": key,
        key: text,
        "flags": m.flags,
        "unconvertible": m.unconvertible,
        "written": written,
        "replaced": replaced,
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
            .map_err(io_err)?;
        if out.format() == super::out::Format::Pretty {
            let pointer = if u.pointer.is_empty() { "/" } else { &u.pointer };
            super::out::say("unconvertible", &format!("{pointer} {}", u.message));
        }
    }
    for f in &m.flags {
        out.record(&json!({"type": "flag", "part": f.part, "line": f.line, "message": f.message}))
            .map_err(io_err)?;
        if out.format() == super::out::Format::Pretty {
            super::out::say("flag", &format!("{} line {}: {}", f.part, f.line, f.message));
        }
    }
    Ok(())
}

/// What a write replaces: the file at the path, when there is one, and a
/// prompt of the workspace that has the migration's id (with its file).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Replaced {
    /// The path held a file, which is written over.
    pub file: bool,
    /// The workspace's prompt of the same id, which the migration replaces.
    pub prompt: Option<String>,
    /// That prompt's file.
    #[serde(rename = "in")]
    pub prompt_file: Option<String>,
}

impl Replaced {
    /// What `path` and `id` would replace, or `None` for nothing.
    fn of(path: &std::path::Path, id: &str, prompts: &[PromptConfig]) -> Option<Self> {
        let file = std::fs::symlink_metadata(path).is_ok();
        let prompt = prompts.iter().find(|p| p.id == id);
        (file || prompt.is_some()).then(|| Self {
            file,
            prompt: prompt.map(|p| p.id.clone()),
            prompt_file: prompt.map(|p| p.origin.file.clone()),
        })
    }

    /// In words: "the file F" and/or "prompt \"X\" (in G)".
    fn words(&self, path: &std::path::Path) -> String {
        let mut parts = Vec::new();
        if self.file {
            parts.push(format!("the file {}", path.display()));
        }
        if let (Some(id), Some(file)) = (&self.prompt, &self.prompt_file) {
            parts.push(format!("prompt {id:?} (in {file})"));
        }
        parts.join(" and ")
    }
}

/// The line a person reads after a write.
fn wrote_line(path: &str, id: &str, format: &str, replaced: Option<&Replaced>) -> String {
    let mut s = format!("{path}: prompt {id:?} ({format})");
    if let Some(r) = replaced {
        s.push_str(", replacing ");
        s.push_str(&r.words(std::path::Path::new(path)));
    }
    s
}

/// `--write PATH`: the migrated text written atomically, in place of a
/// regular file and never through a link; refused while a schema part has
/// no per-line form, and (exit 11) when it would replace a file or a
/// prompt of the same id, unless `--force`. The path written and what it
/// replaced.
fn write(
    args: &Args,
    (src, m): (&PromptConfig, &crate::prompt::migrate::Migration),
    prompts: &[PromptConfig],
    text: &str,
) -> Result<(Option<String>, Option<Replaced>), CliError> {
    let Some(path) = &args.write else {
        return Ok((None, None));
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
    let cannot = |e: std::io::Error| {
        CliError::new(Category::InputError, format!("{}: cannot write: {e}", path.display())).because(e)
    };
    // A link or a directory at the path is refused before anything else.
    crate::limits::check_writable(path).map_err(cannot)?;
    let replaced = Replaced::of(path, &m.config.id, prompts);
    if let Some(r) = replaced.as_ref().filter(|_| !args.force) {
        let mut err = CliError::new(
            Category::Conflict,
            format!(
                "not written: the migration would replace {}; --force writes over it, or pick another path or --id",
                r.words(path)
            ),
        );
        err.detail = Some(json!({"replaced": r, "path": path.display().to_string(), "id": m.config.id}));
        return Err(err);
    }
    crate::store::write_atomic(path, text.as_bytes()).map_err(cannot)?;
    Ok((Some(path.display().to_string()), replaced))
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
