//! `cutline render PROMPT [--var k=v | --var k=@file] [--vars FILE.json] [--input NAME] [--strict-vars]`
//!
//! Prints the rendered system and prompt text. Variables: the prompt's
//! defaults, then the named sample input (default: the first), then
//! `--vars`, then `--var`. Rendering follows TrustGraph (ibis): an undefined
//! name is empty, and each one touched is a warning and listed in
//! `undefined`; `--strict-vars` makes it an error.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::prompt::Undefined;

use super::out::{CliError, Out};
use super::{Cli, io_err};

/// Arguments of `render`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt id (from the prompts dir) or path.
    pub prompt: String,
    /// A variable: `k=v`, or `k=@file` to read the value from a file.
    #[arg(long = "var", value_name = "K=V")]
    pub vars: Vec<String>,
    /// A JSON file holding an object of variables of any JSON type
    /// (lists and objects for templates that loop over them).
    #[arg(long = "vars", value_name = "FILE.json")]
    pub vars_file: Option<PathBuf>,
    /// A named sample input of the prompt (default: the first one).
    #[arg(long)]
    pub input: Option<String>,
    /// An undefined variable is an error (TrustGraph renders it empty).
    #[arg(long)]
    pub strict_vars: bool,
}

/// Run `render`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let cfg = cli.workspace()?.resolve(&args.prompt)?;
    let vars = super::input::vars(&cfg, args.input.as_deref(), &args.vars, args.vars_file.as_deref())?;
    let undefined = if args.strict_vars {
        Undefined::Strict
    } else {
        Undefined::Ibis
    };
    let rendered = crate::prompt::render_with(&cfg, &Map::new(), &vars, undefined)?;
    for name in &rendered.undefined {
        out.warn(super::input::undefined_warning(&cfg.id, name))
            .map_err(io_err)?;
    }
    let data = json!({
        "id": cfg.id,
        "response_type": cfg.response_type.to_string(),
        "system": rendered.system,
        "prompt": rendered.prompt,
        "stop": cfg.stop,
        "undefined": rendered.undefined,
    });
    let mut rec = data.clone();
    if let Value::Object(m) = &mut rec {
        m.insert("type".into(), "rendered".into());
    }
    out.record(&rec).map_err(io_err)?;
    let mut text = String::new();
    if !rendered.system.is_empty() {
        text.push_str(&rendered.system);
        text.push_str("\n\n");
    }
    text.push_str(&rendered.prompt);
    out.pretty(&text).map_err(io_err)?;
    Ok(data)
}
