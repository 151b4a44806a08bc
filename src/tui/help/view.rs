//! `?`: every key, from the keymap in force (so rebinding shows here).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use rust_i18n::t;

use crate::tui::keymap::{Action, Keymap};
use crate::tui::text;
use crate::tui::theme::Theme;

/// The help's lines: (keys, what).
pub fn entries(keymap: &Keymap) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Action::ALL
        .iter()
        .map(|(a, name, _)| {
            let keys = keymap.keys_for(*a);
            (
                if keys.is_empty() {
                    t!("tui.help.unbound").into_owned()
                } else {
                    keys.join(" ")
                },
                t!(format!("tui.action.{name}")).into_owned(),
            )
        })
        .collect();
    // The components' own keys, after the built-in actions.
    for k in keymap.own() {
        let keys = keymap.keys_for(Action::Own(k.name));
        v.push((
            if keys.is_empty() {
                t!("tui.help.unbound").into_owned()
            } else {
                keys.join(" ")
            },
            t!(k.help).into_owned(),
        ));
    }
    for k in [
        "ctrl_c", "filter", "search", "limit", "picker", "migrate", "editing", "undo", "wheel", "click", "any",
    ] {
        v.push((
            t!(format!("tui.help.{k}_key")).into_owned(),
            t!(format!("tui.help.{k}")).into_owned(),
        ));
    }
    // The eval view's own keys, after the other views' (its block of the
    // catalogue).
    v.insert(
        v.len() - 1,
        (t!("tui.eval.help_key").into_owned(), t!("tui.eval.help").into_owned()),
    );
    v
}

/// The help's columns at `area`'s width (two from 100 columns).
fn columns(area: Rect) -> usize {
    if area.width >= 100 { 2 } else { 1 }
}

/// How many rows the help has at `area`'s width, and how many of them
/// `area` shows (inside its border).
pub fn rows_and_height(keymap: &Keymap, area: Rect) -> (usize, usize) {
    let rows = entries(keymap).len().div_ceil(columns(area));
    (rows, usize::from(area.height.saturating_sub(2)))
}

/// Draw the help over the whole `area`, from row `top`; when it is longer
/// than `area`, its title says which rows are on show and how to scroll.
pub fn draw(f: &mut Frame<'_>, area: Rect, keymap: &Keymap, theme: Theme, top: usize) {
    let e = entries(keymap);
    let cols = columns(area);
    let per_col = e.len().div_ceil(cols);
    let w = usize::from(area.width.saturating_sub(2)) / cols;
    let key_w = 16.min(w / 3);
    let mut lines = Vec::with_capacity(per_col);
    for r in 0..per_col {
        let mut spans = Vec::new();
        for c in 0..cols {
            if let Some((k, d)) = e.get(c * per_col + r) {
                spans.push(Span::styled(text::pad(k, key_w), theme.accent()));
                spans.push(Span::raw(" "));
                spans.push(Span::raw(text::pad(d, w.saturating_sub(key_w + 2))));
                spans.push(Span::raw(" "));
            }
        }
        lines.push(Line::from(spans));
    }
    let (rows, height) = rows_and_height(keymap, area);
    let top = top.min(rows.saturating_sub(height));
    let title = if rows > height {
        t!(
            "tui.help.title_scroll",
            from = top + 1,
            to = (top + height).min(rows),
            rows = rows
        )
    } else {
        t!("tui.help.title")
    };
    let b = crate::tui::panes::block(Line::styled(title.into_owned(), theme.accent()), true, theme);
    f.render_widget(Clear, area);
    let top = u16::try_from(top).unwrap_or(u16::MAX);
    f.render_widget(Paragraph::new(lines).block(b).scroll((top, 0)), area);
}
