//! Recorded sessions and their runs; Enter reopens a run, r replays it at
//! the current limit.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::session::RunRecord;

use super::super::state::{Scroll, State};
use super::super::text;

fn run_row(n: u64, r: &RunRecord) -> String {
    format!(
        "  #{:<3} {} {} ≤{} → {} {} tok",
        n,
        r.prompt_id,
        r.provider.name,
        r.params.max_tokens.map_or_else(|| "∞".into(), |n| n.to_string()),
        r.finish.as_str(),
        r.usage
            .completion_tokens
            .map_or_else(|| r.pieces.len().to_string(), |n| n.to_string()),
    )
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
            None => format!("▸ {} ({} runs)", sess.header.id, sess.runs.len()),
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
    let title = format!("Sessions · {}", s.sessions_dir.display());
    if rows.is_empty() {
        let msg = if s.sessions.loaded {
            format!("no recorded sessions in {}", s.sessions_dir.display())
        } else {
            "loading…".into()
        };
        super::draw_note(f, list_area, &title, vec![Line::from(msg)], theme);
    } else {
        super::draw_rows(
            f,
            list_area,
            &title,
            true,
            theme,
            rows.len(),
            Scroll { top, follow: false },
            &row,
        );
    }
    let mut lines: Vec<Line<'static>> = Vec::new();
    match s.sessions.selected_row() {
        Some((si, Some(ri))) => {
            let r = &sessions[si].runs[ri];
            lines.push(Line::styled(sessions[si].reference(ri), theme.accent()));
            lines.push(Line::from(format!("prompt {} ({})", r.prompt_id, r.response_type)));
            lines.push(Line::from(format!(
                "provider {} · model {}",
                r.provider.name, r.provider.model
            )));
            lines.push(Line::from(format!(
                "limit {} · finish {} · {} tokens · {} ms",
                r.params.max_tokens.map_or_else(|| "none".into(), |n| n.to_string()),
                r.finish.as_str(),
                r.usage.completion_tokens.map_or_else(|| "?".into(), |n| n.to_string()),
                r.total_ms
            )));
            lines.push(Line::from(format!("analysis {}", r.analysis)));
            lines.push(Line::styled(
                "Enter opens · r replays at the current limit",
                theme.dim(),
            ));
            lines.push(Line::styled("── text ──", theme.dim()));
            lines.extend(r.text.lines().take(40).map(|l| Line::from(text::clean(l).into_owned())));
        }
        Some((si, None)) => {
            let sess = &sessions[si];
            lines.push(Line::styled(sess.header.id.clone(), theme.accent()));
            lines.push(Line::from(format!(
                "{} · {} runs",
                sess.path.display(),
                sess.runs.len()
            )));
            for w in &sess.warnings {
                lines.push(Line::styled(format!("warning: {w}"), theme.warn()));
            }
        }
        None => {}
    }
    let w = usize::from(detail_area.width.saturating_sub(2));
    let lines = lines.iter().map(|l| super::json::clip_line(l, w)).collect();
    super::draw_note(f, detail_area, "Run", lines, theme);
}
