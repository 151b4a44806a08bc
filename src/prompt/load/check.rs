//! Checks on a file's bytes before any parser sees them: UTF-8, a
//! byte-order mark, git merge-conflict markers. Each would make a parser say
//! something confusing, so each is named here at its line.

use crate::prompt::ConfigError;

/// The cause of the error for a file that starts with a byte-order mark.
pub const BOM_CAUSE: &str = "file starts with a UTF-8 byte-order mark (BOM); save it without one";

/// UTF-8, then the text checks.
pub(crate) fn check_bytes<'a>(label: &str, bytes: &'a [u8]) -> Result<&'a str, ConfigError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ConfigError::at_offset(label, bytes, e.valid_up_to(), "invalid UTF-8"))?;
    check_text(label, text)?;
    Ok(text)
}

/// A leading byte-order mark, then git merge-conflict markers.
pub(crate) fn check_text(label: &str, text: &str) -> Result<(), ConfigError> {
    if text.starts_with('\u{feff}') {
        return Err(ConfigError::at(label, 1, Some(1), BOM_CAUSE));
    }
    if let Some((line, marker)) = conflict_marker(text) {
        return Err(ConfigError::at(
            label,
            line,
            Some(1),
            format!("unresolved git merge conflict marker `{marker}`; resolve the conflict first"),
        ));
    }
    Ok(())
}

/// Line and marker of the first merge-conflict marker. A lone `=======` line
/// counts only when the file also has a `<<<<<<< `/`>>>>>>> `/`||||||| `
/// line: alone it is more likely a Markdown heading underline in a prompt.
fn conflict_marker(text: &str) -> Option<(usize, &'static str)> {
    let mut first_sep = None;
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let marker = ["<<<<<<<", ">>>>>>>", "|||||||"].into_iter().find(|m| {
            line.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        });
        if let Some(m) = marker {
            return Some(match first_sep {
                Some(sep) => (sep, "======="),
                None => (i + 1, m),
            });
        }
        if line == "=======" && first_sep.is_none() {
            first_sep = Some(i + 1);
        }
    }
    None
}
