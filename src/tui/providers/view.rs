//! The provider picker (a popup over the tab): `replay`, `local`, then every
//! provider configured in cutline.toml with its kind and model. A provider
//! whose key variable is unset says so by the variable's name; a key's value
//! is never read into the workbench's state, so it cannot be shown.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::state::{Mode, State};
use crate::tui::{panes, text};

/// The picker's rows as text: (label, note, problem).
pub fn rows(s: &State) -> Vec<(String, String, bool)> {
    let p = &s.picker;
    let local_missing = s.local_installed == Some(false);
    let mut out = vec![
        (
            "replay".to_owned(),
            rust_i18n::t!("tui.pane.picker_replay", dir = s.sessions_dir.display()).into_owned(),
            false,
        ),
        (
            "local".to_owned(),
            if local_missing {
                rust_i18n::t!("tui.pane.picker_local_missing").into_owned()
            } else {
                rust_i18n::t!("tui.pane.picker_local").into_owned()
            },
            local_missing,
        ),
    ];
    for e in &p.entries {
        let model = p
            .model_of(e)
            .unwrap_or_else(|| rust_i18n::t!("tui.pane.no_model").into_owned());
        let key = match (e.config.key_env(), e.key_set) {
            (_, true) => String::new(),
            (Some(var), false) => rust_i18n::t!("tui.pane.key_missing_var", var = var).into_owned(),
            (None, false) => rust_i18n::t!("tui.pane.key_missing").into_owned(),
        };
        out.push((
            e.config.name.clone(),
            rust_i18n::t!(
                "tui.pane.picker_row",
                kind = e.config.kind.as_str(),
                model = model,
                key = key
            )
            .into_owned(),
            !e.key_set,
        ));
    }
    out
}

/// Draw the picker over `area`.
#[allow(
    clippy::many_single_char_names,
    reason = "layout rectangles and styles named as ratatui does (f, area, s, k)"
)]
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let theme = s.theme;
    let rows = rows(s);
    let w = area.width.min(110);
    let inner_w = usize::from(w.saturating_sub(2));
    let current = s.provider.label();
    let mut lines = Vec::new();
    for (i, (name, note, bad)) in rows.iter().enumerate() {
        let cursor = if i == s.picker.selected { '›' } else { ' ' };
        let mark = if name == current { '●' } else { ' ' };
        let style = if i == s.picker.selected {
            theme.selected()
        } else {
            ratatui::style::Style::new()
        };
        let line = Line::from(vec![
            Span::styled(format!("{cursor}{mark} {}", text::pad(name, 14)), style),
            Span::styled(format!(" {note}"), if *bad { theme.bad() } else { theme.dim() }),
        ]);
        lines.push(panes::clip_line(&line, inner_w));
    }
    lines.push(Line::from(""));
    if let Some(e) = &s.picker.error {
        lines.push(Line::styled(text::clip(&format!("✗ {e}"), inner_w), theme.bad()));
    } else if s.picker.loaded && s.picker.entries.is_empty() {
        lines.push(Line::styled(
            rust_i18n::t!("tui.pane.no_providers").into_owned(),
            theme.dim(),
        ));
    }
    let hint = if let Mode::ModelInput(typed) = &s.mode {
        rust_i18n::t!("tui.status.model_input", text = typed).into_owned()
    } else {
        rust_i18n::t!("tui.pane.picker_keys").into_owned()
    };
    lines.push(Line::styled(text::clip(&hint, inner_w), theme.accent()));
    let h = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX).min(area.height);
    let r = Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h);
    let b = panes::block(
        Line::styled(rust_i18n::t!("tui.pane.provider").into_owned(), theme.accent()),
        true,
        theme,
    );
    panes::clear_popup(f, r);
    f.render_widget(Paragraph::new(lines).block(b), r);
}
