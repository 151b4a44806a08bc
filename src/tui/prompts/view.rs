//! The prompt list: id, response type, schema summary and twin; `/` filters.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use crate::output::schema::summary_for_people as schema_summary;

use crate::tui::state::{Mode, Scroll, State};
use crate::tui::text;

/// Draw the prompt list and the selected prompt's details.
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let theme = s.theme;
    let [list_area, detail_area] = Layout::vertical([Constraint::Min(3), Constraint::Length(7)]).areas(area);
    let filtered = s.prompts.filtered();
    let list = &s.prompts;
    let mut title = format!(
        "{} · {} ({}/{})",
        super::super::state::Tab::Prompts.title(),
        s.prompts_dir.display(),
        filtered.len(),
        list.prompts.len()
    );
    if s.mode == Mode::Filter || !list.filter.is_empty() {
        title.push_str(" · /");
        title.push_str(&list.filter);
        if s.mode == Mode::Filter {
            title.push('▌');
        }
    }
    let inner_h = super::super::layout::inner_height(list_area);
    let top = (list.selected + 1).saturating_sub(inner_h.saturating_sub(1));
    let scroll = Scroll { top, follow: false };
    let id_w = list
        .prompts
        .iter()
        .map(|p| text::width(&p.id))
        .max()
        .unwrap_or(2)
        .clamp(2, 40);
    let total = filtered.len() + 1;
    let row = |i: usize, w: usize| -> Line<'static> {
        if i == 0 {
            let t = |k: &str| rust_i18n::t!(k).into_owned();
            let h = format!(
                "  {} {} {}",
                text::pad(&t("tui.pane.col_id"), id_w),
                text::pad(&t("tui.pane.col_response"), 6),
                t("tui.pane.col_schema")
            );
            return Line::styled(text::clip(&h, w), theme.dim());
        }
        let p = &list.prompts[filtered[i - 1]];
        let twin = p
            .twin
            .as_deref()
            .map(|t| rust_i18n::t!("tui.pane.twin_of", twin = t).into_owned())
            .unwrap_or_default();
        let body = format!(
            "  {} {:<6} {}{twin}",
            text::pad(&p.id, id_w),
            p.response_type.as_str(),
            schema_summary(p.schema.as_ref())
        );
        let style = if i - 1 == list.selected {
            theme.selected()
        } else {
            ratatui::style::Style::new()
        };
        Line::from(Span::styled(text::pad(&body, w), style))
    };
    let listing = crate::tui::panes::Rows {
        title: &title,
        focused: true,
        total,
        scroll,
        row: &row,
    };
    crate::tui::panes::draw_rows(f, list_area, &listing, theme);

    let lines = details(s);
    let w = usize::from(detail_area.width.saturating_sub(2));
    let lines = lines.iter().map(|l| crate::tui::panes::clip_line(l, w)).collect();
    crate::tui::panes::draw_note(f, detail_area, &rust_i18n::t!("tui.pane.prompt"), lines, theme);
}

/// The selected prompt's details (or why there is none), then the first
/// files that did not load.
fn details(s: &State) -> Vec<Line<'static>> {
    let theme = s.theme;
    let list = &s.prompts;
    let mut lines = Vec::new();
    if !list.loaded {
        lines.push(Line::styled(
            rust_i18n::t!("tui.pane.loading").into_owned(),
            theme.dim(),
        ));
    } else if let Some(p) = list.selected_prompt() {
        lines.push(Line::from(vec![
            Span::styled(p.id.clone(), theme.accent()),
            Span::raw(format!(" — {}", p.description)),
        ]));
        lines.push(Line::styled(
            rust_i18n::t!("tui.pane.file", file = p.origin.file).into_owned(),
            theme.dim(),
        ));
        let inputs: Vec<&str> = p.inputs.iter().map(|i| i.name.as_str()).collect();
        let inputs = if inputs.is_empty() {
            rust_i18n::t!("tui.status.none").into_owned()
        } else {
            inputs.join(", ")
        };
        lines.push(Line::from(
            rust_i18n::t!("tui.pane.inputs", inputs = inputs, stop = format!("{:?}", p.stop)).into_owned(),
        ));
        lines.push(Line::styled(
            rust_i18n::t!("tui.pane.prompt_keys").into_owned(),
            theme.dim(),
        ));
    } else if list.prompts.is_empty() {
        lines.push(Line::from(
            rust_i18n::t!("tui.msg.no_prompts", dir = s.prompts_dir.display()).into_owned(),
        ));
    } else {
        lines.push(Line::from(rust_i18n::t!("tui.pane.no_match").into_owned()));
    }
    for e in list.errors.iter().take(2) {
        lines.push(Line::styled(format!("✗ {e}"), theme.bad()));
    }
    lines
}
