//! cutline: a workbench for LLM extraction prompts and how their output
//! survives truncation. The library holds the pure engine (`prompt`, `output`),
//! the LLM layer, sessions, the headless CLI and the TUI; `main.rs` is a thin
//! entry point.

pub mod cli;
pub mod compare;
pub mod eval;
pub mod limits;
pub mod llm;
pub mod output;
pub mod prompt;
pub mod report;
pub mod run;
pub mod session;
pub mod store;
pub mod tui;
