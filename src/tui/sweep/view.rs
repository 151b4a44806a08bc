//! The sweep: items recovered against the max-token limit for strict JSON,
//! array salvage and JSONL, with a cursor marking the cut the panes below
//! show.

use ratatui::Frame;
use ratatui::layout::Constraint;
use ratatui::layout::Rect;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, LegendPosition, Paragraph};

use super::SweepView;
use crate::tui::keymap::Action;
use crate::tui::layout;
use crate::tui::panes;
use crate::tui::runs::Shown;
use crate::tui::state::{OutPane, State, Tab};
use crate::tui::text::f64_of;
use crate::tui::theme::Theme;

/// The chart's points, thinned to about two per screen column.
fn series(sw: &SweepView, width: u16, pick: fn((usize, usize, usize)) -> usize) -> Vec<(f64, f64)> {
    let max = sw.max_tokens();
    let stride = (max / (usize::from(width.max(1)) * 2)).max(1);
    let mut pts: Vec<(f64, f64)> = (0..=max)
        .step_by(stride)
        .map(|k| (f64_of(k), f64_of(pick(sw.at(k)))))
        .collect();
    if !max.is_multiple_of(stride) {
        pts.push((f64_of(max), f64_of(pick(sw.at(max)))));
    }
    pts
}

/// Draw the chart in `area`.
pub fn draw_chart(f: &mut Frame<'_>, area: Rect, sw: &SweepView, twins: bool, theme: Theme) {
    let max_x = sw.max_tokens().max(1);
    let max_y = (0..=sw.max_tokens())
        .map(|k| {
            let (a, b, c) = sw.at(k);
            a.max(b).max(c)
        })
        .max()
        .unwrap_or(0)
        .max(1);
    let strict = series(sw, area.width, |t| t.0);
    let salvage = series(sw, area.width, |t| t.1);
    let jsonl = series(sw, area.width, |t| t.2);
    let cursor = [(f64_of(sw.cursor), 0.0), (f64_of(sw.cursor), f64_of(max_y))];
    // The recommended limits, as dotted verticals in their series' colour.
    let (b_json, b_jsonl) = sw.budgets();
    let vertical = |x: Option<usize>| {
        x.map(|x| {
            (0..=8)
                .map(|i| (f64_of(x), f64_of(max_y) * f64::from(i) / 8.0))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
    };
    let (v_json, v_jsonl) = (vertical(b_json), vertical(b_jsonl));
    let names = series_names(twins, theme);
    // Without colour the series differ by marker.
    let marker = |i: usize| match (theme.color, i) {
        (true, _) | (false, 2) => Marker::Braille,
        (false, 0) => Marker::Dot,
        (false, _) => Marker::Bar,
    };
    let ds = vec![
        dataset(Some(&names[0]), marker(0), GraphType::Line, theme.series(0), &strict),
        dataset(Some(&names[1]), marker(1), GraphType::Line, theme.series(1), &salvage),
        dataset(Some(&names[2]), marker(2), GraphType::Line, theme.series(2), &jsonl),
        dataset(None, Marker::Braille, GraphType::Line, theme.accent(), &cursor),
        dataset(None, Marker::Dot, GraphType::Scatter, theme.series(0), &v_json),
        dataset(None, Marker::Dot, GraphType::Scatter, theme.series(2), &v_jsonl),
    ];
    let title = if sw.data.estimated {
        rust_i18n::t!("tui.pane.sweep_title_estimated")
    } else {
        rust_i18n::t!("tui.pane.sweep_title")
    }
    .into_owned();
    let chart = Chart::new(ds)
        .legend_position(Some(LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)))
        .block(panes::block(Line::styled(title, theme.accent()), false, theme))
        .x_axis(
            Axis::default()
                .title(rust_i18n::t!("tui.pane.axis_tokens").into_owned())
                .bounds([0.0, f64_of(max_x)])
                .labels(["0".to_owned(), (max_x / 2).to_string(), max_x.to_string()])
                .style(theme.dim()),
        )
        .y_axis(
            Axis::default()
                .title(rust_i18n::t!("tui.pane.axis_items").into_owned())
                .bounds([0.0, f64_of(max_y)])
                .labels(["0".to_owned(), max_y.to_string()])
                .style(theme.dim()),
        );
    f.render_widget(chart, area);
}

/// One series of the chart, named in the legend when `name` is given.
fn dataset<'a>(
    name: Option<&str>,
    marker: Marker,
    kind: GraphType,
    style: ratatui::style::Style,
    data: &'a [(f64, f64)],
) -> Dataset<'a> {
    let d = Dataset::default()
        .marker(marker)
        .graph_type(kind)
        .style(style)
        .data(data);
    match name {
        Some(n) => d.name(n.to_owned()),
        None => d,
    }
}

/// The legend's names: plain for one run, with the prompt for twins; each
/// with its marker when there is no colour.
fn series_names(twins: bool, theme: Theme) -> [String; 3] {
    let base = if twins {
        [
            "tui.pane.series_strict_twin",
            "tui.pane.series_salvage_twin",
            "tui.pane.series_jsonl_twin",
        ]
    } else {
        [
            "tui.pane.series_strict",
            "tui.pane.series_salvage",
            "tui.pane.series_jsonl",
        ]
    }
    .map(|k| rust_i18n::t!(k).into_owned());
    // Without colour the legend shows each series' marker.
    let marks = if theme.color {
        ["", "", ""]
    } else {
        ["• ", "▄ ", "⣿ "]
    };
    [0, 1, 2].map(|i| format!("{}{}", marks[i], base[i]))
}

/// The line under the chart: where the cut is and what each parser keeps.
pub fn draw_summary(f: &mut Frame<'_>, area: Rect, sw: &SweepView, theme: Theme) {
    let (a, b, c) = sw.at(sw.cursor);
    let bytes = sw.json_cut.as_ref().map_or(0, |x| x.bytes);
    let line = Line::from(vec![
        Span::styled(
            rust_i18n::t!("tui.pane.cut_at", k = sw.cursor, bytes = bytes).into_owned(),
            theme.accent(),
        ),
        Span::styled(
            format!("{} {a}", rust_i18n::t!("tui.pane.series_strict")),
            theme.series(0),
        ),
        Span::raw(" · "),
        Span::styled(
            format!("{} {b}", rust_i18n::t!("tui.pane.series_salvage")),
            theme.series(1),
        ),
        Span::raw(" · "),
        Span::styled(
            format!("{} {c}", rust_i18n::t!("tui.pane.series_jsonl")),
            theme.series(2),
        ),
    ]);
    let mut line = line;
    let (b_json, b_jsonl) = sw.budgets();
    if b_json.is_some() || b_jsonl.is_some() {
        let show = |b: Option<usize>| b.map_or_else(|| "-".to_owned(), |n| n.to_string());
        line.spans.push(Span::styled(
            rust_i18n::t!(
                "tui.pane.budget",
                pct = format!("{:.0}", super::BUDGET_TARGET * 100.0),
                json = show(b_json),
                jsonl = show(b_jsonl)
            )
            .into_owned(),
            theme.dim(),
        ));
    }
    line.spans.push(Span::styled(
        rust_i18n::t!("tui.pane.cut_keys").into_owned(),
        theme.dim(),
    ));
    f.render_widget(Paragraph::new(line), area);
}

/// Draw the Sweep tab: the chart, the counts at the cursor, and both
/// parses of the answer cut there.
pub fn draw(f: &mut Frame<'_>, body: Rect, s: &State) {
    let theme = s.theme;
    let Some(sw) = s.sweep.ready() else {
        let msg = if matches!(s.sweep, super::Sweep::Pending) {
            rust_i18n::t!("tui.pane.sweep_computing").into_owned()
        } else if s.shown.as_ref().is_some_and(Shown::live) {
            rust_i18n::t!("tui.msg.sweep_after_run").into_owned()
        } else {
            rust_i18n::t!(
                "tui.pane.sweep_none",
                run = s.keymap.key_for(Action::Run),
                sweep = s.keymap.key_for(Action::Sweep)
            )
            .into_owned()
        };
        panes::draw_note(f, body, &Tab::Sweep.title(), vec![Line::from(msg)], theme);
        return;
    };
    let twins = s.shown.as_ref().is_some_and(Shown::twins);
    let a = layout::sweep_areas(body);
    draw_chart(f, a.chart, sw, twins, theme);
    draw_summary(f, a.summary, sw, theme);
    let focus = s.focus_in_tab();
    let k = sw.cursor;
    if let Some(d) = crate::tui::runs::json_source(s) {
        crate::tui::runs::json::draw(
            f,
            a.json,
            &d,
            s.scroll(OutPane::Json),
            focus == OutPane::Json,
            theme,
            &rust_i18n::t!("tui.pane.json_at", k = k),
        );
    }
    if let Some(d) = crate::tui::runs::jsonl_source(s) {
        crate::tui::runs::jsonl::draw(
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
