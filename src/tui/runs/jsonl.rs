//! The JSONL parse, line by line: ✓ for a kept object, ✗ with the error for
//! a line that is not JSON (at its column), fails the schema (at its JSON
//! pointer, with the union branch) or was cut; counts on top.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::output::jsonl::{JsonlAnalysis, LineOutcome, LineStatus};
use crate::output::schema::CompiledSchema;
use crate::output::verdict::{Fails, Mark, Sign, Tally, Voice, violation};

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
    let tally = Tally::of(d.analysis.counts);
    let mut spans = Vec::new();
    // The verdict that overrides every line goes first, where it is not cut.
    if let Some(f) = Fails::jsonl(d.analysis).and_then(|f| f.sentence(Voice::Pane)) {
        spans.push(Span::styled(f, theme.bad()));
    }
    let [kept, errors, blank] = tally.pane_parts();
    spans.extend([
        Span::styled(kept, theme.ok()),
        Span::raw(" · "),
        Span::styled(errors, if tally.rejected() > 0 { theme.bad() } else { theme.dim() }),
        Span::styled(blank, theme.dim()),
    ]);
    if d.live {
        spans.push(Span::styled(
            rust_i18n::t!("tui.pane.streaming").into_owned(),
            theme.dim(),
        ));
    }
    Line::from(spans)
}

/// A line's row: its prefix (mark and number), what happened to it, and
/// how it reads at a glance.
fn line_row(d: &JsonlData<'_>, l: &LineOutcome) -> (String, String, Sign) {
    let m = Mark::line_of(l, d.analysis);
    let mut body = m.sentence(Voice::Pane).unwrap_or_default();
    if let Some(why) = ignored_rejects(d, &l.status) {
        body = rust_i18n::t!("tui.pane.object_schema_rejects", body = body, why = why).into_owned();
    }
    (
        format!("{} {:>4} ", m.sign().glyph(Voice::Pane), l.line),
        body,
        m.sign(),
    )
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
    let (prefix, body, _) = line_row(d, d.analysis.lines.get(i - 1)?);
    Some(prefix + &body)
}

/// Why the ignored `object-schema` would reject a kept line, if it would.
fn ignored_rejects(d: &JsonlData<'_>, status: &LineStatus) -> Option<String> {
    let LineStatus::Ok { item } = status else {
        return None;
    };
    let errors = d.ignored?.validate(d.analysis.items.get(*item)?).err()?;
    Some(
        errors
            .iter()
            .map(|v| violation(v, Voice::Pane))
            .collect::<Vec<_>>()
            .join("; "),
    )
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
        let (prefix, body, sign) = line_row(d, &d.analysis.lines[i - 1]);
        let (style, body_style) = match sign {
            Sign::Kept => (theme.ok(), ratatui::style::Style::new()),
            Sign::Neutral => (theme.dim(), theme.dim()),
            Sign::Rejected => (theme.bad(), theme.bad()),
        };
        let room = w.saturating_sub(text::width(&prefix));
        Line::from(vec![
            Span::styled(prefix, style),
            Span::styled(text::clip(&body, room), body_style),
        ])
    };
    let listing = crate::tui::panes::Rows {
        title,
        focused,
        total,
        scroll,
        row: &row,
    };
    crate::tui::panes::draw_rows(f, area, &listing, theme);
}
