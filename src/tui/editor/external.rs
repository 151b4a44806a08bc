//! Running `$VISUAL`/`$EDITOR` on a field (Ctrl-O): the text goes to a
//! private temporary file, the editor runs through `sh -c` as git runs it (so
//! `EDITOR="code --wait"` works), and the file's text comes back. The event
//! loop suspends the terminal and input around this call.

use std::io::Write as _;
use std::process::Command;

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`.
pub fn command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|v| v.to_string_lossy().trim().to_owned())
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| "vi".to_owned())
}

/// Why an external edit gave no text back.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    /// The private temporary file could not be made or written.
    #[error("temporary file: {0}")]
    TempFile(#[source] std::io::Error),
    /// `sh` could not start the editor command.
    #[error("could not start `{editor}`: {source}")]
    Start {
        /// The editor command.
        editor: String,
        /// Why.
        source: std::io::Error,
    },
    /// The editor exited unsuccessfully.
    #[error("`{editor}` exited with {status}")]
    Exit {
        /// The editor command.
        editor: String,
        /// How it exited.
        status: std::process::ExitStatus,
    },
    /// The edited file could not be read back.
    #[error("{}: {source}", path.display())]
    Read {
        /// The temporary file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Nothing can run an editor here (a runner without a terminal).
    #[error("no terminal to run the editor in")]
    NoTerminal,
    /// The edited text is not UTF-8 from this byte on.
    #[error("the edited text is not UTF-8 (byte {0})")]
    NotUtf8(usize),
}

/// Edit `text` with the `editor` command (see [`command`]); the saved text, or why there is none.
/// A final newline the editor added is dropped when `text` had none, so an
/// unchanged file comes back unchanged.
///
/// # Errors
/// The temporary file cannot be written or read, the editor cannot start
/// or exits unsuccessfully, or the file is not UTF-8.
pub fn edit(editor: &str, text: &str, suffix: &str) -> Result<String, ExternalError> {
    let mut file = tempfile::Builder::new()
        .prefix("cutline-field-")
        .suffix(suffix)
        .tempfile()
        .map_err(ExternalError::TempFile)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(ExternalError::TempFile)?;
    let path = file.into_temp_path();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("cutline-editor")
        .arg(&path)
        .status()
        .map_err(|source| ExternalError::Start {
            editor: editor.to_owned(),
            source,
        })?;
    if !status.success() {
        return Err(ExternalError::Exit {
            editor: editor.to_owned(),
            status,
        });
    }
    let bytes = crate::limits::read(&path).map_err(|source| ExternalError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = String::from_utf8(bytes).map_err(|e| ExternalError::NotUtf8(e.utf8_error().valid_up_to()))?;
    if !text.ends_with('\n') && out.ends_with('\n') {
        out.pop();
        if out.ends_with('\r') {
            out.pop();
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_editor_that_changes_nothing_gives_the_text_back() {
        // `true` leaves the file as written.
        assert_eq!(edit("true", "a\nb", ".txt").unwrap(), "a\nb");
    }

    #[test]
    fn the_edited_file_comes_back_and_a_failing_editor_is_an_error() {
        assert_eq!(edit("sed -i s/a/z/", "a\nb", ".txt").unwrap(), "z\nb");
        // An editor that adds a final newline does not change a field that had none.
        assert_eq!(edit("sed -i '$a\\'", "a", ".txt").unwrap(), "a");
        let e = edit("false", "a", ".txt").unwrap_err().to_string();
        assert!(e.starts_with("`false` exited with"), "{e}");
        assert_eq!(
            edit("printf '\\377' >", "a", ".txt").unwrap_err().to_string(),
            "the edited text is not UTF-8 (byte 0)"
        );
    }
}
