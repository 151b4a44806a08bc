//! The Sessions tab: the recorded sessions and their runs, opened (Enter)
//! as finished views or replayed (`r`) at the limit.
//!
//! `state` holds [`SessionsView`], `update` takes the sessions read and
//! opens a recording, `view` draws the list and the selected run's
//! details, `effects` reads the directory.

mod effects;
mod state;
pub(super) mod update;
pub mod view;

pub(super) use effects::spawn_load;
pub use state::SessionsView;
pub use update::prompt_of_record;
