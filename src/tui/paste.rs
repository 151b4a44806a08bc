//! A bracketed paste, handled in one step: the terminal sends the pasted
//! text as one event, so a 10 KB or 1 MB paste is one insertion and one
//! revalidation, never a key event per character (which took minutes and
//! kept a queued Ctrl-S or a signal waiting behind it).

use super::event::Effect;
use super::state::{Mode, State};

/// Longest paste kept in a one-line field (a filter, a model name).
const FIELD_MAX: usize = 200;

/// Insert `text` where typing would go in the current mode; in normal mode
/// a paste does nothing (its characters are never taken as commands).
pub fn paste(s: &mut State, text: &str) -> Vec<Effect> {
    if s.help {
        s.help = false;
        return Vec::new();
    }
    // Terminals send line ends as `\r` inside a paste.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    match s.mode {
        Mode::Insert => match &mut s.editor {
            Some(e) => {
                if e.area_mut().insert_str(&text) {
                    e.dirty = true;
                    e.revalidate();
                }
            }
            None => s.mode = Mode::Normal,
        },
        Mode::Filter => {
            push_line(&mut s.prompts.filter, &text, FIELD_MAX);
            s.prompts.selected = s.prompts.selected.min(s.prompts.filtered().len().saturating_sub(1));
        }
        Mode::ModelInput => push_line(&mut s.picker.model_input, &text, FIELD_MAX),
        Mode::LimitInput => {
            let room = 9usize.saturating_sub(s.limit_input.len());
            s.limit_input
                .extend(text.chars().filter(char::is_ascii_digit).take(room));
        }
        Mode::Normal | Mode::Picker => s.info("paste into the editor: e opens it"),
    }
    Vec::new()
}

/// Append the first line of `text` to a one-line field, up to `max` chars.
fn push_line(field: &mut String, text: &str, max: usize) {
    let room = max.saturating_sub(field.chars().count());
    field.extend(
        text.lines()
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_control())
            .take(room),
    );
}
