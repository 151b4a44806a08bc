//! One run analysed for the page: the verdict of its response type, every
//! response line with what the parser made of it, and the sweep over the
//! run's own token cuts (o200k estimates when it has none).

use std::fmt::Write as _;

use crate::output::sweep::{SweepPoint, sweep};
use crate::output::tokens::{Tokenizer, boundaries, boundaries_from_pieces};
use crate::output::verdict::{self, Voice};
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
    /// The runaway loop the limit cut (`run::loop_of`): its repeats are
    /// counted once in [`RunPanel::kept`] and [`RunPanel::salvaged`].
    pub looped: Option<crate::output::loops::Loop>,
}

impl RunPanel {
    /// Items the response type's consumer keeps (a loop's repeats once).
    pub fn kept(&self) -> usize {
        self.analysis.as_ref().map_or(0, |a| self.count(&mut a.items().iter()))
    }

    /// Valid elements salvage recovers (JSON runs; a loop's repeats once).
    pub fn salvaged(&self) -> Option<usize> {
        match &self.analysis {
            Some(Analysis::Json(a)) => Some(self.count(&mut a.elements.iter().filter(|e| e.valid).map(|e| &e.value))),
            _ => None,
        }
    }

    fn count(&self, values: &mut dyn Iterator<Item = &serde_json::Value>) -> usize {
        if self.looped.is_some() {
            crate::compare::distinct(values)
        } else {
            values.count()
        }
    }

    /// `session#n` of the run.
    pub fn label(&self, session: &str) -> String {
        format!("{session}#{}", self.number)
    }
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

/// Lines of `text` with the marks the analysis puts on them (in the
/// report's words), and the verdict.
fn lines_and_summary(text: &str, analysis: &Analysis) -> (Vec<Line>, String) {
    let mut lines = plain_lines(text);
    for m in verdict::marks(analysis) {
        let Some(text) = m.sentence(Voice::Report) else {
            continue;
        };
        if let Some(l) = m.line().checked_sub(1).and_then(|i| lines.get_mut(i)) {
            l.marks.push(Mark {
                good: m.sign().good(),
                text,
            });
        }
    }
    (lines, verdict::summary(analysis))
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
        looped: None,
    };
    let (cfg, schemas) = match &run.prompt {
        Ok(x) => x,
        Err(e) => return plain(e.to_string()),
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
    let (mut lines, mut summary) = lines_and_summary(&rec.text, &analysis);
    let looped = crate::run::loop_of(rec);
    if let Some(l) = &looped {
        let line = rec.text[..l.start_byte].matches('\n').count();
        if let Some(at) = lines.get_mut(line) {
            at.marks.push(Mark {
                good: Some(false),
                text: format!(
                    "a runaway loop starts here: the same {} bytes {} times until the limit cut it (its repeats count once)",
                    l.period_bytes, l.repeats
                ),
            });
        }
        let _ = write!(summary, " Loop: {} repeats, counted once.", l.repeats);
    }
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
        looped,
    }
}
