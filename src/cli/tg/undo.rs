//! `cutline tg undo [--force]`: puts back the values the last push (of this
//! directory's deployment and workspace, not undone yet) replaced, as the
//! journal kept them: a key it added is deleted, a key it deleted is
//! written again. Refused when a key the push wrote changed live since
//! (unless `--force`), or when the restored workspace would not reload
//! cleanly. The local file is left as it is (its changes show again in
//! `tg diff`). JSONL: one `undone` record.

use std::io::Write;

use serde_json::{Value, json};

use super::{Conn, client, runtime};
use crate::cli::out::{CliError, Out};
use crate::cli::{Cli, io_err};

/// Arguments of `tg undo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The deployment and the directory.
    #[command(flatten)]
    pub conn: Conn,
    /// Undo even over live changes made since the push.
    #[arg(long)]
    pub force: bool,
}

/// Run `tg undo`.
pub fn run<W: Write>(args: &Args, _cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let (dir, mut pulled, dep) = args.conn.for_pulled()?;
    let client = client(dep);
    let written = runtime()?.block_on(crate::tg::push::undo(&client, &dir, &mut pulled, args.force))?;
    let summary = json!({"push": written.id, "keys": written.keys, "version_before": written.version_before,
        "version_after": written.version_after, "read_back": "equal"});
    let mut rec = summary.clone();
    rec["type"] = "undone".into();
    out.record(&rec).map_err(io_err)?;
    out.pretty(&format!(
        "undid push {}: {} keys restored (version {} → {}), read back equal\n",
        written.id,
        written.keys.len(),
        written.version_before,
        written.version_after
    ))
    .map_err(io_err)?;
    Ok(summary)
}
