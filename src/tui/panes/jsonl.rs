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
            format!("✗ TrustGraph raises at line {}: 0 items · ", r.line),
            theme.bad(),
        ));
    }
    spans.extend([
        Span::styled(format!("✓ {} kept", c.ok), theme.ok()),
        Span::raw(" · "),
        Span::styled(
            format!(
                "✗ {} not JSON · {} schema · {} cut",
                c.invalid_json, c.schema_invalid, c.truncated
            ),
            if c.invalid_json + c.schema_invalid + c.truncated > 0 {
                theme.bad()
            } else {
                theme.dim()
            },
        ),
        Span::styled(format!(" · {} blank", c.empty + c.fence), theme.dim()),
    ]);
    if d.live {
        spans.push(Span::styled(" · streaming", theme.dim()));
    }
    Line::from(spans)
}

/// The text of one line's outcome (after its marker and number).
pub fn describe(status: &LineStatus, a: &JsonlAnalysis) -> String {
    match status {
        LineStatus::Ok { item } => a.items.get(*item).map(super::compact).unwrap_or_default(),
        LineStatus::Empty => "empty".into(),
        LineStatus::Fence => "code fence (skipped)".into(),
        LineStatus::InvalidJson { column, message } => format!("invalid JSON at column {column}: {message}"),
        LineStatus::TooDeep { depth, .. } => {
            format!("nested {depth} deep, past Python's limit: TrustGraph fails the whole response")
        }
        LineStatus::SchemaInvalid { errors } => {
            errors.iter().map(super::json::violation).collect::<Vec<_>>().join("; ")
        }
        LineStatus::Truncated { column, message } => format!("truncated at column {column}: {message}"),
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
        body = format!("{body} · object-schema (ignored by TrustGraph) would reject: {why}");
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
            return super::json::clip_line(&head, w);
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
    super::draw_rows(f, area, title, focused, theme, total, scroll, &row);
}
