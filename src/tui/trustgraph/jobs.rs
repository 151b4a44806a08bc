//! The TrustGraph component's work off the UI thread: reading the pull,
//! checking a push against the live workspace, and pushing — the same
//! `tg::push` plan, checks, journal and read-back as `cutline tg push`.
//! Every call to the gateway is bounded (the deployment's timeout).

use std::path::Path;
use std::time::Duration;

use super::state::{KeyChange, LocalWrite, Pulled, Ready};
use crate::prompt::PromptConfig;
use crate::tg::diff::review;
use crate::tg::local::{export_path, read_local, read_state};
use crate::tg::push::{PushError, Plan, execute, plan};
use crate::tg::{ConfigClient, Deployment};
use crate::tui::work::{Job, JobContext};

/// Longest one call to the gateway may take (the CLI's default).
const TIMEOUT: Duration = Duration::from_secs(30);

/// A job's answer to the component.
#[derive(Debug)]
pub enum TgMsg {
    /// What `pull.json` says (`None`: not a pulled directory).
    Loaded(Result<Option<Pulled>, String>),
    /// A push checked, or why not.
    Checked(Result<Box<Ready>, Refusal>),
    /// A push written, or why not.
    Pushed(Result<Done, Refusal>),
}

/// Why a push was not written, one reason a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The prompt id.
    pub id: String,
    /// The reasons.
    pub lines: Vec<String>,
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
        tokio::task::spawn_blocking(move || cx.answer(TgMsg::Loaded(load(&cx.prompts_dir))));
    }
}

fn load(dir: &Path) -> Result<Option<Pulled>, String> {
    let state = dir.join(crate::tg::local::STATE_DIR).join(crate::tg::local::STATE_FILE);
    if std::fs::symlink_metadata(state).is_err() {
        return Ok(None);
    }
    let p = read_state(dir).map_err(|e| e.to_string())?;
    Ok(Some(Pulled {
        url: p.url,
        workspace: p.workspace,
        version: p.version,
    }))
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
            let r = check(&cx.prompts_dir, *self).await.map_err(|lines| Refusal { id, lines });
            cx.answer(TgMsg::Checked(r.map(Box::new)));
        });
    }
}

/// The deployment `pull.json` names, with `TRUSTGRAPH_TOKEN` when set.
fn deployment(dir: &Path) -> Result<(crate::tg::local::Pulled, Deployment), Vec<String>> {
    let pulled = read_state(dir).map_err(|e| vec![e.to_string()])?;
    let token = std::env::var("TRUSTGRAPH_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .map(|t| crate::llm::http::key::ApiKey::new("TRUSTGRAPH_TOKEN", t));
    let dep = Deployment::new(&pulled.url, &pulled.workspace, token, TIMEOUT).map_err(|e| vec![e.to_string()])?;
    Ok((pulled, dep))
}

async fn check(dir: &Path, job: Check) -> Result<Ready, Vec<String>> {
    let (pulled, dep) = deployment(dir)?;
    let key = format!("{}{}", crate::prompt::tg_reload::TEMPLATE_PREFIX, job.id);
    let path = export_path(dir, &pulled.workspace);
    let label = path.display().to_string();
    let before = crate::limits::read(&path).map_err(|e| vec![format!("{label}: cannot read: {e}")])?;
    let (local, write) = match &job.migration {
        None => (read_local(dir, &pulled.workspace).map_err(|e| vec![e.to_string()])?.prompts, None),
        Some(m) => {
            let after = with_migration(&label, &before, m)?;
            let local = crate::prompt::tg_export::read_export(&label, &after)
                .map_err(|e| vec![e.to_string()])?
                .prompts;
            (local, Some(LocalWrite { path, before, after }))
        }
    };
    if !local.contains_key(&key) && !pulled.base.contains_key(&key) {
        return Err(vec![rust_i18n::t!("tui.tg.not_pulled_prompt", id = job.id, file = label).into_owned()]);
    }
    let client = ConfigClient::new(dep);
    let live = client.prompts().await.map_err(|e| vec![e.to_string()])?;
    let only = [job.id.clone()];
    let plan = plan(&pulled, &local, &live, Some(&only), false).map_err(|e| refusal(&e))?;
    if plan.changes.is_empty() {
        return Err(vec![rust_i18n::t!("tui.tg.nothing", key = key).into_owned()]);
    }
    Ok(ready(job, plan, write))
}

/// The workspace file's bytes with `m` in place of its prompt (the
/// bundle's shared `system` left as it is, as `cutline migrate --format
/// trustgraph` leaves it).
fn with_migration(label: &str, bytes: &[u8], m: &PromptConfig) -> Result<Vec<u8>, Vec<String>> {
    let mut root: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| vec![format!("{label}: not JSON: {e}")])?;
    crate::prompt::trustgraph::put_in_bundle(&mut root, m, false)
        .map_err(|e| vec![format!("{label}: cannot put {} in it: {e}", m.id)])?;
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

/// A refusal as lines: each refused key on its own.
fn refusal(e: &PushError) -> Vec<String> {
    match e {
        PushError::Refused { problems } => std::iter::once(rust_i18n::t!("tui.tg.refused").into_owned())
            .chain(problems.iter().map(|(k, why)| format!("{k}: {why}")))
            .collect(),
        other => vec![other.to_string()],
    }
}

/// Write the push the person said yes to.
#[derive(Debug)]
pub struct Push(pub Box<Ready>);

impl Job for Push {
    fn start(self: Box<Self>, cx: JobContext) {
        tokio::spawn(async move {
            let id = self.0.id.clone();
            let r = push(&cx.prompts_dir, &self.0).await.map_err(|lines| Refusal { id, lines });
            cx.answer(TgMsg::Pushed(r));
        });
    }
}

async fn push(dir: &Path, r: &Ready) -> Result<Done, Vec<String>> {
    let (mut pulled, dep) = deployment(dir)?;
    if let Some(w) = &r.write {
        let now = crate::limits::read(&w.path).map_err(|e| vec![format!("{}: cannot read: {e}", w.path.display())])?;
        if now != w.before {
            return Err(vec![rust_i18n::t!("tui.tg.file_changed", file = w.path.display()).into_owned()]);
        }
        crate::store::write_atomic(&w.path, &w.after)
            .map_err(|e| vec![format!("{}: cannot write: {e}", w.path.display())])?;
        return push_checked(dir, &mut pulled, dep, r).await.map_err(|mut lines| {
            lines.push(rust_i18n::t!("tui.tg.written_not_pushed", file = w.path.display()).into_owned());
            lines
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
) -> Result<Done, Vec<String>> {
    let local = read_local(dir, &pulled.workspace).map_err(|e| vec![e.to_string()])?;
    let client = ConfigClient::new(dep);
    let live = client.prompts().await.map_err(|e| vec![e.to_string()])?;
    let only = [r.id.clone()];
    let plan = plan(pulled, &local.prompts, &live, Some(&only), false).map_err(|e| refusal(&e))?;
    if plan.changes != r.changes {
        return Err(vec![rust_i18n::t!("tui.tg.changed_since").into_owned()]);
    }
    let written = execute(&client, dir, pulled, &plan).await.map_err(|e| refusal(&e))?;
    Ok(Done {
        id: r.id.clone(),
        push: written.id,
        keys: written.keys,
        versions: (written.version_before, written.version_after),
        wrote_file: r.write.is_some(),
        others: written.others_wrote_meanwhile,
    })
}
