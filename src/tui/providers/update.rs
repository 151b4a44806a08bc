//! The provider picker: moving, choosing, typing a model, taking the config the runner read.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{PickerRow, ProviderChoice, ProviderEntry, save_model};
use crate::tui::Effect;
use crate::tui::keymap::Action;
use crate::tui::panes::step;
use crate::tui::state::{Mode, State};

pub(in crate::tui) fn open_picker(s: &mut State) -> Vec<Effect> {
    s.mode = Mode::Picker;
    let cur = (0..s.picker.len()).find(|i| s.picker.choice(*i).is_some_and(|c| c.label() == s.provider.label()));
    s.picker.selected = cur.unwrap_or(0);
    // Re-read the config: an edit to cutline.toml shows at once.
    vec![Effect::LoadProviders]
}

pub(in crate::tui) fn picker_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    let n = s.picker.len();
    if k.code == KeyCode::Char('w') {
        return save_model::ask(s);
    }
    // Any other key drops a save that was not confirmed.
    s.picker.save = None;
    match (k.code, s.keymap.action(&k)) {
        (KeyCode::Esc, _) | (_, Some(Action::Quit | Action::Provider)) => s.mode = Mode::Normal,
        (KeyCode::Enter, _) => choose_provider(s),
        (KeyCode::Char('e'), _) => {
            if let Some(PickerRow::Configured(e)) = s.picker.selected_row() {
                s.mode = Mode::ModelInput(s.picker.model_of(e).unwrap_or_default());
            } else {
                s.info(rust_i18n::t!("tui.msg.no_model_to_choose"));
            }
        }
        (KeyCode::Up, _) | (_, Some(Action::Up)) => s.picker.selected = s.picker.selected.saturating_sub(1),
        (KeyCode::Down, _) | (_, Some(Action::Down)) => s.picker.selected = step(s.picker.selected, 1, n),
        (_, Some(Action::Top)) => s.picker.selected = 0,
        (_, Some(Action::Bottom)) => s.picker.selected = n - 1,
        _ => {}
    }
    s.picker.selected = s.picker.selected.min(n - 1);
    Vec::new()
}

pub(in crate::tui) fn model_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    let Mode::ModelInput(text) = &mut s.mode else {
        return Vec::new();
    };
    match k.code {
        KeyCode::Esc => s.mode = Mode::Picker,
        KeyCode::Enter => {
            let typed = std::mem::take(text).trim().to_owned();
            s.mode = Mode::Picker;
            let Some(PickerRow::Configured(e)) = s.picker.selected_row() else {
                return Vec::new();
            };
            let name = e.config.name.clone();
            s.picker.models.retain(|(n, _)| *n != name);
            if !typed.is_empty() {
                s.picker.models.push((name.clone(), typed));
            }
            if s.provider.label() == name {
                choose_provider(s);
                s.mode = Mode::Picker;
            }
        }
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) && text.len() < 200 => {
            text.push(c);
        }
        _ => {}
    }
    Vec::new()
}

fn choose_provider(s: &mut State) {
    let Some(choice) = s.picker.choice(s.picker.selected) else {
        return;
    };
    s.mode = Mode::Normal;
    s.provider = choice;
    match &s.provider {
        ProviderChoice::Local if s.local_installed == Some(false) => {
            s.error(rust_i18n::t!(
                "tui.msg.local_missing",
                hint = crate::llm::local::SETUP_HINT
            ));
        }
        ProviderChoice::Local => s.info(rust_i18n::t!("tui.msg.provider_local")),
        ProviderChoice::Replay => s.info(rust_i18n::t!("tui.msg.provider_replay", dir = s.sessions_dir.display())),
        ProviderChoice::Configured { name, model } => {
            let entry = s.picker.entries.iter().find(|e| &e.config.name == name);
            let unset = rust_i18n::t!("tui.msg.model_unset");
            let text = rust_i18n::t!(
                "tui.msg.provider_configured",
                name = name,
                kind = entry.map_or("?", |e| e.config.kind.as_str()),
                model = model.as_deref().unwrap_or(&unset)
            )
            .into_owned();
            match entry.filter(|e| !e.key_set).and_then(|e| e.config.key_env()) {
                Some(var) => s.error(rust_i18n::t!("tui.msg.key_unset", text = text, var = var)),
                None => s.info(text),
            }
        }
    }
}

pub(in crate::tui) fn providers_loaded(
    s: &mut State,
    r: Result<Vec<ProviderEntry>, crate::llm::config::ProvidersFileError>,
) {
    s.picker.loaded = true;
    match r {
        Ok(entries) => {
            s.picker.entries = entries;
            s.picker.error = None;
        }
        Err(e) => {
            s.picker.entries.clear();
            s.error(rust_i18n::t!("tui.msg.config_not_loaded", error = e));
            s.picker.error = Some(e.to_string());
        }
    }
    s.picker.selected = s.picker.selected.min(s.picker.len() - 1);
    if let ProviderChoice::Configured { name, model } = &s.provider
        && !s.picker.entries.iter().any(|e| &e.config.name == name)
    {
        let name = name.clone();
        if model.is_none() || s.picker.error.is_none() {
            s.provider = ProviderChoice::Replay;
            if s.picker.error.is_none() {
                s.error(rust_i18n::t!("tui.msg.provider_unknown", name = format!("{name:?}")));
            }
        }
    } else if let ProviderChoice::Configured { name, model: None } = &s.provider {
        // Chosen by name at start: show the configured model.
        let name = name.clone();
        if let Some(row) = (0..s.picker.len())
            .find(|&i| matches!(s.picker.row(i), Some(PickerRow::Configured(e)) if e.config.name == name))
        {
            s.provider = s.picker.choice(row).unwrap_or(ProviderChoice::Replay);
        }
    }
}
