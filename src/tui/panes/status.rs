//! The status bar: provider, limit, structured output, and the run's finish
//! reason, tokens, time and structured-output path; below, the message or
//! the key hints for the current mode.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::keymap::Action;
use super::super::run_view::{Phase, RunView};
use super::super::state::{Field, Mode, Shown, State};

fn run_part(r: &RunView, label: Option<&str>) -> String {
    let phase = match &r.phase {
        Phase::Starting => "starting".to_owned(),
        Phase::Streaming => "streaming".to_owned(),
        Phase::Done => format!("finish {}", r.finish.map_or("?", |f| f.as_str())),
        Phase::Cancelled => "cancelled".to_owned(),
        Phase::Failed(_) => format!("failed ({})", r.finish.map_or("error", |f| f.as_str())),
    };
    let secs = r.elapsed_ms / 1000;
    let tenths = (r.elapsed_ms % 1000) / 100;
    let label = label.map(|l| format!("{l}: ")).unwrap_or_default();
    format!(
        "{label}{phase} · {} tok · {secs}.{tenths} s · path {}",
        r.tokens(),
        r.structured_path
    )
}

/// The first line, as text.
pub fn line1(s: &State) -> String {
    let missing = s.local_installed == Some(false) && s.provider == super::super::event::ProviderChoice::Local;
    let model = match &s.provider {
        super::super::event::ProviderChoice::Configured { model, .. } => {
            format!(" {}", model.as_deref().unwrap_or("(configured model)"))
        }
        _ => String::new(),
    };
    let mut parts = vec![
        format!(
            "{}{model}{}",
            s.provider.label(),
            if missing { " (not installed)" } else { "" }
        ),
        format!(
            "limit {}",
            s.max_tokens.map_or_else(|| "none".to_owned(), |n| n.to_string())
        ),
        format!("structured {}", s.structured_label()),
    ];
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
    format!(" {}", parts.join(" │ "))
}

/// The second line: message, or hints.
pub fn line2(s: &State) -> (String, bool) {
    if let Some(m) = &s.message {
        return (format!(" {}", m.text), m.error);
    }
    let k = |a| s.keymap.key_for(a);
    let hint = match s.mode {
        Mode::Filter => format!(" filter: {}▌ — Enter keeps · Esc clears", s.prompts.filter),
        Mode::LimitInput => format!(
            " max tokens: {}▌ — Enter sets (0 or empty: no limit) · Esc cancels",
            s.limit_input
        ),
        Mode::Insert => format!(
            " editing {} — Esc stops · Ctrl-S saves",
            s.editor.as_ref().map_or(Field::Template, |e| e.field).title()
        ),
        Mode::Picker => " provider: ↑/↓ move · Enter chooses · e edits the model · Esc closes".to_owned(),
        Mode::ModelInput => format!(" model: {}▌ — Enter sets · Esc cancels", s.picker.model_input),
        Mode::Normal if s.tab == super::super::state::Tab::Migrate => format!(
            " {} migrate the selection · {} write it · {} run original + migration · ↑/↓ scroll · {} provider · {} help",
            k(Action::Migrate),
            k(Action::MigrateWrite),
            k(Action::Twins),
            k(Action::Provider),
            k(Action::Help)
        ),
        Mode::Normal if s.tab == super::super::state::Tab::Compare => format!(
            " {} run twins · {} pin the run on show as A · ↑/↓ scroll · {} provider · {} help",
            k(Action::Twins),
            k(Action::Pin),
            k(Action::Provider),
            k(Action::Help)
        ),
        Mode::Normal => format!(
            " {} help · {} run · {} twins · {} sweep · {}/{} limit · {} type limit · {} provider · {} quit",
            k(Action::Help),
            k(Action::Run),
            k(Action::Twins),
            k(Action::Sweep),
            k(Action::LimitDown),
            k(Action::LimitUp),
            k(Action::LimitType),
            k(Action::Provider),
            k(Action::Quit)
        ),
    };
    (hint, false)
}

/// Draw both lines in `area`.
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let theme = s.theme;
    let w = usize::from(area.width);
    let (l2, err) = line2(s);
    let lines = vec![
        Line::from(Span::styled(super::super::text::pad(&line1(s), w), theme.selected())),
        Line::from(Span::styled(
            super::super::text::clip(&l2, w),
            if err { theme.bad() } else { theme.dim() },
        )),
    ];
    f.render_widget(Paragraph::new(lines), area);
}
