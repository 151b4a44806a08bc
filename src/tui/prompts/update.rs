//! The Prompts tab's part of the reducer: taking the directory as loaded,
//! and typing the filter (`/`).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::prompt::PromptConfig;
use crate::tui::Effect;
use crate::tui::component::Nav;
use crate::tui::state::{Mode, State};

/// The prompts directory was (re)loaded: the list, the files that did not
/// load, what the status says, and the remembered tab's prompt.
pub(in crate::tui) fn loaded(
    s: &mut State,
    prompts: Vec<PromptConfig>,
    errors: Vec<String>,
    warnings: &[String],
) -> Vec<Effect> {
    let n = prompts.len();
    s.prompts.prompts = prompts;
    s.prompts.errors = errors;
    s.prompts.loaded = true;
    s.prompts.selected = s.prompts.selected.min(s.prompts.filtered().len().saturating_sub(1));
    if let Some(e) = s.prompts.errors.first() {
        s.error(rust_i18n::t!(
            "tui.msg.prompts_failed",
            n = s.prompts.errors.len(),
            error = e
        ));
    } else if let Some(w) = warnings.first() {
        s.info(rust_i18n::t!("tui.msg.warning", warning = w));
    } else if n == 0 {
        s.info(rust_i18n::t!("tui.msg.no_prompts", dir = s.prompts_dir.display()));
    }
    // The last session's Edit or Migrate tab waits for its prompt.
    vec![Effect::Nav(Nav::Resume)]
}

/// A key while typing the filter.
pub(in crate::tui) fn filter_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    match k.code {
        KeyCode::Esc => {
            s.prompts.filter.clear();
            s.mode = Mode::Normal;
        }
        KeyCode::Enter => s.mode = Mode::Normal,
        KeyCode::Backspace => {
            s.prompts.filter.pop();
        }
        KeyCode::Up => s.prompts.selected = s.prompts.selected.saturating_sub(1),
        KeyCode::Down => s.prompts.selected += 1,
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => s.prompts.filter.push(c),
        _ => {}
    }
    s.prompts.selected = s.prompts.selected.min(s.prompts.filtered().len().saturating_sub(1));
    Vec::new()
}
