//! `cutline setup local`: install llama-server and Gemma 3 270M into the
//! user's cache directory by running scripts/setup-local.sh (idempotent: a
//! second run returns at once). Progress goes to stderr as it happens.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};

/// What to set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    /// The local model: llama-server and Gemma 3 270M.
    Local,
}

/// Arguments of `setup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to install.
    #[arg(value_enum)]
    pub what: What,
    /// The setup script (default: scripts/setup-local.sh next to the prompts dir's project).
    #[arg(long)]
    pub script: Option<PathBuf>,
}

fn script_path(args: &Args) -> PathBuf {
    if let Some(s) = &args.script {
        return s.clone();
    }
    let here = PathBuf::from("scripts/setup-local.sh");
    if here.is_file() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/setup-local.sh")
}

/// Run `setup`.
pub fn run<W: Write>(args: &Args, _cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let What::Local = args.what;
    if let Ok(i) = crate::llm::local::installed() {
        let data = json!({"installed": true, "already": true, "server": i.server, "model": i.model});
        out.record(&json!({"type": "installed", "server": i.server, "model": i.model, "already": true}))
            .map_err(io_err)?;
        out.pretty(&format!(
            "already installed: {} and {}",
            i.server.display(),
            i.model.display()
        ))
        .map_err(io_err)?;
        return Ok(data);
    }
    let script = script_path(args);
    if !script.is_file() {
        return Err(CliError::new(
            Category::SetupRequired,
            format!(
                "{}: setup script not found; run cutline from its source checkout",
                script.display()
            ),
        ));
    }
    let status = std::process::Command::new("bash")
        .arg(&script)
        .env("CUTLINE_CACHE", crate::llm::local::cache_dir())
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| CliError::new(Category::SetupRequired, format!("{}: {e}", script.display())).because(e))?;
    if !status.success() {
        return Err(CliError::new(
            Category::SetupRequired,
            format!("{} failed ({status}); see its output above", script.display()),
        ));
    }
    let i = crate::llm::local::installed()?;
    out.record(&json!({"type": "installed", "server": i.server, "model": i.model, "already": false}))
        .map_err(io_err)?;
    Ok(json!({"installed": true, "already": false, "server": i.server, "model": i.model}))
}
