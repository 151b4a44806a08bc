//! The JSONL parse, line by line: ✓ for a kept object, ✗ with the error for
//! a line that is not JSON (at its column), fails the schema (at its JSON
//! pointer, with the union branch) or was cut; counts on top.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::output::jsonl::{JsonlAnalysis, LineStatus};
use crate::output::schema::CompiledSchema;

use super::super::state::Scroll;
use super::super::text;
use super::super::theme::Theme;

/// What the JSONL pane shows.
#[derive(Debug, Clone, Copy)]
pub struct JsonlData<'a> {
    /// Lines judged so far (all of them once done).
    pub analysis: &'a JsonlAnalysis,
    /// True while text is still arriving.
    pub live: bool,
    /// The prompt's `object-schema`, which TrustGraph ignores: a kept line
    /// it would reject says so (and stays kept).
    pub ignored: Option<&'a CompiledSchema>,
}

/// Rows: one header and one per line.
pub fn rows(d: &JsonlData<'_>) -> usize {
    1 + d.analysis.lines.len()
}

fn header(d: &JsonlData<'_>, theme: Theme) -> Line<'static> {
    let c = d.analysis.counts;
    let mut spans = Vec::new();
    // The verdict that overrides every line goes first, where it is not cut.
    if let Some(r) = d.analysis.raises {
        spans.push(Span::styled(
            rust_i18n::t!("tui.pane.tg_raises", line = r.line).into_owned(),
            theme.bad(),
        ));
    }
    spans.extend([
        Span::styled(rust_i18n::t!("tui.pane.kept", n = c.ok).into_owned(), theme.ok()),
        Span::raw(" · "),
        Span::styled(
            rust_i18n::t!(
                "tui.pane.line_errors",
                invalid = c.invalid_json,
                schema = c.schema_invalid,
                cut = c.truncated
            )
            .into_owned(),
            if c.invalid_json + c.schema_invalid + c.truncated > 0 {
                theme.bad()
            } else {
                theme.dim()
            },
        ),
        Span::styled(
            rust_i18n::t!("tui.pane.blank", n = c.empty + c.fence).into_owned(),
            theme.dim(),
        ),
    ]);
    if d.live {
        spans.push(Span::styled(
            rust_i18n::t!("tui.pane.streaming").into_owned(),
            theme.dim(),
        ));
    }
    Line::from(spans)
}

/// The text of one line's outcome (after its marker and number).
pub fn describe(status: &LineStatus, a: &JsonlAnalysis) -> String {
    match status {
        LineStatus::Ok { item } => a.items.get(*item).map(crate::tui::panes::compact).unwrap_or_default(),
        LineStatus::Empty => rust_i18n::t!("tui.pane.line_empty").into_owned(),
        LineStatus::Fence => rust_i18n::t!("tui.pane.line_fence").into_owned(),
        LineStatus::InvalidJson { column, message } | LineStatus::IntTooLong { column, message, .. } => {
            rust_i18n::t!("tui.pane.line_invalid", column = column, message = message).into_owned()
        }
        LineStatus::TooDeep { depth, .. } => rust_i18n::t!("tui.pane.line_too_deep", depth = depth).into_owned(),
        LineStatus::SchemaInvalid { errors } => {
            errors.iter().map(super::json::violation).collect::<Vec<_>>().join("; ")
        }
        LineStatus::Truncated { column, message } => {
            rust_i18n::t!("tui.pane.line_cut", column = column, message = message).into_owned()
        }
    }
}

/// A line's row: its prefix (mark and number) and what happened to it.
fn line_row(d: &JsonlData<'_>, l: &crate::output::jsonl::LineOutcome) -> (String, String) {
    let mark = match l.status {
        LineStatus::Ok { .. } => "✓",
        LineStatus::Empty | LineStatus::Fence => "·",
        _ => "✗",
    };
    let mut body = describe(&l.status, d.analysis);
    if let Some(why) = ignored_rejects(d, &l.status) {
        body = rust_i18n::t!("tui.pane.object_schema_rejects", body = body, why = why).into_owned();
    }
    (format!("{mark} {:>4} ", l.line), body)
}

/// Row `i` as text (what search looks in).
pub fn row_text(d: &JsonlData<'_>, i: usize) -> Option<String> {
    if i == 0 {
        return Some(
            header(d, Theme::default())
                .spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect(),
        );
    }
    let (prefix, body) = line_row(d, d.analysis.lines.get(i - 1)?);
    Some(prefix + &body)
}

/// Why the ignored `object-schema` would reject a kept line, if it would.
fn ignored_rejects(d: &JsonlData<'_>, status: &LineStatus) -> Option<String> {
    let LineStatus::Ok { item } = status else {
        return None;
    };
    let errors = d.ignored?.validate(d.analysis.items.get(*item)?).err()?;
    Some(errors.iter().map(super::json::violation).collect::<Vec<_>>().join("; "))
}

/// Draw the JSONL pane.
pub fn draw(
    f: &mut Frame<'_>,
    area: Rect,
    d: &JsonlData<'_>,
    scroll: Scroll,
    focused: bool,
    theme: Theme,
    title: &str,
) {
    let head = header(d, theme);
    let total = rows(d);
    let row = |i: usize, w: usize| -> Line<'static> {
        if i == 0 {
            return crate::tui::panes::clip_line(&head, w);
        }
        let l = &d.analysis.lines[i - 1];
        let style = match l.status {
            LineStatus::Ok { .. } => theme.ok(),
            LineStatus::Empty | LineStatus::Fence => theme.dim(),
            _ => theme.bad(),
        };
        let (prefix, body) = line_row(d, l);
        let room = w.saturating_sub(text::width(&prefix));
        let body_style = match l.status {
            LineStatus::Ok { .. } => ratatui::style::Style::new(),
            LineStatus::Empty | LineStatus::Fence => theme.dim(),
            _ => theme.bad(),
        };
        Line::from(vec![
            Span::styled(prefix, style),
            Span::styled(text::clip(&body, room), body_style),
        ])
    };
    crate::tui::panes::draw_rows(f, area, title, focused, theme, total, scroll, &row);
}
