//! Reading what the commands are pointed at: response files (or stdin) and
//! schema files, with errors that name the file, line and cause.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::out::{Category, CliError};

/// Read `path` (or stdin for `-`) whole.
pub fn read_all(path: &str) -> Result<Vec<u8>, CliError> {
    let mut buf = Vec::new();
    if path == "-" {
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| CliError::new(Category::InputError, format!("<stdin>: {e}")))?;
    } else {
        buf = std::fs::read(path).map_err(|e| CliError::new(Category::InputError, format!("{path}: {e}")))?;
    }
    Ok(buf)
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

/// Load a JSON Schema file; a syntax error names the file, line and column.
pub fn schema_file(path: &Path) -> Result<Value, CliError> {
    let label = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| CliError::new(Category::InputError, format!("{label}: {e}")))?;
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
    })
}

/// A schema-compile failure as a CLI error naming where the schema came from.
pub fn compile_err(origin: &str, e: &crate::output::schema::SchemaCompileError) -> CliError {
    CliError::new(Category::ConfigInvalid, format!("{origin}: {e}"))
}
