//! Where cutline's line judge and Python's `json` + `jsonschema` (what
//! TrustGraph runs) agree, and the differences that remain, each stated as
//! the behaviour cutline has. The Python side is the real `jsonschema` in the
//! reference venv (see tests/tg_support).

mod tg_support;

use cutline::output::jsonl::analyse;
use cutline::output::schema::CompiledSchema;
use serde_json::{Value, json};

/// Python's verdict: does `validate(json.loads(line), schema)` pass?
fn python_keeps(line: &str, schema: &Value) -> bool {
    let script = format!(
        "import json,sys\nfrom jsonschema import validate\ntry:\n    validate(instance=json.loads({line:?}), schema=json.loads({schema:?}))\n    print('true')\nexcept Exception:\n    print('false')\n",
        schema = schema.to_string()
    );
    let out = std::process::Command::new(tg_support::python())
        .args(["-c", &script])
        .output()
        .expect("python");
    String::from_utf8_lossy(&out.stdout).trim() == "true"
}

fn cutline_keeps(line: &str, schema: &Value) -> bool {
    let s = CompiledSchema::compile(schema).expect("compiles");
    analyse(line.as_bytes(), Some(&s)).items.len() == 1
}

#[test]
fn unicode_word_and_digit_classes_differ() {
    // Python's `re` reads \w and \d as Unicode classes; cutline's validator
    // follows ECMA-262, where they are ASCII: such a line is kept by
    // TrustGraph and rejected by cutline.
    for (line, schema) in [
        ("\"caf\u{e9}\"", json!({"pattern": "^\\w+$"})),
        ("\"\u{663}\"", json!({"pattern": "^\\d$"})),
    ] {
        assert!(python_keeps(line, &schema), "{line}");
        assert!(!cutline_keeps(line, &schema), "{line}");
    }
}

#[test]
fn multiple_of_float_rounding_differs() {
    // Python divides in binary floating point (0.07 / 0.01 = 7.000000000000001)
    // and rejects; cutline's own reading (`compile`) checks the decimal value
    // and keeps it. TrustGraph's verdicts (`compile_python`) follow Python
    // (tests/tg_round3.rs).
    let schema = json!({"multipleOf": 0.01});
    assert!(!python_keeps("0.07", &schema));
    assert!(cutline_keeps("0.07", &schema));
}

#[test]
fn huge_numbers_overflow_in_python_only() {
    // Python reads 1e400 as inf: a number, above every maximum. cutline keeps
    // the exact number (arbitrary precision): a number too, and compared as
    // written, so the verdicts agree here.
    assert!(python_keeps("1e400", &json!({"type": "number"})));
    assert!(cutline_keeps("1e400", &json!({"type": "number"})));
    assert!(!python_keeps("1e400", &json!({"maximum": 10})));
    assert!(!cutline_keeps("1e400", &json!({"maximum": 10})));
}

#[test]
fn non_finite_numbers_are_numbers_for_the_schema() {
    let schema = json!({"type": "object", "properties": {"c": {"type": "number"}}, "required": ["c"]});
    for line in ["{\"c\": NaN}", "{\"c\": Infinity}", "{\"c\": -Infinity}"] {
        assert!(python_keeps(line, &schema), "{line}");
        assert!(cutline_keeps(line, &schema), "{line}");
    }
    // Python's NaN passes every bound (comparisons are false), and so it
    // does in cutline; it is not an integer.
    let bounded = json!({"type": "object", "properties": {"c": {"minimum": 1}}});
    assert!(python_keeps("{\"c\": NaN}", &bounded));
    assert!(cutline_keeps("{\"c\": NaN}", &bounded));
    let integer = json!({"type": "object", "properties": {"c": {"type": "integer"}}});
    assert!(!python_keeps("{\"c\": NaN}", &integer));
    assert!(!cutline_keeps("{\"c\": NaN}", &integer));
}
