//! Draw the whole workbench from state: the tab bar, the active tab's panes,
//! the status bar and, on top, the help.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::layout;
use super::state::{State, Tab};

/// Draw one frame.
pub fn draw(f: &mut Frame<'_>, s: &State) {
    let area = f.area();
    let sc = layout::screen(area);
    draw_tabs(f, sc.tabs, s);
    match s.tab {
        Tab::Prompts => super::prompts::view::draw(f, sc.body, s),
        Tab::Edit => super::editor::view::draw(f, sc.body, s),
        Tab::Run => super::run::view::draw(f, sc.body, s),
        Tab::Sweep => super::sweep::view::draw(f, sc.body, s),
        Tab::Sessions => super::sessions::view::draw(f, sc.body, s),
        Tab::Migrate => super::migrate::view::draw(f, sc.body, s),
        Tab::Compare if s.eval.open => super::eval::view::draw(f, sc.body, s),
        Tab::Compare => super::compare::view::draw(f, sc.body, s),
    }
    if matches!(s.tab, Tab::Run | Tab::Sweep) {
        super::search::view::mark_hit(f, sc.body, s);
    }
    super::status::draw(f, sc.status, s);
    if matches!(s.mode, super::state::Mode::Picker | super::state::Mode::ModelInput(_)) {
        super::providers::view::draw(f, sc.body, s);
    }
    if s.mode == super::state::Mode::Help {
        super::help::view::draw(f, sc.body, &s.keymap, s.theme);
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
