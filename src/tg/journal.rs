//! `.trustgraph/journal.jsonl`: what each push replaced, so `tg undo` can
//! put it back (TrustGraph's config API keeps no history). A push's entry
//! is appended and synced *before* the push writes, so a crash between the
//! two leaves an entry whose values are the ones live before it; an undo
//! checks the live values against what the push wrote before it writes.
//! The journal holds prompt values only: never a token or a header.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::local::{LocalError, STATE_DIR, check_regular, ensure_dir};

/// The journal's file name in `.trustgraph/`.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// One key a push changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The config key (`system`, `template.<id>`).
    pub key: String,
    /// The live value the push replaced (`None`: the key did not exist).
    pub before: Option<String>,
    /// What the push wrote (`None`: it deleted the key).
    pub after: Option<String>,
}

/// A journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A push about to write (appended before the first write).
    Push {
        /// The push's number in this journal (1, 2, …).
        id: u64,
        /// Seconds since the epoch.
        at: u64,
        /// The gateway's base URL.
        url: String,
        /// The workspace.
        workspace: String,
        /// The live version the push was checked against.
        version_before: u64,
        /// Every key it changes.
        changes: Vec<Change>,
    },
    /// The push's writes were read back equal (`version_after` is the
    /// version read back).
    Pushed {
        /// The push.
        id: u64,
        /// The version after the writes.
        version_after: u64,
    },
    /// The push was put back (its `before` values written again).
    Undone {
        /// The push undone.
        id: u64,
        /// Seconds since the epoch.
        at: u64,
        /// The version after the undo's writes.
        version_after: u64,
    },
}

/// The journal of a pulled directory.
#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
}

impl Journal {
    /// The journal of the pulled directory `dir`.
    pub fn of(dir: &Path) -> Self {
        Self {
            path: dir.join(STATE_DIR).join(JOURNAL_FILE),
        }
    }

    /// Every entry, oldest first; a line that does not read is an error
    /// naming it (the journal is what an undo relies on: nothing is guessed).
    pub fn entries(&self) -> Result<Vec<Entry>, LocalError> {
        let label = self.path.display().to_string();
        let file = match crate::limits::open_regular(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(LocalError::Io {
                    path: label,
                    what: "cannot read the journal".to_owned(),
                    source,
                });
            }
        };
        let mut out = Vec::new();
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line.map_err(|source| LocalError::Io {
                path: label.clone(),
                what: format!("cannot read line {}", i + 1),
                source,
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let entry: Entry = serde_json::from_str(&line).map_err(|e| {
                crate::prompt::ConfigError::at(
                    &label,
                    i + 1,
                    Some(e.column()),
                    format!("not a journal entry cutline wrote: {e}"),
                )
                .because(e)
            })?;
            out.push(entry);
        }
        Ok(out)
    }

    /// Append `entry` and sync it to disk before returning.
    pub fn append(&self, entry: &Entry) -> Result<(), LocalError> {
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(parent) = self.path.parent() {
            ensure_dir(parent)?;
        }
        check_regular(&self.path)?;
        let io = |what: &str| {
            let path = self.path.display().to_string();
            let what = what.to_owned();
            move |source| LocalError::Io { path, what, source }
        };
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)
            .map_err(io("cannot open the journal"))?;
        let mut line = serde_json::to_vec(entry).unwrap_or_default();
        line.push(b'\n');
        f.write_all(&line).map_err(io("cannot append to the journal"))?;
        f.sync_all().map_err(io("cannot sync the journal"))
    }

    /// The next push number.
    pub fn next_id(entries: &[Entry]) -> u64 {
        entries
            .iter()
            .filter_map(|e| match e {
                Entry::Push { id, .. } => Some(*id),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            + 1
    }

    /// The latest push of `url` / `workspace` not undone yet, with whether
    /// its writes were read back.
    pub fn last_push<'a>(entries: &'a [Entry], url: &str, workspace: &str) -> Option<(&'a Entry, bool)> {
        let undone: Vec<u64> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Undone { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        let push = entries.iter().rev().find(|e| match e {
            Entry::Push {
                id,
                url: u,
                workspace: w,
                ..
            } => u == url && w == workspace && !undone.contains(id),
            _ => false,
        })?;
        let Entry::Push { id, .. } = push else { return None };
        let confirmed = entries
            .iter()
            .any(|e| matches!(e, Entry::Pushed { id: p, .. } if p == id));
        Some((push, confirmed))
    }
}

/// The `before` values of `changes` as a map (for an undo's writes).
pub fn befores(changes: &[Change]) -> BTreeMap<String, Option<String>> {
    changes.iter().map(|c| (c.key.clone(), c.before.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_push_not_undone_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::of(dir.path());
        let push = |id| Entry::Push {
            id,
            at: 0,
            url: "http://h/".into(),
            workspace: "w".into(),
            version_before: id,
            changes: vec![Change {
                key: "system".into(),
                before: None,
                after: Some("\"x\"".into()),
            }],
        };
        for e in [
            push(1),
            Entry::Pushed {
                id: 1,
                version_after: 2,
            },
            push(2),
            Entry::Pushed {
                id: 2,
                version_after: 3,
            },
            Entry::Undone {
                id: 2,
                at: 0,
                version_after: 4,
            },
        ] {
            j.append(&e).unwrap();
        }
        let entries = j.entries().unwrap();
        assert_eq!(entries.len(), 5);
        let (last, confirmed) = Journal::last_push(&entries, "http://h/", "w").unwrap();
        assert!(matches!(last, Entry::Push { id: 1, .. }) && confirmed);
        assert!(Journal::last_push(&entries, "http://h/", "other").is_none());
        assert_eq!(Journal::next_id(&entries), 3);
    }
}
