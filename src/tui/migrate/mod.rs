//! The Migrate tab: a JSON-array prompt's JSONL twin (`prompt::migrate`)
//! shown as diffs, flags and unconvertible parts, written on request
//! (asking before an overwrite), and run as a pair with its source.
//!
//! `state` holds [`MigrateView`] and [`WriteOutcome`], `rows` builds the
//! tab's rows once per migration, `update` migrates, writes and runs the
//! pair, `view` draws, `effects` writes the file through the store.

mod effects;
mod rows;
mod state;
pub(super) mod update;
pub mod view;

pub(super) use effects::spawn_write;
pub use effects::write_migrated;
pub use rows::{Kind, Row, diff, line_summary};
pub use state::{MigrateView, WriteOutcome};
pub use update::migrate_target;
