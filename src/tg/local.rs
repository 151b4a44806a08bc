//! The pulled directory: the workspace's prompts in one
//! `tg-export-workspace-config` file (`<workspace>.json`, which every
//! command and the workbench read as a prompts directory), and
//! `.trustgraph/pull.json`, where they came from: the deployment's URL
//! (never a token), the workspace, the version and the values as pulled —
//! the base a diff tells "changed here" from "changed there" by.
//!
//! Every file is written in place of a regular file (atomically) or
//! refused; a link is never written through.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::prompt::ConfigError;
use crate::prompt::tg_export::{Export, read_export, write_export};

/// The folder of cutline's own state in a pulled directory (the prompts
/// loader reads only files, so it never sees it).
pub const STATE_DIR: &str = ".trustgraph";
/// What was pulled, from where.
pub const STATE_FILE: &str = "pull.json";
/// The format of `pull.json` this cutline writes.
pub const STATE_FORMAT: u32 = 1;

/// What `tg pull` took, and the base of every later diff and push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pulled {
    /// `pull.json`'s format.
    pub format: u32,
    /// The gateway's base URL.
    pub url: String,
    /// The workspace.
    pub workspace: String,
    /// The config version the values were read at (or written at, after a push).
    pub version: u64,
    /// Seconds since the epoch of the pull (or the last push or undo).
    pub at: u64,
    /// The prompt ids pulled; `None`: the whole workspace.
    pub ids: Option<Vec<String>>,
    /// Key → value as pulled.
    pub base: BTreeMap<String, String>,
}

impl Pulled {
    /// Whether `key` is one this pull covers (`system` always; a template
    /// when the whole workspace was pulled or its id was named).
    pub fn covers(&self, key: &str) -> bool {
        covers(self.ids.as_deref(), key)
    }
}

/// Whether `key` is among `ids`' keys (`None`: every key).
pub fn covers(ids: Option<&[String]>, key: &str) -> bool {
    match (ids, key.strip_prefix(crate::prompt::tg_reload::TEMPLATE_PREFIX)) {
        (None, _) => true,
        (Some(_), None) => key == crate::prompt::tg_reload::SYSTEM_KEY,
        (Some(ids), Some(id)) => ids.iter().any(|i| i == id),
    }
}

/// A pulled directory that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// No `tg pull` made this directory.
    #[error("{dir}: no TrustGraph pull here (no {STATE_DIR}/{STATE_FILE}); run `cutline tg pull --dir {dir}` first")]
    NotPulled {
        /// The directory.
        dir: String,
    },
    /// A file that does not read as what cutline wrote.
    #[error(transparent)]
    Content(#[from] ConfigError),
    /// A file that cannot be read or written.
    #[error("{path}: {what}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A path cutline will not write through.
    #[error("{path}: {why}; cutline writes only in place of a regular file, never through a link")]
    NotRegular {
        /// The path.
        path: String,
        /// What it is.
        why: &'static str,
    },
}

/// The prompts file of a workspace in `dir`.
pub fn export_path(dir: &Path, workspace: &str) -> PathBuf {
    dir.join(format!("{}.json", file_stem(workspace)))
}

/// A workspace name as a file name: path separators and leading dots
/// replaced, so a name can never climb out of the directory.
fn file_stem(workspace: &str) -> String {
    let s: String = workspace
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    let s = s.trim_start_matches('.');
    if s.is_empty() {
        "workspace".to_owned()
    } else {
        s.to_owned()
    }
}

fn state_path(dir: &Path) -> PathBuf {
    dir.join(STATE_DIR).join(STATE_FILE)
}

/// Read `pull.json`.
pub fn read_state(dir: &Path) -> Result<Pulled, LocalError> {
    let path = state_path(dir);
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(LocalError::NotPulled {
            dir: dir.display().to_string(),
        });
    }
    let label = path.display().to_string();
    let bytes = crate::limits::read(&path).map_err(|source| LocalError::Io {
        path: label.clone(),
        what: "cannot read".to_owned(),
        source,
    })?;
    let pulled: Pulled = serde_json::from_slice(&bytes).map_err(|e| {
        ConfigError::at(
            &label,
            e.line(),
            Some(e.column()),
            format!("not a pull record cutline wrote: {e}"),
        )
        .because(e)
    })?;
    if pulled.format > STATE_FORMAT {
        return Err(ConfigError::new(
            &label,
            format!(
                "written by a newer cutline (format {}; this one reads {STATE_FORMAT}); update cutline",
                pulled.format
            ),
        )
        .into());
    }
    Ok(pulled)
}

/// The local prompts of a pulled directory (its export file).
pub fn read_local(dir: &Path, workspace: &str) -> Result<Export, LocalError> {
    let path = export_path(dir, workspace);
    let label = path.display().to_string();
    let bytes = crate::limits::read(&path).map_err(|source| LocalError::Io {
        path: label.clone(),
        what: "cannot read the pulled prompts".to_owned(),
        source,
    })?;
    Ok(read_export(&label, &bytes)?)
}

/// Write the export file and `pull.json` for `pulled` (the export holds
/// `values`, which after a pull are the base itself).
pub fn write_pull(dir: &Path, pulled: &Pulled, values: &BTreeMap<String, String>) -> Result<PathBuf, LocalError> {
    ensure_dir(dir)?;
    ensure_dir(&dir.join(STATE_DIR))?;
    let export = export_path(dir, &pulled.workspace);
    write_regular(
        &export,
        write_export(&pulled.workspace, pulled.version, values).as_bytes(),
    )?;
    write_state(dir, pulled)?;
    Ok(export)
}

/// Write `pull.json` alone (after a push or an undo moved the base).
pub fn write_state(dir: &Path, pulled: &Pulled) -> Result<(), LocalError> {
    ensure_dir(&dir.join(STATE_DIR))?;
    let mut bytes = serde_json::to_vec_pretty(pulled).unwrap_or_default();
    bytes.push(b'\n');
    write_regular(&state_path(dir), &bytes)
}

/// A directory that is a directory (created when missing), never a link.
pub(crate) fn ensure_dir(dir: &Path) -> Result<(), LocalError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(LocalError::NotRegular {
            path: dir.display().to_string(),
            why: "a symbolic link",
        }),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(LocalError::NotRegular {
            path: dir.display().to_string(),
            why: "not a directory",
        }),
        Err(_) => std::fs::create_dir_all(dir).map_err(|source| LocalError::Io {
            path: dir.display().to_string(),
            what: "cannot create the directory".to_owned(),
            source,
        }),
    }
}

/// Check that `path` is absent or a regular file (not a link, FIFO, …).
pub(crate) fn check_regular(path: &Path) -> Result<(), LocalError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(LocalError::NotRegular {
            path: path.display().to_string(),
            why: "a symbolic link",
        }),
        Ok(m) if !m.is_file() => Err(LocalError::NotRegular {
            path: path.display().to_string(),
            why: "not a regular file",
        }),
        _ => Ok(()),
    }
}

fn write_regular(path: &Path, bytes: &[u8]) -> Result<(), LocalError> {
    check_regular(path)?;
    crate::store::write_atomic(path, bytes).map_err(|source| LocalError::Io {
        path: path.display().to_string(),
        what: "cannot write".to_owned(),
        source,
    })
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_system_always_and_named_templates() {
        let ids = vec!["a".to_owned()];
        assert!(covers(Some(&ids), "system"));
        assert!(covers(Some(&ids), "template.a"));
        assert!(!covers(Some(&ids), "template.b"));
        assert!(covers(None, "template.b"));
    }

    #[test]
    fn workspace_names_never_climb_out() {
        let d = Path::new("/x");
        assert_eq!(export_path(d, "../etc"), Path::new("/x/_etc.json"));
        assert_eq!(export_path(d, "..."), Path::new("/x/workspace.json"));
    }

    #[test]
    fn a_linked_state_file_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "keep me").unwrap();
        std::fs::create_dir_all(dir.path().join("p").join(STATE_DIR)).unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("p").join(STATE_DIR).join(STATE_FILE)).unwrap();
        let pulled = Pulled {
            format: STATE_FORMAT,
            url: "http://h/".into(),
            workspace: "w".into(),
            version: 1,
            at: 0,
            ids: None,
            base: BTreeMap::new(),
        };
        let e = write_state(&dir.path().join("p"), &pulled).unwrap_err();
        assert!(
            matches!(
                e,
                LocalError::NotRegular {
                    why: "a symbolic link",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me");
    }
}

#[cfg(test)]
mod save_tests {
    use std::collections::BTreeMap;

    /// A pulled prompt saved unchanged by the workbench (`store::save`)
    /// leaves every value as the deployment has it, so no diff appears.
    #[test]
    fn saving_a_pulled_prompt_unchanged_changes_no_value() {
        let dir = tempfile::tempdir().unwrap();
        let mut values = BTreeMap::new();
        values.insert("system".to_owned(), "\"Be exact.\"".to_owned());
        values.insert(
            "template.a".to_owned(),
            "{\"prompt\": \"Terms in {{ text }}\", \"response-type\": \"jsonl\", \"schema\": {\"type\": \"object\"}}"
                .to_owned(),
        );
        let path = dir.path().join("default.json");
        std::fs::write(&path, crate::prompt::tg_export::write_export("default", 3, &values)).unwrap();
        let p = crate::store::resolve("a", dir.path()).unwrap();
        crate::store::save(&p).unwrap();
        let back = crate::prompt::tg_export::read_export("x", &std::fs::read(&path).unwrap()).unwrap();
        for (k, v) in &values {
            assert!(
                crate::tg::diff::same(back.prompts.get(k).map(String::as_str), Some(v)),
                "{k}: {:?} != {v}",
                back.prompts.get(k)
            );
        }
        assert_eq!(back.prompts.len(), 2);
    }
}
