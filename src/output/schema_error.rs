//! The error a schema that does not compile gives: its own file, so the
//! compiler (`schema`) and the Python-semantics preparation (`pyschema`)
//! both return it without importing each other.

use serde::Serialize;

/// A schema error found at compile time, with the JSON pointer into the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("schema does not compile at {}: {message}", if .pointer.is_empty() { "/" } else { .pointer })]
pub struct SchemaCompileError {
    /// JSON pointer of the offending keyword inside the schema.
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}
