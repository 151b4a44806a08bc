//! One run analysed for the page: the verdict of its response type, every
//! response line with what the parser made of it, and the sweep over the
//! run's own token cuts (o200k estimates when it has none).

use std::fmt::Write as _;

use crate::output::json::JsonStatus;
use crate::output::jsonl::LineStatus;
use crate::output::salvage::StopReason;
use crate::output::sweep::{SweepPoint, sweep};
use crate::output::tokens::{Tokenizer, boundaries, boundaries_from_pieces};
use crate::run::Analysis;
use crate::session::RunRecord;

use super::RunInput;

/// A mark beside one response line: what the parser made of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// `Some(true)` kept, `Some(false)` lost or rejected, `None` neutral.
    pub good: Option<bool>,
    /// What happened.
    pub text: String,
}

/// One line of a response and its marks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub n: usize,
    /// The text, without its newline.
    pub text: String,
    /// Marks (several when an element and a stop share a line).
    pub marks: Vec<Mark>,
}

/// One run, analysed.
#[derive(Debug, Clone)]
pub struct RunPanel {
    /// 1-based number in the session.
    pub number: usize,
    /// The record (prompt text, provider, limit, finish, usage, response).
    pub record: RunRecord,
    /// The sample input's name, when known.
    pub input: Option<String>,
    /// The analysis by the run's response type (`None`: the prompt snapshot
    /// did not load, see `problem`).
    pub analysis: Option<Analysis>,
    /// The verdict in one line.
    pub summary: String,
    /// Every response line with its marks.
    pub lines: Vec<Line>,
    /// Items at every token cut.
    pub points: Vec<SweepPoint>,
    /// Cuts come from the o200k tokenizer, not the recorded tokens.
    pub estimated: bool,
    /// Why the run could not be analysed.
    pub problem: Option<String>,
}

impl RunPanel {
    /// Items the response type's consumer keeps.
    pub fn kept(&self) -> usize {
        self.analysis.as_ref().map_or(0, |a| a.items().len())
    }

    /// Valid elements salvage recovers (JSON runs).
    pub fn salvaged(&self) -> Option<usize> {
        match &self.analysis {
            Some(Analysis::Json(a)) => Some(a.elements.iter().filter(|e| e.valid).count()),
            _ => None,
        }
    }

    /// `session#n` of the run.
    pub fn label(&self, session: &str) -> String {
        format!("{session}#{}", self.number)
    }
}

fn mark(good: Option<bool>, text: String) -> Mark {
    Mark { good, text }
}

/// The lines of `text` (split at `\n`, as the JSONL analyser counts them),
/// unmarked.
fn plain_lines(text: &str) -> Vec<Line> {
    text.split('\n')
        .enumerate()
        .map(|(i, t)| Line {
            n: i + 1,
            text: t.strip_suffix('\r').unwrap_or(t).to_owned(),
            marks: Vec::new(),
        })
        .collect()
}

/// Lines of `text` with the marks the analysis puts on them, and the verdict.
fn lines_and_summary(text: &str, analysis: &Analysis) -> (Vec<Line>, String) {
    let mut lines = plain_lines(text);
    let mut put = |n: usize, m: Mark| {
        if let Some(l) = n.checked_sub(1).and_then(|i| lines.get_mut(i)) {
            l.marks.push(m);
        }
    };
    let summary = match analysis {
        Analysis::Text => "text: nothing to parse".to_owned(),
        Analysis::Json(a) => {
            for e in &a.elements {
                let mut t = format!("element {}", e.index + 1);
                if let Some(p) = &e.property {
                    let _ = write!(t, " of {p}");
                }
                if let Some(v) = e.errors.first() {
                    let _ = write!(t, ": schema: {} {}", v.pointer, v.message);
                }
                put(e.line, mark(Some(e.valid), t));
            }
            if let Some(s) = &a.salvage_stop {
                let why = match s.reason {
                    StopReason::Eof => "salvage stops: an element never closed (cut)".to_owned(),
                    StopReason::Syntax => {
                        format!("salvage stops: {}", s.message.as_deref().unwrap_or("syntax error"))
                    }
                    StopReason::NoArray => "salvage: no array found".to_owned(),
                };
                put(s.line, mark(Some(false), why));
            }
            for b in &a.broken {
                let why = format!("salvage skips a broken element: {}; resumes after", b.error.message);
                put(b.error.line, mark(Some(false), why));
            }
            let strict = match (&a.status, &a.error) {
                (JsonStatus::Ok, _) => format!("strict JSON: ok, {} items", a.items.len()),
                (JsonStatus::InvalidJson, Some(e)) => {
                    let kind = if e.truncated { "cut" } else { "syntax error" };
                    put(
                        e.line,
                        mark(Some(false), format!("strict parse stops ({kind}): {}", e.message)),
                    );
                    format!(
                        "strict JSON: invalid at line {}, column {} ({kind}), 0 items",
                        e.line, e.column
                    )
                }
                (JsonStatus::InvalidJson, None) => "strict JSON: invalid, 0 items".to_owned(),
                (JsonStatus::SchemaInvalid, _) => format!(
                    "strict JSON: schema-invalid ({} violations), 0 items",
                    a.violations.len()
                ),
            };
            let valid = a.elements.iter().filter(|e| e.valid).count();
            format!(
                "{strict}; salvage: {valid} valid of {} complete elements",
                a.elements.len()
            )
        }
        Analysis::Jsonl(a) => {
            for o in &a.lines {
                let m = match &o.status {
                    LineStatus::Ok { item } => mark(Some(true), format!("item {}", item + 1)),
                    LineStatus::Empty => continue,
                    LineStatus::Fence => mark(None, "fence".into()),
                    LineStatus::InvalidJson { column, message }
                    | LineStatus::TooDeep { column, message, .. }
                    | LineStatus::IntTooLong { column, message, .. } => {
                        mark(Some(false), format!("not JSON (column {column}): {message}"))
                    }
                    LineStatus::SchemaInvalid { errors } => {
                        let first = errors
                            .first()
                            .map(|v| format!("{} {}", v.pointer, v.message))
                            .unwrap_or_default();
                        mark(Some(false), format!("schema: {first}"))
                    }
                    LineStatus::Truncated { column, .. } => mark(Some(false), format!("cut at column {column}")),
                };
                put(o.line, m);
            }
            let c = &a.counts;
            format!(
                "JSONL: {} items kept; {} invalid JSON, {} schema-invalid, {} truncated",
                a.items.len(),
                c.invalid_json,
                c.schema_invalid,
                c.truncated
            )
        }
    };
    // TrustGraph's verdict on the whole response goes first, where a
    // reader sees it before any line.
    let summary = match analysis.service_fails() {
        Some(v) => format!("TrustGraph: {v}. {summary}"),
        None => summary,
    };
    (lines, summary)
}

/// Analyse one run: verdict, marked lines and the sweep over its cuts.
pub fn panel(run: &RunInput, py: crate::output::tg::TgPython) -> RunPanel {
    let rec = &run.record;
    let plain = |problem: String| RunPanel {
        number: run.number,
        record: rec.clone(),
        input: run.input.clone(),
        analysis: None,
        summary: problem.clone(),
        lines: plain_lines(&rec.text),
        points: Vec::new(),
        estimated: false,
        problem: Some(problem),
    };
    let (cfg, schemas) = match &run.prompt {
        Ok(x) => x,
        Err(e) => return plain(e.clone()),
    };
    let analysis = Analysis::of(cfg.response_type, cfg.schema.as_ref(), &rec.text, py);
    let token_pieces = !rec.pieces.is_empty() && rec.pieces.iter().all(|p| !p.delta);
    let cuts = if token_pieces {
        let pieces: Vec<&str> = rec.pieces.iter().map(|p| p.text.as_str()).collect();
        boundaries_from_pieces(&pieces)
    } else {
        boundaries(&rec.text, Tokenizer::O200kBase)
    };
    let points = sweep(rec.text.as_bytes(), &cuts, schemas);
    let (lines, summary) = lines_and_summary(&rec.text, &analysis);
    RunPanel {
        number: run.number,
        record: rec.clone(),
        input: run.input.clone(),
        analysis: Some(analysis),
        summary,
        lines,
        points,
        estimated: !token_pieces,
        problem: None,
    }
}
