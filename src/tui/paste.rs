//! A bracketed paste, handled in one step: the terminal sends the pasted
//! text as one event, so a 10 KB or 1 MB paste is one insertion and one
//! revalidation, never a key event per character (which took minutes and
//! kept a queued Ctrl-S or a signal waiting behind it). Where a terminal
//! has no bracketed paste, the event loop joins a run of typed keys into
//! one insertion ([`Typed`]): the editor's soft-wrap map is rebuilt per
//! insertion, so a key at a time cost milliseconds each.

use ratatui::crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};

use super::keymap::Action;
use super::state::{Mode, State};
use super::{Effect, Event};

/// Longest paste kept in a one-line field (a filter, a model name).
const FIELD_MAX: usize = 200;

/// Insert `text` where typing would go in the current mode; in normal mode
/// a paste does nothing (its characters are never taken as commands).
pub fn paste(s: &mut State, text: &str) -> Vec<Effect> {
    if s.mode == Mode::Help {
        s.mode = Mode::Normal;
        return Vec::new();
    }
    // Terminals send line ends as `\r` inside a paste.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    // The one-line fields a mode carries.
    match &mut s.mode {
        Mode::ModelInput(typed) | Mode::Search(_, typed) | Mode::EvalLimits(typed) => {
            push_line(typed, &text, FIELD_MAX);
            return Vec::new();
        }
        Mode::LimitInput(typed) => {
            let room = 9usize.saturating_sub(typed.len());
            typed.extend(text.chars().filter(char::is_ascii_digit).take(room));
            return Vec::new();
        }
        _ => {}
    }
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
        Mode::ModelInput(_)
        | Mode::Search(..)
        | Mode::LimitInput(_)
        | Mode::EvalLimits(_)
        | Mode::Normal
        | Mode::Picker
        | Mode::Help
        | Mode::Own(_) => {
            s.info(rust_i18n::t!("tui.msg.paste_where"));
        }
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

/// The text a key types into the editor, when it only types: a character
/// (no Ctrl or Alt) or Enter, in insert mode, not bound to save.
pub fn typed(s: &State, ev: &Event) -> Option<char> {
    let Event::Key(k) = ev else { return None };
    if s.mode != Mode::Insert || s.editor.is_none() || k.kind == KeyEventKind::Release {
        return None;
    }
    let plain = (k.modifiers - KeyModifiers::SHIFT).is_empty();
    let c = match k.code {
        KeyCode::Char(c) if plain => c,
        KeyCode::Enter if plain => '\n',
        _ => return None,
    };
    (s.keymap.action(k) != Some(Action::Save)).then_some(c)
}

/// A run of typed keys gathered by the event loop, handed to the reducer
/// as one insertion.
#[derive(Debug, Default)]
pub struct Typed(String);

impl Typed {
    /// Take `ev` into the run when it only types; else hand it back.
    pub fn take(&mut self, s: &State, ev: Event) -> Option<Event> {
        match typed(s, &ev) {
            Some(c) => {
                self.0.push(c);
                None
            }
            None => Some(ev),
        }
    }

    /// The run so far as one event (none when empty).
    pub fn flush(&mut self) -> Option<Event> {
        (!self.0.is_empty()).then(|| Event::Paste(std::mem::take(&mut self.0)))
    }
}
