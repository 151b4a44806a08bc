//! `cutline render PROMPT [--var k=v | --var k=@file] [--input NAME]`
//!
//! Prints the rendered system and prompt text. Variables: the prompt's
//! defaults, then the named sample input (default: the first), then `--var`.

use std::io::Write;

use serde_json::{Map, Value, json};

use super::out::{Category, CliError, Out};
use super::{Cli, io_err};

/// Arguments of `render`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Prompt id (from the prompts dir) or path.
    pub prompt: String,
    /// A variable: `k=v`, or `k=@file` to read the value from a file.
    #[arg(long = "var", value_name = "K=V")]
    pub vars: Vec<String>,
    /// A named sample input of the prompt (default: the first one).
    #[arg(long)]
    pub input: Option<String>,
}

/// Parse `--var` flags into variables; `k=@file` reads the file.
pub fn parse_vars(vars: &[String]) -> Result<Map<String, Value>, CliError> {
    let mut out = Map::new();
    for v in vars {
        let Some((k, val)) = v.split_once('=') else {
            return Err(CliError::new(
                Category::Usage,
                format!("--var {v:?}: expected K=V or K=@FILE"),
            ));
        };
        let value = if let Some(path) = val.strip_prefix('@') {
            let bytes = std::fs::read(path).map_err(|e| CliError::new(Category::InputError, format!("{path}: {e}")))?;
            String::from_utf8(bytes).map_err(|e| {
                let (line, col) = crate::output::position::line_col(e.as_bytes(), e.utf8_error().valid_up_to());
                CliError::new(Category::InputError, format!("{path}:{line}:{col}: invalid UTF-8"))
            })?
        } else {
            val.to_owned()
        };
        out.insert(k.to_owned(), Value::String(value));
    }
    Ok(out)
}

/// The variables for a run: the chosen sample input overlaid with `--var`s.
pub fn input_vars(
    cfg: &crate::prompt::PromptConfig,
    input: Option<&str>,
    vars: &[String],
) -> Result<Map<String, Value>, CliError> {
    let mut merged = if cfg.inputs.is_empty() && input.is_none() {
        Map::new()
    } else {
        crate::prompt::input_vars(cfg, input).map_err(|e| CliError::new(Category::Usage, e.to_string()))?
    };
    merged.extend(parse_vars(vars)?);
    Ok(merged)
}

/// Run `render`.
pub fn run<W: Write>(args: &Args, cli: &Cli, out: &mut Out<W>) -> Result<Value, CliError> {
    let cfg = crate::store::resolve(&args.prompt, &cli.prompts)
        .map_err(|e| CliError::new(Category::ConfigInvalid, e.to_string()))?;
    let vars = input_vars(&cfg, args.input.as_deref(), &args.vars)?;
    let rendered = crate::prompt::render(&cfg, &Map::new(), &vars)
        .map_err(|e| CliError::new(Category::ConfigInvalid, e.to_string()))?;
    let data = json!({
        "id": cfg.id,
        "response_type": cfg.response_type.to_string(),
        "system": rendered.system,
        "prompt": rendered.prompt,
        "stop": cfg.stop,
    });
    let mut rec = data.clone();
    if let Value::Object(m) = &mut rec {
        m.insert("type".into(), "rendered".into());
    }
    out.record(&rec).map_err(|e| io_err(&e))?;
    let mut text = String::new();
    if !rendered.system.is_empty() {
        text.push_str(&rendered.system);
        text.push_str("\n\n");
    }
    text.push_str(&rendered.prompt);
    out.pretty(&text).map_err(|e| io_err(&e))?;
    Ok(data)
}
