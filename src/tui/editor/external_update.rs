//! Ctrl-O: the field being edited goes to `$VISUAL`/`$EDITOR` and comes back.
//! The reducer only asks (an [`Effect::EditExternally`]) and takes the
//! answer ([`Event::EditedExternally`]); the event loop suspends the
//! terminal and runs the editor (`tui::external`).

use super::Field;
use crate::tui::Effect;
use crate::tui::state::{Mode, State};

/// Open the focused field in the external editor.
pub fn open(s: &mut State) -> Vec<Effect> {
    let Some(e) = &s.editor else {
        s.info(rust_i18n::t!("tui.status.external_nothing").into_owned());
        return Vec::new();
    };
    let field = e.field;
    let json = field == Field::Schema || (field == Field::Input && !e.input_as_text);
    let suffix = if json { ".json" } else { ".txt" };
    let text = e.areas[field.index()].lines().join("\n");
    vec![Effect::EditExternally { field, text, suffix }]
}

/// The editor closed: the field takes its text (typing stays where it was).
pub fn edited(s: &mut State, field: Field, result: Result<String, super::external::ExternalError>) -> Vec<Effect> {
    let theme = s.theme;
    let Some(e) = &mut s.editor else {
        return Vec::new();
    };
    match result {
        Ok(text) => {
            let title = field.title();
            if e.replace(field, &text, theme) {
                e.field = field;
                s.info(rust_i18n::t!("tui.status.external_changed", field = title).into_owned());
            } else {
                s.info(rust_i18n::t!("tui.status.external_same", field = title).into_owned());
            }
        }
        Err(why) => s.error(rust_i18n::t!("tui.status.external_failed", why = why).into_owned()),
    }
    if s.mode != Mode::Insert {
        s.mode = Mode::Normal;
    }
    Vec::new()
}
