//! A push: only the keys changed here, after TrustGraph's loader has been
//! run (in cutline, [`crate::prompt::tg_reload`]) over the whole workspace
//! the push would leave live; refused when that would half-load the
//! workspace, fail the reload or silently turn `system` into "Be
//! helpful.", or when the live version moved since the pull (unless
//! forced). The values it replaces are journaled before it writes; what it
//! wrote is read back and compared. An undo puts the journaled values back
//! under the same checks.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::diff::{Status, same, three_way};
use super::journal::{Change, Entry, Journal, befores};
use super::local::{LocalError, Pulled, covers, now, write_state};
use super::{ConfigClient, Snapshot, TgError};
use crate::prompt::tg_reload::{ReloadReport, reload};

/// Why a push or undo did not write.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The pulled directory.
    #[error(transparent)]
    Local(#[from] LocalError),
    /// The deployment.
    #[error(transparent)]
    Tg(#[from] TgError),
    /// The directory was pulled from another deployment or workspace.
    #[error(
        "this directory was pulled from {pulled_url} (workspace {pulled_workspace:?}), not {url} (workspace \
         {workspace:?}); nothing was written"
    )]
    Elsewhere {
        /// Where the pull came from.
        pulled_url: String,
        /// Its workspace.
        pulled_workspace: String,
        /// Where this command points.
        url: String,
        /// Its workspace.
        workspace: String,
    },
    /// The live config changed since the pull.
    #[error("{}", moved_message(*pulled, *live, moved, conflicts))]
    Moved {
        /// The version pulled.
        pulled: u64,
        /// The version live.
        live: u64,
        /// Prompt keys changed live since the pull.
        moved: Vec<String>,
        /// Of those, the ones changed here too (a push would overwrite them).
        conflicts: Vec<String>,
    },
    /// TrustGraph's loader would not take the resulting workspace cleanly.
    #[error("{}", refused_message(problems))]
    Refused {
        /// Key and reason, each.
        problems: Vec<(String, String)>,
    },
    /// What was read back is not what was written.
    #[error(
        "read back after the push, {} differ from what was written: {}; the values replaced are in the journal \
         (`cutline tg undo` puts them back)",
        keys.len(),
        keys.join(", ")
    )]
    ReadBack {
        /// The keys that differ.
        keys: Vec<String>,
    },
    /// No push of this deployment and workspace is left to undo.
    #[error("nothing to undo: the journal has no push to {url} (workspace {workspace:?}) that is not undone yet")]
    NothingToUndo {
        /// The deployment.
        url: String,
        /// The workspace.
        workspace: String,
    },
    /// Keys the push wrote were changed live since; an undo would overwrite them.
    #[error(
        "{} changed live since push {id} wrote them: {}; an undo would overwrite those changes (--force undoes \
         anyway); nothing was written",
        keys.len(),
        keys.join(", ")
    )]
    ChangedSince {
        /// The push.
        id: u64,
        /// The keys.
        keys: Vec<String>,
    },
}

fn moved_message(pulled: u64, live: u64, moved: &[String], conflicts: &[String]) -> String {
    let what = if moved.is_empty() {
        "no prompt key of this pull changed (another config type did)".to_owned()
    } else {
        format!("changed live since: {}", moved.join(", "))
    };
    let clash = if conflicts.is_empty() {
        String::new()
    } else {
        format!(
            "; changed here too, so a push would overwrite the live change: {}",
            conflicts.join(", ")
        )
    };
    format!(
        "the live config moved since the pull (version {pulled} pulled, {live} live): {what}{clash}; nothing was \
         written — `cutline tg diff` shows both sides, `cutline tg pull` takes the live values, --force pushes anyway"
    )
}

fn refused_message(problems: &[(String, String)]) -> String {
    let each: Vec<String> = problems.iter().map(|(k, why)| format!("{k}: {why}")).collect();
    format!(
        "TrustGraph's prompt service would not load the workspace this push leaves; nothing was written: {}",
        each.join("; ")
    )
}

/// What a push would write, checked.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The live version checked against.
    pub version_before: u64,
    /// Every key it writes (or deletes), with the live value it replaces.
    pub changes: Vec<Change>,
    /// What TrustGraph's loader makes of the workspace afterwards
    /// (warnings that do not stop the reload included).
    #[serde(skip)]
    pub reload: ReloadReport,
}

/// Decide what pushing `local` over `live` writes, and check it.
/// `only`: the keys named on the command line (`None`: every key the pull
/// covers).
pub fn plan(
    pulled: &Pulled,
    local: &BTreeMap<String, String>,
    live: &Snapshot,
    only: Option<&[String]>,
    force: bool,
) -> Result<Plan, PushError> {
    let scope = |k: &str| pulled.covers(k) && covers(only, k);
    let diffs = three_way(&pulled.base, local, &live.values, scope);
    let pick = |s: Status| diffs.iter().filter(move |d| d.status == s).map(|d| d.key.clone());
    let conflicts: Vec<String> = pick(Status::Conflict).collect();
    if live.version != pulled.version && !force {
        let moved: Vec<String> = diffs
            .iter()
            .filter(|d| !same(d.live.as_deref(), d.base.as_deref()))
            .map(|d| d.key.clone())
            .collect();
        return Err(PushError::Moved {
            pulled: pulled.version,
            live: live.version,
            moved,
            conflicts,
        });
    }
    let changes: Vec<Change> = diffs
        .iter()
        .filter(|d| d.status == Status::Local || (force && d.status == Status::Conflict))
        .map(|d| Change {
            key: d.key.clone(),
            before: d.live.clone(),
            after: d.local.clone(),
        })
        .collect();
    let report = checked(&live.values, &changes)?;
    Ok(Plan {
        version_before: live.version,
        changes,
        reload: report,
    })
}

/// `values` with `changes` applied, run through TrustGraph's loader; a
/// reload it would not take cleanly is refused.
fn checked(values: &BTreeMap<String, String>, changes: &[Change]) -> Result<ReloadReport, PushError> {
    let mut after = values.clone();
    for c in changes {
        match &c.after {
            Some(v) => after.insert(c.key.clone(), v.clone()),
            None => after.remove(&c.key),
        };
    }
    let report = reload(&after);
    let mut problems = report.refusals();
    for (key, why) in &mut problems {
        if !changes.iter().any(|c| &c.key == key) {
            why.push_str(" (already so live: this push does not change the key; fix it too)");
        }
    }
    if problems.is_empty() {
        Ok(report)
    } else {
        Err(PushError::Refused { problems })
    }
}

/// What a push or undo did.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    /// The journal's number of the push (the push undone, for an undo).
    pub id: u64,
    /// The keys written or deleted.
    pub keys: Vec<String>,
    /// The version before.
    pub version_before: u64,
    /// The version read back after.
    pub version_after: u64,
    /// Whether another writer's change landed between the check and the
    /// read-back (the version moved more than this command's own requests).
    pub others_wrote_meanwhile: bool,
}

/// Journal `plan`, write it, read it back, move the pull's base.
pub async fn execute(
    client: &ConfigClient,
    dir: &Path,
    pulled: &mut Pulled,
    plan: &Plan,
) -> Result<Written, PushError> {
    let journal = Journal::of(dir);
    let entries = journal.entries()?;
    let id = Journal::next_id(&entries);
    let dep = client.deployment();
    journal.append(&Entry::Push {
        id,
        at: now(),
        url: dep.url().to_owned(),
        workspace: dep.workspace.clone(),
        version_before: plan.version_before,
        changes: plan.changes.clone(),
    })?;
    let targets: BTreeMap<String, Option<String>> =
        plan.changes.iter().map(|c| (c.key.clone(), c.after.clone())).collect();
    let (version_after, requests) = write_and_verify(client, &targets).await?;
    journal.append(&Entry::Pushed { id, version_after })?;
    move_base(dir, pulled, &targets, version_after)?;
    Ok(Written {
        id,
        keys: targets.keys().cloned().collect(),
        version_before: plan.version_before,
        version_after,
        others_wrote_meanwhile: version_after > plan.version_before + requests,
    })
}

/// Put the `Some` values, delete the `None` keys, read them all back;
/// the version after and the number of writing requests.
async fn write_and_verify(
    client: &ConfigClient,
    targets: &BTreeMap<String, Option<String>>,
) -> Result<(u64, u64), PushError> {
    let puts: BTreeMap<String, String> = targets
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect();
    let deletes: Vec<String> = targets
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| k.clone())
        .collect();
    client.put(&puts).await?;
    client.delete(&deletes).await?;
    let keys: Vec<String> = targets.keys().cloned().collect();
    let (back, version) = client.get(&keys).await?;
    let differ: Vec<String> = targets
        .iter()
        .filter(|(k, want)| !same(back.get(*k).and_then(Option::as_deref), want.as_deref()))
        .map(|(k, _)| k.clone())
        .collect();
    if !differ.is_empty() {
        return Err(PushError::ReadBack { keys: differ });
    }
    Ok((version, u64::from(!puts.is_empty()) + u64::from(!deletes.is_empty())))
}

fn move_base(
    dir: &Path,
    pulled: &mut Pulled,
    targets: &BTreeMap<String, Option<String>>,
    version: u64,
) -> Result<(), PushError> {
    for (k, v) in targets {
        match v {
            Some(v) => pulled.base.insert(k.clone(), v.clone()),
            None => pulled.base.remove(k),
        };
    }
    pulled.version = version;
    pulled.at = now();
    write_state(dir, pulled)?;
    Ok(())
}

/// Put back what the last push of this deployment and workspace replaced.
/// Refused when a key it wrote changed live since (unless `force`), or
/// when the restored workspace would not reload cleanly.
pub async fn undo(client: &ConfigClient, dir: &Path, pulled: &mut Pulled, force: bool) -> Result<Written, PushError> {
    let journal = Journal::of(dir);
    let entries = journal.entries()?;
    let dep = client.deployment();
    let Some((Entry::Push { id, changes, .. }, _)) = Journal::last_push(&entries, dep.url(), &dep.workspace) else {
        return Err(PushError::NothingToUndo {
            url: dep.url().to_owned(),
            workspace: dep.workspace.clone(),
        });
    };
    let live = client.prompts().await?;
    let moved: Vec<String> = changes
        .iter()
        .filter(|c| !same(live.values.get(&c.key).map(String::as_str), c.after.as_deref()))
        .map(|c| c.key.clone())
        .collect();
    if !moved.is_empty() && !force {
        return Err(PushError::ChangedSince { id: *id, keys: moved });
    }
    let back: Vec<Change> = changes
        .iter()
        .map(|c| Change {
            key: c.key.clone(),
            before: live.values.get(&c.key).cloned(),
            after: c.before.clone(),
        })
        .collect();
    checked(&live.values, &back)?;
    let targets = befores(changes);
    let (version_after, requests) = write_and_verify(client, &targets).await?;
    journal.append(&Entry::Undone {
        id: *id,
        at: now(),
        version_after,
    })?;
    move_base(dir, pulled, &targets, version_after)?;
    Ok(Written {
        id: *id,
        keys: targets.keys().cloned().collect(),
        version_before: live.version,
        version_after,
        others_wrote_meanwhile: version_after > live.version + requests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tpl(text: &str) -> String {
        serde_json::json!({"prompt": text, "response-type": "jsonl"}).to_string()
    }

    fn pulled(version: u64, base: &[(&str, String)]) -> Pulled {
        Pulled {
            format: 1,
            url: "http://h/".into(),
            workspace: "default".into(),
            version,
            at: 0,
            ids: None,
            base: base.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect(),
        }
    }

    fn map(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    }

    #[test]
    fn only_local_changes_are_written() {
        let base = [
            ("system", "\"S\"".to_owned()),
            ("template.a", tpl("A")),
            ("template.b", tpl("B")),
        ];
        let p = pulled(5, &base);
        let local = map(&[
            ("system", "\"S\"".to_owned()),
            ("template.a", tpl("A2")),
            ("template.b", tpl("B")),
        ]);
        let live = Snapshot {
            version: 5,
            values: map(&base),
        };
        let plan = plan(&p, &local, &live, None, false).unwrap();
        assert_eq!(
            plan.changes,
            vec![Change {
                key: "template.a".into(),
                before: Some(tpl("A")),
                after: Some(tpl("A2")),
            }]
        );
    }

    #[test]
    fn a_moved_version_is_refused_naming_what_moved() {
        let base = [("template.a", tpl("A")), ("template.b", tpl("B"))];
        let p = pulled(5, &base);
        let local = map(&[("template.a", tpl("A2")), ("template.b", tpl("B"))]);
        let live = Snapshot {
            version: 7,
            values: map(&[("template.a", tpl("A3")), ("template.b", tpl("B"))]),
        };
        match plan(&p, &local, &live, None, false) {
            Err(PushError::Moved { moved, conflicts, .. }) => {
                assert_eq!(moved, ["template.a"]);
                assert_eq!(conflicts, ["template.a"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(plan(&p, &local, &live, None, true).unwrap().changes.len(), 1);
    }

    #[test]
    fn a_half_load_and_a_plain_text_system_are_refused() {
        let base = [("template.a", tpl("A")), ("template.b", tpl("B"))];
        let p = pulled(5, &base);
        let live = Snapshot {
            version: 5,
            values: map(&base),
        };
        let local = map(&[("template.a", tpl("{% if x %}open")), ("template.b", tpl("B"))]);
        match plan(&p, &local, &live, None, false) {
            Err(PushError::Refused { problems }) => {
                assert_eq!(problems[0].0, "template.a");
                assert!(
                    problems[0].1.contains("none would serve, a, b would fail"),
                    "{}",
                    problems[0].1
                );
            }
            other => panic!("{other:?}"),
        }
        let local = map(&[
            ("system", "Extract carefully.".to_owned()),
            ("template.a", tpl("A")),
            ("template.b", tpl("B")),
        ]);
        let e = plan(&p, &local, &live, None, false).unwrap_err().to_string();
        assert!(
            e.contains("system: the value is not JSON") && e.contains("\"Be helpful.\""),
            "{e}"
        );
    }
}
