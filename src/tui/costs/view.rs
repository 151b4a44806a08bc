//! The strategy table under the Compare tab's report: per side and
//! strategy, the items got, the calls, the tokens billed over every call,
//! the time and the gold recall, then the migration's headline.

use ratatui::text::Line;

use super::Costs;
use crate::eval::strategy::StrategyRow;
use crate::tui::theme::Theme;

/// The section's lines; `key` is the key that runs the strategies.
pub fn lines(c: &Costs, key: &str, theme: Theme) -> Vec<Line<'static>> {
    let mut out = vec![
        Line::from(""),
        Line::styled(rust_i18n::t!("tui.pane.costs_title").into_owned(), theme.accent()),
    ];
    match c {
        Costs::Idle => out.push(Line::styled(
            rust_i18n::t!("tui.pane.costs_idle", key = key).into_owned(),
            theme.dim(),
        )),
        Costs::Running(_) => out.push(Line::styled(
            rust_i18n::t!("tui.pane.costs_running").into_owned(),
            theme.dim(),
        )),
        Costs::Failed { error, .. } => out.push(Line::styled(
            rust_i18n::t!("tui.pane.costs_failed", error = error).into_owned(),
            theme.bad(),
        )),
        Costs::Ready { rows, headline, .. } => {
            out.push(Line::styled(
                rust_i18n::t!("tui.pane.costs_header").into_owned(),
                theme.dim(),
            ));
            // Each side runs two strategies: A's rows come first.
            for (i, r) in rows.iter().enumerate() {
                out.push(row(if i < 2 { "A" } else { "B" }, r, theme));
            }
            if let Some(h) = headline {
                out.push(Line::styled(format!("  {h}"), theme.ok()));
            }
        }
    }
    out
}

fn row(side: &str, r: &StrategyRow, theme: Theme) -> Line<'static> {
    let recall = r
        .recall
        .map_or_else(|| "–".to_owned(), |x| format!("{:.0}%", x * 100.0));
    #[allow(clippy::cast_precision_loss, reason = "milliseconds of a run")]
    let secs = r.wall_ms as f64 / 1000.0;
    let (ended, style) = if r.runs > 0 && r.finished == r.runs {
        (rust_i18n::t!("tui.pane.costs_finished"), theme.ok())
    } else {
        (rust_i18n::t!("tui.pane.costs_cut"), theme.bad())
    };
    let billed = if r.usage_complete {
        r.tokens_billed.to_string()
    } else {
        format!("{}*", r.tokens_billed)
    };
    Line::styled(
        format!(
            "  {side:<4}  {:<13} {:>5}  {:>5}  {billed:>8}  {secs:>6.1} s  {recall:>6}  {ended}",
            r.strategy.word(),
            r.items,
            r.calls,
        ),
        if r.runs == 0 { theme.dim() } else { style },
    )
}
