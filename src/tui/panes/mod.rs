//! One file per pane. Each draws from state (or from the data it is handed)
//! and draws only the rows that are visible, so a 50,000-line response costs
//! no more per frame than a 50-line one.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::state::{OutPane, Scroll, State, Tab};
use super::theme::Theme;

pub mod compare;
pub mod costs;
pub mod editor;
pub mod help;
pub mod json;
pub mod jsonl;
pub mod migrate;
pub mod prompts;
pub mod providers;
pub mod response;
pub mod sessions;
pub mod status;
pub mod sweep;

/// A pane's frame: its title, highlighted when focused.
pub fn block(title: Line<'static>, focused: bool, theme: Theme) -> Block<'static> {
    let b = Block::default().borders(Borders::ALL).title(title);
    if focused {
        b.border_style(theme.accent())
    } else {
        b.border_style(theme.dim())
    }
}

/// Draw a scrolling list of `total` rows in a framed pane, building only the
/// visible rows with `row(index, width)`. The title gets the visible range.
#[allow(clippy::too_many_arguments)]
pub fn draw_rows(
    f: &mut Frame<'_>,
    area: Rect,
    title: &str,
    focused: bool,
    theme: Theme,
    total: usize,
    scroll: Scroll,
    row: &dyn Fn(usize, usize) -> Line<'static>,
) {
    let inner_h = super::layout::inner_height(area);
    let top = scroll.top_for(total, inner_h);
    let end = (top + inner_h).min(total);
    let range = if total > inner_h {
        format!(" {}–{}/{} ", top + 1, end, total)
    } else {
        String::new()
    };
    let mut spans = vec![Span::styled(
        format!(" {title} "),
        if focused { theme.accent() } else { theme.dim() },
    )];
    if !range.is_empty() {
        spans.push(Span::styled(range, theme.dim()));
    }
    let b = block(Line::from(spans), focused, theme);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let w = usize::from(inner.width);
    let lines: Vec<Line<'static>> = (top..end).map(|i| row(i, w)).collect();
    f.render_widget(Paragraph::new(lines), inner);
}

/// A framed pane holding a few lines of text.
pub fn draw_note(f: &mut Frame<'_>, area: Rect, title: &str, lines: Vec<Line<'static>>, theme: Theme) {
    let b = block(Line::styled(format!(" {title} "), theme.dim()), false, theme);
    let inner = b.inner(area);
    f.render_widget(b, area);
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// Rows of a scrolling pane in the current tab (for the reducer's scrolling).
pub fn rows(s: &State, pane: OutPane) -> usize {
    match pane {
        OutPane::Response => s.shown.as_ref().map_or(0, |x| x.json_side().line_count()),
        OutPane::Response2 => s.shown.as_ref().map_or(0, |x| x.jsonl_side().line_count()),
        OutPane::Json => json_source(s).map_or(0, |d| json::rows(&d)),
        OutPane::Jsonl => jsonl_source(s).map_or(0, |d| jsonl::rows(&d)),
    }
}

/// The text of row `i` of a scrolling pane, as drawn but unclipped (what
/// `/` searches).
pub fn row_text(s: &State, pane: OutPane, i: usize) -> Option<String> {
    match pane {
        OutPane::Response | OutPane::Response2 => {
            let shown = s.shown.as_ref()?;
            let r = if pane == OutPane::Response {
                shown.json_side()
            } else {
                shown.jsonl_side()
            };
            (i < r.line_count()).then(|| super::text::line_at(&r.text, &r.line_starts, i).to_owned())
        }
        OutPane::Json => json::row_text(&json_source(s)?, i),
        OutPane::Jsonl => jsonl::row_text(&jsonl_source(s)?, i),
    }
}

/// What the JSON pane shows in the current tab: the run, or its cut at the
/// sweep cursor.
pub fn json_source(s: &State) -> Option<json::JsonData<'_>> {
    if s.tab == Tab::Sweep {
        let c = s.sweep.ready()?.json_cut.as_ref()?;
        return Some(json::JsonData {
            elements: &c.json.elements,
            analysis: Some(&c.json),
            live: false,
            text: None,
        });
    }
    let r = s.shown.as_ref()?.json_side();
    Some(json::JsonData {
        elements: &r.elements,
        analysis: r.json.as_ref(),
        live: r.live(),
        text: Some(&r.text),
    })
}

/// What the JSONL pane shows in the current tab.
pub fn jsonl_source(s: &State) -> Option<jsonl::JsonlData<'_>> {
    if s.tab == Tab::Sweep {
        let c = s.sweep.ready()?.jsonl_cut.as_ref()?;
        return Some(jsonl::JsonlData {
            analysis: &c.jsonl,
            live: false,
            ignored: None,
        });
    }
    let r = s.shown.as_ref()?.jsonl_side();
    Some(jsonl::JsonlData {
        analysis: &r.jsonl,
        live: r.live(),
        ignored: r.ignored.as_deref(),
    })
}

/// A value as one line of compact JSON.
pub fn compact(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
