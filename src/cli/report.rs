//! `cutline report SESSION[#RUN…] [-o FILE] [--format html|svg]`
//!
//! Writes one self-contained HTML page for a session or some of its runs
//! (the pure work is `crate::report`), or with `--format svg` just one sweep
//! chart. What it prints is about the file it wrote: one `report` record
//! (path, bytes, runs, twin pairs, charts, notes); the envelope's `data` is
//! that record without `type`.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};
use crate::report::{self, Input, Section};

/// What `report` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// The whole page.
    Html,
    /// Just the sweep chart of one run (and its twin).
    Svg,
}

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session id (in the sessions dir) or path; `#N` picks runs: `#2#5`,
    /// `#2,5` or `#3-6` (default: every run; with `--format svg`, the last).
    /// A picked run's JSON/JSONL twin on the same input and limit joins it.
    pub session: String,
    /// The file to write (default: `<session>[-<runs>].html` or `.svg` here).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// `html`: the page; `svg`: only the sweep chart of one run and its twin.
    #[arg(long, value_enum, default_value = "html")]
    pub format: Kind,
}

/// Split `demo#2,5` into the session part and the run list: the first `#`
/// after which only digits, `#`, `,` and `-` follow.
fn split_reference(reference: &str) -> (&str, Option<&str>) {
    for (i, _) in reference.match_indices('#') {
        let rest = &reference[i + 1..];
        if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || matches!(c, '#' | ',' | '-')) {
            return (&reference[..i], Some(rest));
        }
    }
    (reference, None)
}

/// Run numbers (1-based) from `2#5`, `2,5`, `3-6`, checked against `n` runs.
fn parse_runs(spec: &str, n: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in spec.split(['#', ',']) {
        let bad = || format!("#{spec}: {part:?} is not a run number or a range like 3-6");
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (
                a.parse::<usize>().map_err(|_| bad())?,
                b.parse::<usize>().map_err(|_| bad())?,
            ),
            None => {
                let k = part.parse::<usize>().map_err(|_| bad())?;
                (k, k)
            }
        };
        if a == 0 || b > n || a > b {
            return Err(format!("run #{part} does not exist (runs 1..{n})"));
        }
        for k in a..=b {
            if !out.contains(&k) {
                out.push(k);
            }
        }
    }
    Ok(out)
}

/// Why the runs after `#` were refused, with the session file.
#[derive(Debug, thiserror::Error)]
enum PickError {
    /// The run list does not parse ([`parse_runs`]'s words).
    #[error("{file}: {why}")]
    Spec {
        /// The session file.
        file: String,
        /// What is wrong with the list.
        why: String,
    },
    /// A run number the session does not hold (a torn line was skipped).
    #[error("{file}: run #{missing} is not in the session")]
    Missing {
        /// The session file.
        file: String,
        /// The run number.
        missing: usize,
    },
}

/// Load what the report needs: the session, the prompts directory (twins,
/// sample input names) and the gold sets (`report::load`).
fn load(args: &Args, cli: &Cli, out: &mut Out<impl Write>) -> Result<(Input, Option<String>), CliError> {
    let (file_part, runs_spec) = split_reference(&args.session);
    let path = crate::session::locate(file_part, &cli.sessions)?;
    let decide = |numbers: &[usize]| -> Result<report::load::Pick, PickError> {
        let Some(spec) = runs_spec else {
            return Ok(match args.format {
                Kind::Svg => report::load::Pick::Last,
                Kind::Html => report::load::Pick::All,
            });
        };
        // `session#N` is the N of the recorded run id, as everywhere else
        // (equal to the position unless a torn line was skipped).
        let top = numbers.iter().copied().max().unwrap_or(0);
        let file = || path.display().to_string();
        let picked = parse_runs(spec, top).map_err(|why| PickError::Spec { file: file(), why })?;
        if let Some(&missing) = picked.iter().find(|k| !numbers.contains(k)) {
            return Err(PickError::Missing { file: file(), missing });
        }
        Ok(report::load::Pick::Runs(picked))
    };
    let input = report::load::from_file(&path, &cli.prompts, cli.tg_python, decide).map_err(|e| match e {
        report::load::LoadError::Pick(_) => CliError::caused(Category::Usage, e),
        other => CliError::caused(Category::InputError, other),
    })?;
    for w in input.notes.iter().filter(|n| n.contains(&path.display().to_string())) {
        out.warn(w.clone()).map_err(io_err)?;
    }
    let suffix = runs_spec.map(crate::session::safe_stem).or_else(|| match args.format {
        Kind::Svg => input.runs.iter().find(|r| r.selected).map(|r| r.number.to_string()),
        Kind::Html => None,
    });
    Ok((input, suffix))
}

/// Run `report`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let (input, suffix) = load(args, cli, out)?;
    let rep = report::build(&input);
    let (ext, body, charts) = match args.format {
        Kind::Html => {
            let charts = rep.sections.len() + rep.limit_charts.len();
            ("html", report::html::page(&rep), charts)
        }
        Kind::Svg => {
            let [section] = rep.sections.as_slice() else {
                return Err(CliError::new(
                    Category::Usage,
                    format!(
                        "--format svg draws one chart, and the runs picked make {}; pick one run, e.g. {}#{}",
                        rep.sections.len(),
                        rep.session_id,
                        input
                            .runs
                            .iter()
                            .filter(|r| r.selected)
                            .map(|r| r.number)
                            .max()
                            .unwrap_or(1)
                    ),
                ));
            };
            let svg = report::svg::chart(&section.chart(&rep.session_id), true).into_string();
            ("svg", format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{svg}\n"), 1)
        }
    };
    let path = args.out.clone().unwrap_or_else(|| {
        let stem = crate::session::safe_stem(&rep.session_id);
        PathBuf::from(match &suffix {
            Some(s) => format!("{stem}-{s}.{ext}"),
            None => format!("{stem}.{ext}"),
        })
    });
    crate::store::write_atomic(&path, body.as_bytes())
        .map_err(|e| CliError::new(Category::InputError, format!("writing {}: {e}", path.display())).because(e))?;
    let shown: Vec<String> = rep
        .sections
        .iter()
        .flat_map(|s| match s {
            Section::Pair(p) => vec![p.json.label(&rep.session_id), p.jsonl.label(&rep.session_id)],
            Section::Single(r) => vec![r.label(&rep.session_id)],
        })
        .collect();
    let pairs = rep.sections.iter().filter(|s| matches!(s, Section::Pair(_))).count();
    let data = json!({
        "path": path.display().to_string(),
        "format": ext,
        "bytes": body.len(),
        "session": rep.session_id,
        "runs": shown,
        "pairs": pairs,
        "charts": charts,
        "notes": rep.notes,
    });
    let mut rec = json!({"type": "report"});
    if let (Value::Object(m), Value::Object(d)) = (&mut rec, &data) {
        m.extend(d.clone());
    }
    out.record(&rec).map_err(io_err)?;
    out.pretty(&format!(
        "wrote {} ({} bytes): {} runs, {pairs} JSON/JSONL twin pairs, {charts} charts{}",
        path.display(),
        body.len(),
        shown.len(),
        if rep.notes.is_empty() {
            String::new()
        } else {
            format!("; {} notes on the page", rep.notes.len())
        }
    ))
    .map_err(io_err)?;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_at_the_run_list() {
        assert_eq!(split_reference("demo"), ("demo", None));
        assert_eq!(split_reference("demo#2,5"), ("demo", Some("2,5")));
        assert_eq!(split_reference("a#b/demo#3-6#9"), ("a#b/demo", Some("3-6#9")));
        assert_eq!(split_reference("demo#"), ("demo#", None));
    }

    #[test]
    fn run_lists_parse_strictly() {
        assert_eq!(parse_runs("2#5", 9), Ok(vec![2, 5]));
        assert_eq!(parse_runs("3-5,4,1", 9), Ok(vec![3, 4, 5, 1]));
        assert_eq!(parse_runs("10", 9), Err("run #10 does not exist (runs 1..9)".into()));
        assert_eq!(parse_runs("0", 9), Err("run #0 does not exist (runs 1..9)".into()));
        assert_eq!(parse_runs("5-3", 9), Err("run #5-3 does not exist (runs 1..9)".into()));
        assert_eq!(
            parse_runs("2,,3", 9),
            Err("#2,,3: \"\" is not a run number or a range like 3-6".into())
        );
    }
}
