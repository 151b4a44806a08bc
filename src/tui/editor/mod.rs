//! The Edit tab: template, system prompt, schema and sample input of the
//! prompt open, each field revalidated as it is typed (JSON, schema
//! compilation, rendering, each error at its line), saved with Ctrl-S, or
//! handed to `$VISUAL`/`$EDITOR` with Ctrl-O.
//!
//! `state` holds [`Editor`] (its fields are text areas: see there),
//! `update` opens, types and saves, `external_update` asks for the
//! external editor and takes its text, `view` draws the fields and their
//! errors, `effects` saves through the store, `external` runs the editor
//! for the event loop.

mod effects;
pub mod external;
pub(super) mod external_update;
mod state;
pub(super) mod update;
pub mod view;

pub(super) use effects::spawn_save;
pub use state::{EditError, Editor, Field, FieldError};

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui_textarea::{CursorMove, Input, Key as TaKey};

use crate::tui::{Effect, Event};
use crate::tui::work::Carry;
use crate::tui::component::{Component, Id, Nav, Place};
use crate::tui::keymap::Action;
use crate::tui::state::{Mode, State, Tab};

/// The Edit tab: the prompt open, its fields, saving, the rendered prompt,
/// the external editor.
#[derive(Debug, Clone, Copy)]
pub struct Edit;

impl Component for Edit {
    fn id(&self) -> Id {
        Id("edit")
    }

    fn place(&self) -> Place {
        Place::Tab(Tab::Edit)
    }

    fn actions(&self) -> &'static [Action] {
        &[
            Action::Open,
            Action::Edit,
            Action::Save,
            Action::Rendered,
            Action::NextInput,
            Action::ExternalEdit,
        ]
    }

    fn action(&self, s: &mut State, a: Action) -> Vec<Effect> {
        match a {
            Action::Open => update::open(s),
            Action::Edit => {
                update::edit(s);
                Vec::new()
            }
            Action::Save => update::save(s),
            Action::ExternalEdit => external_update::open(s),
            Action::Rendered => {
                if let Some(e) = &mut s.editor {
                    e.show_rendered = !e.show_rendered;
                    s.tab = Tab::Edit;
                } else {
                    s.info(rust_i18n::t!("tui.msg.open_prompt_first"));
                }
                Vec::new()
            }
            _ => {
                let theme = s.theme;
                match s.editor.as_mut().map(|e| e.next_input(theme)) {
                    Some(Some(name)) => s.info(rust_i18n::t!("tui.msg.sample_input", name = name)),
                    Some(None) => s.info(rust_i18n::t!("tui.msg.no_inputs")),
                    None => s.info(rust_i18n::t!("tui.msg.open_prompt_first")),
                }
                Vec::new()
            }
        }
    }

    fn carry_out(&self, cx: &mut Carry<'_>, e: Effect) -> Result<(), Effect> {
        match e {
            Effect::Save(p) => spawn_save(cx.tx(), cx.prompts_dir(), p),
            // The event loop runs the editor with the terminal suspended;
            // a runner without a terminal (tests) cannot.
            Effect::EditExternally { field, .. } => {
                let _ = cx.tx.send(Event::EditedExternally {
                    field,
                    result: Err(external::ExternalError::NoTerminal),
                });
            }
            other => return Err(other),
        }
        Ok(())
    }

    fn event(&self, s: &mut State, ev: Event) -> Result<Vec<Effect>, Event> {
        match ev {
            Event::Saved(r) => Ok(update::saved(s, r)),
            Event::EditedExternally { field, result } => Ok(external_update::edited(s, field, result)),
            other => Err(other),
        }
    }

    fn owns_mode(&self, mode: &Mode) -> bool {
        *mode == Mode::Insert
    }

    fn key(&self, s: &mut State, k: KeyEvent) -> Vec<Effect> {
        update::insert_key(s, k)
    }

    fn move_by(&self, s: &mut State, by: isize, _under: &[Line<'static>]) {
        if let Some(e) = &mut s.editor {
            let a = e.area_mut();
            let m = if by < 0 { CursorMove::Up } else { CursorMove::Down };
            if by.unsigned_abs() > 1_000_000 {
                a.move_cursor(if by < 0 { CursorMove::Top } else { CursorMove::Bottom });
            } else {
                for _ in 0..by.unsigned_abs() {
                    a.move_cursor(m);
                }
            }
        }
    }

    fn sideways(&self, s: &mut State, by: isize) {
        self.focus(s, by.signum());
    }

    fn focus(&self, s: &mut State, dir: isize) -> bool {
        if let Some(e) = &mut s.editor {
            let i = (e.field.index() + if dir < 0 { 3 } else { 1 }) % 4;
            e.field = Field::ALL[i];
        }
        true
    }

    fn wheel(&self, s: &mut State, by: isize) -> bool {
        if let Some(e) = &mut s.editor {
            let key = if by < 0 {
                TaKey::MouseScrollUp
            } else {
                TaKey::MouseScrollDown
            };
            e.area_mut().input(Input {
                key,
                ..Input::default()
            });
        }
        true
    }

    fn draw(&self, f: &mut Frame<'_>, area: Rect, s: &State, _under: &[Line<'static>]) {
        view::draw(f, area, s);
    }

    fn navigate(&self, s: &mut State, nav: &Nav) -> Option<Vec<Effect>> {
        match nav {
            Nav::OpenSelected => {
                update::open_prompt(s);
            }
            Nav::OpenPrompt(p) => {
                s.editor = Some(Editor::new(p, s.theme));
                s.target = crate::tui::runs::Target::Prompt;
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn mode_hint(&self, s: &State) -> Option<Cow<'static, str>> {
        Some(rust_i18n::t!(
            "tui.status.editing",
            field = s.editor.as_ref().map_or(Field::Template, |e| e.field).title()
        ))
    }
}
