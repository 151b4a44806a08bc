//! Minima over many runs of the analysis against plain `serde_json`, on an
//! optimised build: `cargo bench --bench min_of_runs`. Figures for
//! BENCHMARKS.md ("Min-of-runs check"), printed, never asserted; each is the
//! *minimum* over many runs, which a shared machine's load disturbs far less
//! than a mean. The criterion benches (`benches/analysis.rs`) give the full
//! distributions.

use std::time::{Duration, Instant};

/// The `cutline` binary's allocator (src/main.rs), so every side of each
/// comparison gets it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cutline::output::jsonl;
use cutline::output::schema::CompiledSchema;
use cutline::output::stream::JsonlStream;
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

fn jsonl_validation_against_raw_parse(rounds: usize) {
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
        for _ in 0..rounds {
            raw = raw.min(min_time(1, raw_f));
            kept = kept.min(min_time(1, kept_f));
            ours = ours.min(min_time(1, ours_f));
            unchecked = unchecked.min(min_time(1, unchecked_f));
        }
        let streamed = min_time(rounds, || {
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
/// its last element.
fn salvage_against_one_parse(rounds: usize) {
    let body: Vec<String> = (0..10_000).map(|i| format!("  {}", object(i))).collect();
    let whole = format!("[\n{}\n]", body.join(",\n"));
    let cut = &whole[..whole.rfind("{\"entity\"").unwrap() + 20];
    let (mut plain, mut salvaged, mut salvaged_cut) = (Duration::MAX, Duration::MAX, Duration::MAX);
    // Interleaved rounds: a burst of load hits every side alike.
    for _ in 0..2 * rounds {
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

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this
    // once as a smoke test, one round each.
    let rounds = if std::env::args().any(|a| a == "--bench") {
        30
    } else {
        1
    };
    jsonl_validation_against_raw_parse(rounds);
    salvage_against_one_parse(rounds);
}
