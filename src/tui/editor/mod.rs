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
