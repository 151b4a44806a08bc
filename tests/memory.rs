//! Memory in proportion (issue 14), measured as the child process's peak
//! RSS with GNU time: a behavioural bound on what a bad input may cost, not
//! a timing.

use std::path::Path;
use std::process::Command;

/// Peak RSS in KiB of `cutline ARGS`, and its stdout; `None` when GNU time
/// is missing (CUTLINE_REQUIRE_TIME makes that a failure, as in CI).
fn peak_kib(args: &[&str]) -> Option<(u64, String)> {
    if !Path::new("/usr/bin/time").exists() {
        assert!(
            std::env::var_os("CUTLINE_REQUIRE_TIME").is_none(),
            "CUTLINE_REQUIRE_TIME is set but /usr/bin/time is missing"
        );
        eprintln!("skipped: /usr/bin/time (GNU time) is not installed");
        return None;
    }
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(env!("CARGO_BIN_EXE_cutline"))
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let kib = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes): "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in: {err}"));
    Some((kib, String::from_utf8(out.stdout).unwrap()))
}

#[test]
fn five_megabytes_of_malformed_toml_cost_under_100_mb() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), "x\n".repeat(2_500_000)).unwrap();
    let Some((kib, stdout)) = peak_kib(&["prompts", "--dir", dir.path().to_str().unwrap(), "--output", "json"]) else {
        return; // skip: GNU time is not installed (peak_kib said so)
    };
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let msg = v["data"]["errors"][0]["message"].as_str().unwrap();
    assert!(
        msg.ends_with("bad.toml:1:2: TOML syntax error: key with no value, expected `=`"),
        "{msg}"
    );
    assert!(kib < 100 * 1024, "peak RSS {kib} KiB for 5 MB of malformed TOML");
}

/// A JSON array of `n` extraction objects, one per line, about 110 bytes each.
fn array_of(n: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::from("[\n");
    for i in 0..n {
        let sep = if i + 1 == n { "\n" } else { ",\n" };
        let _ = write!(
            s,
            "  {{\"entity\": \"term {i}\", \"definition\": \"a definition long enough to look like what a model writes, number {i}\"}}{sep}"
        );
    }
    s.push(']');
    s
}

/// `parse --as json` holds the text and a span per element, never value
/// trees (issue 14: a 300 MB array took 11.8 GB). Peak RSS stays within 4×
/// the input plus what the process costs on a one-element array, for the
/// envelope and the records, for a whole array and a cut one.
#[test]
fn parse_as_json_costs_at_most_four_times_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let text = array_of(150_000);
    let whole = dir.path().join("whole.json");
    let cut = dir.path().join("cut.json");
    let tiny = dir.path().join("tiny.json");
    std::fs::write(&whole, &text).unwrap();
    std::fs::write(&cut, &text[..text.len() - 40]).unwrap();
    std::fs::write(&tiny, array_of(1)).unwrap();
    let arg = |p: &Path| p.to_str().unwrap().to_owned();
    let Some((base, _)) = peak_kib(&["parse", &arg(&tiny), "--as", "json", "--output", "json"]) else {
        return; // skip: GNU time is not installed (peak_kib said so)
    };
    let input_kib = u64::try_from(text.len()).unwrap() / 1024;
    for (file, items) in [(&whole, "150000"), (&cut, "0")] {
        for format in ["json", "jsonl"] {
            let (kib, stdout) = peak_kib(&["parse", &arg(file), "--as", "json", "--output", format]).unwrap();
            assert!(
                kib <= base + 4 * input_kib,
                "{}: peak {kib} KiB for {input_kib} KiB of input (base {base} KiB)",
                file.display()
            );
            let last = stdout.lines().last().unwrap();
            let v: serde_json::Value = serde_json::from_str(last).unwrap();
            let summary = if format == "json" { &v["data"] } else { &v };
            let count = match summary["items"].as_array() {
                Some(items) => items.len().to_string(),
                None => summary["items"].to_string(),
            };
            assert_eq!(count, items, "{format} {}", file.display());
        }
    }
}

/// A closed array the schema rejects costs no more than a valid one: the
/// whole schema only constrains items (and, the second time, a length the
/// array has), so its violations are the invalid elements' own, under their
/// index, and no value tree of the array is built (before, 150k elements
/// took about 9× the input; with `minItems`, about 9× until issue 14's
/// second round).
#[test]
fn a_schema_invalid_array_costs_at_most_four_times_the_input() {
    for bounds in ["", r#", "minItems": 1, "maxItems": 1000000"#] {
        schema_invalid_array_within_four_times(bounds);
    }
}

fn schema_invalid_array_within_four_times(bounds: &str) {
    let dir = tempfile::tempdir().unwrap();
    // Every 10,000th element has no definition.
    let text = array_of(150_000)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 10_000 == 5 {
                l.replace("\"definition\"", "\"note\"")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let file = dir.path().join("invalid.json");
    let tiny = dir.path().join("tiny.json");
    let schema = dir.path().join("schema.json");
    std::fs::write(&file, &text).unwrap();
    std::fs::write(&tiny, array_of(1)).unwrap();
    std::fs::write(
        &schema,
        format!(r#"{{"type": "array", "items": {{"type": "object", "required": ["entity", "definition"]}}{bounds}}}"#),
    )
    .unwrap();
    let arg = |p: &Path| p.to_str().unwrap().to_owned();
    let args = |f: &Path| {
        [
            arg(f),
            "--as".into(),
            "json".into(),
            "--schema".into(),
            arg(&schema),
            "--output".into(),
            "json".into(),
        ]
    };
    let run = |f: &Path| {
        let mut a = vec!["parse".to_owned()];
        a.extend(args(f));
        peak_kib(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let Some((base, _)) = run(&tiny) else {
        return; // skip: GNU time is not installed (peak_kib said so)
    };
    let (kib, stdout) = run(&file).unwrap();
    let input_kib = u64::try_from(text.len()).unwrap() / 1024;
    assert!(
        kib <= base + 4 * input_kib,
        "peak {kib} KiB for {input_kib} KiB of input (base {base} KiB, schema bounds {bounds:?})"
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let d = &v["data"];
    assert_eq!(d["status"], "schema_invalid", "{}", d["status"]);
    assert_eq!(d["items"], serde_json::json!([]));
    let pointers: Vec<&str> = d["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["pointer"].as_str().unwrap())
        .collect();
    // Line 0 is the `[`: element i is on line i + 1.
    let expected: Vec<String> = (0..15).map(|k| format!("/{}/definition", k * 10_000 + 4)).collect();
    assert_eq!(pointers, expected);
}

/// An object of arrays (`{"definitions": […]}`, the shape TrustGraph's
/// prompts ask for) costs what a bare array does: its members' elements
/// are judged as the scan reaches them and the object is never built as
/// one value tree, with no schema and with an object schema it satisfies
/// (before, 150k elements took about 13× the input).
#[test]
fn an_object_of_arrays_costs_at_most_four_times_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let array = array_of(150_000);
    let text = format!("{{\"definitions\": {array}, \"relationships\": []}}");
    let file = dir.path().join("object.json");
    let tiny = dir.path().join("tiny.json");
    let schema = dir.path().join("schema.json");
    std::fs::write(&file, &text).unwrap();
    std::fs::write(&tiny, format!("{{\"definitions\": {}}}", array_of(1))).unwrap();
    std::fs::write(
        &schema,
        r#"{"type": "object", "required": ["definitions"], "additionalProperties": false,
            "properties": {
              "definitions": {"type": "array", "minItems": 1,
                              "items": {"type": "object", "required": ["entity", "definition"]}},
              "relationships": {"type": "array", "items": {"type": "object"}}}}"#,
    )
    .unwrap();
    let input_kib = u64::try_from(text.len()).unwrap() / 1024;
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    for with_schema in [false, true] {
        let run = |f: &Path| {
            let mut a = vec!["parse".to_owned(), path(f), "--as".into(), "json".into()];
            if with_schema {
                a.extend(["--schema".to_owned(), path(&schema)]);
            }
            a.extend(["--output".to_owned(), "json".to_owned()]);
            peak_kib(&a.iter().map(String::as_str).collect::<Vec<_>>())
        };
        let Some((base, _)) = run(&tiny) else {
            return; // skip: GNU time is not installed (peak_kib said so)
        };
        let (kib, stdout) = run(&file).unwrap();
        assert!(
            kib <= base + 4 * input_kib,
            "peak {kib} KiB for {input_kib} KiB of input (base {base} KiB, schema: {with_schema})"
        );
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let d = &v["data"];
        assert_eq!(d["status"], "ok");
        assert_eq!(d["items"].as_array().map(Vec::len), Some(150_000));
        assert_eq!(d["value"]["relationships"], serde_json::json!([]));
        assert_eq!(
            d["value"]["definitions"][149_999]["entity"],
            serde_json::json!("term 149999")
        );
    }
}

/// `sweep` reads its points from the items' steps as it prints them and
/// never holds them (issue 24: a 1.6 MB array took 846 MB, a value tree of
/// every point and of the whole array): peak RSS stays within 4× the input
/// over a one-element array's run, in every output format, and the points
/// are all there.
#[test]
fn sweep_costs_at_most_four_times_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let text = array_of(60_000);
    let file = dir.path().join("array.json");
    let tiny = dir.path().join("tiny.json");
    std::fs::write(&file, &text).unwrap();
    std::fs::write(&tiny, array_of(1)).unwrap();
    let input_kib = u64::try_from(text.len()).unwrap() / 1024;
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    for format in ["json", "jsonl", "pretty"] {
        let run = |f: &Path| peak_kib(&["sweep", &path(f), "--prompt", "extract-definitions", "--output", format]);
        let Some((base, _)) = run(&tiny) else {
            return; // skip: GNU time is not installed (peak_kib said so)
        };
        let (kib, stdout) = run(&file).unwrap();
        assert!(
            kib <= base + 4 * input_kib,
            "{format}: peak {kib} KiB for {input_kib} KiB of input (base {base} KiB)"
        );
        let summary = match format {
            "json" => {
                let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
                let d = v["data"].clone();
                let points = d["points"].as_array().unwrap();
                assert_eq!(points.len() as u64, d["tokens"].as_u64().unwrap() + 1);
                assert_eq!(points.last().unwrap(), &d["final"]);
                d
            }
            "jsonl" => {
                let lines: Vec<&str> = stdout.lines().collect();
                let summary: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
                // The preamble, one point per cut, the summary.
                assert_eq!(lines.len() as u64, summary["tokens"].as_u64().unwrap() + 3);
                summary
            }
            _ => {
                let last = stdout.lines().last().unwrap();
                // The last line closes no array, so JSONL keeps it alone.
                assert!(last.ends_with(" 60000    60000      1"), "{last:?}");
                continue;
            }
        };
        assert_eq!(summary["final"]["json_items"], 60_000);
        assert_eq!(summary["final"]["salvaged_items"], 60_000);
        assert_eq!(summary["final"]["jsonl_items"], 1);
        assert_eq!(summary["final"]["bytes"], text.len());
        assert_eq!(summary["json_complete_at"], summary["tokens"]);
    }
}
