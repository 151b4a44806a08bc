//! The TrustGraph component's work off the UI thread: reading the pull,
//! checking a push against the live workspace, and pushing — the same
//! `tg::push` plan, checks, journal and read-back as `cutline tg push`.
//! Every call to the gateway is bounded (the deployment's timeout).

use std::path::Path;
use std::time::Duration;

use super::error::PushRefused;
use super::state::{KeyChange, LocalWrite, Pulled, Ready};
use crate::llm::http::key::ApiKey;
use crate::prompt::PromptConfig;
use crate::tg::diff::review;
use crate::tg::local::{LocalError, export_path, read_local, read_state};
use crate::tg::push::{Plan, execute, plan};
use crate::tg::{ConfigClient, Deployment};
use crate::tui::work::{Job, JobContext};

/// Longest one call to the gateway may take (the CLI's default).
const TIMEOUT: Duration = Duration::from_secs(30);

/// A job's answer to the component.
#[derive(Debug)]
pub enum TgMsg {
    /// What `pull.json` says (`None`: not a pulled directory).
    Loaded(Result<Option<Pulled>, LocalError>),
    /// A push checked, or why not.
    Checked(Result<Box<Ready>, Refusal>),
    /// A push written, or why not.
    Pushed(Result<Done, Refusal>),
}

/// Why a push was not written.
#[derive(Debug)]
pub struct Refusal {
    /// The prompt id.
    pub id: String,
    /// Why ([`PushRefused::lines`]: one reason a line).
    pub why: PushRefused,
}

/// What a push wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The prompt id.
    pub id: String,
    /// The journal's number of the push.
    pub push: u64,
    /// The keys written.
    pub keys: Vec<String>,
    /// The live version before and after.
    pub versions: (u64, u64),
    /// Whether the migration was written into the workspace's file.
    pub wrote_file: bool,
    /// Another writer changed the config while the push ran.
    pub others: bool,
}

/// Read `pull.json` of the prompts directory.
#[derive(Debug)]
pub struct Load;

impl Job for Load {
    fn start(self: Box<Self>, cx: JobContext) {
        tokio::task::spawn_blocking(move || cx.answer(TgMsg::Loaded(load(&cx.prompts_dir, env_token().as_ref()))));
    }
}

/// The pull as the status line names it, its URL scrubbed of `token` (a
/// pull written before URLs were stored scrubbed may still hold it).
pub(super) fn load(dir: &Path, token: Option<&ApiKey>) -> Result<Option<Pulled>, LocalError> {
    let state = dir.join(crate::tg::local::STATE_DIR).join(crate::tg::local::STATE_FILE);
    if std::fs::symlink_metadata(state).is_err() {
        return Ok(None);
    }
    let p = read_state(dir)?;
    Ok(Some(Pulled {
        url: crate::tg::shown_url(&p.url, token),
        workspace: p.workspace,
        version: p.version,
    }))
}

/// `TRUSTGRAPH_TOKEN`, when set.
fn env_token() -> Option<ApiKey> {
    std::env::var("TRUSTGRAPH_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .map(|t| ApiKey::new("TRUSTGRAPH_TOKEN", t))
}

/// Check the push of prompt `id` (or of the migration on show, under the
/// id of the prompt it migrates).
#[derive(Debug)]
pub struct Check {
    /// The prompt id.
    pub id: String,
    /// The migration to put in place of the prompt first.
    pub migration: Option<Box<PromptConfig>>,
    /// The editor holds unsaved edits of the prompt.
    pub unsaved: bool,
}

impl Job for Check {
    fn start(self: Box<Self>, cx: JobContext) {
        tokio::spawn(async move {
            let id = self.id.clone();
            let r = check(&cx.prompts_dir, *self).await.map_err(|why| Refusal { id, why });
            cx.answer(TgMsg::Checked(r.map(Box::new)));
        });
    }
}

/// The deployment `pull.json` names, with `TRUSTGRAPH_TOKEN` when set; the
/// pull's URL as it is stored now (scrubbed), for when a push writes it back.
fn deployment(dir: &Path) -> Result<(crate::tg::local::Pulled, Deployment), PushRefused> {
    let mut pulled = read_state(dir)?;
    let dep = Deployment::new(&pulled.url, &pulled.workspace, env_token(), TIMEOUT)?;
    dep.url().clone_into(&mut pulled.url);
    Ok((pulled, dep))
}

async fn check(dir: &Path, job: Check) -> Result<Ready, PushRefused> {
    let (pulled, dep) = deployment(dir)?;
    let key = format!("{}{}", crate::prompt::tg_reload::TEMPLATE_PREFIX, job.id);
    let path = export_path(dir, &pulled.workspace);
    let label = path.display().to_string();
    let before = crate::limits::read(&path).map_err(|source| PushRefused::Read {
        file: label.clone(),
        source,
    })?;
    let (local, write) = match &job.migration {
        None => (read_local(dir, &pulled.workspace)?.prompts, None),
        Some(m) => {
            let after = with_migration(&label, &before, m)?;
            let local = crate::prompt::tg_export::read_export(&label, &after)?.prompts;
            (local, Some(LocalWrite { path, before, after }))
        }
    };
    if !local.contains_key(&key) && !pulled.base.contains_key(&key) {
        return Err(PushRefused::NotPulled { id: job.id, file: label });
    }
    let client = ConfigClient::new(dep);
    let live = client.prompts().await?;
    let only = [job.id.clone()];
    let plan = plan(&pulled, &local, &live, Some(&only), false).map_err(PushRefused::Push)?;
    if plan.changes.is_empty() {
        return Err(PushRefused::Nothing { key });
    }
    Ok(ready(job, plan, write))
}

/// The workspace file's bytes with `m` in place of its prompt (the
/// bundle's shared `system` left as it is, as `cutline migrate --format
/// trustgraph` leaves it).
fn with_migration(label: &str, bytes: &[u8], m: &PromptConfig) -> Result<Vec<u8>, PushRefused> {
    let mut root: serde_json::Value = serde_json::from_slice(bytes).map_err(|source| PushRefused::NotJson {
        file: label.to_owned(),
        source,
    })?;
    crate::prompt::trustgraph::put_in_bundle(&mut root, m, false).map_err(|source| PushRefused::PutIn {
        file: label.to_owned(),
        id: m.id.clone(),
        source,
    })?;
    let mut out = serde_json::to_vec_pretty(&root).unwrap_or_default();
    out.push(b'\n');
    Ok(out)
}

fn ready(job: Check, plan: Plan, write: Option<LocalWrite>) -> Ready {
    let keys = plan
        .changes
        .iter()
        .map(|c| KeyChange {
            key: c.key.clone(),
            action: match (&c.before, &c.after) {
                (None, Some(_)) => "add",
                (Some(_), None) => "delete",
                _ => "replace",
            },
            parts: review(&c.key, c.before.as_deref(), c.after.as_deref()),
        })
        .collect();
    Ready {
        id: job.id,
        keys,
        changes: plan.changes,
        version: plan.version_before,
        write,
        warnings: plan.reload.warnings.iter().map(|(k, w)| format!("{k}: {w}")).collect(),
        unsaved: job.unsaved,
        top: 0,
    }
}

/// Write the push the person said yes to.
#[derive(Debug)]
pub struct Push(pub Box<Ready>);

impl Job for Push {
    fn start(self: Box<Self>, cx: JobContext) {
        tokio::spawn(async move {
            let id = self.0.id.clone();
            let r = push(&cx.prompts_dir, &self.0).await.map_err(|why| Refusal { id, why });
            cx.answer(TgMsg::Pushed(r));
        });
    }
}

async fn push(dir: &Path, r: &Ready) -> Result<Done, PushRefused> {
    let (mut pulled, dep) = deployment(dir)?;
    if let Some(w) = &r.write {
        let file = || w.path.display().to_string();
        let now = crate::limits::read(&w.path).map_err(|source| PushRefused::Read { file: file(), source })?;
        if now != w.before {
            return Err(PushRefused::FileChanged { file: file() });
        }
        crate::store::write_atomic(&w.path, &w.after).map_err(|source| PushRefused::Write { file: file(), source })?;
        return push_checked(dir, &mut pulled, dep, r)
            .await
            .map_err(|why| PushRefused::WrittenNotPushed {
                file: file(),
                source: Box::new(why),
            });
    }
    push_checked(dir, &mut pulled, dep, r).await
}

/// Check again (the live workspace and the file may have moved while the
/// question was on show) and push exactly what was shown.
async fn push_checked(
    dir: &Path,
    pulled: &mut crate::tg::local::Pulled,
    dep: Deployment,
    r: &Ready,
) -> Result<Done, PushRefused> {
    let local = read_local(dir, &pulled.workspace)?;
    let client = ConfigClient::new(dep);
    let live = client.prompts().await?;
    let only = [r.id.clone()];
    let plan = plan(pulled, &local.prompts, &live, Some(&only), false).map_err(PushRefused::Push)?;
    if plan.changes != r.changes {
        return Err(PushRefused::ChangedSince);
    }
    let written = execute(&client, dir, pulled, &plan).await.map_err(PushRefused::Push)?;
    Ok(Done {
        id: r.id.clone(),
        push: written.id,
        keys: written.keys,
        versions: (written.version_before, written.version_after),
        wrote_file: r.write.is_some(),
        others: written.others_wrote_meanwhile,
    })
}
