//! The verdict in words, in each [`Voice`]. Where the voices differ, the
//! arms sit side by side: the report is English and terse (it marks a line
//! beside its text); the panes and pretty output are localised, the panes
//! with `tui.pane.*`, pretty output with `pretty.*`.

use std::fmt::Write as _;

use rust_i18n::t;
use serde_json::Value;

use super::{Fails, Mark, Salvage, Strict, Tally, Voice};
use crate::output::json::{BrokenSpan, ParseStop, SalvageStop, SalvagedElement};
use crate::output::jsonl::LineStatus;
use crate::output::salvage::StopReason;
use crate::output::schema::Violation;

/// One schema violation: the report's `/pointer message`, the pane's
/// localised `schema error at /pointer (union branch b): message`, pretty
/// output's `b: /pointer message`.
pub fn violation(v: &Violation, voice: Voice) -> String {
    let at = if v.pointer.is_empty() { "/" } else { &v.pointer };
    match (voice, &v.branch) {
        (Voice::Report, _) => format!("{} {}", v.pointer, v.message),
        (Voice::Pane, Some(b)) => {
            t!("tui.pane.violation_branch", at = at, branch = b, message = v.message).into_owned()
        }
        (Voice::Pane, None) => t!("tui.pane.violation", at = at, message = v.message).into_owned(),
        (Voice::Pretty, _) => v.to_string(),
    }
}

/// Every violation, `; `-joined.
fn violations(errors: &[Violation], voice: Voice) -> String {
    errors
        .iter()
        .map(|v| violation(v, voice))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A value as one line of compact JSON.
fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

impl Mark<'_> {
    /// What the mark says; `None` where the voice leaves the line unmarked
    /// (the report says nothing of a blank line, pretty output nothing of
    /// where salvage stopped).
    pub fn sentence(&self, voice: Voice) -> Option<String> {
        match self {
            Self::Element { element, .. } => Some(element_words(element, voice)),
            Self::StrictStop(e) => Some(strict_stop(e, voice)),
            Self::SalvageStop(s) => salvage_stop(s, voice),
            Self::Skipped(b) => Some(skipped(b, voice)),
            Self::Line { outcome, item } => line_words(&outcome.status, *item, voice),
        }
    }
}

/// An element: the report names it (`element 3 of entities`) and its first
/// violation; the pane shows the value after the first violation; pretty
/// output the value, then every violation on a line of its own.
fn element_words(e: &SalvagedElement, voice: Voice) -> String {
    match voice {
        Voice::Report => {
            let mut t = format!("element {}", e.index + 1);
            if let Some(p) = &e.property {
                let _ = write!(t, " of {p}");
            }
            if let Some(v) = e.errors.first() {
                let _ = write!(t, ": schema: {}", violation(v, voice));
            }
            t
        }
        Voice::Pane => match e.errors.first() {
            Some(v) => format!("{} — {}", violation(v, voice), compact(&e.value)),
            None => compact(&e.value),
        },
        Voice::Pretty => {
            let mut t = e.value.to_string();
            for v in &e.errors {
                let _ = write!(t, "\n      {}", violation(v, voice));
            }
            t
        }
    }
}

/// Where, and why, the strict parse stopped.
fn strict_stop(e: &ParseStop, voice: Voice) -> String {
    match voice {
        Voice::Report => {
            let kind = if e.truncated { "cut" } else { "syntax error" };
            format!("strict parse stops ({kind}): {}", e.message)
        }
        Voice::Pane if e.truncated => t!("tui.pane.ran_out", message = e.message).into_owned(),
        Voice::Pane => t!("tui.pane.syntax", message = e.message).into_owned(),
        Voice::Pretty => {
            let why = if e.truncated {
                t!("pretty.ran_out")
            } else {
                t!("pretty.syntax_broke")
            };
            t!(
                "pretty.strict_invalid",
                line = e.line,
                column = e.column,
                why = why,
                message = e.message
            )
            .into_owned()
        }
    }
}

/// Where salvage stopped: pretty output does not say.
fn salvage_stop(s: &SalvageStop, voice: Voice) -> Option<String> {
    Some(match voice {
        Voice::Report => match s.reason {
            StopReason::Eof => "salvage stops: an element never closed (cut)".to_owned(),
            StopReason::Syntax => format!("salvage stops: {}", s.message.as_deref().unwrap_or("syntax error")),
            StopReason::NoArray => "salvage: no array found".to_owned(),
        },
        Voice::Pane => {
            let why = match s.reason {
                StopReason::Eof => t!("tui.pane.stop_eof"),
                StopReason::Syntax => t!("tui.pane.syntax", message = s.message.as_deref().unwrap_or("error")),
                StopReason::NoArray => t!("tui.pane.stop_no_array"),
            };
            t!("tui.pane.stopped_at", line = s.line, column = s.column, why = why).into_owned()
        }
        Voice::Pretty => return None,
    })
}

/// A broken element salvage skipped.
fn skipped(b: &BrokenSpan, voice: Voice) -> String {
    let lines = crate::i18n::line_range(b.line, b.end_line);
    let (line, column, message) = (b.error.line, b.error.column, &b.error.message);
    match voice {
        Voice::Report => format!("salvage skips a broken element: {message}; resumes after"),
        Voice::Pane => t!(
            "tui.pane.skipped",
            lines = lines,
            message = message,
            line = line,
            column = column
        )
        .into_owned(),
        Voice::Pretty => t!(
            "pretty.salvage_skipped",
            lines = lines,
            line = line,
            column = column,
            message = message
        )
        .into_owned(),
    }
}

/// A JSONL line. The report numbers a kept line's item and reads a line too
/// deep for Python as not JSON; the pane and pretty output show the kept
/// value, and the pane says how deep the line nests.
fn line_words(status: &LineStatus, item: Option<&Value>, voice: Voice) -> Option<String> {
    Some(match (status, voice) {
        (LineStatus::Ok { item: i }, Voice::Report) => format!("item {}", i + 1),
        (LineStatus::Ok { .. }, _) => item.map(compact).unwrap_or_default(),
        (LineStatus::Empty, Voice::Report) => return None,
        (LineStatus::Empty, Voice::Pane) => t!("tui.pane.line_empty").into_owned(),
        (LineStatus::Fence, Voice::Pane) => t!("tui.pane.line_fence").into_owned(),
        (LineStatus::Empty | LineStatus::Fence, _) => status.word().to_owned(),
        (LineStatus::TooDeep { depth, .. }, Voice::Pane) => t!("tui.pane.line_too_deep", depth = depth).into_owned(),
        (
            LineStatus::InvalidJson { column, message }
            | LineStatus::TooDeep { column, message, .. }
            | LineStatus::IntTooLong { column, message, .. },
            _,
        ) => match voice {
            Voice::Report => format!("not JSON (column {column}): {message}"),
            Voice::Pane => t!("tui.pane.line_invalid", column = column, message = message).into_owned(),
            Voice::Pretty => t!("pretty.line_invalid", column = column, message = message).into_owned(),
        },
        (LineStatus::SchemaInvalid { errors }, Voice::Report) => {
            format!(
                "schema: {}",
                errors.first().map(|v| violation(v, voice)).unwrap_or_default()
            )
        }
        (LineStatus::SchemaInvalid { errors }, _) => violations(errors, voice),
        (LineStatus::Truncated { column, message }, _) => match voice {
            Voice::Report => format!("cut at column {column}"),
            Voice::Pane => t!("tui.pane.line_cut", column = column, message = message).into_owned(),
            Voice::Pretty => t!("pretty.line_cut", column = column, message = message).into_owned(),
        },
    })
}

impl Strict<'_> {
    /// The verdict's headline. The report and pretty output say what a
    /// strict consumer gets in it; the pane says it apart ([`Self::gets`]).
    /// `None` where the voice has no line for it.
    pub fn sentence(&self, voice: Voice) -> Option<String> {
        match voice {
            Voice::Report => self.report(),
            Voice::Pane => Some(self.pane()),
            Voice::Pretty => match self {
                Self::Ok { items } => Some(t!("pretty.strict_ok", n = items).into_owned()),
                Self::Schema(_) => Some(t!("pretty.strict_schema").into_owned()),
                Self::Invalid(Some(e)) => Some(strict_stop(e, voice)),
                Self::Invalid(None) | Self::Pending | Self::Missing => None,
            },
        }
    }

    fn report(&self) -> Option<String> {
        Some(match self {
            Self::Ok { items } => format!("strict JSON: ok, {items} items"),
            Self::Invalid(Some(e)) => {
                let kind = if e.truncated { "cut" } else { "syntax error" };
                format!(
                    "strict JSON: invalid at line {}, column {} ({kind}), 0 items",
                    e.line, e.column
                )
            }
            Self::Invalid(None) => "strict JSON: invalid, 0 items".to_owned(),
            Self::Schema(v) => format!("strict JSON: schema-invalid ({} violations), 0 items", v.len()),
            Self::Pending | Self::Missing => return None,
        })
    }

    fn pane(&self) -> String {
        match self {
            Self::Pending => t!("tui.pane.strict_pending"),
            Self::Missing => t!("tui.pane.strict_none"),
            Self::Ok { .. } => t!("tui.pane.strict_ok"),
            Self::Invalid(e) => {
                let at = e.map_or_else(String::new, |e| {
                    t!("tui.pane.at_line_col", line = e.line, column = e.column).into_owned()
                });
                t!("tui.pane.strict_invalid", at = at)
            }
            Self::Schema(v) => t!("tui.pane.strict_schema", n = v.len()),
        }
        .into_owned()
    }

    /// What a strict consumer gets, where the voice says it apart from the
    /// headline (the pane).
    pub fn gets(&self, voice: Voice) -> Option<String> {
        match (self, voice) {
            (Self::Ok { items }, Voice::Pane) => Some(t!("tui.pane.strict_items", n = items).into_owned()),
            (Self::Invalid(_) | Self::Schema(_), Voice::Pane) => Some(t!("tui.pane.strict_zero").into_owned()),
            _ => None,
        }
    }

    /// The lines under the headline: the pane's why (or first violation),
    /// pretty output's every violation; the report puts where parsing
    /// stopped on its line instead.
    pub fn details(&self, voice: Voice) -> Vec<String> {
        match (self, voice) {
            (Self::Invalid(e), Voice::Pane) => vec![e.map(|e| strict_stop(e, voice)).unwrap_or_default()],
            (Self::Schema(v), Voice::Pane) => v.first().map(|v| violation(v, voice)).into_iter().collect(),
            (Self::Schema(v), Voice::Pretty) => v.iter().map(|v| violation(v, voice)).collect(),
            _ => Vec::new(),
        }
    }
}

impl Salvage {
    /// What salvage recovered.
    pub fn sentence(&self, voice: Voice) -> String {
        let (n, valid) = (self.complete, self.valid);
        match voice {
            Voice::Report => format!("salvage: {valid} valid of {n} complete elements"),
            Voice::Pane => t!("tui.pane.salvage", n = n, valid = valid).into_owned(),
            Voice::Pretty => t!("pretty.salvage_summary", n = n, valid = valid).into_owned(),
        }
    }
}

impl Tally {
    /// The lines counted. The pane's is its three parts run together
    /// ([`Self::pane_parts`]).
    pub fn sentence(&self, voice: Voice) -> String {
        match voice {
            Voice::Report => format!(
                "JSONL: {} items kept; {} invalid JSON, {} schema-invalid, {} truncated",
                self.kept, self.not_json, self.schema, self.cut
            ),
            Voice::Pane => {
                let [kept, errors, blank] = self.pane_parts();
                format!("{kept} · {errors}{blank}")
            }
            Voice::Pretty => t!(
                "pretty.jsonl_counts",
                ok = self.kept,
                invalid = self.not_json,
                schema = self.schema,
                cut = self.cut
            )
            .into_owned(),
        }
    }

    /// The pane's parts, styled apart: kept, rejected by cause, blank.
    pub fn pane_parts(&self) -> [String; 3] {
        [
            t!("tui.pane.kept", n = self.kept).into_owned(),
            t!(
                "tui.pane.line_errors",
                invalid = self.not_json,
                schema = self.schema,
                cut = self.cut
            )
            .into_owned(),
            t!("tui.pane.blank", n = self.blank).into_owned(),
        ]
    }
}

impl Fails<'_> {
    /// TrustGraph's verdict: the report and pretty output say it in full,
    /// the pane in short (the exception, or the line it raises at).
    pub fn sentence(&self, voice: Voice) -> Option<String> {
        match (self, voice) {
            (Self::Json(r), Voice::Report | Voice::Pretty) => Some(r.verdict()),
            (Self::Jsonl(r, kept), Voice::Report | Voice::Pretty) => Some(r.verdict(*kept)),
            (Self::Json(r), Voice::Pane) => {
                Some(t!("tui.pane.tg_fails", exception = r.exception, reason = r.reason).into_owned())
            }
            (Self::Jsonl(r, _), Voice::Pane) => Some(t!("tui.pane.tg_raises", line = r.line).into_owned()),
        }
    }
}
