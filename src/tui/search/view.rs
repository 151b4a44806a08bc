//! The search hit on screen.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::tui::State;
use crate::tui::layout;

/// Show the current search hit (`/`) in reverse video across its row.
pub fn mark_hit(f: &mut Frame<'_>, body: Rect, s: &State) {
    let Some((x, hit)) = s.search.as_ref().and_then(|x| x.row.map(|r| (x, r))) else {
        return;
    };
    if s.focus_in_tab() != x.pane {
        return;
    }
    let area = layout::pane_rect_in(s, body, x.pane);
    let height = layout::inner_height(area);
    let rows = crate::tui::runs::rows(s, x.pane);
    let top = s.scroll(x.pane).top_for(rows, height);
    if hit < top || hit >= top + height {
        return;
    }
    let Ok(dy) = u16::try_from(hit - top) else { return };
    let row = ratatui::layout::Rect {
        x: area.x + 1,
        y: area.y + 1 + dy,
        width: area.width.saturating_sub(2),
        height: 1,
    }
    .intersection(f.area());
    f.buffer_mut().set_style(
        row,
        ratatui::style::Style::new().add_modifier(ratatui::style::Modifier::REVERSED),
    );
}
