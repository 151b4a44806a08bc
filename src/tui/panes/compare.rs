//! The Compare tab: the pair on show (a prompt and its twin) item by item —
//! per `type` for unions, what both kept, what only one did, schema-valid
//! rates, items each lost to truncation, and with a gold set precision,
//! recall and F1. The report comes from [`crate::compare::compare`],
//! computed by the reducer when the pair or the gold set changes.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::keymap::Action;
use super::super::state::State;
use super::super::text;
use super::super::theme::Theme;
use crate::compare::{Report, Score, Side};

/// Keys listed per type and side before "… and N more".
const MAX_KEYS: usize = 12;

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{:.0}%", x * 100.0))
}

fn side_line(name: &str, label: &str, s: &Side, theme: Theme) -> Line<'static> {
    let mut spans = vec![
        Span::styled(format!("{name} "), theme.accent()),
        Span::raw(format!(
            "{label} · kept {} · valid {} ({}/{})",
            s.kept,
            pct(s.valid_rate),
            s.valid,
            s.judged
        )),
    ];
    if s.truncated {
        spans.push(Span::styled(
            format!(" · truncated, {} lost to the cut", s.lost_to_truncation),
            if s.lost_to_truncation > 0 {
                theme.bad()
            } else {
                theme.warn()
            },
        ));
    }
    Line::from(spans)
}

fn score_cells(s: &Score) -> String {
    format!(
        "P {:>5}  R {:>5}  F1 {:>5}  ({} of {} gold, {} predicted)",
        pct(s.precision),
        pct(s.recall),
        pct(s.f1),
        s.true_positives,
        s.gold,
        s.predicted
    )
}

fn keys(out: &mut Vec<Line<'static>>, which: &str, keys: &[String], style: Style) {
    for k in keys.iter().take(MAX_KEYS) {
        out.push(Line::styled(format!("    only {which}: {}", text::clean(k)), style));
    }
    if keys.len() > MAX_KEYS {
        out.push(Line::styled(
            format!("    only {which}: … and {} more", keys.len() - MAX_KEYS),
            style,
        ));
    }
}

/// The tab's lines for a report.
pub fn lines(r: &Report, labels: &[String; 2], gold: Option<&str>, theme: Theme) -> Vec<Line<'static>> {
    let mut out = vec![
        side_line("A", &labels[0], &r.a, theme),
        side_line("B", &labels[1], &r.b, theme),
        Line::from(""),
        Line::styled(
            format!(
                "{:<16} {:>5} {:>5} {:>6} {:>7} {:>7} {:>8} {:>8}",
                "type", "A", "B", "both", "only A", "only B", "valid A", "valid B"
            ),
            theme.accent(),
        ),
    ];
    for t in &r.types {
        out.push(Line::from(format!(
            "{:<16} {:>5} {:>5} {:>6} {:>7} {:>7} {:>8} {:>8}",
            text::clip(&t.ty, 16),
            t.a_items,
            t.b_items,
            t.both,
            t.only_a,
            t.only_b,
            pct(t.a_valid_rate),
            pct(t.b_valid_rate)
        )));
        if !t.key.is_empty() {
            out.push(Line::styled(format!("    key: {}", t.key.join(", ")), theme.dim()));
        }
        keys(&mut out, "A", &t.only_a_keys, theme.warn());
        keys(&mut out, "B", &t.only_b_keys, theme.warn());
    }
    out.push(Line::styled(
        format!(
            "{:<16} {:>5} {:>5} {:>6} {:>7} {:>7}",
            "total", r.a.kept, r.b.kept, r.total.both, r.total.only_a, r.total.only_b
        ),
        theme.accent(),
    ));
    out.push(Line::from(""));
    match (&r.total.gold, gold) {
        (Some([a, b]), Some(file)) => {
            out.push(Line::styled(format!("gold set {file}"), theme.accent()));
            out.push(Line::from(format!("  A  {}", score_cells(a))));
            out.push(Line::from(format!("  B  {}", score_cells(b))));
            for t in r.types.iter().filter(|t| t.gold.is_some()) {
                if let Some([a, b]) = &t.gold {
                    out.push(Line::styled(
                        format!("  {}: A F1 {} · B F1 {}", t.ty, pct(a.f1), pct(b.f1)),
                        theme.dim(),
                    ));
                }
            }
        }
        _ => out.push(Line::styled(
            "no gold set: put one at prompts/gold/<prompt-id>.jsonl for precision / recall / F1",
            theme.dim(),
        )),
    }
    out
}

/// Draw the Compare tab.
#[allow(clippy::many_single_char_names)]
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let theme = s.theme;
    let c = &s.compare;
    let body: Vec<Line<'static>> = match &c.report {
        Some(Ok(r)) => lines(r, &c.labels, c.gold.as_ref().map(|(f, _)| f.as_str()), theme),
        Some(Err(e)) => e.lines().map(|l| Line::styled(l.to_owned(), theme.warn())).collect(),
        None => vec![Line::from(format!(
            "Nothing to compare yet: run a prompt and its twin as a pair ({}), or run a migration's pair from Migrate (6).",
            s.keymap.key_for(Action::Twins)
        ))],
    };
    let mut body = body;
    if let Some(e) = &c.gold_error {
        body.push(Line::styled(format!("✗ gold set: {e}"), theme.bad()));
    }
    let inner_h = super::super::layout::inner_height(area);
    let total = body.len();
    let top = c.top.min(total.saturating_sub(inner_h));
    let mut spans = vec![Span::styled(" Compare A vs B ", theme.accent())];
    if total > inner_h {
        spans.push(Span::styled(
            format!(" {}–{}/{total} ", top + 1, (top + inner_h).min(total)),
            theme.dim(),
        ));
    }
    let b = super::block(Line::from(spans), true, theme);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let w = usize::from(inner.width);
    let shown: Vec<Line<'static>> = body
        .into_iter()
        .skip(top)
        .take(inner_h)
        .map(|l| super::json::clip_line(&l, w))
        .collect();
    f.render_widget(Paragraph::new(shown), inner);
}
