//! `x`: the shareable HTML report of the recorded runs on show (the page
//! `cutline report` writes), for people who are not at the terminal.
//!
//! `update` asks for it (the runs on show must be recordings of one
//! session) and takes the answer, `effects` writes it through
//! `report::load` and `report::html` beside the sessions.

mod effects;
pub(super) mod update;

pub(super) use effects::spawn;
pub use effects::{ReportError, write_report};
