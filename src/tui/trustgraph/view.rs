//! The push's question (the diff of every key it writes) and its refusal,
//! over the body. Removed and added words carry git's word-diff marks
//! (`[-…-]`, `{+…+}`) as well as colour, so they read without colour.
//! Everything from the deployment (keys, templates, reasons) is drawn
//! through the terminal sanitiser (`term::clean`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use rust_i18n::t;

use super::state::{Pulled, Ready, Stage, TgState};
use crate::tg::diff::Part;
use crate::tui::text;
use crate::tui::theme::Theme;

/// The lines of the question: where it goes, each key and its change, what
/// `y` does.
pub fn ask_lines(r: &Ready, pulled: Option<&Pulled>, theme: Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let (host, ws) = pulled.map_or(("?", "?"), |p| (p.host(), p.workspace.as_str()));
    out.push(Line::styled(
        t!("tui.tg.ask_where", id = r.id, workspace = ws, host = host, version = r.version).into_owned(),
        theme.accent(),
    ));
    if let Some(w) = &r.write {
        out.push(Line::raw(
            t!("tui.tg.ask_write", file = w.path.display()).into_owned(),
        ));
    }
    if r.unsaved {
        out.push(Line::styled(t!("tui.tg.unsaved").into_owned(), theme.warn()));
    }
    for k in &r.keys {
        out.push(Line::from(vec![
            Span::styled(format!("{} ", k.action), theme.accent()),
            Span::raw(text::clean(&k.key).into_owned()),
        ]));
        for p in &k.parts {
            out.extend(part_lines(p, theme));
        }
    }
    for w in &r.warnings {
        out.push(Line::styled(
            t!("tui.tg.warning", text = text::clean(w)).into_owned(),
            theme.warn(),
        ));
    }
    out.push(Line::styled(t!("tui.tg.ask_keys").into_owned(), theme.accent()));
    out
}

/// Lines of unchanged text kept around a changed one.
const CONTEXT: usize = 1;

/// One part of a change as lines: its name, then its words line by line
/// (a run's newlines start new lines), the unchanged lines more than
/// [`CONTEXT`] away from a change folded into `…`.
fn part_lines(p: &Part, theme: Theme) -> Vec<Line<'static>> {
    let mut lines: Vec<(Vec<Span<'static>>, bool)> = vec![(
        vec![Span::styled(format!("  {}: ", text::clean(&p.name)), theme.dim())],
        false,
    )];
    for w in &p.runs {
        let (open, close, style) = match w.op {
            "-" => ("[-", "-]", theme.bad()),
            "+" => ("{+", "+}", theme.ok()),
            _ => ("", "", ratatui::style::Style::new()),
        };
        for (i, piece) in w.text.split('\n').enumerate() {
            if i > 0 {
                lines.push((vec![Span::raw("    ")], false));
            }
            if piece.is_empty() {
                continue;
            }
            let Some((spans, changed)) = lines.last_mut() else { continue };
            spans.push(Span::styled(format!("{open}{}{close}", text::clean(piece)), style));
            *changed |= w.op != "=";
        }
    }
    let near = |i: usize| {
        let lo = i.saturating_sub(CONTEXT);
        lines[lo..lines.len().min(i + CONTEXT + 1)].iter().any(|(_, c)| *c)
    };
    let mut out = Vec::new();
    let mut folded = false;
    for (i, (spans, _)) in lines.iter().enumerate() {
        if i == 0 || near(i) {
            out.push(Line::from(spans.clone()));
            folded = false;
        } else if !folded {
            out.push(Line::styled("    …", theme.dim()));
            folded = true;
        }
    }
    out
}

/// Draw the question or the refusal in `area`.
pub fn draw(f: &mut Frame<'_>, area: Rect, st: &TgState, theme: Theme) {
    let (title, lines, top) = match &st.stage {
        Stage::Ask(r) => (t!("tui.tg.title_ask"), ask_lines(r, st.pulled.as_ref(), theme), r.top),
        Stage::Refused { id, lines } => {
            let mut v: Vec<Line<'static>> = vec![Line::styled(
                t!("tui.tg.refused_title", id = id).into_owned(),
                theme.bad(),
            )];
            v.extend(lines.iter().map(|l| Line::raw(text::clean(l).into_owned())));
            v.push(Line::styled(t!("tui.tg.any_key").into_owned(), theme.dim()));
            (t!("tui.tg.title_refused"), v, 0)
        }
        _ => return,
    };
    let b = crate::tui::panes::block(Line::styled(title.into_owned(), theme.accent()), true, theme);
    let top = u16::try_from(top).unwrap_or(u16::MAX);
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(b).wrap(Wrap { trim: false }).scroll((top, 0)),
        area,
    );
}
