//! The editor: template, system prompt, schema and sample input, each a
//! text area; the field's error is marked at its line (✗ in the gutter) and
//! spelled out below; the rendered prompt is a key away.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{Editor, Field};
use crate::tui::state::{Mode, State};
use crate::tui::text;
use crate::tui::theme::Theme;

fn field_bar(e: &Editor, theme: Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for f in Field::ALL {
        let bad = e.errors[f.index()].is_some();
        let mut label = format!(" {}{} ", f.title(), if bad { " ✗" } else { "" });
        if f == Field::Input
            && let Some(n) = &e.input_name
        {
            let named = rust_i18n::t!("tui.field.input_named", name = n);
            label = format!(" {named}{} ", if bad { " ✗" } else { "" });
        }
        let style = if f == e.field {
            theme.selected()
        } else if bad {
            theme.bad()
        } else {
            theme.dim()
        };
        spans.push(Span::styled(label, style));
        spans.push(Span::raw(" "));
    }
    Line::from(spans)
}

/// Draw the editor (or a hint when no prompt is open).
#[allow(
    clippy::many_single_char_names,
    reason = "layout rectangles and styles named as ratatui does (f, area, s, k)"
)]
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let theme = s.theme;
    let Some(e) = &s.editor else {
        crate::tui::panes::draw_note(
            f,
            area,
            &super::super::state::Tab::Edit.title(),
            vec![Line::from(rust_i18n::t!("tui.pane.edit_nothing").into_owned())],
            theme,
        );
        return;
    };
    let [bar, main, err_row] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Length(1)]).areas(area);
    f.render_widget(Paragraph::new(field_bar(e, theme)), bar);
    let (edit_area, rendered_area) = if e.show_rendered {
        let [a, b] = super::super::layout::halves(main);
        (a, Some(b))
    } else {
        (main, None)
    };
    let editing = s.mode == Mode::Insert;
    let title = format!(
        " {}{} · {} · {}{} ",
        e.base.id,
        if e.dirty { " ●" } else { "" },
        e.base.response_type,
        e.field.title(),
        if editing {
            rust_i18n::t!("tui.pane.edit_editing")
        } else {
            rust_i18n::t!("tui.pane.edit_keys")
        }
    );
    let b = crate::tui::panes::block(Line::styled(title, theme.accent()), editing, theme);
    let inner = b.inner(edit_area);
    f.render_widget(b, edit_area);
    let ta = &e.areas[e.field.index()];
    f.render_widget(ta, inner);
    let err = e.errors[e.field.index()].as_ref();
    if let Some(err) = err {
        mark_error_row(f, inner, ta, err.line, theme);
    }
    let msg = error_line(e, theme);
    f.render_widget(
        Paragraph::new(crate::tui::panes::clip_line(&msg, usize::from(err_row.width))),
        err_row,
    );
    if let Some(r) = rendered_area {
        draw_rendered(f, r, e, theme);
    }
}

/// Mark `line` (1-based) with ✗ in the gutter when it is on screen — and
/// only when no line above it on screen wraps, as rows and lines then agree.
fn mark_error_row(f: &mut Frame<'_>, inner: Rect, ta: &ratatui_textarea::TextArea<'_>, line: usize, theme: Theme) {
    let (top, _) = ta.scroll_offset();
    let gutter = ta.lines().len().to_string().len() + 2;
    let text_w = usize::from(inner.width).saturating_sub(gutter);
    let wraps = ta
        .lines()
        .iter()
        .skip(usize::from(top))
        .take(line.saturating_sub(1).saturating_sub(usize::from(top)))
        .any(|l| text::width(l) > text_w);
    let row = line.saturating_sub(1).checked_sub(usize::from(top)).filter(|_| !wraps);
    if let Some(row) = row.filter(|r| *r < usize::from(inner.height)) {
        let y = inner.y + text::u16_of(row);
        let buf = f.buffer_mut();
        buf[(inner.x, y)].set_symbol("✗").set_style(theme.bad());
    }
}

/// The line under the field: its error spelled out, else which other
/// fields have one, else that all is well.
fn error_line(e: &Editor, theme: Theme) -> Line<'static> {
    match e.errors[e.field.index()].as_ref() {
        Some(err) => Line::styled(
            rust_i18n::t!(
                "tui.pane.field_error",
                field = e.field.title(),
                line = err.line,
                column = err
                    .column
                    .map(|c| rust_i18n::t!("tui.pane.column", column = c).into_owned())
                    .unwrap_or_default(),
                message = err.message
            )
            .into_owned(),
            theme.bad(),
        ),
        None => {
            let others: Vec<String> = Field::ALL
                .iter()
                .filter(|f| e.errors[f.index()].is_some())
                .map(|f| f.title())
                .collect();
            if others.is_empty() {
                Line::styled(rust_i18n::t!("tui.pane.no_errors").into_owned(), theme.ok())
            } else {
                Line::styled(
                    rust_i18n::t!("tui.pane.errors_elsewhere", fields = others.join(", ")).into_owned(),
                    theme.warn(),
                )
            }
        }
    }
}

/// The rendered prompt beside the field (`v`): system, then prompt.
fn draw_rendered(f: &mut Frame<'_>, area: Rect, e: &Editor, theme: Theme) {
    let lines: Vec<Line<'static>> = match &e.rendered {
        Ok(x) => {
            let mut v = Vec::new();
            if !x.system.is_empty() {
                v.push(Line::styled("── system ──", theme.dim()));
                v.extend(x.system.lines().map(|l| Line::from(text::clean(l).into_owned())));
                v.push(Line::styled("── prompt ──", theme.dim()));
            }
            v.extend(x.prompt.lines().map(|l| Line::from(text::clean(l).into_owned())));
            v
        }
        Err(m) => vec![Line::styled(
            rust_i18n::t!("tui.pane.no_render", error = m).into_owned(),
            theme.bad(),
        )],
    };
    let b = crate::tui::panes::block(
        Line::styled(rust_i18n::t!("tui.pane.rendered").into_owned(), theme.dim()),
        false,
        theme,
    );
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).block(b), area);
}
