//! `cutline tg push [IDS] [--dry-run] [--force]`: writes only the keys
//! changed here since the pull, after running TrustGraph's loader over the
//! whole workspace the push would leave live. Refused, with nothing
//! written: a template ibis refuses (the workspace would half-load), a
//! value that is not JSON (the reload would fail), a `system` that is not
//! a JSON string (it would silently become "Be helpful."), a live version
//! that moved since the pull (unless `--force`). The replaced values go to
//! the journal first; what was written is read back and compared.
//! JSONL: one `change` record per key, then `pushed` (or `plan` with
//! `--dry-run`).

use std::fmt::Write as _;
use std::io::Write;

use serde_json::{Value, json};

use super::{Conn, client, ids, runtime};
use crate::cli::out::{CliError, Out};
use crate::cli::{Cli, io_err};
use crate::tg::diff::detail;
use crate::tg::local::read_local;
use crate::tg::push::{execute, plan};

/// Arguments of `tg push`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt ids to push (default: every key changed here; `system` by name).
    pub ids: Vec<String>,
    /// The deployment and the directory.
    #[command(flatten)]
    pub conn: Conn,
    /// Check and show what would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Push even though the live config moved since the pull (a key
    /// changed on both sides takes the local value).
    #[arg(long)]
    pub force: bool,
}

/// Run `tg push`.
pub fn run<W: Write>(args: &Args, _cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let (dir, mut pulled, dep) = args.conn.for_pulled()?;
    let local = read_local(&dir, &pulled.workspace)?;
    let rt = runtime()?;
    let client = client(dep);
    let live = rt.block_on(client.prompts())?;
    let only = ids(&args.ids);
    let plan = plan(&pulled, &local.prompts, &live, only.as_deref(), args.force)?;
    for (key, why) in &plan.reload.warnings {
        out.warn(format!("{key}: {why}")).map_err(io_err)?;
    }
    let mut text = String::new();
    for c in &plan.changes {
        let what = match (&c.before, &c.after) {
            (None, Some(_)) => "add",
            (Some(_), None) => "delete",
            _ => "replace",
        };
        out.record(&json!({"type": "change", "key": c.key, "action": what,
            "change": detail(&c.key, c.before.as_deref(), c.after.as_deref())}))
            .map_err(io_err)?;
        let _ = writeln!(text, "{what} {}", c.key);
    }
    let keys: Vec<&String> = plan.changes.iter().map(|c| &c.key).collect();
    if plan.changes.is_empty() || args.dry_run {
        let summary = json!({"dry_run": args.dry_run, "keys": keys, "version_live": live.version,
            "written": false});
        let mut rec = summary.clone();
        rec["type"] = "plan".into();
        out.record(&rec).map_err(io_err)?;
        text.push_str(if plan.changes.is_empty() {
            "nothing to push: no key changed here since the pull\n"
        } else {
            "dry run: checked, nothing written\n"
        });
        out.pretty(&text).map_err(io_err)?;
        return Ok(summary);
    }
    let written = rt.block_on(execute(&client, &dir, &mut pulled, &plan))?;
    if written.others_wrote_meanwhile {
        out.warn(format!(
            "the config version went from {} to {}: another writer changed the config while this push ran",
            written.version_before, written.version_after
        ))
        .map_err(io_err)?;
    }
    let summary = json!({"push": written.id, "keys": written.keys, "version_before": written.version_before,
        "version_after": written.version_after, "written": true, "read_back": "equal"});
    let mut rec = summary.clone();
    rec["type"] = "pushed".into();
    out.record(&rec).map_err(io_err)?;
    let _ = writeln!(
        text,
        "pushed {} keys (push {}; version {} → {}), read back equal; `cutline tg undo` puts the old values back",
        written.keys.len(),
        written.id,
        written.version_before,
        written.version_after
    );
    out.pretty(&text).map_err(io_err)?;
    Ok(summary)
}
