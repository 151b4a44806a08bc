//! `cutline tg pull [IDS] [--dir DIR]`: the workspace's prompts (or the ids
//! named, with `system`) into `DIR/<workspace>.json`, in
//! `tg-export-workspace-config`'s shape, and `DIR/.trustgraph/pull.json`
//! (URL, workspace, version, the values pulled). The directory is then a
//! prompts directory like any other (`cutline --prompts DIR …`). A pull
//! over local changes that were not pushed is refused unless `--force`.
//! JSONL: one `key` record per key pulled, then `pulled`.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::{Value, json};

use super::{Conn, client, ids, runtime};
use crate::cli::out::{Category, CliError, Out};
use crate::cli::{Cli, io_err};
use crate::tg::diff::same;
use crate::tg::local::{Pulled, STATE_FORMAT, covers, now, read_local, read_state, write_pull};

/// Arguments of `tg pull`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt ids to pull (default: every prompt of the workspace). `system` is always pulled.
    pub ids: Vec<String>,
    /// The deployment and the directory.
    #[command(flatten)]
    pub conn: Conn,
    /// Pull even over local changes that were not pushed (they are lost).
    #[arg(long)]
    pub force: bool,
}

/// Run `tg pull`.
pub fn run<W: Write>(args: &Args, _cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let dep = args.conn.for_pull()?;
    let dir = args.conn.dir(&dep.workspace);
    let only = ids(&args.ids);
    unpushed_guard(&dir, &dep.workspace, args.force)?;
    let client = client(dep);
    let snapshot = runtime()?.block_on(client.prompts())?;
    let dep = client.deployment();
    let values: BTreeMap<String, String> = snapshot
        .values
        .iter()
        .filter(|(k, _)| covers(only.as_deref(), k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(wanted) = &only {
        let missing: Vec<&String> = wanted
            .iter()
            .filter(|id| !values.contains_key(&format!("template.{id}")))
            .collect();
        if !missing.is_empty() {
            return Err(CliError::new(
                Category::Usage,
                format!(
                    "workspace {:?} at {} has no prompt {}; `cutline tg pull` without ids pulls every prompt",
                    dep.workspace,
                    dep.url(),
                    missing.iter().map(|m| format!("{m:?}")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    let pulled = Pulled {
        format: STATE_FORMAT,
        url: dep.url().to_owned(),
        workspace: dep.workspace.clone(),
        version: snapshot.version,
        at: now(),
        ids: only,
        base: values.clone(),
    };
    let file = write_pull(&dir, &pulled, &values)?;
    for k in values.keys() {
        out.record(&json!({"type": "key", "key": k})).map_err(io_err)?;
    }
    let templates = values.keys().filter(|k| k.starts_with("template.")).count();
    let summary = json!({
        "url": pulled.url, "workspace": pulled.workspace, "version": pulled.version,
        "dir": dir.display().to_string(), "file": file.display().to_string(),
        "keys": values.keys().collect::<Vec<_>>(), "prompts": templates,
    });
    let mut rec = summary.clone();
    rec["type"] = "pulled".into();
    out.record(&rec).map_err(io_err)?;
    out.pretty(&format!(
        "pulled {templates} prompts of workspace {:?} at version {} from {} into {}\n",
        pulled.workspace,
        pulled.version,
        pulled.url,
        file.display()
    ))
    .map_err(io_err)?;
    Ok(summary)
}

/// A pull over local edits that were never pushed would lose them.
fn unpushed_guard(dir: &std::path::Path, workspace: &str, force: bool) -> Result<(), CliError> {
    if force {
        return Ok(());
    }
    let Ok(pulled) = read_state(dir) else {
        return Ok(());
    };
    let Ok(local) = read_local(dir, &pulled.workspace) else {
        return Ok(());
    };
    let keys: std::collections::BTreeSet<&String> = pulled.base.keys().chain(local.prompts.keys()).collect();
    let changed: Vec<&String> = keys
        .into_iter()
        .filter(|k| {
            !same(
                pulled.base.get(*k).map(String::as_str),
                local.prompts.get(*k).map(String::as_str),
            )
        })
        .collect();
    if changed.is_empty() || pulled.workspace != workspace {
        return Ok(());
    }
    Err(CliError::new(
        Category::Conflict,
        format!(
            "{} holds changes that were not pushed ({}); a pull would overwrite them — push them, or pull with \
             --force to drop them",
            dir.display(),
            changed.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
        ),
    ))
}
