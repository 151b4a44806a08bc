//! One run's verdict, decided once (issue 25): which mark each element of a
//! JSON answer and each line of a JSONL answer gets, what the strict parse,
//! salvage and TrustGraph's service came to, and the words for each. The
//! HTML report, the workbench's panes and `parse --output pretty` only
//! style it.
//!
//! The three kept their own wording when the verdict moved here: [`Voice`]
//! names whose words a sentence takes (see `words.rs`), so where they differ
//! is one match arm beside the other, not a second copy of the rules.

use serde_json::Value;

use super::analysis::Analysis;
use super::json::{BrokenSpan, JsonAnalysis, JsonStatus, ParseStop, SalvageStop, SalvagedElement};
use super::jsonl::{JsonlAnalysis, LineCounts, LineOutcome, LineStatus, Raises};
use super::schema::Violation;
use super::tg::JsonRaises;

#[cfg(test)]
mod tests;
mod words;

pub use words::violation;

/// Whose words a sentence takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// The HTML report: English, terse, beside the line it marks.
    Report,
    /// The workbench's panes: `tui.pane.*`, localised.
    Pane,
    /// `parse --output pretty` (and `run`'s pretty output): `pretty.*`,
    /// localised.
    Pretty,
}

/// How a mark reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// Kept, or valid.
    Kept,
    /// Neither: a blank line, a code fence, a verdict still pending.
    Neutral,
    /// Rejected, lost, or where parsing stopped.
    Rejected,
}

impl Sign {
    /// `Some(true)` kept, `Some(false)` rejected, `None` neutral.
    pub fn good(self) -> Option<bool> {
        match self {
            Self::Kept => Some(true),
            Self::Neutral => None,
            Self::Rejected => Some(false),
        }
    }

    /// `✓`, `✗`, and for neutral `·` (a space in pretty output, where a
    /// skipped line stays quiet).
    pub fn glyph(self, voice: Voice) -> char {
        match (self, voice) {
            (Self::Kept, _) => '✓',
            (Self::Rejected, _) => '✗',
            (Self::Neutral, Voice::Pretty) => ' ',
            (Self::Neutral, _) => '·',
        }
    }
}

/// What a complete element of a JSON array comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementKind {
    /// Valid, and the strict parse keeps it too.
    Item,
    /// Valid, but only salvage recovers it (the strict parse failed).
    Salvaged,
    /// The element schema rejects it.
    Invalid,
}

impl ElementKind {
    /// What `element` comes to, knowing whether the strict parse succeeded.
    pub fn of(element: &SalvagedElement, strict_ok: bool) -> Self {
        match (element.valid, strict_ok) {
            (true, true) => Self::Item,
            (true, false) => Self::Salvaged,
            (false, _) => Self::Invalid,
        }
    }
}

/// One mark the verdict puts on a line of the response, with its data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark<'a> {
    /// A complete element of a JSON array.
    Element {
        /// The element, its value and violations.
        element: &'a SalvagedElement,
        /// What it comes to.
        kind: ElementKind,
    },
    /// Where the strict parse of a JSON answer stopped.
    StrictStop(&'a ParseStop),
    /// Where salvage stopped, and why.
    SalvageStop(&'a SalvageStop),
    /// A broken element salvage skipped, resuming after it.
    Skipped(&'a BrokenSpan),
    /// One line of a JSONL answer.
    Line {
        /// What the line came to.
        outcome: &'a LineOutcome,
        /// The item a kept line gave (`None` when not kept, or not kept in
        /// memory).
        item: Option<&'a Value>,
    },
}

impl<'a> Mark<'a> {
    /// An element's mark, knowing whether the strict parse succeeded.
    pub fn element(element: &'a SalvagedElement, strict_ok: bool) -> Self {
        let kind = ElementKind::of(element, strict_ok);
        Self::Element { element, kind }
    }

    /// A JSONL line's mark, its item looked up in `a`.
    pub fn line_of(outcome: &'a LineOutcome, a: &'a JsonlAnalysis) -> Self {
        let item = match outcome.status {
            LineStatus::Ok { item } => a.items.get(item),
            _ => None,
        };
        Self::Line { outcome, item }
    }

    /// The 1-based line of the response the mark belongs on.
    pub fn line(&self) -> usize {
        match self {
            Self::Element { element, .. } => element.line,
            Self::StrictStop(e) => e.line,
            Self::SalvageStop(s) => s.line,
            Self::Skipped(b) => b.error.line,
            Self::Line { outcome, .. } => outcome.line,
        }
    }

    /// Kept, neutral or rejected.
    pub fn sign(&self) -> Sign {
        match self {
            Self::Element { kind, .. } if *kind != ElementKind::Invalid => Sign::Kept,
            Self::Line { outcome, .. } => match outcome.status {
                LineStatus::Ok { .. } => Sign::Kept,
                LineStatus::Empty | LineStatus::Fence => Sign::Neutral,
                _ => Sign::Rejected,
            },
            _ => Sign::Rejected,
        }
    }
}

/// Every mark on a response, in the order the report lists them on a
/// line: a JSON answer's elements, where salvage stopped, what it skipped,
/// where the strict parse stopped; a JSONL answer's lines in order.
pub fn marks(analysis: &Analysis) -> Vec<Mark<'_>> {
    match analysis {
        Analysis::Text => Vec::new(),
        Analysis::Json(a) => {
            let strict_ok = a.status == JsonStatus::Ok;
            let mut out: Vec<Mark<'_>> = a.elements.iter().map(|e| Mark::element(e, strict_ok)).collect();
            out.extend(a.salvage_stop.as_ref().map(Mark::SalvageStop));
            out.extend(a.broken.iter().map(Mark::Skipped));
            if a.status == JsonStatus::InvalidJson {
                out.extend(a.error.as_ref().map(Mark::StrictStop));
            }
            out
        }
        Analysis::Jsonl(a) => a.lines.iter().map(|o| Mark::line_of(o, a)).collect(),
    }
}

/// What the strict parse of a JSON answer gives a strict consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strict<'a> {
    /// Text is still arriving: parsed when it ends.
    Pending,
    /// No analysis to read.
    Missing,
    /// Parsed and valid: this many items.
    Ok {
        /// Items kept.
        items: usize,
    },
    /// Not JSON: where it stopped, when known. 0 items.
    Invalid(Option<&'a ParseStop>),
    /// JSON the schema rejects, with every violation. 0 items.
    Schema(&'a [Violation]),
}

impl<'a> Strict<'a> {
    /// The strict verdict of `analysis` (`live`: text still arriving).
    pub fn of(analysis: Option<&'a JsonAnalysis>, live: bool) -> Self {
        match analysis {
            None if live => Self::Pending,
            None => Self::Missing,
            Some(a) => match a.status {
                JsonStatus::Ok => Self::Ok { items: a.items.len() },
                JsonStatus::InvalidJson => Self::Invalid(a.error.as_ref()),
                JsonStatus::SchemaInvalid => Self::Schema(&a.violations),
            },
        }
    }

    /// Kept (ok), neutral (no verdict yet) or rejected.
    pub fn sign(&self) -> Sign {
        match self {
            Self::Ok { .. } => Sign::Kept,
            Self::Pending | Self::Missing => Sign::Neutral,
            Self::Invalid(_) | Self::Schema(_) => Sign::Rejected,
        }
    }
}

/// What salvage recovered from a JSON answer: complete elements and how
/// many of them are valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Salvage {
    /// Complete elements.
    pub complete: usize,
    /// Of them, valid.
    pub valid: usize,
}

impl Salvage {
    /// Counted from the elements (so far, while streaming).
    pub fn of(elements: &[SalvagedElement]) -> Self {
        Self {
            complete: elements.len(),
            valid: elements.iter().filter(|e| e.valid).count(),
        }
    }
}

/// A JSONL answer's lines, counted by what they came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Kept objects.
    pub kept: usize,
    /// Lines that are not JSON (too deep and too-long integers too).
    pub not_json: usize,
    /// Lines the schema rejects.
    pub schema: usize,
    /// The cut last line (0 or 1).
    pub cut: usize,
    /// Blank lines and code fences, skipped.
    pub blank: usize,
}

impl Tally {
    /// From the analysis' counts.
    pub fn of(c: LineCounts) -> Self {
        Self {
            kept: c.ok,
            not_json: c.invalid_json,
            schema: c.schema_invalid,
            cut: c.truncated,
            blank: c.empty + c.fence,
        }
    }

    /// Lines rejected, for whatever reason.
    pub fn rejected(&self) -> usize {
        self.not_json + self.schema + self.cut
    }
}

/// TrustGraph's service failing the whole response, whatever its lines or
/// elements say: an exception escapes `invoke`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fails<'a> {
    /// On a JSON answer.
    Json(&'a JsonRaises),
    /// On a JSONL answer: where it raises, and what the lines alone keep.
    Jsonl(Raises, usize),
}

impl<'a> Fails<'a> {
    /// Whether TrustGraph fails a JSON answer whole.
    pub fn json(a: &'a JsonAnalysis) -> Option<Self> {
        a.raises.as_ref().map(Self::Json)
    }

    /// Whether TrustGraph fails a JSONL answer whole.
    pub fn jsonl(a: &JsonlAnalysis) -> Option<Self> {
        a.raises.map(|r| Self::Jsonl(r, a.counts.ok))
    }

    /// Whether TrustGraph fails the response whole.
    pub fn of(analysis: &'a Analysis) -> Option<Self> {
        match analysis {
            Analysis::Text => None,
            Analysis::Json(a) => Self::json(a),
            Analysis::Jsonl(a) => Self::jsonl(a),
        }
    }
}

/// The whole verdict in one line, in the report's words: TrustGraph's
/// verdict first (where a reader sees it before any line), then the strict
/// parse and salvage, or the JSONL tally.
pub fn summary(analysis: &Analysis) -> String {
    let voice = Voice::Report;
    let verdict = match analysis {
        Analysis::Text => "text: nothing to parse".to_owned(),
        Analysis::Json(a) => format!(
            "{}; {}",
            Strict::of(Some(a), false).sentence(voice).unwrap_or_default(),
            Salvage::of(&a.elements).sentence(voice)
        ),
        Analysis::Jsonl(a) => Tally::of(a.counts).sentence(voice),
    };
    match Fails::of(analysis).and_then(|f| f.sentence(voice)) {
        Some(v) => format!("TrustGraph: {v}. {verdict}"),
        None => verdict,
    }
}
