//! Recorded sessions and their runs; Enter reopens a run, r replays it at
//! the current limit.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::session::RunRecord;

use crate::tui::state::{Scroll, State};
use crate::tui::text;

fn run_row(n: u64, r: &RunRecord) -> String {
    format!(
        "  #{:<3} {} {} ≤{} → {} {}",
        n,
        r.prompt_id,
        r.provider.name,
        r.params.max_tokens.map_or_else(|| "∞".into(), |n| n.to_string()),
        r.finish.as_str(),
        rust_i18n::t!(
            "tui.pane.n_tok",
            n = r
                .usage
                .completion_tokens
                .map_or_else(|| r.pieces.len().to_string(), |n| n.to_string())
        ),
    )
}

/// The details of the selected session or run.
fn details(s: &State, theme: super::super::theme::Theme) -> Vec<Line<'static>> {
    let sessions = &s.sessions.sessions;
    let mut lines: Vec<Line<'static>> = Vec::new();
    match s.sessions.selected_row() {
        Some((si, Some(ri))) => {
            let r = &sessions[si].runs[ri];
            lines.push(Line::styled(sessions[si].reference(ri), theme.accent()));
            lines.push(Line::from(
                rust_i18n::t!("tui.pane.run_prompt", prompt = r.prompt_id, kind = r.response_type).into_owned(),
            ));
            lines.push(Line::from(
                rust_i18n::t!(
                    "tui.pane.run_provider",
                    name = r.provider.name,
                    model = r.provider.model
                )
                .into_owned(),
            ));
            lines.push(Line::from(
                rust_i18n::t!(
                    "tui.pane.run_numbers",
                    limit = r
                        .params
                        .max_tokens
                        .map_or_else(|| rust_i18n::t!("tui.status.none").into_owned(), |n| n.to_string()),
                    finish = r.finish.as_str(),
                    tokens = r.usage.completion_tokens.map_or_else(|| "?".into(), |n| n.to_string()),
                    ms = r.total_ms
                )
                .into_owned(),
            ));
            lines.push(Line::from(
                rust_i18n::t!("tui.pane.run_analysis", analysis = r.analysis).into_owned(),
            ));
            lines.push(Line::styled(
                rust_i18n::t!("tui.pane.run_keys").into_owned(),
                theme.dim(),
            ));
            lines.push(Line::styled(rust_i18n::t!("tui.pane.h_text").into_owned(), theme.dim()));
            lines.extend(r.text.lines().take(40).map(|l| Line::from(text::clean(l).into_owned())));
        }
        Some((si, None)) => {
            let sess = &sessions[si];
            lines.push(Line::styled(sess.header.id.clone(), theme.accent()));
            lines.push(Line::from(
                rust_i18n::t!("tui.pane.session_file", path = sess.path.display(), n = sess.runs.len()).into_owned(),
            ));
            for w in &sess.warnings {
                lines.push(Line::styled(
                    rust_i18n::t!("tui.msg.warning", warning = w).into_owned(),
                    theme.warn(),
                ));
            }
        }
        None => {}
    }
    lines
}

/// Draw the sessions list and the selected run's details.
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let theme = s.theme;
    let [list_area, detail_area] = super::super::layout::halves(area);
    let rows = s.sessions.rows();
    let inner_h = super::super::layout::inner_height(list_area);
    let top = s.sessions.selected.saturating_sub(inner_h.saturating_sub(1));
    let sessions = &s.sessions.sessions;
    let selected = s.sessions.selected;
    let row = |i: usize, w: usize| -> Line<'static> {
        let (si, ri) = rows[i];
        let sess = &sessions[si];
        let body = match ri {
            None => rust_i18n::t!("tui.pane.session_row", id = sess.header.id, n = sess.runs.len()).into_owned(),
            Some(r) => run_row(sess.number(r), &sess.runs[r]),
        };
        let style = if i == selected {
            theme.selected()
        } else if ri.is_none() {
            theme.accent()
        } else {
            ratatui::style::Style::new()
        };
        Line::from(Span::styled(text::pad(&body, w), style))
    };
    let title = format!(
        "{} · {}",
        super::super::state::Tab::Sessions.title(),
        s.sessions_dir.display()
    );
    if rows.is_empty() {
        let msg = if s.sessions.loaded {
            rust_i18n::t!("tui.pane.no_sessions", dir = s.sessions_dir.display()).into_owned()
        } else {
            rust_i18n::t!("tui.pane.loading").into_owned()
        };
        crate::tui::panes::draw_note(f, list_area, &title, vec![Line::from(msg)], theme);
    } else {
        let listing = crate::tui::panes::Rows {
            title: &title,
            focused: true,
            total: rows.len(),
            scroll: Scroll { top, follow: false },
            row: &row,
        };
        crate::tui::panes::draw_rows(f, list_area, &listing, theme);
    }
    let lines = details(s, theme);
    let w = usize::from(detail_area.width.saturating_sub(2));
    let lines = lines.iter().map(|l| crate::tui::panes::clip_line(l, w)).collect();
    let title = rust_i18n::t!("tui.pane.run_title");
    crate::tui::panes::draw_note(f, detail_area, &title, lines, theme);
}
