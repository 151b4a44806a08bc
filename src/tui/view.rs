//! Draw the whole workbench from state: the tab bar, the active tab's panes,
//! the status bar and, on top, the help.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::layout;
use super::panes;
use super::state::{OutPane, State, Tab};

/// Draw one frame.
pub fn draw(f: &mut Frame<'_>, s: &State) {
    let area = f.area();
    let sc = layout::screen(area);
    draw_tabs(f, sc.tabs, s);
    match s.tab {
        Tab::Prompts => panes::prompts::draw(f, sc.body, s),
        Tab::Edit => panes::editor::draw(f, sc.body, s),
        Tab::Run => draw_run(f, sc.body, s),
        Tab::Sweep => draw_sweep(f, sc.body, s),
        Tab::Sessions => panes::sessions::draw(f, sc.body, s),
        Tab::Migrate => panes::migrate::draw(f, sc.body, s),
        Tab::Compare => panes::compare::draw(f, sc.body, s),
    }
    if matches!(s.tab, Tab::Run | Tab::Sweep) {
        mark_search_hit(f, sc.body, s);
    }
    panes::status::draw(f, sc.status, s);
    if matches!(s.mode, super::state::Mode::Picker | super::state::Mode::ModelInput(_)) {
        panes::providers::draw(f, sc.body, s);
    }
    if s.mode == super::state::Mode::Help {
        panes::help::draw(f, sc.body, &s.keymap, s.theme);
    }
}

/// Show the current search hit (`/`) in reverse video across its row.
fn mark_search_hit(f: &mut Frame<'_>, body: ratatui::layout::Rect, s: &State) {
    let Some(x) = &s.search else { return };
    if s.focus_in_tab() != x.pane {
        return;
    }
    let area = layout::pane_rect_in(s, body, x.pane);
    let height = layout::inner_height(area);
    let rows = panes::rows(s, x.pane);
    let top = s.scroll(x.pane).top_for(rows, height);
    if x.row < top || x.row >= top + height {
        return;
    }
    let Ok(dy) = u16::try_from(x.row - top) else { return };
    let row = ratatui::layout::Rect {
        x: area.x + 1,
        y: area.y + 1 + dy,
        width: area.width.saturating_sub(2),
        height: 1,
    }
    .intersection(f.area());
    f.buffer_mut().set_style(
        row,
        ratatui::style::Style::new().add_modifier(ratatui::style::Modifier::REVERSED),
    );
}

fn draw_tabs(f: &mut Frame<'_>, area: ratatui::layout::Rect, s: &State) {
    let mut spans = Vec::new();
    for (i, t) in Tab::ALL.iter().enumerate() {
        let style = if *t == s.tab { s.theme.selected() } else { s.theme.dim() };
        spans.push(Span::styled(layout::tab_label(i, *t), style));
        spans.push(Span::raw(" "));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_run(f: &mut Frame<'_>, body: ratatui::layout::Rect, s: &State) {
    let theme = s.theme;
    let Some(shown) = &s.shown else {
        panes::draw_note(
            f,
            body,
            &super::state::Tab::Run.title(),
            vec![
                Line::from(rust_i18n::t!("tui.pane.run_nothing").into_owned()),
                Line::from(""),
                Line::from(
                    rust_i18n::t!(
                        "tui.pane.run_how",
                        run = s.keymap.key_for(super::keymap::Action::Run),
                        provider = s.provider.label(),
                        limit = super::update::limit_label(s.max_tokens),
                        down = s.keymap.key_for(super::keymap::Action::LimitDown),
                        up = s.keymap.key_for(super::keymap::Action::LimitUp),
                        twins = s.keymap.key_for(super::keymap::Action::Twins)
                    )
                    .into_owned(),
                ),
                Line::from(rust_i18n::t!("tui.pane.run_reopen").into_owned()),
            ],
            theme,
        );
        return;
    };
    let a = layout::run_areas(body, shown.twins());
    let focus = s.focus_in_tab();
    panes::response::draw(
        f,
        a.response,
        shown.json_side(),
        s.scroll(OutPane::Response),
        focus == OutPane::Response,
        theme,
    );
    if let Some(r2) = a.response2 {
        panes::response::draw(
            f,
            r2,
            shown.jsonl_side(),
            s.scroll(OutPane::Response2),
            focus == OutPane::Response2,
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
    if let Some(d) = panes::json_source(s) {
        panes::json::draw(
            f,
            a.json,
            &d,
            s.scroll(OutPane::Json),
            focus == OutPane::Json,
            theme,
            &jt,
        );
    }
    if let Some(d) = panes::jsonl_source(s) {
        panes::jsonl::draw(
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

fn draw_sweep(f: &mut Frame<'_>, body: ratatui::layout::Rect, s: &State) {
    let theme = s.theme;
    let Some(sw) = s.sweep.ready() else {
        let msg = if matches!(s.sweep, super::state::Sweep::Pending) {
            rust_i18n::t!("tui.pane.sweep_computing").into_owned()
        } else if s.shown.as_ref().is_some_and(super::state::Shown::live) {
            rust_i18n::t!("tui.msg.sweep_after_run").into_owned()
        } else {
            rust_i18n::t!(
                "tui.pane.sweep_none",
                run = s.keymap.key_for(super::keymap::Action::Run),
                sweep = s.keymap.key_for(super::keymap::Action::Sweep)
            )
            .into_owned()
        };
        panes::draw_note(f, body, &Tab::Sweep.title(), vec![Line::from(msg)], theme);
        return;
    };
    let twins = s.shown.as_ref().is_some_and(super::state::Shown::twins);
    let a = layout::sweep_areas(body);
    panes::sweep::draw_chart(f, a.chart, sw, twins, theme);
    panes::sweep::draw_summary(f, a.summary, sw, theme);
    let focus = s.focus_in_tab();
    let k = sw.cursor;
    if let Some(d) = panes::json_source(s) {
        panes::json::draw(
            f,
            a.json,
            &d,
            s.scroll(OutPane::Json),
            focus == OutPane::Json,
            theme,
            &rust_i18n::t!("tui.pane.json_at", k = k),
        );
    }
    if let Some(d) = panes::jsonl_source(s) {
        panes::jsonl::draw(
            f,
            a.jsonl,
            &d,
            s.scroll(OutPane::Jsonl),
            focus == OutPane::Jsonl,
            theme,
            &rust_i18n::t!("tui.pane.jsonl_at", k = k),
        );
    }
}
