//! The editor's part of the reducer: opening a prompt, typing into a
//! field, saving, and taking the save's answer.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::Input;

use super::Editor;
use crate::tui::Effect;
use crate::tui::keymap::Action;
use crate::tui::runs::Target;
use crate::tui::state::{Mode, State, Tab};

pub(in crate::tui) fn open_prompt(s: &mut State) -> bool {
    let Some(p) = s.prompts.selected_prompt().cloned() else {
        s.info(rust_i18n::t!("tui.msg.no_prompt_selected"));
        return false;
    };
    let same = s
        .editor
        .as_ref()
        .is_some_and(|e| e.base.id == p.id && e.base.origin == p.origin);
    if !same {
        s.editor = Some(Editor::new(&p, s.theme));
    }
    s.target = Target::Prompt;
    true
}

/// Enter: open the selected prompt, or start typing (the Sessions tab
/// takes Enter for its recordings).
pub(in crate::tui) fn open(s: &mut State) -> Vec<Effect> {
    let tab = s.tab;
    if tab == Tab::Prompts && open_prompt(s) {
        s.tab = Tab::Edit;
    } else if tab == Tab::Edit {
        edit(s);
    }
    Vec::new()
}

pub(in crate::tui) fn edit(s: &mut State) {
    if s.tab == Tab::Prompts && !open_prompt(s) {
        return;
    }
    if s.editor.is_some() {
        s.tab = Tab::Edit;
        s.mode = Mode::Insert;
    } else {
        s.info(rust_i18n::t!("tui.msg.open_prompt_first"));
    }
}

/// Ctrl-S: save the prompt with its edits (atomically, in its own format).
pub(in crate::tui) fn save(s: &mut State) -> Vec<Effect> {
    let Some(e) = &s.editor else {
        s.info(rust_i18n::t!("tui.msg.nothing_to_save"));
        return Vec::new();
    };
    match e.config() {
        Ok((p, _)) => {
            if let Some(err) = e.errors.iter().flatten().next() {
                s.info(rust_i18n::t!(
                    "tui.msg.saving_with_error",
                    line = err.line,
                    error = err.message
                ));
            } else {
                s.info(rust_i18n::t!("tui.msg.saving", file = p.origin.file));
            }
            vec![Effect::Save(Box::new(p))]
        }
        Err(err) => {
            s.error(rust_i18n::t!("tui.msg.cannot_save", error = err));
            Vec::new()
        }
    }
}

/// A key while typing in a field.
pub(in crate::tui) fn insert_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    if k.code == KeyCode::Esc {
        s.mode = Mode::Normal;
        return Vec::new();
    }
    if s.keymap.action(&k) == Some(Action::Save)
        || (k.code == KeyCode::Char('s') && k.modifiers == KeyModifiers::CONTROL)
    {
        return save(s);
    }
    if s.keymap.action(&k) == Some(Action::ExternalEdit) {
        return super::external_update::open(s);
    }
    let Some(e) = &mut s.editor else {
        s.mode = Mode::Normal;
        return Vec::new();
    };
    if e.area_mut().input(Input::from(k)) {
        e.dirty = true;
        e.revalidate();
    }
    Vec::new()
}

/// The save finished: the editor is clean, the list reloads.
pub(in crate::tui) fn saved(s: &mut State, r: Result<String, crate::prompt::ConfigError>) -> Vec<Effect> {
    match r {
        Ok(file) => {
            if let Some(e) = &mut s.editor {
                e.dirty = false;
                if let Ok((p, _)) = e.config() {
                    e.base = p;
                }
            }
            s.info(rust_i18n::t!("tui.msg.saved", file = file));
            return vec![Effect::LoadPrompts];
        }
        Err(e) => s.error(rust_i18n::t!("tui.msg.not_saved", error = e)),
    }
    Vec::new()
}
