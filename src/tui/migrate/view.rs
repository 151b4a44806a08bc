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

/// Screen lines the tab scrolls over at `width` columns inside its border
/// (a long row wraps): the reducer's and the view's count.
pub fn rows(m: &super::MigrateView, width: usize) -> usize {
    m.rows.iter().map(|r| wrap(r, width, Theme { color: false }).len()).sum()
}

/// One row as screen lines of at most `width` columns: a long line wraps
/// at a space where it can (under its sign column) instead of being cut
/// before its edit, and the words it changed are in reverse video.
pub fn wrap(r: &Row, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let base = style(r.kind, theme);
    let emph = base.add_modifier(ratatui::style::Modifier::REVERSED);
    let style_at = |i: usize| if r.changed.iter().any(|x| x.contains(&i)) { emph } else { base };
    breaks(&r.text, width.max(2))
        .into_iter()
        .enumerate()
        .map(|(n, range)| {
            let mut spans: Vec<Span<'static>> = Vec::new();
            if n > 0 {
                spans.push(Span::styled(" ", base));
            }
            let mut run = String::new();
            let mut run_style = base;
            for (i, c) in r.text[range.clone()].char_indices() {
                let st = style_at(range.start + i);
                if st != run_style && !run.is_empty() {
                    spans.push(Span::styled(std::mem::take(&mut run), run_style));
                }
                run_style = st;
                run.push(c);
            }
            spans.push(Span::styled(run, run_style));
            Line::from(spans)
        })
        .collect()
}

/// Where `text` breaks into lines of at most `width` columns (the lines
/// after the first one column narrower, for the indent): greedily at the
/// last space that fits, else inside a word too long for a line.
fn breaks(text: &str, width: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut used, mut space) = (0, 0, None);
    let mut room = width;
    for (i, c) in text.char_indices() {
        let cw = text::char_width(c);
        if used + cw > room && i > start {
            let cut = space.filter(|&sp| sp > start).unwrap_or(i);
            out.push(start..cut);
            start = cut;
            used = text::width(&text[start..i]);
            room = width - 1;
            space = None;
        }
        if c == ' ' {
            space = Some(i + 1);
        }
        used += cw;
    }
    out.push(start..text.len());
    out
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
                    changed: Vec::new(),
                },
                (None, true) => Row {
                    kind: Kind::Flag,
                    text: rust_i18n::t!(
                        "tui.pane.migrate_exists",
                        file = m.target,
                        key = k(Action::MigrateWrite)
                    )
                    .into_owned(),
                    changed: Vec::new(),
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
                    changed: Vec::new(),
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
    let w = usize::from(area.width.saturating_sub(2));
    let body: Vec<Line<'static>> = m.rows.iter().flat_map(|r| wrap(r, w, theme)).collect();
    let total = body.len();
    let top = m.top.min(total.saturating_sub(inner_h));
    let end = (top + inner_h).min(total);
    let mut spans = vec![Span::styled(title, theme.accent())];
    if total > inner_h {
        spans.push(Span::styled(format!(" {}–{end}/{total} ", top + 1), theme.dim()));
    }
    let b = panes::block(Line::from(spans), true, theme);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let lines: Vec<Line<'static>> = head
        .iter()
        .map(|r| Line::styled(text::clip(&r.text, w), style(r.kind, theme)))
        .chain(body[top..end].iter().cloned())
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}
