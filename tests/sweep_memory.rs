//! What the sweep itself holds, measured as live heap bytes with dhat's
//! testing mode (deterministic, unlike a process's RSS, which moves by
//! megabytes from run to run): an answer dense in tiny elements (200,000
//! `{"a":1}` in 1.6 MB, on one line) costs the sweep at most 1.5× its
//! text on top of the text and the cuts, whether the item schema rejects
//! every element or accepts it (issue 37). Before, the whole-array count
//! held every rejected element's violation and JSONL parsed the line into
//! one value tree: about 100 MB each.

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

use cutline::output::sweep::{Cuts, Sweep, SweepSchemas};
use serde_json::json;

const ELEMENTS: usize = 200_000;

/// The dense array, built in place (no temporary larger than itself).
fn dense() -> String {
    let mut text = String::with_capacity(2 + ELEMENTS * 8);
    text.push('[');
    for i in 0..ELEMENTS {
        if i > 0 {
            text.push(',');
        }
        text.push_str(r#"{"a":1}"#);
    }
    text.push(']');
    text
}

#[test]
fn a_sweep_of_dense_tiny_elements_holds_at_most_one_and_a_half_times_its_text() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let text = dense();
    // A cut every second byte: o200k's density on this text (800,002 tokens).
    let len = u32::try_from(text.len()).unwrap();
    let cuts: Vec<u32> = (0..len).step_by(2).chain([len]).collect();
    for (item, json_items, jsonl_items) in [
        (json!({"type": "array"}), 0, 1),
        (json!({"type": "object"}), ELEMENTS, 0),
    ] {
        let schemas = SweepSchemas::of_item(&item).unwrap();
        let before = dhat::HeapStats::get();
        assert!(
            before.max_bytes - before.curr_bytes < text.len() / 4,
            "the run before left a peak above now"
        );
        let sweep = Sweep::new(text.as_bytes(), Cuts::Narrow(&cuts), &schemas);
        let last = sweep.points(Cuts::Narrow(&cuts)).last().unwrap();
        let held = dhat::HeapStats::get().max_bytes.saturating_sub(before.curr_bytes);
        assert!(
            held * 2 <= text.len() * 3,
            "{item}: the sweep held {held} bytes at its peak for {} bytes of text",
            text.len()
        );
        assert_eq!(
            (last.json_items, last.salvaged_items, last.jsonl_items),
            (json_items, json_items, jsonl_items),
            "{item}"
        );
        eprintln!("{item}: held {held} bytes for {} bytes of text", text.len());
        drop(sweep);
    }
}
