//! The sweep: items recovered against the max-token limit for strict JSON,
//! array salvage and JSONL, with a cursor marking the cut the panes below
//! show.

use ratatui::Frame;
use ratatui::layout::Constraint;
use ratatui::layout::Rect;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, LegendPosition, Paragraph};

use super::super::state::SweepView;
use super::super::text::f64_of;
use super::super::theme::Theme;

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
    let names: [String; 3] = {
        let base = if twins {
            ["strict JSON (JSON prompt)", "salvage (JSON prompt)", "JSONL (twin)"]
        } else {
            ["strict JSON", "salvage", "JSONL"]
        };
        // Without colour the legend shows each series' marker.
        let marks = if theme.color {
            ["", "", ""]
        } else {
            ["• ", "▄ ", "⣿ "]
        };
        [0, 1, 2].map(|i| format!("{}{}", marks[i], base[i]))
    };
    // Without colour the series differ by marker.
    let marker = |i: usize| match (theme.color, i) {
        (true, _) | (false, 2) => Marker::Braille,
        (false, 0) => Marker::Dot,
        (false, _) => Marker::Bar,
    };
    let ds = vec![
        Dataset::default()
            .name(names[0].clone())
            .marker(marker(0))
            .graph_type(GraphType::Line)
            .style(theme.series(0))
            .data(&strict),
        Dataset::default()
            .name(names[1].clone())
            .marker(marker(1))
            .graph_type(GraphType::Line)
            .style(theme.series(1))
            .data(&salvage),
        Dataset::default()
            .name(names[2].clone())
            .marker(marker(2))
            .graph_type(GraphType::Line)
            .style(theme.series(2))
            .data(&jsonl),
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.accent())
            .data(&cursor),
        Dataset::default()
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(theme.series(0))
            .data(&v_json),
        Dataset::default()
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(theme.series(2))
            .data(&v_jsonl),
    ];
    let title = if sw.data.estimated {
        " Items recovered vs max tokens (cuts from the o200k tokenizer) "
    } else {
        " Items recovered vs max tokens (cuts at the recorded tokens) "
    };
    let chart = Chart::new(ds)
        .legend_position(Some(LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)))
        .block(super::block(Line::styled(title, theme.accent()), false, theme))
        .x_axis(
            Axis::default()
                .title("max tokens")
                .bounds([0.0, f64_of(max_x)])
                .labels(["0".to_owned(), (max_x / 2).to_string(), max_x.to_string()])
                .style(theme.dim()),
        )
        .y_axis(
            Axis::default()
                .title("items")
                .bounds([0.0, f64_of(max_y)])
                .labels(["0".to_owned(), max_y.to_string()])
                .style(theme.dim()),
        );
    f.render_widget(chart, area);
}

/// The line under the chart: where the cut is and what each parser keeps.
pub fn draw_summary(f: &mut Frame<'_>, area: Rect, sw: &SweepView, theme: Theme) {
    let (a, b, c) = sw.at(sw.cursor);
    let bytes = sw.json_cut.as_ref().map_or(0, |x| x.bytes);
    let line = Line::from(vec![
        Span::styled(format!(" cut at {} tokens ({bytes} B): ", sw.cursor), theme.accent()),
        Span::styled(format!("strict JSON {a}"), theme.series(0)),
        Span::raw(" · "),
        Span::styled(format!("salvage {b}"), theme.series(1)),
        Span::raw(" · "),
        Span::styled(format!("JSONL {c}"), theme.series(2)),
    ]);
    let mut line = line;
    let (b_json, b_jsonl) = sw.budgets();
    if b_json.is_some() || b_jsonl.is_some() {
        let show = |b: Option<usize>| b.map_or_else(|| "-".to_owned(), |n| n.to_string());
        line.spans.push(Span::styled(
            format!(
                "   keep {:.0}%: strict JSON ≥ {} · JSONL ≥ {} tokens",
                super::super::state::BUDGET_TARGET * 100.0,
                show(b_json),
                show(b_jsonl)
            ),
            theme.dim(),
        ));
    }
    line.spans
        .push(Span::styled("   ←/→ move the cut · Shift-←/→ ×10", theme.dim()));
    f.render_widget(Paragraph::new(line), area);
}
