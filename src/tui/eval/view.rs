//! The eval view: what `r` runs (the prompt on show, its twin, the
//! limits, the provider), the progress while it runs, then the summary
//! table as `cutline eval --output pretty` prints it, the twins at each
//! limit and, with a gold set, why gold items were missed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use rust_i18n::t;

use super::{Ending, EvalRun, Progress};
use crate::eval::{Row, TwinRow, limit_label, pct};
use crate::tui::keymap::Action;
use crate::tui::panes;
use crate::tui::state::State;
use crate::tui::theme::Theme;

/// Width of the progress bar, in cells.
const BAR: usize = 24;

fn limits_text(limits: &[Option<u32>]) -> String {
    limits.iter().map(|l| limit_label(*l)).collect::<Vec<_>>().join(",")
}

/// What `r` would run: the prompt on show and its twin, or how to choose.
fn subject(s: &State) -> Vec<Line<'static>> {
    let Some(e) = &s.editor else {
        return vec![Line::styled(t!("tui.eval.choose_first").into_owned(), s.theme.warn())];
    };
    let prompts = match &e.base.twin {
        Some(t) => format!("{} + {t}", e.base.id),
        None => e.base.id.clone(),
    };
    vec![
        Line::from(t!("tui.eval.what", prompts = prompts).into_owned()),
        Line::from(
            t!(
                "tui.eval.what_detail",
                inputs = e.base.inputs.len(),
                limits = limits_text(&s.eval.limits),
                provider = s.provider.label()
            )
            .into_owned(),
        ),
    ]
}

/// The keys, and where it is recorded.
fn how(s: &State) -> Vec<Line<'static>> {
    let k = |a| s.keymap.key_for(a);
    vec![
        Line::styled(
            t!(
                "tui.eval.keys",
                run = k(Action::Run),
                limits = k(Action::LimitType),
                cancel = k(Action::Cancel),
                back = k(Action::Eval)
            )
            .into_owned(),
            s.theme.dim(),
        ),
        Line::styled(t!("tui.eval.same_session").into_owned(), s.theme.dim()),
    ]
}

fn secs(ms: u64) -> String {
    format!("{}.{}", ms / 1000, (ms % 1000) / 100)
}

/// The progress line: a bar, runs done of all, skipped, failed, in
/// flight, the rate and the time left (or how it ended).
fn progress_line(p: &Progress, ending: Option<&Ending>, now_ms: u64, theme: Theme) -> Line<'static> {
    let filled = (p.done() * BAR).checked_div(p.total).unwrap_or(BAR);
    let bar = format!("[{}{}]", "#".repeat(filled), ".".repeat(BAR - filled));
    let counts = t!(
        "tui.eval.counts",
        done = p.done(),
        total = p.total,
        skipped = p.skipped,
        failed = p.failed
    )
    .into_owned();
    let tail = match ending {
        None => {
            let rate = p.rate(now_ms).map_or_else(|| "–".to_owned(), |r| format!("{r:.1}"));
            let left = p
                .left_secs(now_ms)
                .map_or_else(|| "?".to_owned(), |x| format!("{x:.0}"));
            t!("tui.eval.running", in_flight = p.in_flight, rate = rate, left = left).into_owned()
        }
        Some(Ending::Complete) => t!("tui.eval.ended", secs = secs(p.elapsed_ms(now_ms))).into_owned(),
        Some(Ending::Cancelled) => t!("tui.eval.stopped").into_owned(),
        Some(Ending::Unrecorded(n, _)) => t!("tui.eval.not_recorded", n = n).into_owned(),
    };
    let style = match ending {
        Some(Ending::Complete) if p.failed == 0 => theme.ok(),
        Some(Ending::Complete) | None => theme.accent(),
        Some(_) => theme.bad(),
    };
    Line::from(vec![Span::styled(bar, style), Span::raw(format!(" {counts} · {tail}"))])
}

/// One twin pair at one limit: JSON's figure, then JSONL's.
fn twin_line(t: &TwinRow) -> Line<'static> {
    let recall = |r: &Row| pct(r.gold.as_ref().and_then(|g| g.recall));
    Line::from(
        t!(
            "tui.eval.twin_row",
            limit = format!("{:>5}", limit_label(t.max_tokens)),
            items_json = t.json.items_total,
            items_jsonl = t.jsonl.items_total,
            valid_json = pct(t.json.valid_rate),
            valid_jsonl = pct(t.jsonl.valid_rate),
            cut_json = t.json.truncated,
            cut_jsonl = t.jsonl.truncated,
            recall_json = recall(&t.json),
            recall_jsonl = recall(&t.jsonl)
        )
        .into_owned(),
    )
}

/// Why gold items were missed, per row that had a gold set.
fn loss_lines(rows: &[Row], theme: Theme) -> Vec<Line<'static>> {
    let with: Vec<&Row> = rows.iter().filter(|r| r.loss.is_some()).collect();
    if with.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Line::from(""),
        Line::styled(t!("tui.eval.loss_title").into_owned(), theme.accent()),
    ];
    for r in with {
        let Some(l) = &r.loss else { continue };
        out.push(Line::from(
            t!(
                "tui.eval.loss_row",
                prompt = r.prompt,
                limit = limit_label(r.max_tokens),
                cut = l.cut_by_limit,
                rejected = l.schema_rejected,
                never = l.never_produced,
                invented = l.invented
            )
            .into_owned(),
        ));
    }
    out
}

/// The lines of a planned eval: session, progress, table, twins, loss,
/// warnings.
fn planned_lines(p: &Progress, ending: Option<&Ending>, s: &State) -> Vec<Line<'static>> {
    let theme = s.theme;
    let mut out = vec![
        Line::from(
            t!(
                "tui.eval.planned",
                prompts = p.prompts.iter().map(|x| x.id.as_str()).collect::<Vec<_>>().join(" + "),
                limits = limits_text(&p.limits),
                provider = p.provider
            )
            .into_owned(),
        ),
        Line::styled(
            t!("tui.eval.session", id = p.session, path = p.path).into_owned(),
            theme.dim(),
        ),
        progress_line(p, ending, s.clock_ms, theme),
    ];
    if let Some(f) = p.first_failure() {
        out.extend(f.lines().map(|l| Line::styled(l.to_owned(), theme.bad())));
    }
    out.push(Line::from(""));
    let table = crate::eval::pretty_table(&p.rows);
    for (i, l) in table.lines().enumerate() {
        out.push(if i == 0 {
            Line::styled(l.to_owned(), theme.accent())
        } else {
            Line::from(l.to_owned())
        });
    }
    if !p.twins.is_empty() {
        out.push(Line::from(""));
        out.push(Line::styled(t!("tui.eval.twins_title").into_owned(), theme.accent()));
        out.extend(p.twins.iter().map(twin_line));
    }
    out.extend(loss_lines(&p.rows, theme));
    if !p.warnings.is_empty() {
        out.push(Line::from(""));
    }
    for w in &p.warnings {
        out.extend(w.lines().map(|l| Line::styled(format!("! {l}"), theme.warn())));
    }
    out
}

/// The view's lines as drawn.
fn body(s: &State) -> Vec<Line<'static>> {
    let theme = s.theme;
    match &s.eval.run {
        EvalRun::Idle => {
            let mut v = subject(s);
            v.push(Line::from(""));
            v.extend(how(s));
            v
        }
        EvalRun::Planning { prompts, .. } => vec![
            Line::from(t!("tui.eval.planning", prompts = prompts.join(" + ")).into_owned()),
            Line::styled(t!("tui.eval.same_session").into_owned(), theme.dim()),
        ],
        EvalRun::Running(p) => planned_lines(p, None, s),
        EvalRun::Ended(p, ending) => {
            let mut v = planned_lines(p, Some(ending), s);
            v.push(Line::from(""));
            v.extend(how(s));
            v
        }
        EvalRun::Failed { prompts, error } => {
            let mut v = vec![Line::from(
                t!("tui.eval.failed_title", prompts = prompts.join(" + ")).into_owned(),
            )];
            v.extend(error.lines().map(|l| Line::styled(l.to_owned(), theme.bad())));
            v.push(Line::from(""));
            v.extend(how(s));
            v
        }
    }
}

/// Rows the eval view has: what the reducer scrolls over.
pub fn rows(s: &State) -> usize {
    body(s).len()
}

/// Draw the eval view.
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let title = t!("tui.eval.title").into_owned();
    panes::draw_scrolled(f, area, title, body(s), s.eval.top, s.theme);
}
