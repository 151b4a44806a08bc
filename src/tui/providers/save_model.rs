//! `w` in the provider picker: the model typed for a configured provider
//! goes into the config file that defines it. It asks first (`w` again
//! writes, any other key keeps the model for this session only); the runner
//! writes atomically with every other byte kept (`llm::config::with_model`).

use super::{PickerRow, SaveModel};
use crate::tui::Effect;
use crate::tui::State;

/// `w`: ask to save the typed model of the provider under the cursor, or,
/// asked already, save it.
pub fn ask(s: &mut State) -> Vec<Effect> {
    let Some(PickerRow::Configured(e)) = s.picker.selected_row() else {
        s.picker.save = None;
        s.info(rust_i18n::t!("tui.status.save_model_none").into_owned());
        return Vec::new();
    };
    let name = e.config.name.clone();
    let typed = s.picker.models.iter().find(|(n, _)| *n == name).map(|(_, m)| m.clone());
    let Some(model) = typed.filter(|m| e.config.model.as_ref() != Some(m)) else {
        s.picker.save = None;
        s.info(rust_i18n::t!("tui.status.save_model_untyped", provider = name).into_owned());
        return Vec::new();
    };
    let Some(file) = e.config.file.clone() else {
        s.picker.save = None;
        s.error(rust_i18n::t!("tui.status.save_model_nofile", provider = name).into_owned());
        return Vec::new();
    };
    let want = SaveModel {
        provider: name,
        model,
        file,
    };
    if s.picker.save.as_ref() == Some(&want) {
        s.picker.save = None;
        s.info(rust_i18n::t!("tui.status.save_model_saving", file = want.file.display()).into_owned());
        return vec![Effect::SaveModel(want)];
    }
    s.info(
        rust_i18n::t!(
            "tui.status.save_model_ask",
            model = want.model,
            provider = want.provider,
            file = want.file.display()
        )
        .into_owned(),
    );
    s.picker.save = Some(want);
    Vec::new()
}

/// The runner's answer: reread the config on success.
pub fn saved(s: &mut State, r: Result<String, super::SaveModelError>) -> Vec<Effect> {
    match r {
        Ok(what) => {
            s.info(what);
            vec![Effect::LoadProviders]
        }
        Err(why) => {
            s.error(rust_i18n::t!("tui.status.save_model_failed", why = why).into_owned());
            Vec::new()
        }
    }
}
