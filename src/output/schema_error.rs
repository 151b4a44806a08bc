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

/// How a compile error names a remote document (see [`SchemaCompileError::remote`]).
const REMOTE: &str = "needs the remote document ";

impl SchemaCompileError {
    /// The error for a `$ref` to a document outside the schema that no
    /// bundled copy holds: cutline never fetches it.
    pub fn needs_remote(pointer: String, uri: &str) -> Self {
        Self {
            pointer,
            message: format!(
                "{REMOTE}{uri}, which cutline never fetches (TrustGraph's jsonschema 4.26 fetches it over HTTP \
                 when it validates)"
            ),
        }
    }

    /// The remote document the schema needs, when that is why it does not
    /// compile.
    pub fn remote(&self) -> Option<&str> {
        let rest = self.message.strip_prefix(REMOTE)?;
        rest.split(", which").next()
    }
}
