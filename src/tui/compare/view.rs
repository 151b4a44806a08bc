//! The Compare tab: the pair on show (a prompt and its twin) item by item —
//! per `type` for unions, what both kept, what only one did, schema-valid
//! rates, items each lost to truncation, and with a gold set precision,
//! recall and F1. The report comes from [`crate::compare::compare`],
//! computed by the reducer when the pair or the gold set changes.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::compare::{Report, Score, Side};
use crate::tui::State;
use crate::tui::keymap::Action;
use crate::tui::theme::Theme;
use crate::tui::{panes, text};

/// Keys listed per type and side before "… and N more".
const MAX_KEYS: usize = 12;

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{:.0}%", x * 100.0))
}

fn side_line(name: &str, label: &str, s: &Side, theme: Theme) -> Line<'static> {
    let mut spans = vec![
        Span::styled(format!("{name} "), theme.accent()),
        Span::raw(
            rust_i18n::t!(
                "tui.pane.side",
                label = label,
                kept = s.kept,
                rate = pct(s.valid_rate),
                valid = s.valid,
                judged = s.judged
            )
            .into_owned(),
        ),
    ];
    if s.truncated {
        // Nothing kept and nothing complete to count: the cut took it all
        // (never "0 lost").
        let (text, style) = if s.kept == 0 && s.lost_to_truncation == 0 {
            (rust_i18n::t!("tui.pane.side_cut_all"), theme.bad())
        } else if s.lost_to_truncation > 0 {
            (rust_i18n::t!("tui.pane.side_cut", n = s.lost_to_truncation), theme.bad())
        } else {
            (rust_i18n::t!("tui.pane.side_cut", n = s.lost_to_truncation), theme.warn())
        };
        spans.push(Span::styled(text.into_owned(), style));
    }
    Line::from(spans)
}

/// The table's header, each column padded by display width (CJK is two).
fn header() -> String {
    use crate::i18n::{left, right};
    let t = |k: &str| rust_i18n::t!(k).into_owned();
    format!(
        "{} {} {} {} {} {} {} {}",
        left(&t("tui.pane.col_type"), 16),
        right("A", 5),
        right("B", 5),
        right(&t("tui.pane.col_both"), 6),
        right(&t("tui.pane.col_only_a"), 7),
        right(&t("tui.pane.col_only_b"), 7),
        right(&t("tui.pane.col_valid_a"), 8),
        right(&t("tui.pane.col_valid_b"), 8)
    )
}

/// Why each side missed the gold items it missed, and what it invented.
pub fn loss_lines(loss: &[crate::compare::loss::Loss; 2], theme: Theme) -> Vec<Line<'static>> {
    let mut out = vec![
        Line::from(""),
        Line::styled(rust_i18n::t!("tui.pane.loss_title").into_owned(), theme.accent()),
    ];
    for (name, l) in ["A", "B"].iter().zip(loss) {
        let t = &l.total;
        out.push(Line::from(
            rust_i18n::t!(
                "tui.pane.loss_side",
                side = name,
                cut = t.cut_by_limit,
                rejected = t.schema_rejected,
                never = t.never_produced,
                invented = t.invented
            )
            .into_owned(),
        ));
    }
    out
}

fn score_cells(s: &Score) -> String {
    format!(
        "P {:>5}  R {:>5}  F1 {:>5}  {}",
        pct(s.precision),
        pct(s.recall),
        pct(s.f1),
        rust_i18n::t!(
            "tui.pane.score_counts",
            tp = s.true_positives,
            gold = s.gold,
            predicted = s.predicted
        )
    )
}

fn keys(out: &mut Vec<Line<'static>>, which: &str, keys: &[String], style: Style) {
    for k in keys.iter().take(MAX_KEYS) {
        out.push(Line::styled(
            rust_i18n::t!("tui.pane.only", side = which, key = text::clean(k)).into_owned(),
            style,
        ));
    }
    if keys.len() > MAX_KEYS {
        out.push(Line::styled(
            rust_i18n::t!("tui.pane.only_more", side = which, n = keys.len() - MAX_KEYS).into_owned(),
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
        Line::styled(header(), theme.accent()),
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
            out.push(Line::styled(
                rust_i18n::t!("tui.pane.key", fields = t.key.join(", ")).into_owned(),
                theme.dim(),
            ));
        }
        keys(&mut out, "A", &t.only_a_keys, theme.warn());
        keys(&mut out, "B", &t.only_b_keys, theme.warn());
    }
    out.push(Line::styled(
        format!(
            "{} {:>5} {:>5} {:>6} {:>7} {:>7}",
            crate::i18n::left(&rust_i18n::t!("tui.pane.total"), 16),
            r.a.kept,
            r.b.kept,
            r.total.both,
            r.total.only_a,
            r.total.only_b
        ),
        theme.accent(),
    ));
    out.push(Line::from(""));
    match (&r.total.gold, gold) {
        (Some([a, b]), Some(file)) => {
            out.push(Line::styled(
                rust_i18n::t!("tui.pane.gold_set", file = file).into_owned(),
                theme.accent(),
            ));
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
            rust_i18n::t!("tui.pane.no_gold").into_owned(),
            theme.dim(),
        )),
    }
    out
}

/// The tab's lines as drawn: the report (or why there is none), the loss,
/// the sections under the report (`under`: the strategy table), and the
/// gold set's error.
fn body(s: &State, under: &[Line<'static>]) -> Vec<Line<'static>> {
    let theme = s.theme;
    let c = &s.compare;
    let mut body: Vec<Line<'static>> = match &c.report {
        Some(Ok(r)) => {
            let mut v = lines(r, &c.labels, c.gold.as_ref().map(|(f, _)| f.as_str()), theme);
            if let Some(l) = &c.loss {
                v.extend(loss_lines(l, theme));
            }
            v.extend_from_slice(under);
            v
        }
        Some(Err(e)) => e
            .to_string()
            .lines()
            .map(|l| Line::styled(l.to_owned(), theme.warn()))
            .collect(),
        None => vec![Line::from(
            rust_i18n::t!("tui.pane.compare_nothing", key = s.keymap.key_for(Action::Twins)).into_owned(),
        )],
    };
    if let Some(e) = &c.gold_error {
        body.push(Line::styled(
            rust_i18n::t!("tui.pane.gold_error", error = e).into_owned(),
            theme.bad(),
        ));
    }
    body
}

/// Rows the Compare tab has: what the reducer scrolls over and the view
/// draws from.
pub fn rows(s: &State, under: &[Line<'static>]) -> usize {
    body(s, under).len()
}

/// Draw the Compare tab.
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State, under: &[Line<'static>]) {
    let title = rust_i18n::t!("tui.pane.compare_title").into_owned();
    panes::draw_scrolled(f, area, title, body(s, under), s.compare.top, s.theme);
}
