//! Draw the Migrate tab: a head row (write, overwrite, written) over the
//! migration's rows, a screenful at a time.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::rows::{Kind, Row};
use crate::tui::keymap::Action;
use crate::tui::state::{State, Tab};
use crate::tui::theme::Theme;
use crate::tui::{layout, panes, text};

/// Rows the tab scrolls over (the reducer's and the view's count).
pub fn rows(m: &super::MigrateView) -> usize {
    m.rows.len()
}

fn style(kind: Kind, theme: Theme) -> ratatui::style::Style {
    match kind {
        Kind::Heading | Kind::Hunk => theme.accent(),
        Kind::Same => theme.dim(),
        Kind::Removed | Kind::Bad => theme.bad(),
        Kind::Added | Kind::Good => theme.ok(),
        Kind::Flag => theme.warn(),
        Kind::Note => ratatui::style::Style::new(),
    }
}

/// Draw the Migrate tab.
#[allow(
    clippy::many_single_char_names,
    reason = "layout rectangles and styles named as ratatui does (f, area, s, k)"
)]
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let theme = s.theme;
    let k = |a| s.keymap.key_for(a);
    let Some(m) = &s.migrate else {
        panes::draw_note(
            f,
            area,
            &Tab::Migrate.title(),
            vec![
                Line::from(rust_i18n::t!("tui.pane.migrate_nothing").into_owned()),
                Line::from(""),
                Line::from(rust_i18n::t!("tui.pane.migrate_how", key = k(Action::Migrate)).into_owned()),
            ],
            theme,
        );
        return;
    };
    let (title, head) = match &m.result {
        Ok(x) => {
            let head = match (&m.written, m.confirm_overwrite) {
                (Some(w), _) => Row {
                    kind: Kind::Good,
                    text: rust_i18n::t!("tui.pane.migrate_written", file = w, twins = k(Action::Twins)).into_owned(),
                },
                (None, true) => Row {
                    kind: Kind::Flag,
                    text: rust_i18n::t!(
                        "tui.pane.migrate_exists",
                        file = m.target,
                        key = k(Action::MigrateWrite)
                    )
                    .into_owned(),
                },
                (None, false) => Row {
                    kind: Kind::Note,
                    text: rust_i18n::t!(
                        "tui.pane.migrate_write_hint",
                        write = k(Action::MigrateWrite),
                        file = m.target,
                        twins = k(Action::Twins)
                    )
                    .into_owned(),
                },
            };
            let title = rust_i18n::t!("tui.pane.migrate_title", source = m.source.id, target = x.config.id);
            (title.into_owned(), Some(head))
        }
        Err(_) => (
            rust_i18n::t!("tui.pane.migrate_title_none", source = m.source.id).into_owned(),
            None,
        ),
    };
    let inner_h = layout::inner_height(area).saturating_sub(usize::from(head.is_some()));
    let rows = &m.rows;
    let total = self::rows(m);
    let top = m.top.min(total.saturating_sub(inner_h));
    let end = (top + inner_h).min(total);
    let mut spans = vec![Span::styled(title, theme.accent())];
    if total > inner_h {
        spans.push(Span::styled(format!(" {}–{end}/{total} ", top + 1), theme.dim()));
    }
    let b = panes::block(Line::from(spans), true, theme);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let w = usize::from(inner.width);
    let lines: Vec<Line<'static>> = head
        .iter()
        .chain(&rows[top..end])
        .map(|r| Line::styled(text::clip(&r.text, w), style(r.kind, theme)))
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}
