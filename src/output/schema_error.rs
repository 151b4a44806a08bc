//! The error a schema that does not compile gives: its own file, so the
//! compiler (`schema`) and the Python-semantics preparation (`pyschema`)
//! both return it without importing each other.

use serde::Serialize;

/// A schema error found at compile time, with the JSON pointer into the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaCompileError {
    /// JSON pointer of the offending keyword inside the schema.
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl std::fmt::Display for SchemaCompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "schema does not compile at {at}: {}", self.message)
    }
}

impl std::error::Error for SchemaCompileError {}
