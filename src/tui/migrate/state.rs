//! What the Migrate tab holds, and how writing the migration went.

use super::rows::Row;
use crate::prompt::PromptConfig;
use crate::prompt::migrate::Migration;

/// The Migrate tab: a JSON-array prompt's JSONL migration (the pane draws
/// its rows from it).
#[derive(Debug)]
pub struct MigrateView {
    /// The prompt migrated.
    pub source: PromptConfig,
    /// The migration, or why there is none (not a JSON prompt).
    pub result: Result<Migration, crate::prompt::migrate::NotJson>,
    /// The tab's rows, built once from `source` and `result`.
    pub rows: Vec<Row>,
    /// First visible row.
    pub top: usize,
    /// The file the migrated prompt goes to.
    pub target: String,
    /// Set when the target exists: the write key again overwrites it.
    pub confirm_overwrite: bool,
    /// The file it was written to, once written.
    pub written: Option<String>,
}

/// How writing a migrated prompt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Written to this file.
    Written(String),
    /// The file exists and overwriting was not confirmed.
    Exists(String),
    /// The write failed.
    Failed(String),
}
