//! The JSON-array parse: the strict verdict as a production consumer sees it
//! (ok, or where it stopped and why), then every complete element salvage
//! recovered, each marked valid or not, and — when strict failed — marked as
//! salvaged.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::output::json::{JsonAnalysis, JsonStatus, SalvagedElement};
use crate::output::verdict::{ElementKind, Fails, Mark, Salvage, Strict, Voice};

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
    let pane = Voice::Pane;
    let mut out = Vec::new();
    // The verdict that overrides the whole response goes first.
    if let Some(f) = d.analysis.and_then(Fails::json).and_then(|f| f.sentence(pane)) {
        out.push(Line::styled(f, theme.bad()));
    }
    let strict = Strict::of(d.analysis, d.live);
    let headline = strict.sentence(pane).unwrap_or_default();
    match strict {
        Strict::Pending | Strict::Missing => out.push(Line::styled(headline, theme.dim())),
        Strict::Ok { .. } => out.push(Line::from(vec![
            Span::styled(headline, theme.ok()),
            Span::raw(strict.gets(pane).unwrap_or_default()),
        ])),
        Strict::Invalid(_) | Strict::Schema(_) => {
            out.push(if matches!(strict, Strict::Invalid(_)) {
                Line::from(vec![Span::styled(headline, theme.bad())])
            } else {
                Line::styled(headline, theme.bad())
            });
            out.extend(strict.details(pane).into_iter().map(|w| Line::from(format!("  {w}"))));
            out.push(Line::styled(strict.gets(pane).unwrap_or_default(), theme.bad()));
        }
    }
    let mut salvage = Salvage::of(d.elements).sentence(pane);
    if d.live {
        salvage.push_str(&rust_i18n::t!("tui.pane.streaming"));
    }
    out.push(Line::styled(salvage, theme.dim()));
    if let Some(stop) = d.analysis.and_then(|a| a.salvage_stop.as_ref()) {
        let words = Mark::SalvageStop(stop).sentence(pane).unwrap_or_default();
        out.push(Line::styled(words, theme.dim()));
    }
    for b in d.analysis.map_or(&[][..], |a| &a.broken[..]) {
        let words = Mark::Skipped(b).sentence(pane).unwrap_or_default();
        out.push(Line::styled(words, theme.warn()));
    }
    out
}

/// Rows the pane has: the header and one per element.
pub fn rows(d: &JsonData<'_>) -> usize {
    header(d, Theme::default()).len() + d.elements.len()
}

/// An element's tag in the UI language (`item`, `salvaged`, `invalid`),
/// padded to the widest of the three so the rows' bodies line up.
fn tag(kind: ElementKind) -> String {
    let word = |k: ElementKind| match k {
        ElementKind::Item => rust_i18n::t!("tui.pane.tag_item"),
        ElementKind::Salvaged => rust_i18n::t!("tui.pane.tag_salvaged"),
        ElementKind::Invalid => rust_i18n::t!("tui.pane.tag_invalid"),
    };
    let widest = [ElementKind::Item, ElementKind::Salvaged, ElementKind::Invalid]
        .map(|k| text::width(&word(k)))
        .into_iter()
        .max()
        .unwrap_or(0);
    crate::i18n::left(&word(kind), widest)
}

/// An element's row: its prefix (mark, line, tag), its kind and its body.
fn element_row(e: &SalvagedElement, strict_ok: bool) -> (String, ElementKind, String) {
    let kind = ElementKind::of(e, strict_ok);
    let m = Mark::Element { element: e, kind };
    let prefix = format!("{} L{:<4} {} ", m.sign().glyph(Voice::Pane), e.line, tag(kind));
    (prefix, kind, m.sentence(Voice::Pane).unwrap_or_default())
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
        let (prefix, kind, body) = element_row(e, strict_ok);
        let room = w.saturating_sub(text::width(&prefix));
        Line::from(vec![
            Span::styled(prefix, style),
            Span::styled(
                text::clip(&body, room),
                if kind == ElementKind::Salvaged {
                    theme.warn()
                } else {
                    ratatui::style::Style::new()
                },
            ),
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
