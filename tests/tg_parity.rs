//! The differential test against TrustGraph's released code: a generated
//! corpus of hard `jsonl` responses, strict-JSON responses and templates,
//! judged by cutline's library and by TrustGraph's own `PromptManager`
//! (trustgraph-flow, pinned, in the venv `scripts/setup-tg-reference.sh`
//! makes; driven by `scripts/reference_tg_service.py`). Items, the outcome
//! (kept, or which exception fails the whole response) and the per-line
//! verdicts (the lines TrustGraph logs as invalid JSON, the objects it logs
//! as failing the schema) must be equal. The only differences allowed are
//! in cutline's JSON output: NaN / ±Infinity (and a number Python reads as
//! infinite) written as `null` or as written, a lone surrogate as U+FFFD.
//!
//! Without the venv the test says so and passes, unless `CUTLINE_REQUIRE_TG=1`.
//! `CUTLINE_TG_PYTHON=3.11` picks the 3.11 venv (and runtime).

mod tg_parity_corpus;
mod tg_reference;

use cutline::output::jsonl::{self, LineStatus};
use cutline::output::schema::CompiledSchema;
use cutline::output::tg::{self, TgJson, TgPython};
use cutline::prompt::{PromptConfig, Undefined, render_with};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use tg_parity_corpus::{Case, corpus_json, corpus_jsonl, corpus_templates};
use tg_reference::{reference, runtime, venv_python};

/// A value as compared: numbers by value (Python prints 1.10 as 1.1), the
/// reference's non-finite markers as cutline writes them (allowed difference
/// 1), lone surrogates as U+FFFD (allowed difference 2).
fn norm(v: &Value) -> Value {
    match v {
        Value::Number(n) => {
            let s = n.to_string();
            if s.contains(['.', 'e', 'E']) {
                let f: f64 = s.parse().unwrap_or(f64::NAN);
                if f.is_finite() {
                    json!({"$f": f.to_string()})
                } else {
                    Value::Null
                }
            } else {
                Value::String(format!("int:{}", if s == "-0" { "0" } else { &s }))
            }
        }
        Value::Array(a) => Value::Array(a.iter().map(norm).collect()),
        Value::Object(o) if o.len() == 1 && o.contains_key("$py") => Value::Null,
        Value::Object(o) if o.len() == 1 && o.contains_key("$py_str") => o["$py_str"].clone(),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), norm(v))).collect()),
        other => other.clone(),
    }
}

/// What TrustGraph logs, as cutline predicts it, up to where the response
/// fails: (`parse` line numbers, `schema` object indices).
fn predicted_logs(a: &jsonl::JsonlAnalysis) -> (Vec<usize>, Vec<usize>) {
    let (mut parse, mut schema) = (Vec::new(), Vec::new());
    let mut objects = 0;
    for l in &a.lines {
        let tg_line = l.line.saturating_sub(a.tg_line_offset);
        match &l.status {
            LineStatus::InvalidJson { .. } | LineStatus::Truncated { .. } => parse.push(tg_line),
            LineStatus::SchemaInvalid { .. } => {
                schema.push(objects);
                objects += 1;
            }
            LineStatus::Ok { .. } => objects += 1,
            _ => {}
        }
    }
    if let Some(r) = &a.raises {
        let tg_line = r.line.saturating_sub(a.tg_line_offset);
        if r.during_parse() {
            parse.retain(|&l| l < tg_line);
            schema.clear();
        } else if let Some(object) = r.object {
            schema.retain(|&o| o < object);
        }
    }
    (parse, schema)
}

fn logged(reference: &Value) -> (Vec<usize>, Vec<usize>) {
    let (mut parse, mut schema) = (Vec::new(), Vec::new());
    for entry in reference["logs"].as_array().into_iter().flatten() {
        let msg = entry[1].as_str().unwrap_or_default();
        if let Some(rest) = msg.strip_prefix("JSONL parse error on line ") {
            parse.push(rest.split(':').next().and_then(|n| n.parse().ok()).unwrap_or(0));
        } else if let Some(rest) = msg.strip_prefix("Object ") {
            schema.push(rest.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0));
        }
    }
    (parse, schema)
}

fn jsonl_difference(case: &Case, reference: &Value, py: TgPython) -> Option<String> {
    let schema = case.schema.as_ref().and_then(CompiledSchema::compile_python);
    let a = jsonl::analyse_py(case.response.as_bytes(), schema.as_ref(), py);
    let raised = reference["raised"]["type"].as_str();
    let ours = a.raises.as_ref().map(tg::Raises::exception);
    if raised != ours {
        return Some(format!(
            "outcome: TrustGraph raised {raised:?}, cutline {ours:?} ({:?})",
            reference["raised"]
        ));
    }
    if raised.is_none() {
        // TrustGraph returns [] for no objects without validating.
        let want = norm(&reference["items"]);
        let got = norm(&Value::Array(a.items.clone()));
        if want != got {
            return Some(format!("items: TrustGraph {want}, cutline {got}"));
        }
    }
    let (want, got) = (logged(reference), predicted_logs(&a));
    if want != got {
        return Some(format!(
            "per-line: TrustGraph logs parse {:?} schema {:?}; cutline {:?} {:?}; lines {:?}",
            want.0,
            want.1,
            got.0,
            got.1,
            a.lines.iter().map(|l| (l.line, l.status.word())).collect::<Vec<_>>()
        ));
    }
    None
}

fn json_difference(case: &Case, reference: &Value, py: TgPython) -> Option<String> {
    let schema = case.schema.as_ref().and_then(CompiledSchema::compile_python);
    let got = tg::json_verdict(&case.response, schema.as_ref(), py);
    // What `run` and `parse` report: the analysis carries the same exception.
    let analysis = cutline::run::Analysis::of(
        cutline::prompt::ResponseType::Json,
        case.schema.as_ref(),
        &case.response,
        py,
    );
    let cutline::run::Analysis::Json(a) = analysis else {
        unreachable!()
    };
    let reported = a.raises.as_ref().map(|r| r.exception);
    let verdict_raises = match &got {
        TgJson::Raises(e, _) => Some(*e),
        _ => None,
    };
    if reported != verdict_raises {
        return Some(format!(
            "the analysis reports {reported:?}, the verdict {verdict_raises:?}"
        ));
    }
    let want = match reference["raised"]["type"].as_str() {
        None => {
            return (!matches!(&got, TgJson::Kept(v) if norm(v) == norm(&reference["items"])))
                .then(|| format!("TrustGraph kept {}, cutline {got:?}", reference["items"]));
        }
        Some("RuntimeError")
            if reference["raised"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("JSON parse")) =>
        {
            "parse"
        }
        Some("RuntimeError") => "schema",
        Some(other) => other,
    };
    (got.word() != want).then(|| format!("TrustGraph {want} ({}), cutline {got:?}", reference["raised"]))
}

/// The reference's Python for the chosen runtime, or `None` (the test is
/// skipped, unless `CUTLINE_REQUIRE_TG=1`).
fn python_or_skip(py: TgPython) -> Option<PathBuf> {
    let found = venv_python(py);
    if found.is_none() {
        let msg = format!(
            "the TrustGraph reference venv for Python {} is missing: run scripts/setup-tg-reference.sh{}",
            py.as_str(),
            if py == TgPython::Py311 { " --python 3.11" } else { "" }
        );
        assert!(std::env::var("CUTLINE_REQUIRE_TG").as_deref() != Ok("1"), "{msg}");
        eprintln!("skipped: {msg}");
    }
    found
}

#[test]
fn cutline_judges_responses_as_trustgraphs_prompt_manager() {
    // Values nest 9994 deep: parse, compare and drop them on a deep stack.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(differential)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn differential() {
    let py = runtime();
    let Some(python) = python_or_skip(py) else {
        return;
    };
    let jsonl_cases = corpus_jsonl();
    let strict_cases = corpus_json();
    assert!(jsonl_cases.len() >= 300, "{} jsonl cases", jsonl_cases.len());
    assert!(strict_cases.len() >= 40, "{} json cases", strict_cases.len());
    let input: Vec<Value> = jsonl_cases
        .iter()
        .chain(&strict_cases)
        .map(Case::to_reference)
        .collect();
    if let Some(path) = std::env::var_os("CUTLINE_TG_DUMP") {
        std::fs::write(path, Value::Array(input.clone()).to_string()).expect("dump the cases");
    }
    let started = std::time::Instant::now();
    let out = reference(&python, &input);
    eprintln!("reference: {:.1}s", started.elapsed().as_secs_f64());
    assert_eq!(out.len(), input.len());

    let mut differences = Vec::new();
    let mut raised = 0;
    for (i, case) in jsonl_cases.iter().enumerate() {
        raised += usize::from(!out[i]["raised"].is_null());
        if let Some(d) = jsonl_difference(case, &out[i], py) {
            differences.push(format!("jsonl #{i} {}: {d}", case.name));
        }
    }
    let base = jsonl_cases.len();
    for (i, case) in strict_cases.iter().enumerate() {
        if let Some(d) = json_difference(case, &out[base + i], py) {
            differences.push(format!("json #{i} {}: {d}", case.name));
        }
    }
    eprintln!(
        "TrustGraph {} on Python {}: {} jsonl responses ({raised} fail whole), {} strict-JSON responses; {} differences",
        tg::TRUSTGRAPH_VERSION,
        py.as_str(),
        jsonl_cases.len(),
        strict_cases.len(),
        differences.len()
    );
    let shown: Vec<String> = differences.iter().map(|d| d.chars().take(600).collect()).collect();
    assert!(differences.is_empty(), "{}", shown.join("\n"));
}

fn template_difference(case: &Value, reference: &Value) -> Option<String> {
    let template = case["template"].as_str().unwrap_or_default();
    let ours = match cutline::prompt::ibis_check(template) {
        Err(e) => json!({"load_error": e.message}),
        Ok(()) => {
            let cfg = PromptConfig {
                id: "p".into(),
                template: template.into(),
                ..PromptConfig::default()
            };
            let vars: Map<String, Value> = case["vars"].as_object().cloned().unwrap_or_default();
            match render_with(&cfg, &Map::new(), &vars, Undefined::Ibis) {
                Ok(r) => json!({"rendered": r.prompt}),
                Err(e) => json!({"render_error": e.to_string()}),
            }
        }
    };
    let kind = |v: &Value| v.as_object().and_then(|o| o.keys().next().cloned()).unwrap_or_default();
    let same_reason = || {
        let (theirs, mine) = (reference["load_error"].as_str(), ours["load_error"].as_str());
        theirs.zip(mine).is_some_and(|(t, m)| t.ends_with(m))
    };
    if kind(&ours) != kind(reference)
        || (kind(reference) == "rendered" && ours != *reference)
        || (kind(reference) == "load_error" && !same_reason())
    {
        return Some(format!("TrustGraph {reference}, cutline {ours}"));
    }
    None
}

/// Templates: what ibis refuses at load (with its reason: the message must
/// be ibis's own words), and what it renders, byte for byte.
#[test]
fn cutline_reads_templates_as_ibis() {
    let Some(python) = python_or_skip(runtime()) else {
        return; // skip: the TrustGraph reference venv is missing (python_or_skip said so)
    };
    let templates = corpus_templates();
    assert!(templates.len() >= 30, "{} templates", templates.len());
    let out = reference(&python, &templates);
    let mut differences = Vec::new();
    for (i, case) in templates.iter().enumerate() {
        if let Some(d) = template_difference(case, &out[i]) {
            differences.push(format!("template #{i} {:?}: {d}", case["template"]));
        }
    }
    eprintln!(
        "ibis 3.3.0: {} templates; {} differences",
        templates.len(),
        differences.len()
    );
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A TOML prompt migrated and exported for TrustGraph deploys as a bundle
/// of the whole workspace: TrustGraph's own loader keeps every prompt with
/// the workspace's system (nothing blanked), and the index that TrustGraph
/// 2.8.13 and older read lists the same prompts, each with its key.
#[test]
fn an_exported_workspace_bundle_loads_every_prompt_in_trustgraph() {
    let Some(python) = python_or_skip(runtime()) else {
        return; // skip: python_or_skip said why
    };
    let prompts = tempfile::tempdir().unwrap();
    let system = "You extract facts. Answer tersely.";
    for (id, kind) in [("facts", "json"), ("topics", "text"), ("names", "jsonl")] {
        let schema = match kind {
            "json" => {
                r#"schema = '{"type": "array", "items": {"type": "object", "properties": {"fact": {"type": "string"}}}}'"#
            }
            "jsonl" => r#"schema = '{"type": "object"}'"#,
            _ => "",
        };
        std::fs::write(
            prompts.path().join(format!("{id}.toml")),
            format!(
                "id = \"{id}\"\nresponse-type = \"{kind}\"\nsystem = \"{system}\"\nprompt = \"\"\"\nList the {id} in {{{{text}}}} as a JSON array.\n\"\"\"\n{schema}"
            ),
        )
        .unwrap();
    }
    let out = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .env_remove("CUTLINE_PROMPTS")
        .args([
            "migrate",
            "facts",
            "--format",
            "trustgraph",
            "--output",
            "json",
            "--prompts",
        ])
        .arg(prompts.path())
        .output()
        .unwrap();
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["ok"], true, "{envelope}");
    let bundle: Value = serde_json::from_str(envelope["data"]["trustgraph"].as_str().unwrap()).unwrap();
    let want = ["facts", "names", "topics", "facts-jsonl"];
    // Encoded as TrustGraph's tools encode (Python's `json.dumps`).
    assert_eq!(
        bundle["template-index"], r#"["facts", "names", "topics", "facts-jsonl"]"#,
        "{bundle}"
    );

    let tg = &reference(&python, &[json!({"kind": "load", "config": bundle})])[0];
    let mut kept: Vec<&str> = tg["ids"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    kept.sort_unstable();
    assert_eq!(kept, ["facts", "facts-jsonl", "names", "topics"], "{tg}");
    assert_eq!(tg["system"], system);
    assert_eq!(tg["prompts"]["facts-jsonl"]["response-type"], "jsonl");
    assert_eq!(
        tg["prompts"]["facts-jsonl"]["schema"],
        json!({"type": "object", "properties": {"fact": {"type": "string"}}})
    );

    // TrustGraph 2.8.11 reads only the index: every prompt is there too.
    let old = &reference(
        &python,
        &[json!({"kind": "load", "config": bundle, "release": "2.8.11"})],
    )[0];
    assert_eq!(old["ids"], json!(want), "{old}");
    assert_eq!(old["system"], system);

    let text = bundle.to_string();
    for loader in [cutline::prompt::TgLoader::Prefix, cutline::prompt::TgLoader::Indexed] {
        let (loaded, warnings) = cutline::prompt::load_bytes_for("b.json", text.as_bytes(), loader).unwrap();
        let ids: Vec<&str> = loaded.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, want, "{loader:?}");
        assert!(warnings.is_empty(), "{loader:?}: {warnings:?}");
        assert!(loaded.iter().all(|p| p.system == system), "{loader:?}");
    }
}

/// A config-store bundle of `ids` (each a small text template), with
/// `index` as its `template-index` when given.
fn store_bundle(ids: &[&str], index: Option<&[&str]>) -> Value {
    let mut m = Map::new();
    m.insert("system".into(), json!(json!("Be brief.").to_string()));
    if let Some(ix) = index {
        m.insert("template-index".into(), json!(json!(ix).to_string()));
    }
    for id in ids {
        let entry = json!({"id": id, "prompt": format!("{id}: {{{{text}}}}"), "response-type": "text"});
        m.insert(format!("template.{id}"), json!(entry.to_string()));
    }
    Value::Object(m)
}

/// cutline's two loaders read bundles as the two TrustGraph releases do:
/// `--tg-loader prefix` as 2.11.1 (every `template.<id>` key) and
/// `--tg-loader index` as 2.8.11 (only the index; a listed id without its
/// key fails the whole load, no index loads nothing), both run here.
#[test]
fn the_loaders_read_bundles_as_both_releases_do() {
    use cutline::prompt::TgLoader;
    let Some(python) = python_or_skip(runtime()) else {
        return; // skip: python_or_skip said why
    };
    let cases = [
        ("indexed", store_bundle(&["a", "b", "c"], Some(&["c", "a", "b"]))),
        ("no index", store_bundle(&["a", "b"], None)),
        (
            "index leaves one out",
            store_bundle(&["a", "b", "c"], Some(&["b", "a"])),
        ),
        ("index names a missing key", store_bundle(&["a"], Some(&["a", "z"]))),
    ];
    for (name, bundle) in &cases {
        for (loader, release) in [(TgLoader::Prefix, None), (TgLoader::Indexed, Some("2.8.11"))] {
            let mut case = json!({"kind": "load", "config": bundle});
            if let Some(r) = release {
                case["release"] = json!(r);
            }
            let tg = &reference(&python, &[case])[0];
            let theirs: Option<Vec<String>> = match &tg["ids"] {
                Value::Array(ids) => {
                    let mut v: Vec<String> = ids.iter().filter_map(Value::as_str).map(str::to_owned).collect();
                    v.sort();
                    Some(v)
                }
                _ => None,
            };
            let ours = cutline::prompt::load_bytes_for("b.json", bundle.to_string().as_bytes(), loader)
                .ok()
                .map(|(ps, _)| {
                    let mut v: Vec<String> = ps.into_iter().map(|p| p.id).collect();
                    v.sort();
                    v
                });
            // cutline refuses a bundle that loads nothing; TrustGraph loads
            // zero prompts: the same outcome.
            let theirs = theirs.filter(|v| !v.is_empty());
            assert_eq!(ours, theirs, "{name}, {loader:?}: TrustGraph said {tg}");
        }
    }
}
