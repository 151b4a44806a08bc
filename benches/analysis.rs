//! Benches of the output engine (see BENCHMARKS.md for results and targets).
//!
//! - `jsonl_validate`: `jsonl::analyse` with a per-object schema against raw
//!   `serde_json::from_slice::<Value>` on every line of the same bytes.
//! - `sweep`: the one-pass sweep against re-running the one-shot analysers
//!   at every token cut, and the sweep at N and 4N tokens.
//! - `stream`: the streaming analysers fed 4-byte chunks against one-shot.
//! - `salvage`: salvage of a 10k-element array (whole, cut) against one
//!   plain `serde_json` parse of the whole document; `json::outline` (what
//!   `parse` runs) and `json::analyse` on the cut array.
//!
//! Run: `cargo bench --bench analysis -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

/// The binary's allocator (src/main.rs), so the benches measure what the
/// `cutline` process does. The raw `serde_json` baselines run in this same
/// binary, so they get it too and the ratios stay like for like.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use cutline::output::json::{self, JsonSchemas};
use cutline::output::jsonl;
use cutline::output::salvage;
use cutline::output::schema::CompiledSchema;
use cutline::output::stream::{JsonStream, JsonlStream};
use cutline::output::sweep::{SweepPoint, SweepSchemas, sweep};
use cutline::output::tokens::{Tokenizer, boundaries};
use serde_json::{Value, json};

fn item_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "entity": {"type": "string", "minLength": 1},
            "definition": {"type": "string"}
        },
        "required": ["entity", "definition"],
        "additionalProperties": false
    })
}

fn array_schemas() -> JsonSchemas {
    JsonSchemas::compile(Some(&json!({"type": "array", "items": item_schema()}))).unwrap()
}

const WORDS: [&str; 16] = [
    "process",
    "plants",
    "convert",
    "sunlight",
    "energy",
    "cell",
    "molecule",
    "carries",
    "genetic",
    "information",
    "protein",
    "membrane",
    "structure",
    "nucleus",
    "enzyme",
    "reaction",
];

/// One extraction object like a model writes it (about 100 bytes).
fn object(i: usize) -> String {
    let words: Vec<&str> = (0..8 + i % 7).map(|k| WORDS[(i * 7 + k * 3) % WORDS.len()]).collect();
    serde_json::to_string(&json!({
        "entity": format!("{} {i}", WORDS[i % WORDS.len()]),
        "definition": words.join(" "),
    }))
    .unwrap()
}

fn jsonl_text(lines: usize) -> String {
    (0..lines).map(|i| object(i) + "\n").collect()
}

fn array_text(elements: usize) -> String {
    let body: Vec<String> = (0..elements).map(|i| format!("  {}", object(i))).collect();
    format!("```json\n[\n{}\n]\n```\n", body.join(",\n"))
}

/// A JSON-array response of at least `tokens` o200k tokens, cut to exactly
/// that many (the last element is cut, as a max-token limit would).
fn array_response(tokens: usize) -> (String, Vec<usize>) {
    let mut n = tokens / 25;
    loop {
        let text = array_text(n);
        let cuts = boundaries(&text, Tokenizer::O200kBase);
        if cuts.len() > tokens {
            let text = text[..cuts[tokens]].to_owned();
            let cuts = cuts[..=tokens].to_vec();
            return (text, cuts);
        }
        n += n / 4 + 1;
    }
}

fn sweep_schemas() -> SweepSchemas {
    SweepSchemas {
        json: array_schemas(),
        line: Some(CompiledSchema::compile(&item_schema()).unwrap()),
    }
}

/// What the sweep replaces: the one-shot analysers on every prefix.
fn naive_sweep(text: &str, cuts: &[usize], s: &SweepSchemas) -> Vec<SweepPoint> {
    cuts.iter()
        .enumerate()
        .map(|(tokens, &c)| {
            let prefix = &text.as_bytes()[..c];
            let j = json::analyse(&String::from_utf8_lossy(prefix), &s.json);
            let l = jsonl::analyse(prefix, s.line.as_ref());
            SweepPoint {
                tokens,
                bytes: c,
                json_items: j.items.len(),
                salvaged_items: j.salvaged.len(),
                jsonl_items: l.items.len(),
            }
        })
        .collect()
}

fn raw_lines(bytes: &[u8]) -> usize {
    let mut ok = 0;
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())) {
        let line = &bytes[start..nl];
        if !line.is_empty() && serde_json::from_slice::<Value>(line).is_ok() {
            ok += 1;
        }
        start = nl + 1;
    }
    ok
}

/// The reference's loop without the schema: parse each line, keep the values.
fn raw_lines_kept(bytes: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())) {
        let line = &bytes[start..nl];
        if !line.is_empty()
            && let Ok(v) = serde_json::from_slice::<Value>(line)
        {
            out.push(v);
        }
        start = nl + 1;
    }
    out
}

fn jsonl_validate(c: &mut Criterion) {
    let schema = CompiledSchema::compile(&item_schema()).unwrap();
    let mut g = c.benchmark_group("jsonl_validate");
    for lines in [1_000, 10_000] {
        let text = jsonl_text(lines);
        let bytes = text.as_bytes();
        assert_eq!(jsonl::analyse(bytes, Some(&schema)).items.len(), lines);
        assert_eq!(raw_lines(bytes), lines);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::new("serde_json_per_line", lines), bytes, |b, t| {
            b.iter(|| raw_lines(black_box(t)));
        });
        g.bench_with_input(BenchmarkId::new("serde_json_per_line_kept", lines), bytes, |b, t| {
            b.iter(|| raw_lines_kept(black_box(t)));
        });
        g.bench_with_input(BenchmarkId::new("cutline_jsonl_schema", lines), bytes, |b, t| {
            b.iter(|| jsonl::analyse(black_box(t), Some(&schema)));
        });
    }
    g.finish();
}

fn sweep_benches(c: &mut Criterion) {
    let s = sweep_schemas();
    let (small_text, small_cuts) = array_response(5_000);
    let (big_text, big_cuts) = array_response(20_000);
    // The two must agree, or the comparison means nothing.
    assert_eq!(
        sweep(small_text.as_bytes(), &small_cuts, &s),
        naive_sweep(&small_text, &small_cuts, &s)
    );
    let mut g = c.benchmark_group("sweep");
    // The re-parse at 20k tokens takes tens of seconds per run: ten runs
    // of one iteration each (criterion's linear sampling would take 55).
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    for (tokens, text, cuts) in [(5_000, &small_text, &small_cuts), (20_000, &big_text, &big_cuts)] {
        g.bench_with_input(BenchmarkId::new("one_pass", tokens), &(text, cuts), |b, (t, cuts)| {
            b.iter(|| sweep(black_box(t.as_bytes()), cuts, &s));
        });
    }
    for (tokens, text, cuts) in [(5_000, &small_text, &small_cuts), (20_000, &big_text, &big_cuts)] {
        g.bench_with_input(
            BenchmarkId::new("reparse_every_cut", tokens),
            &(text, cuts),
            |b, (t, cuts)| {
                b.iter(|| naive_sweep(black_box(t), cuts, &s));
            },
        );
    }
    g.finish();
}

fn stream_benches(c: &mut Criterion) {
    let schema = CompiledSchema::compile(&item_schema()).unwrap();
    let js = array_schemas();
    let lines = jsonl_text(1_000);
    let array = array_text(1_000);
    let mut g = c.benchmark_group("stream");
    g.throughput(Throughput::Bytes(lines.len() as u64));
    g.bench_function("jsonl_one_shot", |b| {
        b.iter(|| jsonl::analyse(black_box(lines.as_bytes()), Some(&schema)));
    });
    g.bench_function("jsonl_4_byte_chunks", |b| {
        b.iter(|| {
            let mut st = JsonlStream::new(Some(&schema));
            let mut out = Vec::new();
            for chunk in black_box(lines.as_bytes()).chunks(4) {
                st.feed(chunk, &mut out);
                // The consumer takes each item as it completes (the TUI
                // runner drains after every delta).
                out.clear();
            }
            st.finish(&mut out)
        });
    });
    g.throughput(Throughput::Bytes(array.len() as u64));
    g.bench_function("json_one_shot", |b| {
        b.iter(|| json::analyse(black_box(&array), &js));
    });
    g.bench_function("json_4_byte_chunks", |b| {
        b.iter(|| {
            let mut st = JsonStream::new(&js);
            let mut out = Vec::new();
            for chunk in black_box(array.as_bytes()).chunks(4) {
                st.feed(chunk, &mut out);
                out.clear();
            }
            st.finish(&mut Vec::new())
        });
    });
    g.finish();
}

fn salvage_benches(c: &mut Criterion) {
    let js = array_schemas();
    let whole = array_text(10_000);
    let body = &whole[whole.find('[').unwrap()..=whole.rfind(']').unwrap()];
    // Cut inside the last element, as a max-token limit would.
    let cut = &whole[..whole.rfind("{\"entity\"").unwrap() + 20];
    assert_eq!(salvage::salvage(cut.as_bytes()).elements.len(), 9_999);
    assert_eq!(salvage::salvage(body.as_bytes()).elements.len(), 10_000);
    let mut g = c.benchmark_group("salvage");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.bench_function("serde_json_parse_whole", |b| {
        b.iter(|| serde_json::from_slice::<Value>(black_box(body.as_bytes())).unwrap());
    });
    g.bench_function("salvage_whole", |b| {
        b.iter(|| salvage::salvage(black_box(body.as_bytes())));
    });
    g.bench_function("salvage_cut", |b| {
        b.iter(|| salvage::salvage(black_box(cut.as_bytes())));
    });
    g.bench_function("outline_cut", |b| {
        b.iter(|| json::outline(black_box(cut.as_bytes()), &js));
    });
    g.bench_function("analyse_cut", |b| b.iter(|| json::analyse(black_box(cut), &js)));
    // The peer: jiter's partial mode parses the cut array too (from its
    // `[`: it reads no fence), and makes the cut element a value of its
    // own, which salvage never does: 10,000 where salvage keeps 9,999.
    let bare_cut = &cut[cut.find('[').unwrap()..];
    assert_eq!(jiter_len(bare_cut), 10_000);
    g.bench_function("jiter_partial_cut", |b| {
        b.iter(|| {
            jiter::JsonValue::parse_with_config(
                black_box(bare_cut.as_bytes()),
                false,
                jiter::PartialMode::TrailingStrings,
            )
        });
    });
    g.finish();
    // Ten times the size (13 MB): the issue measured jiter further ahead there.
    let big = array_text(100_000);
    let big_cut = &big[big.find('[').unwrap()..big.rfind("{\"entity\"").unwrap() + 20];
    assert_eq!(salvage::salvage(big_cut.as_bytes()).elements.len(), 99_999);
    assert_eq!(jiter_len(big_cut), 100_000);
    let mut g = c.benchmark_group("salvage_big");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(big_cut.len() as u64));
    g.bench_function("salvage_cut", |b| {
        b.iter(|| salvage::salvage(black_box(big_cut.as_bytes())));
    });
    g.bench_function("jiter_partial_cut", |b| {
        b.iter(|| {
            jiter::JsonValue::parse_with_config(
                black_box(big_cut.as_bytes()),
                false,
                jiter::PartialMode::TrailingStrings,
            )
        });
    });
    g.finish();
}

/// The elements jiter's partial mode gives for a cut array.
fn jiter_len(cut: &str) -> usize {
    match jiter::JsonValue::parse_with_config(cut.as_bytes(), false, jiter::PartialMode::TrailingStrings) {
        Ok(jiter::JsonValue::Array(a)) => a.len(),
        other => panic!("jiter did not read the cut array: {other:?}"),
    }
}

criterion_group!(benches, jsonl_validate, sweep_benches, stream_benches, salvage_benches);
criterion_main!(benches);
