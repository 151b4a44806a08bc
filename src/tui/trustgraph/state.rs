//! What the TrustGraph component keeps (in `State::parts`): the deployment
//! the prompts directory was pulled from, and where a push stands.

use std::path::PathBuf;

use crate::tg::diff::Part;
use crate::tg::journal::Change;

/// The deployment, workspace and version of the pull (`pull.json`), as
/// the status line names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// The gateway's base URL.
    pub url: String,
    /// The workspace.
    pub workspace: String,
    /// The config version pulled (or written by the last push).
    pub version: u64,
}

impl Pulled {
    /// The URL without its scheme and trailing slash (the status line is
    /// short).
    pub fn host(&self) -> &str {
        let u = self.url.split_once("://").map_or(self.url.as_str(), |(_, rest)| rest);
        u.strip_suffix('/').unwrap_or(u)
    }
}

/// One key a push writes, as the question shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyChange {
    /// The config key.
    pub key: String,
    /// `add`, `replace` or `delete`.
    pub action: &'static str,
    /// What changes in it, line by line.
    pub parts: Vec<Part>,
}

/// The migration on show, written into the pulled workspace's file before
/// the push: the file as checked and as it will be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalWrite {
    /// The workspace's file.
    pub path: PathBuf,
    /// Its bytes when the push was checked (the write is refused if they
    /// changed since).
    pub before: Vec<u8>,
    /// Its bytes with the migration in place.
    pub after: Vec<u8>,
}

/// A push checked against the live workspace, waiting for a yes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    /// The prompt id.
    pub id: String,
    /// The keys it writes, with their changes.
    pub keys: Vec<KeyChange>,
    /// Exactly what it writes (the push is refused if a fresh check finds
    /// anything else).
    pub changes: Vec<Change>,
    /// The live version checked against.
    pub version: u64,
    /// The migration written locally first, if the push is one.
    pub write: Option<LocalWrite>,
    /// Warnings TrustGraph's loader would log that do not stop it.
    pub warnings: Vec<String>,
    /// The editor holds edits of this prompt not saved (they are not pushed).
    pub unsaved: bool,
    /// The first line on show.
    pub top: usize,
}

/// Where a push stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Stage {
    /// Nothing asked.
    #[default]
    Idle,
    /// Reading the live workspace and checking the push of this prompt.
    Checking(String),
    /// Checked: the diff on show, asking.
    Ask(Box<Ready>),
    /// Writing this prompt.
    Pushing(String),
    /// Refused or failed, with why (nothing was written to the deployment).
    Refused {
        /// The prompt id.
        id: String,
        /// The reasons, one a line.
        lines: Vec<String>,
    },
}

/// The component's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TgState {
    /// Where the prompts directory was pulled from (`None`: not a pulled
    /// directory, or not read yet).
    pub pulled: Option<Pulled>,
    /// The push under way.
    pub stage: Stage,
}
