//! `cutline tg pull|diff|push|undo`: the prompts of a running TrustGraph
//! deployment, pulled into a local prompts directory, compared with what is
//! live, pushed back only after TrustGraph's loader checks, and undone from
//! the local journal. One file per subcommand; the connection flags are
//! TrustGraph CLI's own (`-u/--api-url`, `-t/--token`, `-w/--workspace`
//! and their `TRUSTGRAPH_*` variables).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::Cli;
use super::out::{Category, CliError, Out};
use crate::tg::local::Pulled;
use crate::tg::{ConfigClient, Deployment};

pub mod diff;
pub mod pull;
pub mod push;
pub mod undo;

/// The URL TrustGraph's CLI uses when none is given.
pub const DEFAULT_URL: &str = "http://localhost:8888/";
/// The workspace TrustGraph's CLI uses when none is given.
pub const DEFAULT_WORKSPACE: &str = "default";

/// Arguments of `tg`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do with the deployment.
    #[command(subcommand)]
    pub command: TgCommand,
}

/// The `tg` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TgCommand {
    /// Pull the workspace's prompts (or the ids named) into a local prompts directory.
    Pull(pull::Args),
    /// Local against live against the pull, per key: the template word by word, the schema by path.
    Diff(diff::Args),
    /// Push the keys changed here, after TrustGraph's loader checks; journaled for `tg undo`.
    Push(push::Args),
    /// Put back what the last push replaced.
    Undo(undo::Args),
}

/// Where the deployment is, as TrustGraph's CLI takes it. Without `-u` /
/// `-w`, `diff`, `push` and `undo` use the deployment the directory was
/// pulled from.
#[derive(Debug, Clone, clap::Args)]
pub struct Conn {
    /// The gateway's base URL [env: TRUSTGRAPH_URL; default: http://localhost:8888/].
    #[arg(short = 'u', long = "api-url", value_name = "URL")]
    pub api_url: Option<String>,
    /// The bearer token [env: TRUSTGRAPH_TOKEN]. Never written anywhere;
    /// prefer the variable (a flag shows in the process list).
    #[arg(short = 't', long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// The workspace [env: TRUSTGRAPH_WORKSPACE; default: default].
    #[arg(short = 'w', long, value_name = "NAME")]
    pub workspace: Option<String>,
    /// The pulled directory [default: tg/<workspace>].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Longest one call to the gateway may take.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = timeout_arg)]
    pub timeout: Duration,
}

impl Conn {
    fn env(name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }

    /// The URL and workspace asked for: flags, then `TRUSTGRAPH_*`.
    fn asked(&self) -> (Option<String>, Option<String>) {
        (
            self.api_url.clone().or_else(|| Self::env("TRUSTGRAPH_URL")),
            self.workspace.clone().or_else(|| Self::env("TRUSTGRAPH_WORKSPACE")),
        )
    }

    /// The directory: `--dir`, else `tg/<workspace>`.
    pub fn dir(&self, workspace: &str) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(|| Path::new("tg").join(workspace.replace(['/', '\\'], "_")))
    }

    fn token(&self) -> Option<crate::llm::http::key::ApiKey> {
        let (env, value) = match &self.token {
            Some(t) => ("--token", t.clone()),
            None => ("TRUSTGRAPH_TOKEN", Self::env("TRUSTGRAPH_TOKEN")?),
        };
        Some(crate::llm::http::key::ApiKey::new(env, value))
    }

    /// The deployment for a pull: as asked, else TrustGraph's defaults.
    pub fn for_pull(&self) -> Result<Deployment, CliError> {
        let (url, ws) = self.asked();
        let url = url.unwrap_or_else(|| DEFAULT_URL.to_owned());
        let ws = ws.unwrap_or_else(|| DEFAULT_WORKSPACE.to_owned());
        Ok(Deployment::new(&url, &ws, self.token(), self.timeout)?)
    }

    /// The pulled directory and the deployment it came from; a URL or
    /// workspace asked for that is not the pull's is refused.
    pub fn for_pulled(&self) -> Result<(PathBuf, Pulled, Deployment), CliError> {
        let (url, ws) = self.asked();
        let dir = self.dir(ws.as_deref().unwrap_or(DEFAULT_WORKSPACE));
        let mut pulled = crate::tg::local::read_state(&dir)?;
        let dep = Deployment::new(
            url.as_deref().unwrap_or(&pulled.url),
            ws.as_deref().unwrap_or(&pulled.workspace),
            self.token(),
            self.timeout,
        )?;
        // A pull written before URLs were stored scrubbed is compared, and
        // written back after a push, as it is stored now.
        pulled.url = crate::tg::shown_url(&pulled.url, self.token().as_ref());
        if dep.url() != pulled.url || dep.workspace != pulled.workspace {
            return Err(crate::tg::push::PushError::Elsewhere {
                pulled_url: pulled.url.clone(),
                pulled_workspace: pulled.workspace.clone(),
                url: dep.url().to_owned(),
                workspace: dep.workspace.clone(),
            }
            .into());
        }
        Ok((dir, pulled, dep))
    }
}

/// Run `tg`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    match &args.command {
        TgCommand::Pull(a) => pull::run(a, cli, out),
        TgCommand::Diff(a) => diff::run(a, cli, out),
        TgCommand::Push(a) => push::run(a, cli, out),
        TgCommand::Undo(a) => undo::run(a, cli, out),
    }
}

/// A runtime for one command's calls.
fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Category::Internal, format!("cannot start the async runtime: {e}")).because(e))
}

/// The client of a deployment.
fn client(dep: Deployment) -> ConfigClient {
    ConfigClient::new(dep)
}

/// Prompt ids named on the command line as config keys' ids (`system` is
/// named as itself).
fn ids(list: &[String]) -> Option<Vec<String>> {
    (!list.is_empty()).then(|| list.to_vec())
}

/// `--timeout`: a duration from 1 s to 1 h (a longer one is no bound).
fn timeout_arg(s: &str) -> Result<Duration, String> {
    let d = crate::eval::batch::time::parse(s)?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(3600) {
        return Err(format!("{s:?}: the timeout must be between 1s and 1h"));
    }
    Ok(d)
}
