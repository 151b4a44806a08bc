//! The raw response as it streams in, with line numbers. Only the visible
//! lines are cut out of the text and measured.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::llm::FinishReason;
use crate::output::loops;

use super::super::state::Scroll;
use super::super::text;
use super::super::theme::Theme;
use super::{Phase, RunView};

/// Whether `run`, not started yet, waits behind `other` on the local model
/// (one llama-server slot: it answers one request at a time).
pub fn queued_behind<'a>(run: &RunView, other: &'a RunView) -> Option<&'a str> {
    (run.phase == Phase::Starting
        && run.provider == "local"
        && other.provider == "local"
        && other.live()
        && other.id < run.id)
        .then_some(other.prompt_id.as_str())
}

/// Draw `run`'s text in `area`; `behind`: the prompt whose run the local
/// model serves first (this one waits in its queue).
pub fn draw(
    f: &mut Frame<'_>,
    area: Rect,
    run: &RunView,
    (scroll, focused): (Scroll, bool),
    behind: Option<&str>,
    theme: Theme,
) {
    if run.text.is_empty() {
        let msg = match (&run.phase, behind) {
            (Phase::Starting, Some(first)) => Line::styled(
                rust_i18n::t!("tui.pane.queued", first = first).into_owned(),
                theme.dim(),
            ),
            (Phase::Starting, None) => Line::styled(
                rust_i18n::t!("tui.pane.waiting", provider = run.provider).into_owned(),
                theme.dim(),
            ),
            (Phase::Failed(e), _) => Line::styled(format!("✗ {e}"), theme.bad()),
            (Phase::Cancelled, _) => Line::styled(rust_i18n::t!("tui.pane.cancelled_empty").into_owned(), theme.dim()),
            (Phase::Streaming | Phase::Done, _) => {
                Line::styled(rust_i18n::t!("tui.pane.empty_response").into_owned(), theme.dim())
            }
        };
        let title = rust_i18n::t!("tui.pane.response", prompt = run.prompt_id, kind = run.response_type).into_owned();
        let b = crate::tui::panes::block(Line::styled(format!(" {title} "), theme.dim()), focused, theme);
        f.render_widget(
            ratatui::widgets::Paragraph::new(msg)
                .wrap(ratatui::widgets::Wrap { trim: false })
                .block(b),
            area,
        );
        return;
    }
    let total = run.line_count();
    let digits = total.to_string().len().max(3);
    let live = run.live();
    let last = total.saturating_sub(1);
    // A runaway loop the limit cut: its first line is marked, the title says
    // what it wasted (linear in the text's tail, so found per frame).
    let looped = (run.finish == Some(FinishReason::Length))
        .then(|| loops::detect(&run.text, run.token_pieces.then_some(run.boundaries.as_slice())))
        .flatten();
    let loop_line = looped.as_ref().map(|l| {
        run.line_starts
            .partition_point(|&s| s <= l.start_byte)
            .saturating_sub(1)
    });
    let looped_note = looped.as_ref().map_or_else(String::new, |l| {
        let wasted = l
            .wasted_tokens
            .map_or_else(String::new, |w| rust_i18n::t!("tui.pane.wasted", n = w).into_owned());
        rust_i18n::t!(
            "tui.pane.loop",
            line = loop_line.unwrap_or(0) + 1,
            repeats = l.repeats,
            wasted = wasted
        )
        .into_owned()
    });
    let title = format!(
        "{} · {} B{looped_note}",
        rust_i18n::t!("tui.pane.response", prompt = run.prompt_id, kind = run.response_type),
        run.text.len(),
    );
    let row = move |i: usize, w: usize| {
        let content = text::line_at(&run.text, &run.line_starts, i);
        let mark = if loop_line == Some(i) { "↻" } else { " " };
        let gutter = format!("{:>digits$}{mark}", i + 1);
        let room = w.saturating_sub(text::width(&gutter) + usize::from(live && i == last));
        let mut spans = vec![Span::styled(gutter, theme.dim()), Span::raw(text::clip(content, room))];
        if live && i == last {
            spans.push(Span::styled("▌", theme.accent()));
        }
        Line::from(spans)
    };
    let listing = crate::tui::panes::Rows {
        title: &title,
        focused,
        total,
        scroll,
        row: &row,
    };
    crate::tui::panes::draw_rows(f, area, &listing, theme);
}
