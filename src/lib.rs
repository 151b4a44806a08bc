//! cutline: a workbench for LLM extraction prompts and how their output
//! survives truncation. The library holds the pure engine (`prompt`, `output`),
//! the LLM layer, sessions, the headless CLI and the TUI; `main.rs` is a thin
//! entry point.

// The message catalogues (`locales/*.toml`), English the fallback.
rust_i18n::i18n!("locales", fallback = "en");

pub mod cli;
pub mod compare;
pub mod eval;
pub mod i18n;
pub mod limits;
pub mod llm;
pub mod logging;
pub mod output;
pub mod prompt;
pub mod report;
pub mod run;
pub mod session;
pub mod store;
pub mod term;
pub mod tg;
pub mod tui;
