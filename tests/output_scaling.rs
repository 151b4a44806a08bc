//! The sweep's work grows linearly with the response (issue 24: this was a
//! timing test that CI never ran). Work is counted as heap allocations
//! (dhat's testing mode), which are deterministic: each item is parsed and
//! validated once, so four times the tokens make about four times the
//! allocations, where re-analysing every prefix would make sixteen. Speed
//! itself is for BENCHMARKS.md (`cargo bench --bench min_of_runs`,
//! `benches/analysis.rs`).

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

use cutline::output::json::JsonSchemas;
use cutline::output::schema::CompiledSchema;
use cutline::output::sweep::{SweepSchemas, sweep};
use cutline::output::tokens::{Tokenizer, boundaries};
use serde_json::{Value, json};

fn item_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"entity": {"type": "string", "minLength": 1}, "definition": {"type": "string"}},
        "required": ["entity", "definition"],
        "additionalProperties": false
    })
}

fn object(i: usize) -> String {
    const WORDS: [&str; 8] = [
        "process", "plants", "convert", "sunlight", "energy", "cell", "molecule", "genetic",
    ];
    let words: Vec<&str> = (0..8 + i % 7).map(|k| WORDS[(i * 7 + k * 3) % WORDS.len()]).collect();
    serde_json::to_string(&json!({"entity": format!("{} {i}", WORDS[i % 8]), "definition": words.join(" ")})).unwrap()
}

/// A JSON-array response cut at exactly `tokens` o200k tokens.
fn array_response(tokens: usize) -> (String, Vec<usize>) {
    let mut n = tokens / 25;
    loop {
        let body: Vec<String> = (0..n).map(|i| format!("  {}", object(i))).collect();
        let text = format!("```json\n[\n{}\n]\n```\n", body.join(",\n"));
        let cuts = boundaries(&text, Tokenizer::O200kBase);
        if cuts.len() > tokens {
            return (text[..cuts[tokens]].to_owned(), cuts[..=tokens].to_vec());
        }
        n += n / 4 + 1;
    }
}

/// Heap blocks allocated while `f` runs.
fn blocks(f: impl FnOnce()) -> u64 {
    let before = dhat::HeapStats::get().total_blocks;
    f();
    dhat::HeapStats::get().total_blocks - before
}

#[test]
fn sweep_work_grows_linearly_with_the_tokens() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let item = item_schema();
    let s = SweepSchemas {
        json: JsonSchemas::compile(Some(&json!({"type": "array", "items": item}))).unwrap(),
        line: Some(CompiledSchema::compile(&item).unwrap()),
    };
    let (small_text, small_cuts) = array_response(5_000);
    let (big_text, big_cuts) = array_response(20_000);
    let mut points = (Vec::new(), Vec::new());
    let small = blocks(|| points.0 = sweep(small_text.as_bytes(), &small_cuts, &s));
    let big = blocks(|| points.1 = sweep(big_text.as_bytes(), &big_cuts, &s));
    // Both sweeps counted every element of their arrays.
    let elements = |t: &str| t.matches("\"entity\"").count() - 1;
    assert_eq!(points.0.last().unwrap().salvaged_items, elements(&small_text));
    assert_eq!(points.1.last().unwrap().salvaged_items, elements(&big_text));
    // Between 3x and 5x, in whole numbers (no float casts).
    assert!(
        (3 * small..=5 * small).contains(&big),
        "4x the tokens made {big} allocations against {small}, not 3-5x"
    );
}
