//! Issue 34 (TrustGraph parity, round 3): each case states TrustGraph's
//! verdict on Python 3.13 (measured with its released prompt manager) and
//! asserts cutline's. When the reference venv exists
//! (`scripts/setup-tg-reference.sh`), the same cases are also run through
//! TrustGraph's `invoke` and must give the verdict written here, so a
//! wrong expectation cannot hide.

mod tg_reference;

use cutline::output::analysis::{Analysis, ResponseType};
use cutline::output::json::JsonStatus;
use cutline::output::jsonl;
use cutline::output::schema::CompiledSchema;
use cutline::output::tg::TgPython;
use serde_json::{Value, json};
use tg_reference::{reference, tg_word, venv_python};

/// A `json` response under a schema, and the verdict TrustGraph gives it.
struct Case {
    what: &'static str,
    schema: Value,
    response: String,
    /// `kept`, `schema`, `parse` or the exception's name.
    verdict: &'static str,
}

fn case(what: &'static str, schema: Value, response: &str, verdict: &'static str) -> Case {
    Case {
        what,
        schema,
        response: response.to_owned(),
        verdict,
    }
}

/// cutline's verdict on a `json` response, as `parse` and `run` give it.
fn cutline_json(schema: &Value, response: &str) -> &'static str {
    let Analysis::Json(a) = Analysis::of(ResponseType::Json, Some(schema), response, TgPython::Py313) else {
        unreachable!("a json analysis")
    };
    match (&a.raises, a.status) {
        (Some(r), _) => r.exception,
        (None, JsonStatus::Ok) => "kept",
        (None, JsonStatus::InvalidJson) => "parse",
        (None, JsonStatus::SchemaInvalid) => "schema",
    }
}

/// TrustGraph's verdicts on `cases` on Python 3.13 (whose limits the
/// cases name), or `None` without its venv.
fn trustgraph(cases: &[Value]) -> Option<Vec<Value>> {
    Some(reference(&venv_python(TgPython::Py313)?, cases))
}

/// Assert cutline's verdict on every case, and TrustGraph's when it is at hand.
fn check(cases: &[Case]) {
    let got: Vec<(&str, &str)> = cases
        .iter()
        .map(|c| (c.what, cutline_json(&c.schema, &c.response)))
        .collect();
    let want: Vec<(&str, &str)> = cases.iter().map(|c| (c.what, c.verdict)).collect();
    assert_eq!(got, want);
    let input: Vec<Value> = cases
        .iter()
        .map(|c| json!({"kind": "json", "response": c.response, "schema": c.schema}))
        .collect();
    if let Some(out) = trustgraph(&input) {
        let theirs: Vec<(&str, String)> = cases
            .iter()
            .zip(&out)
            .map(|(c, o)| (c.what, tg_word(o).to_owned()))
            .collect();
        let want: Vec<(&str, String)> = cases.iter().map(|c| (c.what, c.verdict.to_owned())).collect();
        assert_eq!(theirs, want, "TrustGraph's own verdicts");
    }
}

#[test]
fn unanchored_pattern_properties_keys_read_word_and_digit_as_unicode() {
    let word = json!({"type": "object", "patternProperties": {"\\w": {"type": "integer"}}});
    let digit = json!({"type": "object", "patternProperties": {"\\d": {"type": "integer"}}});
    let not_digit = json!({"type": "object", "patternProperties": {"\\D": {"type": "integer"}}});
    check(&[
        case("é is a word character", word.clone(), r#"{"é": "x"}"#, "schema"),
        case("- is not", word, r#"{"-": "x"}"#, "kept"),
        case(
            "Arabic-Indic three is a digit",
            digit.clone(),
            r#"{"٣": "x"}"#,
            "schema",
        ),
        case("a is not a digit", digit, r#"{"a": "x"}"#, "kept"),
        case("٣ is not \\D", not_digit, r#"{"٣": "x"}"#, "kept"),
    ]);
}

#[test]
fn content_keywords_are_never_asserted() {
    let draft7 = |k: &str, v: &str| json!({"$schema": "http://json-schema.org/draft-07/schema#", k: v});
    check(&[
        case(
            "contentMediaType json",
            draft7("contentMediaType", "application/json"),
            r#""{x""#,
            "kept",
        ),
        case(
            "contentEncoding base64",
            draft7("contentEncoding", "base64"),
            r#""%%%""#,
            "kept",
        ),
    ]);
}

/// Run `f` on a thread with a stack for values nested 10,000 deep.
fn deep_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(f)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn arrays(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

#[test]
fn strict_json_nests_as_deep_as_python_313() {
    deep_stack(|| {
        let array = json!({"type": "array"});
        let open = |n: usize, tail: &str| format!("{}{tail}", "[".repeat(n));
        check(&[
            case("996 deep", array.clone(), &arrays(996), "kept"),
            case("5000 deep", array.clone(), &arrays(5000), "kept"),
            case("9994 deep", array.clone(), &arrays(9994), "kept"),
            case("9995 deep", array.clone(), &arrays(9995), "RecursionError"),
            // A syntax error right after a complete element: the C scanner
            // makes the JSONDecodeError where it is, 9991 deep and more.
            case("delimiter 9990 deep", array.clone(), &open(9990, "1 x"), "parse"),
            case(
                "delimiter 9991 deep",
                array.clone(),
                &open(9991, "1 x"),
                "RecursionError",
            ),
            case(
                "cut after an element 9991 deep",
                array.clone(),
                &open(9991, "1"),
                "RecursionError",
            ),
            // "Expecting value" is made at the top: only 9994 deep raises.
            case("no value 9993 deep", array.clone(), &open(9993, "x"), "parse"),
            case("no value 9994 deep", array.clone(), &open(9994, "x"), "RecursionError"),
            // A rejected value 9993 deep: repr fails inside validate, which
            // TrustGraph reports as a failed validation.
            case(
                "rejected 9992 deep",
                json!({"type": "object"}),
                &arrays(9992),
                "RecursionError",
            ),
            case("rejected 9993 deep", json!({"type": "object"}), &arrays(9993), "schema"),
        ]);
    });
}

/// A `jsonl` response's verdict: the exception, or how many items it keeps.
fn cutline_jsonl(schema: &Value, response: &str) -> String {
    let compiled = CompiledSchema::compile_python(schema);
    let a = jsonl::analyse_py(response.as_bytes(), compiled.as_ref(), TgPython::Py313);
    match &a.raises {
        Some(r) => r.exception().to_owned(),
        None => format!("{} items", a.items.len()),
    }
}

#[test]
fn jsonl_lines_near_the_limit_fail_or_drop_as_trustgraph_does() {
    deep_stack(|| {
        let object = json!({"type": "object"});
        let open = |n: usize, tail: &str| format!("{}{tail}\n{{}}", "[".repeat(n));
        let cases = [
            (
                "rejected 9992 deep",
                format!("{}\n{{}}", arrays(9992)),
                "RecursionError",
            ),
            ("rejected 9993 deep", format!("{}\n{{}}", arrays(9993)), "1 items"),
            ("rejected 9994 deep", format!("{}\n{{}}", arrays(9994)), "1 items"),
            ("delimiter 9990 deep", open(9990, "1 x"), "1 items"),
            ("delimiter 9991 deep", open(9991, "1 x"), "RecursionError"),
        ];
        let got: Vec<(&str, String)> = cases.iter().map(|(w, r, _)| (*w, cutline_jsonl(&object, r))).collect();
        let want: Vec<(&str, String)> = cases.iter().map(|(w, _, v)| (*w, (*v).to_owned())).collect();
        assert_eq!(got, want);
        let input: Vec<Value> = cases
            .iter()
            .map(|(_, r, _)| json!({"kind": "jsonl", "response": r, "schema": object}))
            .collect();
        if let Some(out) = trustgraph(&input) {
            let theirs: Vec<(&str, String)> = cases
                .iter()
                .zip(&out)
                .map(|((w, ..), o)| match o["raised"]["type"].as_str() {
                    Some(e) => (*w, e.to_owned()),
                    None => (*w, format!("{} items", o["items"].as_array().map_or(0, Vec::len))),
                })
                .collect();
            assert_eq!(theirs, want, "TrustGraph's own verdicts");
        }
    });
}

#[test]
fn a_jsonl_line_with_invalid_utf8_is_read_as_the_text_trustgraph_receives() {
    // TrustGraph gets text: the invalid bytes are U+FFFD by then, and the
    // line parses (as the `json` path reads it too).
    let response = b"{\"entity\": \"caf\xe9\"}\n{\"entity\": \"ok\"}\n";
    let a = jsonl::analyse_py(response, None, TgPython::Py313);
    let words: Vec<&str> = a.lines.iter().map(|l| l.status.word()).collect();
    assert_eq!(words, ["ok", "ok"]);
    assert_eq!(a.items, [json!({"entity": "caf\u{fffd}"}), json!({"entity": "ok"})]);
    assert_eq!(a.lines[0].invalid_utf8, Some(16));
    assert_eq!(a.lines[1].invalid_utf8, None);
    assert_eq!(
        jsonl::utf8_warning("r.jsonl", &a.lines[0]).as_deref(),
        Some("r.jsonl:1:16: invalid UTF-8; replaced with U+FFFD for the JSON parse")
    );
    let lossy = String::from_utf8_lossy(response).into_owned();
    if let Some(out) = trustgraph(&[json!({"kind": "jsonl", "response": lossy})]) {
        assert_eq!(out[0]["items"], json!(a.items), "TrustGraph's own items");
    }
}

#[test]
fn numbers_are_validated_as_the_floats_python_holds() {
    let above_zero = json!({"type": "array", "items": {"exclusiveMinimum": 0}});
    let above_one = json!({"exclusiveMinimum": 1});
    let cent = json!({"multipleOf": 0.01});
    let tenth = json!({"multipleOf": 0.1});
    let two = json!({"multipleOf": 2});
    // 2^-1070 and 3·2^-1070: quotients of 2^1000 past the largest float.
    let tiny = json!({"multipleOf": 8e-323});
    let tiny3 = json!({"multipleOf": 2.37e-322});
    let half = json!({"multipleOf": 0.5});
    check(&[
        case("1e-400 is 0.0", json!({"exclusiveMinimum": 0}), "1e-400", "schema"),
        case("1e-400 as an item", above_zero, "[1, 1e-400]", "schema"),
        case(
            "1.00000000000000000001 is 1.0",
            above_one,
            "1.00000000000000000001",
            "schema",
        ),
        case(
            "a bound is a float too",
            serde_json::from_str(r#"{"exclusiveMaximum": 0.30000000000000000001}"#).expect("a schema"),
            "0.3",
            "schema",
        ),
        case("0.07 / 0.01", cent.clone(), "0.07", "schema"),
        case("0.5 / 0.01", cent.clone(), "0.5", "kept"),
        case("7 / 0.01", cent, "7", "kept"),
        case("0.3 / 0.1", tenth.clone(), "0.3", "schema"),
        case("0.5 / 0.1", tenth, "0.5", "kept"),
        case("4.5 / 2", two.clone(), "4.5", "schema"),
        case("10.0 / 2", two.clone(), "10.0", "kept"),
        case("exact big integer / 2", two, "123456789012345678901234567890", "kept"),
        case(
            "quotient overflows: exact",
            tiny.clone(),
            "1.0715086071862673e+301",
            "kept",
        ),
        case(
            "quotient overflows: odd part",
            tiny3,
            "1.0715086071862673e+301",
            "schema",
        ),
        case(
            "integer too big for a float",
            half,
            &format!("1{}", "0".repeat(400)),
            "schema",
        ),
        case("NaN", json!({"multipleOf": 1}), "NaN", "schema"),
    ]);
}

#[test]
fn a_schema_file_only_python_refuses_rejects_every_line_with_a_warning() {
    // TrustGraph loads the prompt; `validate` raises SchemaError on every
    // line (Python's `re` has no `\p`), so the answer yields 0 items.
    let dir = std::env::temp_dir().join(format!("cutline-round3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let schema = dir.join("s.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"a": {"pattern": "\\p{L}"}}}"#,
    )
    .expect("schema");
    let answer = dir.join("r.jsonl");
    std::fs::write(&answer, "{\"a\": \"x\"}\n{\"b\": 1}\n").expect("answer");
    let out = assert_cmd::Command::cargo_bin("cutline")
        .expect("binary")
        .arg("parse")
        .arg(&answer)
        .args(["--as", "jsonl", "--output", "json", "--schema"])
        .arg(&schema)
        .output()
        .expect("run");
    let env: Value = serde_json::from_slice(&out.stdout).expect("envelope");
    assert_eq!(out.status.code(), Some(0), "{env}");
    assert_eq!(env["data"]["items"], json!([]));
    assert_eq!(env["data"]["counts"]["schema_invalid"], 2);
    let warning = env["warnings"][0].as_str().unwrap_or_default();
    assert_eq!(
        warning,
        format!(
            "{}: schema does not compile at /properties/a/pattern: Python's re refuses the pattern: bad escape \\p; \
             every value is rejected, as TrustGraph rejects them",
            schema.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

const D2019: &str = "https://json-schema.org/draft/2019-09/schema";
const D3: &str = "http://json-schema.org/draft-03/schema#";

#[test]
fn unevaluated_properties_beside_additional_properties_in_2019_09() {
    // Python's 2019-09 `unevaluatedProperties` does not count what a
    // schema-valued `additionalProperties` evaluated (2020-12 does).
    let with = |additional: Value, draft: Option<&str>| {
        let mut s = json!({"type": "object", "additionalProperties": additional, "unevaluatedProperties": false});
        if let Some(d) = draft {
            s["$schema"] = json!(d);
        }
        s
    };
    check(&[
        case(
            "2019-09, schema",
            with(json!({"type": "string"}), Some(D2019)),
            r#"{"a": "x"}"#,
            "schema",
        ),
        case(
            "2019-09, a property named type",
            with(json!({"type": "string"}), Some(D2019)),
            r#"{"type": "x"}"#,
            "kept",
        ),
        case(
            "2019-09, still validated",
            with(json!({"type": "string"}), Some(D2019)),
            r#"{"type": 1}"#,
            "schema",
        ),
        case("2019-09, true", with(json!(true), Some(D2019)), r#"{"a": "x"}"#, "kept"),
        case(
            "2020-12, schema",
            with(json!({"type": "string"}), None),
            r#"{"a": "x"}"#,
            "kept",
        ),
        case(
            "2019-09, properties",
            json!({"$schema": D2019, "properties": {"a": {}}, "unevaluatedProperties": false}),
            r#"{"a": "x"}"#,
            "kept",
        ),
    ]);
}

#[test]
fn draft_3_keywords_as_python_reads_them() {
    let d3 = |mut s: Value| {
        s["$schema"] = json!(D3);
        s
    };
    let union = d3(json!({"type": ["string", {"type": "integer", "minimum": 5}]}));
    check(&[
        case("disallow a type", d3(json!({"disallow": "string"})), r#""x""#, "schema"),
        case("disallow another", d3(json!({"disallow": "string"})), "1", "kept"),
        case(
            "disallow a schema",
            d3(json!({"disallow": [{"type": "integer"}]})),
            "1",
            "schema",
        ),
        case("a schema in a type union", union.clone(), "7", "kept"),
        // Python fails on it (TypeError: unhashable dict), caught as a
        // failed validation.
        case("no member of a type union", union, "3", "schema"),
        case(
            "a string dependency",
            d3(json!({"dependencies": {"a": "b"}})),
            r#"{"a": 1}"#,
            "schema",
        ),
        case(
            "a string dependency met",
            d3(json!({"dependencies": {"a": "b"}})),
            r#"{"a": 1, "b": 2}"#,
            "kept",
        ),
        case("items: []", d3(json!({"items": []})), "[1, 2]", "kept"),
        case(
            "items: [] closed",
            d3(json!({"items": [], "additionalItems": false})),
            "[1]",
            "schema",
        ),
    ]);
}

#[test]
fn a_ref_to_another_drafts_metaschema_resolves_from_the_bundled_copies() {
    let to = |uri: &str| json!({"$ref": uri});
    check(&[
        case(
            "draft 7",
            to("http://json-schema.org/draft-07/schema#"),
            r#"{"type": "string"}"#,
            "kept",
        ),
        case(
            "draft 7, bad",
            to("http://json-schema.org/draft-07/schema#"),
            r#"{"type": 5}"#,
            "schema",
        ),
        case(
            "draft 6",
            to("http://json-schema.org/draft-06/schema#"),
            r#"{"type": "string"}"#,
            "kept",
        ),
        case(
            "draft 4",
            to("http://json-schema.org/draft-04/schema#"),
            r#"{"type": "string"}"#,
            "kept",
        ),
        case(
            "draft 4, bad",
            to("http://json-schema.org/draft-04/schema#"),
            r#"{"minimum": "x"}"#,
            "schema",
        ),
        case(
            "draft 3",
            to("http://json-schema.org/draft-03/schema#"),
            r#"{"type": "string"}"#,
            "kept",
        ),
        case(
            "draft 3, bad",
            to("http://json-schema.org/draft-03/schema#"),
            r#"{"type": 5}"#,
            "schema",
        ),
        case("2019-09", to(D2019), r#"{"type": "string"}"#, "kept"),
        case("2019-09, bad", to(D2019), r#"{"type": 5}"#, "schema"),
        case(
            "2020-12",
            to("https://json-schema.org/draft/2020-12/schema"),
            r#"{"type": "string"}"#,
            "kept",
        ),
    ]);
}

#[test]
fn a_schema_that_needs_a_remote_document_says_so_and_is_never_fetched() {
    let schema = json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/defs.json#/a"}}});
    let compiled = CompiledSchema::compile_python(&schema).expect("truthy");
    let broken = compiled.broken().expect("not compiled");
    assert_eq!(broken.remote(), Some("https://example.com/defs.json"));
    let errors = compiled.validate(&json!({"a": 1})).expect_err("rejected");
    assert_eq!(
        errors[0].message,
        "rejected whatever it is: the schema needs https://example.com/defs.json, which cutline never fetches; \
         TrustGraph fetches it and validates against it, so its verdict may differ (schema does not compile at /: \
         needs the remote document https://example.com/defs.json, which cutline never fetches (TrustGraph's \
         jsonschema 4.26 fetches it over HTTP when it validates))"
    );
}
