//! The status bar: provider, limit and structured output, then each
//! component's own words (the Run tab's: each run's finish reason, tokens,
//! time and structured-output path); below, the message or the key hints
//! of the mode's owner or the body on show.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use rust_i18n::t;

use super::keymap::Action;
use super::registry;
use super::state::{FirstScreen, Mode, State};

/// The first line, as text.
pub fn line1(s: &State) -> String {
    let missing = s.local_installed == Some(false) && s.provider == crate::tui::choice::ProviderChoice::Local;
    let model = match &s.provider {
        crate::tui::choice::ProviderChoice::Configured { model, .. } => {
            format!(
                " {}",
                model
                    .clone()
                    .unwrap_or_else(|| t!("tui.status.configured_model").into_owned())
            )
        }
        _ => String::new(),
    };
    let limit = s
        .max_tokens
        .map_or_else(|| t!("tui.status.none").into_owned(), |n| n.to_string());
    let mut parts = vec![
        format!(
            "{}{model}{}",
            s.provider.label(),
            if missing {
                t!("tui.status.not_installed")
            } else {
                "".into()
            }
        ),
        t!("tui.status.limit", n = limit).into_owned(),
        t!("tui.status.structured", mode = s.structured_label()).into_owned(),
    ];
    // Then each component's own words, in registry order.
    parts.extend(registry::COMPONENTS.iter().flat_map(|c| c.status(s)));
    format!(" {}", parts.join(" │ "))
}

/// The second line: message, or hints.
pub fn line2(s: &State) -> (String, bool) {
    if let Some(m) = &s.message {
        return (format!(" {}", m.text), m.error);
    }
    let k = |a| s.keymap.key_for(a);
    let hint = match (s.first_screen, &s.mode) {
        (Some(FirstScreen::Replay), _) => t!(
            "tui.status.first_replay",
            twins = k(Action::Twins),
            help = k(Action::Help)
        ),
        (Some(FirstScreen::Install), _) => t!("tui.status.first_empty", help = k(Action::Help)),
        (None, mode) => mode_hint(s, mode),
    };
    (format!(" {hint}"), false)
}

/// The key hints of `mode`: its owner's words, or (in normal mode, and
/// under the help) the hints of the body on show, else the common ones.
fn mode_hint(s: &State, mode: &Mode) -> std::borrow::Cow<'static, str> {
    let k = |a| s.keymap.key_for(a);
    let own = match mode {
        Mode::LimitInput(text) => Some(t!("tui.status.limit_input", text = text)),
        Mode::Normal => None,
        mode => registry::mode_owner(mode).and_then(|c| c.mode_hint(s)),
    };
    if let Some(words) = own {
        return words;
    }
    if let Some(words) = registry::body(s).and_then(|c| c.hint(s)) {
        return words;
    }
    t!(
        "tui.status.normal",
        help = k(Action::Help),
        run = k(Action::Run),
        twins = k(Action::Twins),
        sweep = k(Action::Sweep),
        down = k(Action::LimitDown),
        up = k(Action::LimitUp),
        typed = k(Action::LimitType),
        provider = k(Action::Provider),
        quit = k(Action::Quit)
    )
}

/// Draw both lines in `area`.
pub fn draw(f: &mut Frame<'_>, area: Rect, s: &State) {
    let theme = s.theme;
    let w = usize::from(area.width);
    let (l2, err) = line2(s);
    let lines = vec![
        Line::from(Span::styled(crate::tui::text::pad(&line1(s), w), theme.selected())),
        Line::from(Span::styled(
            crate::tui::text::clip(&l2, w),
            if err { theme.bad() } else { theme.dim() },
        )),
    ];
    f.render_widget(Paragraph::new(lines), area);
}
