//! Config errors and warnings that name the file, line, column and cause.
//!
//! Every way a prompt config can be wrong ends up here, shaped
//! `file:line:col: cause`, so an editor or a person can jump to the spot.

use std::fmt;
use std::sync::Arc;

/// A prompt config that does not load or render.
#[derive(Debug, Clone)]
pub struct ConfigError {
    /// The file (or other label) the config came from.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column in characters, when known.
    pub column: Option<usize>,
    /// What is wrong (the cause in words, when there is one).
    pub message: String,
    /// The typed error underneath (an io or serde_json error), kept as
    /// [`std::error::Error::source`]; `message` already says it, so the edge
    /// prints this error's `Display` alone. Not part of equality.
    pub source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl ConfigError {
    /// An error about the file as a whole (no position).
    pub fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
            source: None,
        }
    }

    /// An error at a line (and column, when known).
    pub fn at(file: impl Into<String>, line: usize, column: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            column,
            ..Self::new(file, message)
        }
    }

    /// An error at byte `offset` of `text`, with the column in characters.
    pub fn at_offset(file: impl Into<String>, text: &[u8], offset: usize, message: impl Into<String>) -> Self {
        let (line, column) = crate::output::position::line_col(text, offset);
        Self::at(file, line, Some(column), message)
    }

    /// This error with `source` kept as the typed error underneath (its
    /// text already in `message`).
    #[must_use]
    pub fn because(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }
}

impl PartialEq for ConfigError {
    fn eq(&self, other: &Self) -> bool {
        self.file == other.file
            && self.line == other.line
            && self.column == other.column
            && self.message == other.message
    }
}

impl Eq for ConfigError {}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}: {}", self.file, Position(self.line, self.column), self.message)
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// `:line:col`, `:line` or nothing, as much as is known.
struct Position(Option<usize>, Option<usize>);

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.0 {
            write!(f, ":{l}")?;
            if let Some(c) = self.1 {
                write!(f, ":{c}")?;
            }
        }
        Ok(())
    }
}

/// Something loaded but worth telling the author.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What to know.
    pub message: String,
}

impl Warning {
    /// A warning about `file`, at `line` when known.
    pub fn new(file: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {}", self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_shapes() {
        assert_eq!(ConfigError::new("a.toml", "bad").to_string(), "a.toml: bad");
        assert_eq!(ConfigError::at("a.toml", 3, None, "bad").to_string(), "a.toml:3: bad");
        assert_eq!(
            ConfigError::at("a.toml", 3, Some(7), "bad").to_string(),
            "a.toml:3:7: bad"
        );
        assert_eq!(
            ConfigError::at_offset("a.toml", "ab\n日本x".as_bytes(), 9, "bad").to_string(),
            "a.toml:2:3: bad"
        );
        assert_eq!(Warning::new("a.toml", Some(2), "hm").to_string(), "a.toml:2: hm");
        assert_eq!(Warning::new("a.toml", None, "hm").to_string(), "a.toml: hm");
    }
}
