//! Config errors and warnings that name the file, line, column and cause.

use std::fmt;

/// A prompt config that does not load or render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or other label) the config came from.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column in characters, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub cause: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", self.cause)
    }
}

impl std::error::Error for ConfigError {}

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

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {}", self.message)
    }
}
