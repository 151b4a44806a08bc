//! The Run tab: the raw response(s) as they stream, the JSON-array parse
//! and the JSONL parse side by side, and the runs' words on the status
//! line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use rust_i18n::t;

use super::{Phase, RunView, Shown};
use crate::tui::keymap::Action;
use crate::tui::state::{OutPane, State, Tab};
use crate::tui::{layout, panes};

/// Draw the Run tab: the response(s) on top, the two parses below.
pub fn draw(f: &mut Frame<'_>, body: Rect, s: &State) {
    let theme = s.theme;
    let Some(shown) = &s.shown else {
        draw_nothing(f, body, s);
        return;
    };
    let a = layout::run_areas(body, shown.twins());
    let focus = s.focus_in_tab();
    let (first, second) = (shown.json_side(), shown.jsonl_side());
    super::response::draw(
        f,
        a.response,
        first,
        (s.scroll(OutPane::Response), focus == OutPane::Response),
        super::response::queued_behind(first, second),
        theme,
    );
    if let Some(r2) = a.response2 {
        super::response::draw(
            f,
            r2,
            second,
            (s.scroll(OutPane::Response2), focus == OutPane::Response2),
            super::response::queued_behind(second, first),
            theme,
        );
    }
    let (jt, lt) = if shown.twins() {
        (
            rust_i18n::t!("tui.pane.json_twin", prompt = shown.json_side().prompt_id).into_owned(),
            rust_i18n::t!("tui.pane.jsonl_twin", prompt = shown.jsonl_side().prompt_id).into_owned(),
        )
    } else {
        (
            rust_i18n::t!("tui.pane.json_parse").into_owned(),
            rust_i18n::t!("tui.pane.jsonl_parse").into_owned(),
        )
    };
    if let Some(d) = super::json_source(s) {
        super::json::draw(
            f,
            a.json,
            &d,
            s.scroll(OutPane::Json),
            focus == OutPane::Json,
            theme,
            &jt,
        );
    }
    if let Some(d) = super::jsonl_source(s) {
        super::jsonl::draw(
            f,
            a.jsonl,
            &d,
            s.scroll(OutPane::Jsonl),
            focus == OutPane::Jsonl,
            theme,
            &lt,
        );
    }
}

/// The Run tab with nothing on show: how to run something.
fn draw_nothing(f: &mut Frame<'_>, body: Rect, s: &State) {
    let theme = s.theme;
    panes::draw_note(
        f,
        body,
        &Tab::Run.title(),
        vec![
            Line::from(rust_i18n::t!("tui.pane.run_nothing").into_owned()),
            Line::from(""),
            Line::from(
                rust_i18n::t!(
                    "tui.pane.run_how",
                    run = s.keymap.key_for(Action::Run),
                    provider = s.provider.label(),
                    limit = super::limit_label(s.max_tokens),
                    down = s.keymap.key_for(Action::LimitDown),
                    up = s.keymap.key_for(Action::LimitUp),
                    twins = s.keymap.key_for(Action::Twins)
                )
                .into_owned(),
            ),
            Line::from(rust_i18n::t!("tui.pane.run_reopen").into_owned()),
        ],
        theme,
    );
}

/// One run's words in the status line.
fn run_part(r: &RunView, label: Option<&str>) -> String {
    let phase = match &r.phase {
        Phase::Starting => t!("tui.status.starting"),
        Phase::Streaming => t!("tui.status.streaming"),
        Phase::Done => t!("tui.status.finish", reason = r.finish.map_or("?", |f| f.as_str())),
        Phase::Cancelled => t!("tui.status.cancelled"),
        Phase::Failed(_) => t!("tui.status.failed", reason = r.finish.map_or("error", |f| f.as_str())),
    };
    let secs = format!("{}.{}", r.elapsed_ms / 1000, (r.elapsed_ms % 1000) / 100);
    let label = label.map(|l| format!("{l}: ")).unwrap_or_default();
    let body = t!(
        "tui.status.run",
        phase = phase,
        tokens = r.tokens(),
        secs = secs,
        path = r.structured_path.as_str()
    );
    format!("{label}{body}")
}

/// The status line's words of the runs on show.
pub fn status(s: &State) -> Vec<String> {
    let mut parts = Vec::new();
    match &s.shown {
        Some(Shown::Single(r)) => {
            parts.push(run_part(r, None));
            if let Some(note) = &r.note {
                parts.push(note.clone());
            }
        }
        Some(Shown::Twins { json, jsonl }) => {
            parts.push(run_part(json, Some("json")));
            parts.push(run_part(jsonl, Some("jsonl")));
        }
        None => {}
    }
    parts
}
