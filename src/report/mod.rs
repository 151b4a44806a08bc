//! The shareable report: one self-contained HTML page (inline CSS and SVG,
//! no script, no external reference) for a session or some of its runs,
//! or just one sweep chart as SVG.
//!
//! Pure but for [`load`], which reads the session, the prompt configs and
//! the gold sets into an [`Input`] (for `cli::report` and the workbench); [`build`] analyses every run
//! (the same `run::Analysis`, `output::sweep`, `compare` and `eval` code the
//! other commands use) into a [`Report`]; `html` and `svg` turn that into
//! text. Nothing here reads a file or the clock, so the same session always
//! gives the same bytes.

pub mod html;
pub mod load;
mod panel;
pub mod svg;

pub use panel::{Line, Mark, RunPanel, panel};

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::compare::{self, Keys};
use crate::eval::{self, Gold, Row, RunSummary, TablePrompt};
use crate::output::sweep::{SweepPoint, SweepSchemas};
use crate::prompt::{PromptConfig, ResponseType};
use crate::run::Analysis;
use crate::session::RunRecord;

/// One run of the session as `cli::report` loaded it.
#[derive(Debug)]
pub struct RunInput {
    /// 1-based position in the session (`session#number`).
    pub number: usize,
    /// The record.
    pub record: RunRecord,
    /// The prompt rebuilt from the run's snapshot with its compiled sweep
    /// schemas, or why it could not be.
    pub prompt: Result<(PromptConfig, SweepSchemas), crate::session::SnapshotError>,
    /// The twin the prompts directory names for this prompt id.
    pub twin: Option<String>,
    /// The sample input whose variables the run used, when one matches.
    pub input: Option<String>,
    /// Picked by the command line (the others may join as twins).
    pub selected: bool,
}

/// Everything the report is built from.
#[derive(Debug)]
pub struct Input {
    /// Session id.
    pub session_id: String,
    /// The session file, as a label.
    pub source: String,
    /// Problems met while loading (torn lines, unknown prompts), shown on
    /// the page so a reader knows what is missing.
    pub notes: Vec<String>,
    /// Every run of the session, in order.
    pub runs: Vec<RunInput>,
    /// Gold sets by prompt id (a prompt's own file, else its twin's); each
    /// applies only to the input it annotates.
    pub gold: BTreeMap<String, Gold>,
    /// A session too large to draw run by run: its table over every run,
    /// while `runs` holds only the worst ones and their twins.
    pub summarised: Option<Summarised>,
    /// The Python whose limits TrustGraph's verdict on each run follows.
    pub py: crate::output::tg::TgPython,
}

/// A JSON-array run and its JSONL twin on the same input and limit.
#[derive(Debug, Clone)]
pub struct Pair {
    /// The JSON run (side A).
    pub json: RunPanel,
    /// The JSONL run (side B).
    pub jsonl: RunPanel,
    /// Item by item, with gold scores when a gold set annotates the input.
    pub compare: compare::Report,
    /// The gold file used.
    pub gold_file: Option<String>,
}

/// One section of the page.
#[derive(Debug, Clone)]
pub enum Section {
    /// Twins side by side.
    Pair(Box<Pair>),
    /// A run without a twin in the session.
    Single(Box<RunPanel>),
}

impl Section {
    /// The sweep chart: strict JSON and salvage from the JSON side, JSONL
    /// from the twin (one run: all three from it), as the workbench draws it.
    pub fn chart(&self, session: &str) -> svg::Chart {
        let (j, l, names, title) = match self {
            Self::Pair(p) => (
                &p.json,
                &p.jsonl,
                ["strict JSON", "salvage (JSON)", "JSONL twin"],
                format!(
                    "{} ({}) and {} ({}): items recovered vs max tokens",
                    p.json.record.prompt_id,
                    p.json.label(session),
                    p.jsonl.record.prompt_id,
                    p.jsonl.label(session)
                ),
            ),
            Self::Single(r) => (
                &**r,
                &**r,
                ["strict JSON", "salvage", "JSONL"],
                format!(
                    "{} ({}): items recovered vs max tokens",
                    r.record.prompt_id,
                    r.label(session)
                ),
            ),
        };
        let pts = |r: &RunPanel, pick: fn(&SweepPoint) -> usize| -> Vec<(f64, f64)> {
            r.points.iter().map(|p| (f(p.tokens), f(pick(p)))).collect()
        };
        let max = j.points.len().max(l.points.len()).saturating_sub(1);
        let limit = j.record.params.max_tokens.map(|n| n as usize);
        svg::Chart {
            title,
            x: svg::XAxis::Tokens { max, limit },
            series: vec![
                svg::Series {
                    name: names[0].into(),
                    points: pts(j, |p| p.json_items),
                },
                svg::Series {
                    name: names[1].into(),
                    points: pts(j, |p| p.salvaged_items),
                },
                svg::Series {
                    name: names[2].into(),
                    points: pts(l, |p| p.jsonl_items),
                },
            ],
        }
    }
}

/// A session summarised rather than drawn run by run.
#[derive(Debug, Clone, Default)]
pub struct Summarised {
    /// Runs in the session.
    pub runs: usize,
    /// Every run's summary (the table's rows are computed over them all).
    pub summaries: Vec<RunSummary>,
    /// The prompts of the table, each JSON prompt with its twin.
    pub prompts: Vec<TablePrompt>,
    /// The limits seen.
    pub limits: Vec<Option<u32>>,
}

/// The whole report.
#[derive(Debug, Clone)]
pub struct Report {
    /// Session id.
    pub session_id: String,
    /// The session file.
    pub source: String,
    /// What is missing or was skipped.
    pub notes: Vec<String>,
    /// Runs picked (before twins joined).
    pub selected: usize,
    /// Sections in session order.
    pub sections: Vec<Section>,
    /// Prompt × limit rows (the eval table) over the runs shown.
    pub table: Vec<Row>,
    /// Items against the limits, one chart per prompt run at two limits or
    /// more (an eval session).
    pub limit_charts: Vec<svg::Chart>,
}

impl Report {
    /// The page's first sentence: what each format kept at each limit,
    /// summed over every JSON prompt whose JSONL twin ran at that limit
    /// too, and how many answers looped (their repeats counted once).
    /// Without twin pairs, what each prompt kept. `None` when no run
    /// completed.
    pub fn headline(&self) -> Option<String> {
        use crate::prompt::ResponseType;
        // limit → (pairs, strict, salvage, jsonl, loops), in table order.
        let mut at: Vec<(Option<u32>, [usize; 5])> = Vec::new();
        for r in self
            .table
            .iter()
            .filter(|r| r.response_type == ResponseType::Json && r.completed > 0)
        {
            let Some(t) = r.twin.as_deref().and_then(|twin| {
                self.table
                    .iter()
                    .find(|t| t.prompt == twin && t.max_tokens == r.max_tokens && t.completed > 0)
            }) else {
                continue;
            };
            let i = at.iter().position(|(l, _)| *l == r.max_tokens).unwrap_or_else(|| {
                at.push((r.max_tokens, [0; 5]));
                at.len() - 1
            });
            let sums = &mut at[i].1;
            for (k, n) in [1, r.items_total, r.salvaged_total, t.items_total, r.loops + t.loops]
                .into_iter()
                .enumerate()
            {
                sums[k] += n;
            }
        }
        let mut parts = Vec::new();
        let mut loops = 0;
        for (limit, [pairs, strict, salvage, jsonl, looped]) in &at {
            loops += looped;
            let pairs = if *pairs == 1 {
                "1 twin pair".to_owned()
            } else {
                format!("{pairs} twin pairs")
            };
            parts.push(format!(
                "at {} ({pairs}), JSONL kept {jsonl} items, salvage {salvage} and strict JSON {strict}",
                limit_words(*limit)
            ));
        }
        if parts.is_empty() {
            parts = self
                .table
                .iter()
                .filter(|r| r.completed > 0)
                .map(|r| {
                    loops += r.loops;
                    format!(
                        "{} kept {} items at {}",
                        r.prompt,
                        r.items_total,
                        limit_words(r.max_tokens)
                    )
                })
                .collect();
        }
        if parts.is_empty() {
            return None;
        }
        let mut s = parts.join("; ");
        if let Some(c) = s.get_mut(0..1) {
            c.make_ascii_uppercase();
        }
        s.push('.');
        if loops > 0 {
            let answers = if loops == 1 { "answer" } else { "answers" };
            let _ = write!(
                s,
                " {loops} {answers} looped until the limit cut; each loop's repeats count once."
            );
        }
        Some(s)
    }
}

/// A limit in a sentence: `64 tokens`, or `no limit`.
fn limit_words(l: Option<u32>) -> String {
    l.map_or_else(|| "no limit".into(), |n| format!("{n} tokens"))
}

#[allow(
    clippy::cast_precision_loss,
    reason = "counts and milliseconds far below 2^52: exact as f64"
)]
fn f(x: usize) -> f64 {
    x as f64
}

fn mean(n: usize, d: usize) -> f64 {
    if d == 0 { 0.0 } else { f(n) / f(d) }
}

/// Whether runs `a` (JSON) and `b` (JSONL) are twins on the same input and
/// limit, as the workbench's `t` and eval's twin rows pair them.
fn twins(a: &RunInput, b: &RunInput) -> bool {
    let (ra, rb) = (&a.record, &b.record);
    ra.response_type == ResponseType::Json
        && rb.response_type == ResponseType::Jsonl
        && (a.twin.as_deref() == Some(rb.prompt_id.as_str()) || b.twin.as_deref() == Some(ra.prompt_id.as_str()))
        && ra.variables == rb.variables
        && ra.params.max_tokens == rb.params.max_tokens
}

/// The sections: each picked run with its twin when the session holds one
/// (a twin not picked joins its partner), in session order.
fn sections(input: &Input, gold: &BTreeMap<String, Gold>) -> Vec<Section> {
    let n = input.runs.len();
    let mut used = vec![false; n];
    let mut out = Vec::new();
    for i in 0..n {
        if used[i] || !input.runs[i].selected {
            continue;
        }
        let a = &input.runs[i];
        // A picked partner first, then any.
        let partner = [true, false].into_iter().find_map(|picked| {
            (0..n).find(|&j| {
                j != i
                    && !used[j]
                    && input.runs[j].selected == picked
                    && (twins(a, &input.runs[j]) || twins(&input.runs[j], a))
            })
        });
        used[i] = true;
        let Some(j) = partner else {
            out.push(Section::Single(Box::new(panel(a, input.py))));
            continue;
        };
        used[j] = true;
        let (ji, li) = if a.record.response_type == ResponseType::Json {
            (i, j)
        } else {
            (j, i)
        };
        out.push(Section::Pair(Box::new(pair(
            &input.runs[ji],
            &input.runs[li],
            gold,
            input.py,
        ))));
    }
    out
}

fn pair(json: &RunInput, jsonl: &RunInput, gold: &BTreeMap<String, Gold>, py: crate::output::tg::TgPython) -> Pair {
    let (pj, pl) = (panel(json, py), panel(jsonl, py));
    let line_schema = [jsonl, json]
        .iter()
        .find_map(|r| r.prompt.as_ref().ok().and_then(|(c, _)| eval::item_schema(c)));
    let keys = Keys::of(line_schema.as_ref(), &[]);
    let g = [&json.record.prompt_id, &jsonl.record.prompt_id]
        .into_iter()
        .find_map(|id| gold.get(id))
        .filter(|g| g.applies(&json.record.variables));
    let side = |p: &RunPanel| {
        let empty = Analysis::Text;
        compare::side(
            &p.label(""),
            p.analysis.as_ref().unwrap_or(&empty),
            p.record.finish == crate::llm::FinishReason::Length,
        )
    };
    let report = compare::compare(side(&pj), side(&pl), &keys, g.map(|g| g.items.as_slice()));
    Pair {
        json: pj,
        jsonl: pl,
        compare: report,
        gold_file: g.map(|g| g.file.clone()),
    }
}

/// Every run on show, in session order.
fn shown(sections: &[Section]) -> Vec<&RunPanel> {
    let mut v: Vec<&RunPanel> = sections
        .iter()
        .flat_map(|s| match s {
            Section::Pair(p) => vec![&p.json, &p.jsonl],
            Section::Single(r) => vec![&**r],
        })
        .collect();
    v.sort_by_key(|r| r.number);
    v
}

/// The eval table over the runs on show: one row per prompt × limit that
/// has runs, each JSON prompt followed by its twin.
fn table(input: &Input, sections: &[Section], gold: &BTreeMap<String, Gold>) -> Vec<Row> {
    let runs = shown(sections);
    let twin_of: BTreeMap<&str, Option<&str>> = input
        .runs
        .iter()
        .map(|r| (r.record.prompt_id.as_str(), r.twin.as_deref()))
        .collect();
    let mut prompts: Vec<TablePrompt> = Vec::new();
    let present = |id: &str| runs.iter().any(|r| r.record.prompt_id == id);
    let add = |id: &str, ty: ResponseType, prompts: &mut Vec<TablePrompt>| {
        if !prompts.iter().any(|p| p.id == id) {
            prompts.push(TablePrompt {
                id: id.to_owned(),
                response_type: ty,
                twin: twin_of
                    .get(id)
                    .copied()
                    .flatten()
                    .filter(|t| present(t))
                    .map(str::to_owned),
            });
        }
    };
    for r in &runs {
        if r.analysis.is_none() {
            continue;
        }
        let own = (r.record.prompt_id.as_str(), r.record.response_type);
        let twin = twin_of
            .get(own.0)
            .copied()
            .flatten()
            .and_then(|t| runs.iter().find(|x| x.record.prompt_id == t && x.analysis.is_some()))
            .map(|t| (t.record.prompt_id.as_str(), t.record.response_type));
        // The JSON prompt first, then its twin, whichever ran first.
        let order = match twin {
            Some(t) if own.1 == ResponseType::Jsonl && t.1 == ResponseType::Json => [Some(t), Some(own)],
            t => [Some(own), t],
        };
        for (id, ty) in order.into_iter().flatten() {
            add(id, ty, &mut prompts);
        }
    }
    let mut limits: Vec<Option<u32>> = runs.iter().map(|r| r.record.params.max_tokens).collect();
    limits.sort_by_key(|l| (l.is_none(), *l));
    limits.dedup();
    let summaries: Vec<RunSummary> = runs
        .iter()
        .filter_map(|r| {
            let a = r.analysis.as_ref()?;
            let g = gold.get(&r.record.prompt_id);
            Some(eval::summarise(
                eval::record_key(&r.record),
                r.input.as_deref().unwrap_or("-"),
                &r.record,
                a,
                g,
                false,
            ))
        })
        .collect();
    eval::table(&prompts, &limits, &BTreeMap::new(), &summaries)
        .into_iter()
        .filter(|r| r.runs > 0)
        .collect()
}

/// For each prompt run at two limits or more: its mean items per limit
/// (JSON: strict and salvage; JSONL: kept lines; a JSON prompt's twin joins
/// its chart).
fn limit_charts(rows: &[Row]) -> Vec<svg::Chart> {
    let mut out = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for r in rows {
        if done.contains(&r.prompt.as_str()) {
            continue;
        }
        let twin = r.twin.as_deref().filter(|t| {
            rows.iter()
                .any(|x| x.prompt == *t && x.response_type != r.response_type)
        });
        let (array_id, lines_id) = match (r.response_type, twin) {
            (ResponseType::Json, t) => (Some(r.prompt.as_str()), t),
            (ResponseType::Jsonl, Some(t)) => (Some(t), Some(r.prompt.as_str())),
            (ResponseType::Jsonl, None) => (None, Some(r.prompt.as_str())),
            (ResponseType::Text, _) => continue,
        };
        done.extend(array_id);
        done.extend(lines_id);
        let of = |id: Option<&str>| -> Vec<&Row> { rows.iter().filter(|x| Some(x.prompt.as_str()) == id).collect() };
        let (jr, lr) = (of(array_id), of(lines_id));
        let mut limits: Vec<Option<u32>> = jr.iter().chain(&lr).map(|x| x.max_tokens).collect();
        limits.sort_by_key(|l| (l.is_none(), *l));
        limits.dedup();
        if limits.len() < 2 {
            continue;
        }
        let at = |l: Option<u32>| limits.iter().position(|x| *x == l).map_or(0.0, f);
        let series = |rows: &[&Row], name: &str, pick: fn(&Row) -> f64| svg::Series {
            name: name.to_owned(),
            points: rows.iter().map(|x| (at(x.max_tokens), pick(x))).collect(),
        };
        let mut s = Vec::new();
        if !jr.is_empty() {
            s.push(series(&jr, "strict JSON (mean)", |x| mean(x.items_total, x.completed)));
            s.push(series(&jr, "salvage (mean)", |x| mean(x.salvaged_total, x.completed)));
        }
        if !lr.is_empty() {
            if jr.is_empty() {
                s.push(svg::Series {
                    name: "strict JSON".into(),
                    points: Vec::new(),
                });
                s.push(svg::Series {
                    name: "salvage".into(),
                    points: Vec::new(),
                });
            }
            s.push(series(&lr, "JSONL (mean)", |x| mean(x.items_total, x.completed)));
        }
        let names: Vec<&str> = array_id.into_iter().chain(lines_id).collect();
        out.push(svg::Chart {
            title: format!("{}: mean items kept at each max-token limit", names.join(" and ")),
            x: svg::XAxis::Limits(limits.iter().map(|l| eval::limit_label(*l)).collect()),
            series: s,
        });
    }
    out
}

/// Analyse the input into the report.
pub fn build(input: &Input) -> Report {
    let sections = sections(input, &input.gold);
    let table = match &input.summarised {
        Some(s) => eval::table(&s.prompts, &s.limits, &BTreeMap::new(), &s.summaries)
            .into_iter()
            .filter(|r| r.runs > 0)
            .collect(),
        None => table(input, &sections, &input.gold),
    };
    let limit_charts = limit_charts(&table);
    let mut notes = input.notes.clone();
    if let Some(s) = &input.summarised {
        notes.push(format!(
            "{} runs: the table and charts cover every one; cards are drawn for the {} worst (failed, cut with \
             nothing kept, not parsed) and their twins; `cutline report {}#N` draws any other",
            s.runs,
            input.runs.iter().filter(|r| r.selected).count(),
            input.session_id
        ));
    }
    for r in shown(&sections) {
        if let Some(p) = &r.problem {
            notes.push(format!("{}: not analysed: {p}", r.label(&input.session_id)));
        }
    }
    if input.runs.is_empty() {
        notes.push("the session holds no runs".into());
    }
    Report {
        session_id: input.session_id.clone(),
        source: input.source.clone(),
        notes,
        selected: input.runs.iter().filter(|r| r.selected).count(),
        sections,
        table,
        limit_charts,
    }
}
