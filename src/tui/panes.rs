//! What every pane draws with: its frame, a scrolling list that builds only
//! the visible rows (so a 50,000-line response costs no more per frame than
//! a 50-line one), a framed note, a clipped line. The panes themselves live
//! in their features' `view.rs`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::state::Scroll;
use super::theme::Theme;

/// A pane's frame: its title, highlighted when focused.
pub fn block(title: Line<'static>, focused: bool, theme: Theme) -> Block<'static> {
    let b = Block::default().borders(Borders::ALL).title(title);
    if focused {
        b.border_style(theme.accent())
    } else {
        b.border_style(theme.dim())
    }
}

/// A scrolling list of `total` rows, built one visible row at a time.
pub struct Rows<'a> {
    /// The pane's title (the visible range is added to it).
    pub title: &'a str,
    /// Whether the pane has focus (its title and frame are highlighted).
    pub focused: bool,
    /// How many rows there are.
    pub total: usize,
    /// Where the list is scrolled.
    pub scroll: Scroll,
    /// Row `index` at `width` columns.
    pub row: &'a dyn Fn(usize, usize) -> Line<'static>,
}

/// Draw a scrolling list in a framed pane, building only the visible rows.
/// The title gets the visible range.
pub fn draw_rows(f: &mut Frame<'_>, area: Rect, list: &Rows<'_>, theme: Theme) {
    let Rows {
        title,
        focused,
        total,
        scroll,
        row,
    } = *list;
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

/// Draw `body` in a focused frame titled `title`, scrolled to row `top`
/// (kept in range); the title gets the visible range when not all fits.
pub fn draw_scrolled(f: &mut Frame<'_>, area: Rect, title: String, body: Vec<Line<'static>>, top: usize, theme: Theme) {
    let inner_h = super::layout::inner_height(area);
    let total = body.len();
    let top = top.min(total.saturating_sub(inner_h));
    let mut spans = vec![Span::styled(title, theme.accent())];
    if total > inner_h {
        spans.push(Span::styled(
            format!(" {}–{}/{total} ", top + 1, (top + inner_h).min(total)),
            theme.dim(),
        ));
    }
    let b = block(Line::from(spans), true, theme);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let w = usize::from(inner.width);
    let shown: Vec<Line<'static>> = body
        .into_iter()
        .skip(top)
        .take(inner_h)
        .map(|l| clip_line(&l, w))
        .collect();
    f.render_widget(Paragraph::new(shown), inner);
}

/// A framed pane holding a few lines of text.
pub fn draw_note(f: &mut Frame<'_>, area: Rect, title: &str, lines: Vec<Line<'static>>, theme: Theme) {
    let b = block(Line::styled(format!(" {title} "), theme.dim()), false, theme);
    let inner = b.inner(area);
    f.render_widget(b, area);
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// Clear `r` for a popup. A wide character just left of `r` whose second
/// half `r` covers is blanked too: a terminal draws it whole, over the
/// popup's left border (a CJK character of the pane under a popup).
pub fn clear_popup(f: &mut Frame<'_>, r: Rect) {
    f.render_widget(Clear, r);
    let Some(left) = r.x.checked_sub(1) else { return };
    let buf = f.buffer_mut();
    for y in r.top()..r.bottom() {
        if let Some(cell) = buf.cell_mut((left, y))
            && super::text::width(cell.symbol()) > 1
        {
            cell.set_symbol(" ");
        }
    }
}

/// A styled line clipped to `w` columns (spans kept, styles kept).
pub fn clip_line(l: &Line<'static>, w: usize) -> Line<'static> {
    let mut left = w;
    let mut spans = Vec::new();
    for s in &l.spans {
        if left == 0 {
            break;
        }
        let c = super::text::clip(&s.content, left);
        left = left.saturating_sub(super::text::width(&c));
        spans.push(Span::styled(c, s.style));
    }
    Line::from(spans).style(l.style)
}

/// A list position `v` moved by `by` rows within `len` rows, saturating.
pub fn step(v: usize, by: isize, len: usize) -> usize {
    let max = len.saturating_sub(1);
    let next = if by < 0 {
        v.saturating_sub(by.unsigned_abs())
    } else {
        v.saturating_add(by.unsigned_abs())
    };
    next.min(max)
}

/// Focus the next (`dir` 1) or previous pane of `order` after the one
/// focused now.
pub fn focus_in(s: &mut super::state::State, order: &[super::state::OutPane], dir: isize) {
    let cur = order.iter().position(|p| *p == s.focus_in_tab()).unwrap_or(0);
    let n = order.len();
    let next = if dir < 0 { (cur + n - 1) % n } else { (cur + 1) % n };
    s.focus = order[next];
}
