//! `cutline tg diff [IDS]`: the pulled directory against the live
//! workspace against the pull, per key: `local` (changed here: a push
//! writes it), `live` (changed there since the pull: a push leaves it),
//! `conflict` (both), `same`. Each change is shown as a person reviews a
//! prompt: the template word by word, the schema by JSON pointer, the other
//! fields by name. JSONL: one `key` record per key that differs, then
//! `diff` with the versions and the counts. Exit 0 whatever differs.

use std::fmt::Write as _;
use std::io::Write;

use serde_json::{Value, json};

use super::{Conn, client, ids, runtime};
use crate::cli::out::{CliError, Out};
use crate::cli::{Cli, io_err};
use crate::tg::diff::{KeyDiff, Status, detail, review, three_way, words_plain};
use crate::tg::local::{covers, read_local};

/// Arguments of `tg diff`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt ids to compare (default: every key of the pull; `system` by name).
    pub ids: Vec<String>,
    /// The deployment and the directory.
    #[command(flatten)]
    pub conn: Conn,
}

/// Run `tg diff`.
pub fn run<W: Write>(args: &Args, _cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let (dir, pulled, dep) = args.conn.for_pulled()?;
    let local = read_local(&dir, &pulled.workspace)?;
    let live = runtime()?.block_on(client(dep).prompts())?;
    let only = ids(&args.ids);
    let diffs = three_way(&pulled.base, &local.prompts, &live.values, |k| {
        pulled.covers(k) && covers(only.as_deref(), k)
    });
    let mut text = String::new();
    let mut counts = json!({"same": 0, "local": 0, "live": 0, "conflict": 0});
    for d in &diffs {
        let word = status_word(d.status);
        counts[word] = (counts[word].as_u64().unwrap_or(0) + 1).into();
        if d.status == Status::Same {
            continue;
        }
        let rec = record(d);
        describe(&mut text, d);
        out.record(&rec).map_err(io_err)?;
    }
    let summary = json!({
        "url": pulled.url, "workspace": pulled.workspace,
        "version_pulled": pulled.version, "version_live": live.version,
        "live_moved": live.version != pulled.version, "counts": counts,
    });
    let mut rec = summary.clone();
    rec["type"] = "diff".into();
    out.record(&rec).map_err(io_err)?;
    let _ = writeln!(
        text,
        "version {} pulled, {} live{}: {} changed here, {} changed live, {} on both sides",
        pulled.version,
        live.version,
        if live.version == pulled.version { "" } else { " (moved)" },
        counts["local"],
        counts["live"],
        counts["conflict"]
    );
    out.pretty(&text).map_err(io_err)?;
    Ok(
        json!({"keys": diffs.iter().filter(|d| d.status != Status::Same).map(record).collect::<Vec<_>>(), "summary": summary}),
    )
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Same => "same",
        Status::Local => "local",
        Status::Live => "live",
        Status::Conflict => "conflict",
    }
}

/// One key's record: its status and the changes that matter to it (live →
/// local for a local change, pull → live for a live one, both for a
/// conflict).
fn record(d: &KeyDiff) -> Value {
    let mut rec = json!({"type": "key", "key": d.key, "status": status_word(d.status)});
    let (base, local, live) = (d.base.as_deref(), d.local.as_deref(), d.live.as_deref());
    let presence = |v: Option<&str>| if v.is_some() { "present" } else { "absent" };
    rec["local"] = presence(local).into();
    rec["live"] = presence(live).into();
    match d.status {
        Status::Same => {}
        Status::Local => rec["change"] = detail(&d.key, live, local),
        Status::Live => rec["change"] = detail(&d.key, base, live),
        Status::Conflict => {
            rec["change_here"] = detail(&d.key, base, local);
            rec["change_live"] = detail(&d.key, base, live);
        }
    }
    rec
}

fn describe(text: &mut String, d: &KeyDiff) {
    let what = match d.status {
        Status::Same => "same",
        Status::Local => "changed here (a push writes it)",
        Status::Live => "changed live since the pull (a push leaves it; a pull takes it)",
        Status::Conflict => "changed here and live (a push would overwrite the live change)",
    };
    let gone = match (d.local.is_some(), d.live.is_some()) {
        (false, true) => " — deleted here",
        (true, false) => " — not live",
        _ => "",
    };
    let _ = writeln!(text, "{}: {what}{gone}", d.key);
    let (base, local, live) = (d.base.as_deref(), d.local.as_deref(), d.live.as_deref());
    let sides: &[(&str, Option<&str>, Option<&str>)] = match d.status {
        Status::Same => &[],
        Status::Local => &[("", live, local)],
        Status::Live => &[("", base, live)],
        Status::Conflict => &[("here ", base, local), ("live ", base, live)],
    };
    for (label, old, new) in sides {
        for p in review(&d.key, *old, *new) {
            let _ = writeln!(text, "  {label}{}: {}", p.name, words_plain(&p.runs));
        }
    }
}
