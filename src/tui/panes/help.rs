//! `?`: every key, from the keymap in force (so rebinding shows here).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::super::keymap::{Action, Keymap};
use super::super::text;
use super::super::theme::Theme;

/// The help's lines: (keys, what).
pub fn entries(keymap: &Keymap) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Action::ALL
        .iter()
        .map(|(a, _, d)| {
            let keys = keymap.keys_for(*a);
            (
                if keys.is_empty() {
                    "(unbound)".into()
                } else {
                    keys.join(" ")
                },
                (*d).to_owned(),
            )
        })
        .collect();
    for (k, d) in [
        ("Ctrl-C", "quit (always)"),
        ("typing after /", "filter; Enter keeps, Esc clears"),
        ("typing after m", "digits, Enter (0 = no limit), Esc cancels"),
        ("provider picker", "↑/↓ Enter chooses · e model · Esc"),
        ("Migrate tab: t", "run original and migrated as twins"),
        ("editing", "Esc stops · Ctrl-S saves"),
        ("editing: Ctrl-U", "undo (Ctrl-R redoes)"),
        ("mouse wheel", "scroll the pane under the pointer"),
        ("click a tab", "switch to it"),
        ("any key", "closes this help"),
    ] {
        v.push((k.to_owned(), d.to_owned()));
    }
    v
}

/// Draw the help over the whole `area`.
pub fn draw(f: &mut Frame<'_>, area: Rect, keymap: &Keymap, theme: Theme) {
    let e = entries(keymap);
    let cols = if area.width >= 100 { 2 } else { 1 };
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
    let b = super::block(
        Line::styled(
            " Keys — rebind in the [keys] table of cutline.toml · any key closes ",
            theme.accent(),
        ),
        true,
        theme,
    );
    f.render_widget(Clear, area);
    f.render_widget(Paragraph::new(lines).block(b), area);
}
