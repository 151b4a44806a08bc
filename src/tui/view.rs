//! Draw the whole workbench from state: the tab bar, the body on show (the
//! open view over the tab, else the tab's component, with the sections
//! under it), the marks over it, the status bar and, on top, the popup
//! whose mode holds the keys. Which component draws what is the registry's
//! answer; this file names none.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::component::Place;
use super::layout;
use super::registry;
use super::state::{State, Tab};

/// Draw one frame.
pub fn draw(f: &mut Frame<'_>, s: &State) {
    let area = f.area();
    let sc = layout::screen(area);
    draw_tabs(f, sc.tabs, s);
    if let Some(c) = registry::body(s) {
        let under = registry::under(s, c.id());
        c.draw(f, sc.body, s, &under);
    }
    for c in registry::on_show(s).filter(|c| matches!(c.place(), Place::Marks(_))) {
        c.draw(f, sc.body, s, &[]);
    }
    super::status::draw(f, sc.status, s);
    for c in registry::on_show(s).filter(|c| c.place() == Place::Popup) {
        c.draw(f, sc.body, s, &[]);
    }
}

fn draw_tabs(f: &mut Frame<'_>, area: ratatui::layout::Rect, s: &State) {
    let mut spans = Vec::new();
    for (i, t) in Tab::ALL.iter().enumerate() {
        let style = if *t == s.tab { s.theme.selected() } else { s.theme.dim() };
        spans.push(Span::styled(layout::tab_label(i, *t), style));
        spans.push(Span::raw(" "));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}
