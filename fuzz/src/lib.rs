//! The checks behind cutline's fuzz targets, shared by the libFuzzer
//! binaries (`fuzz_targets/`, feature `libfuzzer`, run by `scripts/fuzz.sh`)
//! and by the seed replay in this crate's tests (stable toolchain, no
//! libFuzzer): every function panics when an invariant breaks.
//!
//! - [`jsonl`]: the JSONL analysis never panics; its counts, items and line
//!   outcomes agree; every kept item is what `serde_json` makes of its line.
//! - [`salvage`]: array salvage never panics, and never yields an element
//!   that is not a complete element of the input: each element's span lies
//!   in the text, spans are in order and disjoint, and the bytes of the span
//!   parse to exactly the element's value.
//! - [`stream`]: the streaming analysers, fed the text in arbitrary chunks
//!   (sizes taken from the first bytes of the input), end with exactly the
//!   one-shot analyses, for JSONL and JSON, with and without a schema.
//! - [`config`]: the prompt config loaders (cutline TOML, TrustGraph JSON
//!   prompt and bundle) never panic, and a loaded prompt renders (or fails
//!   cleanly) within its fuel.

// Every check panics by design: that is how a fuzz target reports.
#![allow(clippy::missing_panics_doc, reason = "every check panics by design: that is how a fuzz target reports")]

use std::sync::OnceLock;

use cutline::output::json::{self as json_out, JsonSchemas};
use cutline::output::jsonl::{self, LineStatus};
use cutline::output::salvage;
use cutline::output::schema::CompiledSchema;
use cutline::output::stream::{JsonStream, JsonlStream};
use serde_json::Value;

/// The per-object schema the extraction fixtures use.
const ITEM_SCHEMA: &str = include_str!("../../tests/fixtures/cli/def-item.schema.json");

fn item_schema() -> &'static (Value, CompiledSchema, JsonSchemas) {
    static S: OnceLock<(Value, CompiledSchema, JsonSchemas)> = OnceLock::new();
    S.get_or_init(|| {
        let v: Value = serde_json::from_str(ITEM_SCHEMA).expect("schema JSON");
        let compiled = CompiledSchema::compile(&v).expect("schema compiles");
        let array = serde_json::json!({"type": "array", "items": v});
        let schemas = JsonSchemas::compile(Some(&array)).expect("array schema compiles");
        (v, compiled, schemas)
    })
}

fn no_schemas() -> &'static JsonSchemas {
    static S: OnceLock<JsonSchemas> = OnceLock::new();
    S.get_or_init(|| JsonSchemas::compile(None).expect("no schema"))
}

/// JSONL analysis invariants.
pub fn jsonl(data: &[u8]) {
    let (_, schema, _) = item_schema();
    for s in [None, Some(schema)] {
        let a = jsonl::analyse(data, s);
        assert_eq!(a.items.len(), a.counts.ok, "items vs counts");
        let mut counts = jsonl::LineCounts::default();
        let mut next_item = 0;
        let mut last_line = 0;
        for l in &a.lines {
            counts.add(&l.status);
            assert!(l.line > last_line, "line numbers increase: {:?}", a.lines);
            last_line = l.line;
            if let LineStatus::Ok { item } = l.status {
                assert_eq!(item, next_item, "items are numbered in order");
                next_item += 1;
            }
        }
        assert_eq!(counts, a.counts, "counts match the outcomes");
        // Each line of the text is judged once at most.
        let n_lines = data.split(|&b| b == b'\n').count();
        assert!(
            a.lines.len() <= n_lines,
            "{} outcomes for {n_lines} lines",
            a.lines.len()
        );
        // Without a schema, every kept item is a JSON value some line holds.
        if s.is_none() {
            for item in &a.items {
                let text = serde_json::to_string(item).expect("serialise");
                let back: Value = serde_json::from_str(&text).expect("reparse");
                assert_eq!(&back, item);
            }
        }
    }
}

/// Array salvage invariants: only complete elements of the input.
pub fn salvage(data: &[u8]) {
    let salvage::Salvaged { elements, broken, stop } = salvage::salvage(data);
    let mut end = 0;
    let mut known = 0;
    for el in &elements {
        assert!(el.span.start >= end, "spans in order and disjoint: {:?}", el.span);
        assert!(el.span.end <= data.len(), "span inside the text");
        assert!(
            el.known_at >= el.span.end.max(known) && el.known_at <= data.len(),
            "known_at {} after the element {:?} and the one before it, inside the text",
            el.known_at,
            el.span
        );
        end = el.span.end;
        known = el.known_at;
        let bytes = &data[el.span.clone()];
        let parsed: Value = serde_json::from_slice(bytes)
            .unwrap_or_else(|e| panic!("element {:?} is not a complete value: {e}", el.span));
        assert_eq!(parsed, el.value, "the element is exactly its bytes");
    }
    if let Some(s) = stop {
        assert!(s.offset <= data.len(), "stop offset inside the text");
    }
    let mut from = 0;
    for b in &broken {
        assert!(
            b.span.start >= from && b.span.end <= data.len() && b.at >= b.span.start,
            "broken spans in order: {b:?}"
        );
        from = b.span.end;
    }
    // The prefix up to the last element's `known_at` keeps exactly the
    // elements known by then.
    if let Some(last) = elements.last() {
        let prefix = salvage::salvage(&data[..last.known_at]).elements;
        assert_eq!(prefix, elements, "salvage of the prefix up to known_at");
    }
    // The resumable scanner fed everything at once agrees (what it keeps
    // at the end of input included).
    let mut scanner = salvage::ArrayScanner::new();
    let mut again = Vec::new();
    scanner.feed(data, &mut again);
    scanner.finish(data, &mut |e| again.push(e));
    assert_eq!(again, elements);
}

/// Chunk sizes from the first (up to 8) bytes; the rest is the text.
fn split_control(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let n = data.len().min(8);
    let sizes: Vec<usize> = data[..n].iter().map(|&b| usize::from(b % 17) + 1).collect();
    (sizes, &data[n..])
}

fn chunks<'a>(text: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < text.len() {
        let n = if sizes.is_empty() {
            text.len()
        } else {
            sizes[i % sizes.len()]
        };
        let end = (at + n).min(text.len());
        out.push(&text[at..end]);
        at = end;
        i += 1;
    }
    out
}

/// Streaming equals one-shot, under arbitrary chunking.
pub fn stream(data: &[u8]) {
    let (sizes, text) = split_control(data);
    let parts = chunks(text, &sizes);
    let (_, schema, array_schemas) = item_schema();
    for s in [None, Some(schema)] {
        let one = jsonl::analyse(text, s);
        let mut st = JsonlStream::new(s);
        let mut out = Vec::new();
        for p in &parts {
            st.feed(p, &mut out);
        }
        let streamed = st.finish(&mut out);
        assert_eq!(streamed, one, "JSONL: streaming differs from one-shot");
        assert_eq!(out.len(), one.lines.len(), "one completion per line");
    }
    for schemas in [no_schemas(), array_schemas] {
        let one = json_out::analyse(&String::from_utf8_lossy(text), schemas);
        let mut st = JsonStream::new(schemas);
        let mut out = Vec::new();
        for p in &parts {
            st.feed(p, &mut out);
        }
        let streamed = st.finish(&mut out);
        assert_eq!(streamed, one, "JSON: streaming differs from one-shot");
    }
}

/// Config loaders: never a panic, and rendering stays within its fuel.
pub fn config(data: &[u8]) {
    for label in ["fuzz.toml", "fuzz.json"] {
        if let Ok((prompts, _warnings)) = cutline::prompt::load_bytes(label, data) {
            for p in prompts {
                let vars = cutline::prompt::input_vars(&p, None).unwrap_or_default();
                let _ = cutline::prompt::render(&p, &serde_json::Map::new(), &vars);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Seed replay on a stable toolchain: every seed of every target (the
    //! fixtures, the committed crashes in `regressions/<target>/`, plus
    //! `corpus/<target>/` and `artifacts/<target>/` when cargo-fuzz has
    //! filled them) as is, and bounded deterministic mutations of each
    //! fixture seed: every prefix cut at a stride, byte flips, insertions,
    //! deletions, splices.

    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.map_while(Result::ok).map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                files_under(&p, out);
            } else {
                out.push(p);
            }
        }
    }

    /// Model-output seeds: the response fixtures.
    fn output_seeds() -> Vec<Vec<u8>> {
        let mut files = Vec::new();
        files_under(&root().join("tests/fixtures/cli"), &mut files);
        let mut seeds: Vec<Vec<u8>> = files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl" || e == "json"))
            .filter_map(|p| std::fs::read(p).ok())
            .collect();
        seeds.extend(
            [
                "```json\n[{\"entity\": \"a\", \"definition\": \"b\"},\n{\"entity\": \"c\"",
                "```jsonl\n{\"entity\": \"a\", \"definition\": \"b\"}\n```",
                "{\"items\": [1, 2, [3, {\"x\": \"]\"}], \"s\\\"\"]}",
                "[1, 2, 3",
                "[{\"a\": 1}, {\"a\": 2},, {\"a\": 3}]",
                "```json {\"entity\": \"x\", \"definition\": \"y\"}```",
                "  \u{a0}{\"entity\": \"日本\", \"definition\": \"語\"}\u{2028}\n{\"e\": 1e999}",
            ]
            .iter()
            .map(|s| s.as_bytes().to_vec()),
        );
        seeds
    }

    /// Config seeds: the bundled and fixture prompts.
    fn config_seeds() -> Vec<Vec<u8>> {
        let mut files = Vec::new();
        files_under(&root().join("tests/fixtures/prompts"), &mut files);
        files_under(&root().join("prompts"), &mut files);
        files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "toml" || e == "json"))
            .filter_map(|p| std::fs::read(p).ok())
            .collect()
    }

    fn corpus(target: &str) -> Vec<Vec<u8>> {
        let mut files = Vec::new();
        files_under(&root().join("fuzz/regressions").join(target), &mut files);
        files_under(&root().join("fuzz/corpus").join(target), &mut files);
        files_under(&root().join("fuzz/artifacts").join(target), &mut files);
        files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
    }

    /// Bounded mutations of one seed.
    fn mutations(seed: &[u8], rng: &mut fastrand::Rng, budget: usize) -> Vec<Vec<u8>> {
        let mut out = vec![seed.to_vec()];
        let stride = (seed.len() / 64).max(1);
        for cut in (0..seed.len()).step_by(stride) {
            out.push(seed[..cut].to_vec());
        }
        for _ in 0..budget {
            let mut m = seed.to_vec();
            if m.is_empty() {
                m.push(rng.u8(..));
            }
            match rng.u8(0..4) {
                0 => {
                    let i = rng.usize(0..m.len());
                    m[i] = rng.u8(..);
                }
                1 => {
                    let i = rng.usize(0..=m.len());
                    let b = *rng.choice(b"[]{}\",:\\\n`\xc3\xa9 0e-".iter()).unwrap();
                    m.insert(i, b);
                }
                2 => {
                    let i = rng.usize(0..m.len());
                    m.remove(i);
                }
                _ => {
                    let a = rng.usize(0..m.len());
                    let b = rng.usize(a..=m.len());
                    let piece = m[a..b].to_vec();
                    let at = rng.usize(0..=m.len());
                    m.splice(at..at, piece);
                }
            }
            out.push(m);
        }
        out
    }

    fn replay(target: &str, seeds: &[Vec<u8>], check: fn(&[u8]), budget: usize) {
        let mut rng = fastrand::Rng::with_seed(6);
        let mut n = 0;
        for seed in seeds {
            for m in mutations(seed, &mut rng, budget) {
                check(&m);
                n += 1;
            }
        }
        // What libFuzzer found (committed regressions, corpus, crashes)
        // runs as is.
        for input in corpus(target) {
            check(&input);
            n += 1;
        }
        assert!(n > 0, "{target}: no seeds");
    }

    #[test]
    fn jsonl_seeds() {
        replay("jsonl", &output_seeds(), super::jsonl, 200);
    }

    #[test]
    fn salvage_seeds() {
        replay("salvage", &output_seeds(), super::salvage, 200);
    }

    #[test]
    fn stream_seeds() {
        let seeds: Vec<Vec<u8>> = output_seeds()
            .into_iter()
            .flat_map(|s| {
                [b"\x00\x01\x02\x03".as_slice(), b"\x03\x07\x0b\x01\x10\x05\x02\x04"]
                    .map(|ctl| [ctl, s.as_slice()].concat())
            })
            .collect();
        replay("stream", &seeds, super::stream, 100);
    }

    #[test]
    fn config_seeds_load_without_panics() {
        replay("config", &config_seeds(), super::config, 30);
    }
}
