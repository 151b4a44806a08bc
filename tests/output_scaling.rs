//! Scaling checks that need an optimised build and a quiet-enough machine:
//! `cargo test --release --test output_scaling -- --ignored --nocapture`.
//!
//! Each figure is the *minimum* over many runs, which a shared machine's
//! load disturbs far less than a mean. The criterion benches
//! (`benches/analysis.rs`, BENCHMARKS.md) give the full distributions.

use std::time::{Duration, Instant};

/// The `cutline` binary's allocator (src/main.rs). Every side of each
/// comparison runs in this one test binary, so all get it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cutline::output::json::JsonSchemas;
use cutline::output::jsonl;
use cutline::output::schema::CompiledSchema;
use cutline::output::stream::JsonlStream;
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

fn min_time(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

#[test]
#[ignore = "timing: run in release"]
fn sweep_scales_linearly() {
    let item = item_schema();
    let s = SweepSchemas {
        json: JsonSchemas::compile(Some(&json!({"type": "array", "items": item}))).unwrap(),
        line: Some(CompiledSchema::compile(&item).unwrap()),
    };
    let (small_text, small_cuts) = array_response(5_000);
    let (big_text, big_cuts) = array_response(20_000);
    let t1 = min_time(200, || {
        std::hint::black_box(sweep(small_text.as_bytes(), &small_cuts, &s));
    });
    let t4 = min_time(50, || {
        std::hint::black_box(sweep(big_text.as_bytes(), &big_cuts, &s));
    });
    let ratio = t4.as_secs_f64() / t1.as_secs_f64();
    println!("sweep 5k tokens {t1:?}, 20k tokens {t4:?}: x{ratio:.2} for x4 tokens");
    assert!(ratio <= 5.0, "4x tokens took {ratio:.2}x the time");
}

#[test]
#[ignore = "timing: run in release"]
fn jsonl_validation_against_raw_parse() {
    let schema = CompiledSchema::compile(&item_schema()).unwrap();
    for lines in [1_000, 10_000] {
        let text: String = (0..lines).map(|i| object(i) + "\n").collect();
        let bytes = text.as_bytes();
        let raw_f = || {
            for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                std::hint::black_box(serde_json::from_slice::<Value>(line).is_ok());
            }
        };
        let kept_f = || {
            let v: Vec<Value> = bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .filter_map(|l| serde_json::from_slice(l).ok())
                .collect();
            std::hint::black_box(v);
        };
        let ours_f = || {
            std::hint::black_box(jsonl::analyse(bytes, Some(&schema)));
        };
        let unchecked_f = || {
            std::hint::black_box(jsonl::analyse(bytes, None));
        };
        // Interleaved rounds: a burst of load hits every side alike.
        let (mut raw, mut kept, mut ours, mut unchecked) = (Duration::MAX, Duration::MAX, Duration::MAX, Duration::MAX);
        for _ in 0..30 {
            raw = raw.min(min_time(1, raw_f));
            kept = kept.min(min_time(1, kept_f));
            ours = ours.min(min_time(1, ours_f));
            unchecked = unchecked.min(min_time(1, unchecked_f));
        }
        let streamed = min_time(30, || {
            let mut st = JsonlStream::new(Some(&schema));
            let mut out = Vec::new();
            for c in bytes.chunks(4) {
                st.feed(c, &mut out);
                // The consumer takes each item as it completes.
                out.clear();
            }
            std::hint::black_box(st.finish(&mut out));
        });
        println!(
            "{lines} lines: raw parse {raw:?}, parse+keep {kept:?}, cutline without schema {unchecked:?}, with schema {ours:?} ({:.0}% / {:.0}% of their speed), 4-byte stream {streamed:?} (x{:.2})",
            100.0 * raw.as_secs_f64() / ours.as_secs_f64(),
            100.0 * kept.as_secs_f64() / ours.as_secs_f64(),
            streamed.as_secs_f64() / ours.as_secs_f64(),
        );
    }
}

/// Salvage of a 10k-element array against one plain `serde_json` parse of
/// the same bytes (issue 14: salvage took 1.6× that), whole and cut inside
/// its last element. Printed, not asserted: a figure for BENCHMARKS.md.
#[test]
#[ignore = "timing: run in release"]
fn salvage_against_one_parse() {
    let body: Vec<String> = (0..10_000).map(|i| format!("  {}", object(i))).collect();
    let whole = format!("[\n{}\n]", body.join(",\n"));
    let cut = &whole[..whole.rfind("{\"entity\"").unwrap() + 20];
    let (mut plain, mut salvaged, mut salvaged_cut) = (Duration::MAX, Duration::MAX, Duration::MAX);
    // Interleaved rounds: a burst of load hits every side alike.
    for _ in 0..60 {
        plain = plain.min(min_time(1, || {
            std::hint::black_box(serde_json::from_slice::<Value>(whole.as_bytes()).unwrap());
        }));
        salvaged = salvaged.min(min_time(1, || {
            std::hint::black_box(cutline::output::salvage::salvage(whole.as_bytes()));
        }));
        salvaged_cut = salvaged_cut.min(min_time(1, || {
            std::hint::black_box(cutline::output::salvage::salvage(cut.as_bytes()));
        }));
    }
    println!(
        "10k elements, {} bytes: serde_json parse {plain:?}; salvage whole {salvaged:?} (x{:.2}), cut {salvaged_cut:?} (x{:.2})",
        whole.len(),
        salvaged.as_secs_f64() / plain.as_secs_f64(),
        salvaged_cut.as_secs_f64() / plain.as_secs_f64(),
    );
}
