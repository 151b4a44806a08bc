//! What flows through the workbench, named from one place for whoever
//! drives it (the event loop, the tests): [`Event`]s into the reducer and
//! [`Effect`]s out of it, defined at the root (`tui`), with the data they
//! carry, which belongs to the components that make and read it (a run's
//! job and news to `runs`, a sweep's to `sweep`, …). Nothing inside the
//! workbench imports this module: components use their parent's `Event`
//! and `Effect` and their own payloads.

pub use super::costs::CostJob;
pub use super::eval::{EvalEnd, EvalJob, EvalMsg, EvalPlan};
pub use super::migrate::WriteOutcome;
pub use super::providers::{ProviderChoice, ProviderEntry, SaveModel};
pub use super::remember::Remembered;
pub use super::runs::{Origin, Prefill, RunEnd, RunJob, RunMsg, Source};
pub use super::sweep::{SweepData, SweepInput, SweepJob};
pub use super::{Effect, Event};
