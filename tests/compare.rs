//! Comparison and gold scoring on fixed outputs, with exact numbers.

use cutline::compare::{self, Keys, Report, Score};
use cutline::output::schema::CompiledSchema;
use cutline::prompt::ResponseType;
use cutline::prompt::migrate::line_schema;
use cutline::run::Analysis;
use serde_json::{Value, json};

fn definitions_array() -> Value {
    json!({"type": "array", "items": {
        "type": "object",
        "properties": {"entity": {"type": "string", "minLength": 1}, "definition": {"type": "string", "minLength": 1}},
        "required": ["entity", "definition"],
        "additionalProperties": false
    }})
}

fn kg_object() -> Value {
    json!({"type": "object", "properties": {
        "definitions": {"type": "array", "items": {
            "type": "object",
            "properties": {"entity": {"type": "string", "minLength": 1}, "definition": {"type": "string", "minLength": 1}},
            "required": ["entity", "definition"], "additionalProperties": false
        }},
        "relationships": {"type": "array", "items": {
            "type": "object",
            "properties": {"subject": {"type": "string"}, "predicate": {"type": "string"}, "object": {"type": "string"}, "object-entity": {"type": "boolean"}},
            "required": ["subject", "predicate", "object", "object-entity"], "additionalProperties": false
        }}
    }, "required": ["definitions", "relationships"], "additionalProperties": false})
}

fn gold(name: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("prompts/gold/{name}.jsonl"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn analyse(kind: ResponseType, schema: &Value, text: &str) -> Analysis {
    Analysis::of(kind, Some(schema), text, cutline::output::tg::TgPython::default())
}

fn close(a: Option<f64>, b: f64) {
    let a = a.expect("a value");
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

fn check(s: &Score, tp: usize, predicted: usize, gold: usize, p: f64, r: f64, f1: f64) {
    assert_eq!((s.true_positives, s.predicted, s.gold), (tp, predicted, gold));
    close(s.precision, p);
    close(s.recall, r);
    close(s.f1, f1);
}

const A_JSON: &str = r#"[
  {"entity": "Photosynthesis", "definition": "x"},
  {"entity": "chloroplasts", "definition": "y"},
  {"entity": " glucose", "definition": "z"},
  {"entity": "red  algae", "definition": "w"}
]"#;

const B_JSONL: &str = "{\"entity\": \"photosynthesis  \", \"definition\": \"x\"}\n\
{\"entity\": \"Stomata\", \"definition\": \"t\"}\n\
{\"entity\": 5, \"definition\": \"u\"}\n\
{\"entity\": \"glucose\", \"defin";

fn plain_report(keys: &Keys, with_gold: bool) -> Report {
    let schema = definitions_array();
    let per_line = line_schema(&schema).unwrap();
    let a = analyse(ResponseType::Json, &schema, A_JSON);
    let b = analyse(ResponseType::Jsonl, &per_line, B_JSONL);
    let g = gold("extract-definitions");
    compare::compare(
        compare::side("a", &a, false),
        compare::side("b", &b, false),
        keys,
        with_gold.then_some(g.as_slice()),
    )
}

#[test]
fn json_against_jsonl_with_a_key_and_gold() {
    let keys = Keys::of(line_schema(&definitions_array()).as_ref(), &["entity".to_owned()]);
    let r = plain_report(&keys, true);
    assert_eq!((r.a.kept, r.a.judged, r.a.valid), (4, 4, 4));
    close(r.a.valid_rate, 1.0);
    assert!(!r.a.truncated);
    assert_eq!(r.a.lost_to_truncation, 0);
    assert_eq!((r.b.kept, r.b.judged, r.b.valid), (2, 4, 2));
    close(r.b.valid_rate, 0.5);
    assert!(r.b.truncated);
    assert_eq!(r.b.lost_to_truncation, 1);

    assert_eq!(r.types.len(), 1);
    let t = &r.types[0];
    assert_eq!(t.ty, "item");
    assert_eq!(t.key, vec!["entity"]);
    assert_eq!((t.a_items, t.b_items), (4, 2));
    close(t.a_valid_rate, 1.0);
    close(t.b_valid_rate, 0.5);
    assert_eq!((t.both, t.only_a, t.only_b), (1, 3, 1));
    assert_eq!(t.only_a_keys, vec!["chloroplasts", "glucose", "red algae"]);
    assert_eq!(t.only_b_keys, vec!["stomata"]);
    let [ga, gb] = t.gold.as_ref().unwrap();
    check(ga, 3, 4, 6, 0.75, 0.5, 0.6);
    check(gb, 2, 2, 6, 1.0, 1.0 / 3.0, 0.5);
    assert_eq!((r.total.both, r.total.only_a, r.total.only_b), (1, 3, 1));
    let [ta, tb] = r.total.gold.as_ref().unwrap();
    check(ta, 3, 4, 6, 0.75, 0.5, 0.6);
    check(tb, 2, 2, 6, 1.0, 1.0 / 3.0, 0.5);
}

#[test]
fn default_key_is_every_required_string_field() {
    let keys = Keys::of(line_schema(&definitions_array()).as_ref(), &[]);
    assert_eq!(keys.default, vec!["entity", "definition"]);
    let r = plain_report(&keys, true);
    let t = &r.types[0];
    assert_eq!((t.both, t.only_a, t.only_b), (1, 3, 1));
    assert_eq!(t.only_b_keys, vec!["stomata | t"]);
    // No definition matches the gold wording: nothing is a true positive.
    let [ga, gb] = t.gold.as_ref().unwrap();
    check(ga, 0, 4, 6, 0.0, 0.0, 0.0);
    check(gb, 0, 2, 6, 0.0, 0.0, 0.0);
}

#[test]
fn a_cut_json_array_keeps_nothing_and_loses_its_salvage() {
    let schema = definitions_array();
    let cut = r#"[{"entity": "a", "definition": "b"}, {"entity": "c", "definition": "d"}, {"ent"#;
    let a = analyse(ResponseType::Json, &schema, cut);
    let s = compare::side("a", &a, true);
    assert_eq!((s.kept, s.judged, s.valid, s.lost_to_truncation), (0, 2, 2, 2));
    assert!(s.truncated);
    close(s.valid_rate, 1.0);
}

const KG_JSON: &str = r#"{"definitions": [{"entity": "Heart", "definition": "a muscle that pumps blood through the body"}],
 "relationships": [{"subject": "heart", "predicate": "pumps", "object": "blood", "object-entity": true}]}"#;

const KG_JSONL: &str = r#"{"type": "definition", "entity": "heart", "definition": "A muscle that pumps  blood through the body"}
{"type": "relationship", "subject": "veins", "predicate": "carry blood to", "object": "heart", "object-entity": true}
"#;

#[test]
fn union_items_are_matched_per_type_against_gold() {
    let schema = kg_object();
    let per_line = line_schema(&schema).unwrap();
    let keys = Keys::of(Some(&per_line), &[]);
    assert_eq!(keys.per_type["definition"], vec!["entity", "definition"]);
    assert_eq!(keys.per_type["relationship"], vec!["subject", "predicate", "object"]);
    let a = analyse(ResponseType::Json, &schema, KG_JSON);
    let b = analyse(ResponseType::Jsonl, &per_line, KG_JSONL);
    let g = gold("agent-kg-extract");
    let r = compare::compare(
        compare::side("a", &a, false),
        compare::side("b", &b, false),
        &keys,
        Some(&g),
    );
    assert_eq!((r.a.kept, r.b.kept), (2, 2));
    let types: Vec<(&str, usize, usize, usize)> = r
        .types
        .iter()
        .map(|t| (t.ty.as_str(), t.both, t.only_a, t.only_b))
        .collect();
    assert_eq!(types, vec![("definition", 1, 0, 0), ("relationship", 0, 1, 1)]);
    for t in &r.types {
        close(t.a_valid_rate, 1.0);
        close(t.b_valid_rate, 1.0);
    }
    let [da, db] = r.types[0].gold.as_ref().unwrap();
    check(da, 1, 1, 5, 1.0, 0.2, 2.0 * 0.2 / 1.2);
    check(db, 1, 1, 5, 1.0, 0.2, 2.0 * 0.2 / 1.2);
    let [ra, rb] = r.types[1].gold.as_ref().unwrap();
    check(ra, 1, 1, 8, 1.0, 0.125, 2.0 * 0.125 / 1.125);
    check(rb, 1, 1, 8, 1.0, 0.125, 2.0 * 0.125 / 1.125);
    assert_eq!((r.total.both, r.total.only_a, r.total.only_b), (1, 1, 1));
    let [ta, tb] = r.total.gold.as_ref().unwrap();
    check(ta, 2, 2, 13, 1.0, 2.0 / 13.0, 4.0 / 15.0);
    check(tb, 2, 2, 13, 1.0, 2.0 / 13.0, 4.0 / 15.0);
}

#[test]
fn gold_sets_are_valid_lines_of_the_twins() {
    let per_line = |s: Value| CompiledSchema::compile(&line_schema(&s).unwrap()).unwrap();
    let defs = per_line(definitions_array());
    for item in gold("extract-definitions") {
        assert!(defs.is_valid(&item), "{item}");
    }
    let kg = per_line(kg_object());
    for item in gold("agent-kg-extract") {
        assert!(kg.is_valid(&item), "{item}");
    }
}

#[test]
fn normalisation() {
    assert_eq!(compare::normalise("  Red \t Blood\nCells "), "red blood cells");
}

#[test]
fn cli_compares_response_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&a, A_JSON).unwrap();
    std::fs::write(&b, B_JSONL).unwrap();
    let prompts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let out = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .args(["--prompts", prompts.to_str().unwrap(), "--output", "json", "compare"])
        .arg(&a)
        .arg(&b)
        .args([
            "--prompt-a",
            "extract-definitions",
            "--prompt-b",
            "extract-definitions-jsonl",
        ])
        .args(["--key", "entity", "--gold"])
        .arg(prompts.join("gold/extract-definitions.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["ok"], json!(true));
    let data = &env["data"];
    assert_eq!(data["total"]["both"], json!(1));
    assert_eq!(data["total"]["only_a"], json!(3));
    assert_eq!(data["b"]["truncated"], json!(true));
    assert_eq!(data["types"][0]["gold"][0]["true_positives"], json!(3));
    // Why gold items were lost. A ended on its own: its misses were never
    // produced, "red algae" is invented. B was cut: what A (uncut, same
    // input) has is the limit's loss; the rest B never produced.
    let counts = |side: &str| {
        let t = &data["loss"][side]["total"];
        [
            "gold",
            "found",
            "cut_by_limit",
            "schema_rejected",
            "never_produced",
            "invented",
        ]
        .map(|k| t[k].as_u64().unwrap())
    };
    assert_eq!(counts("a"), [6, 3, 0, 0, 3, 1]);
    assert_eq!(counts("b"), [6, 2, 2, 0, 2, 0]);
    let cut: Vec<&Value> = data["loss"]["b"]["missed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["cause"] == "cut_by_limit")
        .map(|m| &m["key"])
        .collect();
    assert_eq!(cut, [&json!("chloroplasts"), &json!("glucose")]);
}

fn run_line(prompt: &Value, response_type: &str, text: &str, finish: &str) -> String {
    let rec = json!({
        "type": "run", "run_id": "r", "started_ms": 1, "prompt_id": prompt["id"],
        "response_type": response_type, "prompt": prompt, "system": "", "rendered": "",
        "variables": {}, "provider": {"name": "t", "kind": "t", "model": "m"},
        "params": {"max_tokens": 64}, "text": text, "pieces": [], "finish": finish,
        "usage": {}, "total_ms": 1, "analysis": {}
    });
    serde_json::to_string(&rec).unwrap()
}

#[test]
fn cli_compares_session_runs() {
    let dir = tempfile::tempdir().unwrap();
    let schema = kg_object();
    let array_prompt = json!({"id": "kg", "prompt": "", "response-type": "json", "schema": schema});
    let line_prompt =
        json!({"id": "kg-jsonl", "prompt": "", "response-type": "jsonl", "schema": line_schema(&schema).unwrap()});
    let cut_json = "{\"definitions\": [{\"entity\": \"heart\", \"definition\": \"a muscle that pumps blood through the body\"}, {\"entity\": \"veins\", \"defi";
    let session = [
        json!({"type": "session", "version": 1, "id": "s1", "created_ms": 1}).to_string(),
        run_line(&array_prompt, "json", cut_json, "length"),
        run_line(&line_prompt, "jsonl", KG_JSONL, "stop"),
    ]
    .join("\n");
    std::fs::write(dir.path().join("s1.jsonl"), session + "\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .args(["--sessions", dir.path().to_str().unwrap(), "--output", "json"])
        .args(["compare", "s1#1", "s1#2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    let data = &env["data"];
    assert_eq!(data["a"]["label"], json!("s1#1"));
    assert_eq!(data["a"]["truncated"], json!(true));
    assert_eq!(data["a"]["kept"], json!(0));
    assert_eq!(data["a"]["lost_to_truncation"], json!(1));
    assert_eq!(data["b"]["truncated"], json!(false));
    assert_eq!(data["b"]["kept"], json!(2));
    assert_eq!(data["total"], json!({"both": 0, "only_a": 0, "only_b": 2}));
    assert_eq!(data["types"][0]["type"], json!("definition"));
    assert_eq!(data["types"][0]["a_valid_rate"], json!(1.0));
    assert_eq!(data["types"][1]["type"], json!("relationship"));
    assert_eq!(data["types"][1]["a_valid_rate"], json!(null));
}

#[test]
fn cli_streams_side_overlap_and_total_records() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&a, A_JSON).unwrap();
    std::fs::write(&b, B_JSONL).unwrap();
    let prompts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let out = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .args(["--prompts", prompts.to_str().unwrap(), "compare"])
        .arg(&a)
        .arg(&b)
        .args([
            "--prompt-a",
            "extract-definitions",
            "--prompt-b",
            "extract-definitions-jsonl",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = records[1..].iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(records[0]["_schema"], json!("cutline.compare/1"));
    assert_eq!(kinds, vec!["side", "side", "overlap", "total"]);
    assert_eq!(records[3]["item_type"], json!("item"));
    assert_eq!(records[3]["key"], json!(["entity", "definition"]));
    assert_eq!(
        records[4],
        json!({"type": "total", "both": 1, "only_a": 3, "only_b": 1})
    );
}
