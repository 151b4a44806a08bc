//! Reading what the commands are pointed at: response files (or stdin) and
//! schema files, with errors that name the file, line and cause.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::out::{Category, CliError};

/// Read `path` (or stdin for `-`) whole.
pub fn read_all(path: &str) -> Result<Vec<u8>, CliError> {
    let mut buf = Vec::new();
    if path == "-" {
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| CliError::new(Category::InputError, format!("<stdin>: {e}")).because(e))?;
    } else {
        buf = crate::limits::read_regular(Path::new(path))
            .map_err(|e| CliError::new(Category::InputError, format!("{path}: {e}")).because(e))?;
    }
    Ok(buf)
}

/// [`lossy`] without copying valid text.
pub fn into_text(label: &str, bytes: Vec<u8>) -> (String, Option<String>) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, None),
        Err(e) => lossy(label, e.as_bytes()),
    }
}

/// Text for analysers that need `&str`: invalid UTF-8 is replaced, and the
/// first bad byte's position is returned for a warning.
pub fn lossy(label: &str, bytes: &[u8]) -> (String, Option<String>) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_owned(), None),
        Err(e) => {
            let (line, col) = crate::output::position::line_col(bytes, e.valid_up_to());
            (
                String::from_utf8_lossy(bytes).into_owned(),
                Some(format!(
                    "{label}:{line}:{col}: invalid UTF-8; replaced with U+FFFD for the JSON parse"
                )),
            )
        }
    }
}

/// Load a JSON file (a schema, `--vars`); a syntax error names the file, line and column.
pub fn schema_file(path: &Path) -> Result<Value, CliError> {
    let label = path.display().to_string();
    let bytes = crate::limits::read(path)
        .map_err(|e| CliError::new(Category::InputError, format!("{label}: {e}")).because(e))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        CliError::new(
            Category::ConfigInvalid,
            format!(
                "{label}:{}:{}: {}",
                e.line(),
                e.column(),
                crate::output::json::strip_position(&e.to_string())
            ),
        )
        .because(e)
    })
}

/// A schema-compile failure as a CLI error naming where the schema came from.
pub fn compile_err(origin: &str, e: &crate::output::schema::SchemaCompileError) -> CliError {
    CliError::new(Category::ConfigInvalid, format!("{origin}: {e}")).because(e.clone())
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
            let bytes = crate::limits::read(Path::new(path))
                .map_err(|e| CliError::new(Category::InputError, format!("{path}: {e}")).because(e))?;
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

/// The variables for a render or run: the chosen sample input, overlaid
/// with the `--vars FILE.json` object, overlaid with `--var`s. One helper
/// for every command that renders, so they read variables alike.
pub fn vars(
    cfg: &crate::prompt::PromptConfig,
    input: Option<&str>,
    vars: &[String],
    vars_file: Option<&Path>,
) -> Result<Map<String, Value>, CliError> {
    let mut merged = if cfg.inputs.is_empty() && input.is_none() {
        Map::new()
    } else {
        crate::prompt::input_vars(cfg, input).map_err(|e| CliError::new(Category::Usage, e.to_string()).because(e))?
    };
    if let Some(path) = vars_file {
        merged.extend(vars_object(path)?);
    }
    merged.extend(parse_vars(vars)?);
    Ok(merged)
}

/// Read `--vars FILE.json`: one JSON object of variables of any JSON type;
/// syntax errors name the file, line and column.
pub fn vars_object(path: &Path) -> Result<Map<String, Value>, CliError> {
    match schema_file(path)? {
        Value::Object(m) => Ok(m),
        other => Err(CliError::new(
            Category::Usage,
            format!(
                "{}: --vars expects a JSON object of variables, found {}",
                path.display(),
                crate::output::schema::kind_of(&other)
            ),
        )),
    }
}

/// The warning for an undefined name a render touched.
pub fn undefined_warning(id: &str, name: &str) -> String {
    format!("prompt {id:?}: `{name}` is undefined; rendered empty (false in `if`), as TrustGraph (ibis) does")
}
