//! cutline: a workbench for LLM extraction prompts and how their output
//! survives truncation. The library holds the pure engine (`prompt`, `output`)
//! and the headless CLI; `main.rs` is a thin entry point.

pub mod cli;
pub mod llm;
pub mod output;
pub mod prompt;
pub mod session;
