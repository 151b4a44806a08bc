//! Output analysis: bytes in, outcomes out. Pure (no IO, no async); the hot
//! path of cutline.
//!
//! - [`json`]: strict parse as TrustGraph does it, plus [`salvage`] of the
//!   complete elements of a cut array.
//! - [`jsonl`]: per-line outcomes with the reference's keep semantics.
//! - [`stream`]: the same, incrementally, for a streaming response.
//! - [`sweep`]: items recovered at every token cut, in one linear pass.
//! - [`schema`]: schemas compiled once, union-aware errors.
//! - [`loops`]: a runaway loop at the end of a text (period, repeats, waste).
//! - [`pyjson`]: what Python's `json.loads` accepts beyond JSON; [`pyscan`]
//!   the order in which it fails; [`pyre`] Python's `re` for `pattern`.
//! - [`tg`]: TrustGraph's verdict for the runtime it runs on.
//! - [`verdict`]: one run's verdict as marks and sentences, which the
//!   report, the workbench and pretty output only style.

pub mod analysis;
pub mod json;
pub mod jsonl;
pub mod loops;
pub mod position;
pub mod pyjson;
pub mod pykeywords;
pub mod pyre;
pub mod pyscan;
pub mod pyschema;
pub mod salvage;
pub mod scan;
pub mod schema;
pub mod schema_error;
pub mod stream;
pub mod sweep;
pub mod text;
pub mod tg;
pub mod tokens;
pub mod verdict;

pub use analysis::{Analysis, ResponseType};
