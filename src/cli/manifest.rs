//! `cutline --manifest`: every command, whether it streams JSONL by default,
//! and the schema name of its records, so an agent can pick its parser
//! before it runs anything.

use serde_json::{Value, json};

/// One manifest entry.
fn cmd(name: &str, summary: &str, streaming: bool) -> Value {
    json!({
        "name": name,
        "summary": summary,
        "streaming_default": streaming,
        "supports_streaming": streaming,
        "output_schema": format!("cutline.{name}/1"),
        "buffered_flag": "--output json",
        "aliases": {"--no-stream": "--output json"},
    })
}

/// The manifest document.
pub fn manifest() -> Value {
    json!({
        "name": "cutline",
        "version": env!("CARGO_PKG_VERSION"),
        "default_output": "jsonl",
        "preamble": {"_format": "jsonl", "_schema": "cutline.<command>/1", "_version": 1},
        "envelope": ["ok", "data", "error", "warnings", "meta"],
        "exit_codes": {
            "0": "success", "1": "internal error", "2": "usage error", "3": "config_invalid",
            "4": "input_error", "5": "provider_error", "6": "structured_output_invalid", "7": "setup_required", "8": "check_failed",
            "9": "unconvertible", "10": "batch_pending", "11": "conflict", "12": "deployment_error",
            "130": "interrupted"
        },
        "commands": [
            cmd("prompts", "List the prompt configs in the prompts directory", true),
            cmd("render", "Render a prompt with variables or a named sample input", true),
            cmd("parse", "Analyse a response as text, json or jsonl", true),
            cmd("sweep", "Items recovered at every token cut by strict JSON, salvage and JSONL", true),
            cmd("run", "Run a prompt on a model, analyse the answer and record it in a session", true),
            cmd("replay", "Replay a recorded run cut at another max-token limit", true),
            cmd("sessions", "List recorded sessions and their runs", true),
            cmd("setup", "Install the local model (llama-server + Gemma 3 270M) into the user cache", true),
            cmd("compare", "Compare two answers item by item: in both, only in A, only in B, valid rate, gold F1, truncation", true),
            cmd("migrate", "Migrate a JSON-array prompt to JSONL: per-line schema, rewritten template, flags", true),
            cmd("eval", "Batch evaluation: prompts × inputs × max-token limits, concurrent, resumable; items recovered and valid rate per prompt × limit, JSON against JSONL", true),
            cmd("budget", "The smallest max-token limit at which the prompt's consumer keeps a target share of the uncut answer's items, per input and for all (max, p95), reasoning tokens added", true),
            cmd("report", "Write a self-contained HTML report of a session or some of its runs (per run: prompt, provider, limit, finish, usage; sweep charts; twins side by side; compare and gold P/R/F1; eval summary), or one sweep chart as SVG; prints one record about the file written", true),
            cmd("probe", "Find out what a configured provider's model accepts (sampling, stop, endpoint, structured output and roots, prefill, thinking) with at most eight requests of 16 tokens; kept for later runs", true),
            cmd("models", "What cutline learned of each model per base URL (Models API, refusals, probes) with the evidence; --forget drops it", true),
            cmd("tg", "A running TrustGraph deployment's prompts: pull into a prompts directory, diff local against live, push only what changed after TrustGraph's loader checks (journaled), undo the last push", true),
            cmd("batches", "The provider batches of batch evals (their manifests beside the sessions) with their states and counts, polled live; --cancel cancels the running ones", true),
        ],
    })
}
