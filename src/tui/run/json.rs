//! The JSON-array parse: the strict verdict as a production consumer sees it
//! (ok, or where it stopped and why), then every complete element salvage
//! recovered, each marked valid or not, and — when strict failed — marked as
//! salvaged.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::output::json::{JsonAnalysis, JsonStatus, SalvagedElement};
use crate::output::salvage::StopReason;

use super::super::state::Scroll;
use super::super::text;
use super::super::theme::Theme;

/// What the JSON pane shows.
#[derive(Debug, Clone, Copy)]
pub struct JsonData<'a> {
    /// Complete elements (so far, while streaming).
    pub elements: &'a [SalvagedElement],
    /// The full analysis, once the text is complete (or at a cut).
    pub analysis: Option<&'a JsonAnalysis>,
    /// True while text is still arriving.
    pub live: bool,
    /// The text (unused for a cut).
    pub text: Option<&'a str>,
}

fn header(d: &JsonData<'_>, theme: Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    // The verdict that overrides the whole response goes first.
    if let Some(r) = d.analysis.and_then(|a| a.raises.as_ref()) {
        out.push(Line::styled(
            rust_i18n::t!("tui.pane.tg_fails", exception = r.exception, reason = r.reason).into_owned(),
            theme.bad(),
        ));
    }
    match d.analysis {
        None if d.live => out.push(Line::styled(
            rust_i18n::t!("tui.pane.strict_pending").into_owned(),
            theme.dim(),
        )),
        None => out.push(Line::styled(
            rust_i18n::t!("tui.pane.strict_none").into_owned(),
            theme.dim(),
        )),
        Some(a) => match a.status {
            JsonStatus::Ok => out.push(Line::from(vec![
                Span::styled(rust_i18n::t!("tui.pane.strict_ok").into_owned(), theme.ok()),
                Span::raw(rust_i18n::t!("tui.pane.strict_items", n = a.items.len()).into_owned()),
            ])),
            JsonStatus::InvalidJson => {
                let (where_, why) = a.error.as_ref().map_or_else(
                    || (String::new(), String::new()),
                    |e| {
                        (
                            rust_i18n::t!("tui.pane.at_line_col", line = e.line, column = e.column).into_owned(),
                            if e.truncated {
                                rust_i18n::t!("tui.pane.ran_out", message = e.message).into_owned()
                            } else {
                                rust_i18n::t!("tui.pane.syntax", message = e.message).into_owned()
                            },
                        )
                    },
                );
                out.push(Line::from(vec![Span::styled(
                    rust_i18n::t!("tui.pane.strict_invalid", at = where_).into_owned(),
                    theme.bad(),
                )]));
                out.push(Line::from(format!("  {why}")));
                out.push(Line::styled(
                    rust_i18n::t!("tui.pane.strict_zero").into_owned(),
                    theme.bad(),
                ));
            }
            JsonStatus::SchemaInvalid => {
                out.push(Line::styled(
                    rust_i18n::t!("tui.pane.strict_schema", n = a.violations.len()).into_owned(),
                    theme.bad(),
                ));
                if let Some(v) = a.violations.first() {
                    out.push(Line::from(format!("  {}", violation(v))));
                }
                out.push(Line::styled(
                    rust_i18n::t!("tui.pane.strict_zero").into_owned(),
                    theme.bad(),
                ));
            }
        },
    }
    let valid = d.elements.iter().filter(|e| e.valid).count();
    let mut salvage = rust_i18n::t!("tui.pane.salvage", n = d.elements.len(), valid = valid).into_owned();
    if d.live {
        salvage.push_str(&rust_i18n::t!("tui.pane.streaming"));
    }
    out.push(Line::styled(salvage, theme.dim()));
    if let Some(stop) = d.analysis.and_then(|a| a.salvage_stop.as_ref()) {
        let why = match stop.reason {
            StopReason::Eof => rust_i18n::t!("tui.pane.stop_eof").into_owned(),
            StopReason::Syntax => {
                rust_i18n::t!("tui.pane.syntax", message = stop.message.as_deref().unwrap_or("error")).into_owned()
            }
            StopReason::NoArray => rust_i18n::t!("tui.pane.stop_no_array").into_owned(),
        };
        out.push(Line::styled(
            rust_i18n::t!("tui.pane.stopped_at", line = stop.line, column = stop.column, why = why).into_owned(),
            theme.dim(),
        ));
    }
    for b in d.analysis.map_or(&[][..], |a| &a.broken[..]) {
        out.push(Line::styled(
            rust_i18n::t!(
                "tui.pane.skipped",
                lines = crate::i18n::line_range(b.line, b.end_line),
                message = b.error.message,
                line = b.error.line,
                column = b.error.column
            )
            .into_owned(),
            theme.warn(),
        ));
    }
    out
}

/// One violation as `at /pointer [branch]: message`.
pub fn violation(v: &crate::output::schema::Violation) -> String {
    let at = if v.pointer.is_empty() { "/" } else { &v.pointer };
    match &v.branch {
        Some(b) => rust_i18n::t!("tui.pane.violation_branch", at = at, branch = b, message = v.message).into_owned(),
        None => rust_i18n::t!("tui.pane.violation", at = at, message = v.message).into_owned(),
    }
}

/// Rows the pane has: the header and one per element.
pub fn rows(d: &JsonData<'_>) -> usize {
    header(d, Theme::default()).len() + d.elements.len()
}

/// An element's row: its prefix (mark, line, tag), its tag and its body.
fn element_row(e: &SalvagedElement, strict_ok: bool) -> (String, &'static str, String) {
    let mark = if e.valid { "✓" } else { "✗" };
    let tag = match (e.valid, strict_ok) {
        (true, true) => "item",
        (true, false) => "salvaged",
        (false, _) => "invalid",
    };
    let prefix = format!("{mark} L{:<4} {tag:<8} ", e.line);
    let mut body = crate::tui::panes::compact(&e.value);
    if let Some(v) = e.errors.first() {
        body = format!("{} — {body}", violation(v));
    }
    (prefix, tag, body)
}

/// Row `i` as text (what search looks in).
pub fn row_text(d: &JsonData<'_>, i: usize) -> Option<String> {
    let head = header(d, Theme::default());
    if let Some(l) = head.get(i) {
        return Some(l.spans.iter().map(|s| s.content.as_ref()).collect());
    }
    let strict_ok = d.analysis.is_some_and(|a| a.status == JsonStatus::Ok);
    let (prefix, _, body) = element_row(d.elements.get(i - head.len())?, strict_ok);
    Some(prefix + &body)
}

/// Draw the JSON-array pane.
pub fn draw(f: &mut Frame<'_>, area: Rect, d: &JsonData<'_>, scroll: Scroll, focused: bool, theme: Theme, title: &str) {
    let head = header(d, theme);
    let strict_ok = d.analysis.is_some_and(|a| a.status == JsonStatus::Ok);
    let total = rows(d);
    let row = |i: usize, w: usize| -> Line<'static> {
        if let Some(l) = head.get(i) {
            return crate::tui::panes::clip_line(l, w);
        }
        let e = &d.elements[i - head.len()];
        let style = if e.valid { theme.ok() } else { theme.bad() };
        let (prefix, tag, body) = element_row(e, strict_ok);
        let room = w.saturating_sub(text::width(&prefix));
        Line::from(vec![
            Span::styled(prefix, style),
            Span::styled(
                text::clip(&body, room),
                if tag == "salvaged" {
                    theme.warn()
                } else {
                    ratatui::style::Style::new()
                },
            ),
        ])
    };
    crate::tui::panes::draw_rows(f, area, title, focused, theme, total, scroll, &row);
}
