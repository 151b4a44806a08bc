//! Who answers prompts: [`ProviderChoice`] (replay, the local model, a
//! provider of cutline.toml with the model chosen here) and the picker
//! (`p`) that chooses it, with `e` to type a model and `w` to save it
//! into the config file (`save_model`).
//!
//! `state` holds the choice, the picker and its rows, `update` its keys,
//! `view` the popup, `effects` reads cutline.toml (whether each key
//! variable is set, never a key) and writes a saved model.

mod effects;
pub(super) mod save_model;
mod state;
pub(super) mod update;
pub mod view;

pub use crate::tui::choice::ProviderChoice;
pub(super) use effects::spawn_load;
pub use effects::{SaveModelCause, SaveModelError, load_providers, save_model};
pub use state::{PickerRow, ProviderEntry, ProviderPicker, SaveModel};

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{Mode, State};

/// The provider picker (`p`), a popup over the body while it has the keys.
#[derive(Debug, Clone, Copy)]
pub struct Providers;

impl Component for Providers {
    fn id(&self) -> Id {
        Id("providers")
    }

    fn place(&self) -> Place {
        Place::Popup
    }

    fn actions(&self) -> &'static [Action] {
        &[Action::Provider]
    }

    fn action(&self, s: &mut State, _a: Action) -> Vec<Effect> {
        update::open_picker(s)
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        match e {
            Effect::LoadProviders => spawn_load(cx.tx(), cx.registry.clone()),
            Effect::SaveModel(job) => {
                let tx = cx.tx();
                tokio::task::spawn_blocking(move || {
                    let r = save_model(&job);
                    tracing::info!("save model {} for {}: {r:?}", job.model, job.provider);
                    let _ = tx.send(Event::ModelSaved(r));
                });
            }
            other => return Err(other),
        }
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::ProvidersLoaded(r) => {
                update::providers_loaded(s, r);
                Ok(Vec::new())
            }
            Event::ModelSaved(r) => Ok(save_model::saved(s, r)),
            other => Err(other),
        }
    }

    fn owns_mode(&self, mode: &Mode) -> bool {
        matches!(mode, Mode::Picker | Mode::ModelInput(_))
    }

    fn key(&self, s: &mut State, k: KeyEvent) -> Vec<Effect> {
        if s.mode == Mode::Picker {
            update::picker_key(s, k)
        } else {
            update::model_key(s, k)
        }
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, s);
    }

    fn mode_hint(&self, s: &State) -> Option<Cow<'static, str>> {
        Some(match &s.mode {
            Mode::ModelInput(text) => rust_i18n::t!("tui.status.model_input", text = text),
            _ => rust_i18n::t!("tui.status.picker"),
        })
    }
}
