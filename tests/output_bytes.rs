//! `cutline parse` output pinned byte for byte: JSONL records, the
//! `--output json` envelope and pretty text, for JSONL and JSON responses,
//! with and without a schema. The expected files in
//! `tests/fixtures/output/bytes` were written by the binary before the parse
//! output path stopped building a `serde_json::Value` tree, so this test is
//! what says the fast path prints exactly what the old one did. Only the
//! envelope's `meta.duration_ms` is normalised (to 0).

use std::path::Path;

use assert_cmd::Command;

const DIR: &str = "tests/fixtures/output/bytes";

/// `"duration_ms":N` → `"duration_ms":0`.
fn normalise(out: &[u8]) -> Vec<u8> {
    const KEY: &[u8] = b"\"duration_ms\":";
    let mut res = Vec::with_capacity(out.len());
    let mut i = 0;
    while i < out.len() {
        if out[i..].starts_with(KEY) {
            res.extend_from_slice(KEY);
            res.push(b'0');
            i += KEY.len();
            while i < out.len() && out[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            res.push(out[i]);
            i += 1;
        }
    }
    res
}

#[test]
fn parse_output_is_byte_identical_to_the_pinned_files() {
    let cases = std::fs::read_to_string(Path::new(DIR).join("cases.txt")).expect("cases.txt");
    let mut checked = 0;
    for line in cases.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (name, args) = line.split_once('\t').expect("NAME<TAB>ARGS");
        let expected = std::fs::read(Path::new(DIR).join(format!("{name}.out"))).expect("expected output");
        let out = Command::cargo_bin("cutline")
            .expect("binary")
            .env_remove("CUTLINE_PROMPTS")
            .env_remove("CUTLINE_SESSIONS")
            .args(args.split(' '))
            .output()
            .expect("run");
        assert!(out.status.success(), "{name}: exit {:?}", out.status.code());
        let got = normalise(&out.stdout);
        if got != expected {
            let at = got
                .iter()
                .zip(&expected)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(expected.len()));
            let from = at.saturating_sub(80);
            panic!(
                "{name}: output differs at byte {at} (got {} bytes, expected {}):\n got: {}\nwant: {}",
                got.len(),
                expected.len(),
                String::from_utf8_lossy(&got[from..(at + 80).min(got.len())]),
                String::from_utf8_lossy(&expected[from..(at + 80).min(expected.len())]),
            );
        }
        checked += 1;
    }
    assert!(checked >= 18, "only {checked} cases");
}
