//! The output engine against TrustGraph's JSONL prompt-output spec (seed 000)
//! and the project's requirements for `text`, `json`, `jsonl`, salvage,
//! discriminated unions, streaming and the sweep.
//!
//! The spec's testing strategy lists thirteen cases; each has a test named
//! after it (`unit_…`, `integration_…`, `quality_…`). The reference whose
//! keep semantics cutline follows is TrustGraph's `PromptManager`:
//!
//! ```python
//! def parse_json(self, text):
//!     json_match = re.search(r'```(?:json)?(.*?)```', text, re.DOTALL)
//!     json_str = json_match.group(1).strip() if json_match else text.strip()
//!     return json.loads(json_str)
//!
//! def parse_jsonl(self, text):
//!     text = text.strip()
//!     if text.startswith('```'):
//!         text = re.sub(r'^```(?:json|jsonl)?\s*\n?', '', text)
//!     if text.endswith('```'):
//!         text = text[:-3]
//!     for line in text.strip().split('\n'):
//!         line = line.strip()
//!         if not line or line.startswith('```'): continue
//!         try: results.append(json.loads(line))
//!         except json.JSONDecodeError: pass
//! ```
//!
//! then `jsonschema.validate` per object (jsonl) or on the whole value (json).

use cutline::output::json::{self, JsonAnalysis, JsonSchemas, JsonStatus};
use cutline::output::jsonl::{self, JsonlAnalysis, LineStatus};
use cutline::output::salvage::StopReason;
use cutline::output::schema::CompiledSchema;
use cutline::output::stream::{Completed, JsonStream, JsonlStream};
use cutline::output::sweep::{SweepPoint, SweepSchemas, sweep};
use cutline::output::tokens::{Tokenizer, boundaries};
use serde_json::{Value, json};

// ---------------------------------------------------------------- helpers

fn definition_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "entity": {"type": "string"},
            "definition": {"type": "string"}
        },
        "required": ["entity", "definition"]
    })
}

fn definitions() -> CompiledSchema {
    CompiledSchema::compile(&definition_schema()).unwrap()
}

fn definition_array() -> JsonSchemas {
    JsonSchemas::compile(Some(&json!({"type": "array", "items": definition_schema()}))).unwrap()
}

/// The spec's `agent-kg-extract` union.
fn kg_union_schema() -> Value {
    json!({"oneOf": [
        {
            "type": "object",
            "properties": {
                "type": {"const": "definition"},
                "entity": {"type": "string"},
                "definition": {"type": "string"}
            },
            "required": ["type", "entity", "definition"]
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "relationship"},
                "subject": {"type": "string"},
                "predicate": {"type": "string"},
                "object": {"type": "string"},
                "object-entity": {"type": "boolean"}
            },
            "required": ["type", "subject", "predicate", "object", "object-entity"]
        }
    ]})
}

fn kg_union() -> CompiledSchema {
    CompiledSchema::compile(&kg_union_schema()).unwrap()
}

/// The spec's ontology extraction: entity, relationship, attribute.
fn ontology() -> CompiledSchema {
    CompiledSchema::compile(&json!({"oneOf": [
        {
            "type": "object",
            "properties": {
                "type": {"const": "entity"},
                "entity": {"type": "string"},
                "entity_type": {"type": "string"}
            },
            "required": ["type", "entity", "entity_type"]
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "relationship"},
                "subject": {"type": "string"},
                "subject_type": {"type": "string"},
                "relation": {"type": "string"},
                "object": {"type": "string"},
                "object_type": {"type": "string"}
            },
            "required": ["type", "subject", "subject_type", "relation", "object", "object_type"]
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "attribute"},
                "entity": {"type": "string"},
                "entity_type": {"type": "string"},
                "attribute": {"type": "string"},
                "value": {"type": "string"}
            },
            "required": ["type", "entity", "entity_type", "attribute", "value"]
        }
    ]}))
    .unwrap()
}

/// `(line, status word)` for every line.
fn words(a: &JsonlAnalysis) -> Vec<(usize, &'static str)> {
    a.lines.iter().map(|l| (l.line, l.status.word())).collect()
}

fn line_status(a: &JsonlAnalysis, line: usize) -> &LineStatus {
    &a.lines.iter().find(|l| l.line == line).unwrap().status
}

/// `(column, message)` of an `invalid_json` or `truncated` line.
fn parse_error(s: &LineStatus) -> (usize, &str) {
    match s {
        LineStatus::InvalidJson { column, message }
        | LineStatus::Truncated { column, message }
        | LineStatus::TooDeep { column, message, .. } => (*column, message.as_str()),
        other => panic!("not a parse error: {other:?}"),
    }
}

fn schema_errors(s: &LineStatus) -> Vec<String> {
    match s {
        LineStatus::SchemaInvalid { errors } => errors.iter().map(ToString::to_string).collect(),
        other => panic!("not schema_invalid: {other:?}"),
    }
}

fn strict_stop(a: &JsonAnalysis) -> (usize, usize, bool, &str) {
    let e = a.error.as_ref().expect("a parse stop");
    (e.line, e.column, e.truncated, e.message.as_str())
}

/// Stream `text` in `step`-byte chunks through both analysers.
fn stream_both(
    text: &str,
    step: usize,
    line: Option<&CompiledSchema>,
    js: &JsonSchemas,
) -> (JsonlAnalysis, JsonAnalysis) {
    let mut l = JsonlStream::new(line);
    let mut j = JsonStream::new(js);
    let mut out = Vec::new();
    for chunk in text.as_bytes().chunks(step) {
        l.feed(chunk, &mut out);
        j.feed(chunk, &mut out);
    }
    {
        let l = l.finish(&mut out);
        (l, j.finish(&mut out))
    }
}

/// The one-shot analysers on every cut, as the sweep should report them.
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

const SPEC_JSONL: &str = r#"{"entity": "photosynthesis", "definition": "Process by which plants convert sunlight"}
{"entity": "chlorophyll", "definition": "Green pigment in plants"}
{"entity": "mitochondria", "definition": "Powerhouse of the cell"}
"#;

fn spec_items() -> Vec<Value> {
    vec![
        json!({"entity": "photosynthesis", "definition": "Process by which plants convert sunlight"}),
        json!({"entity": "chlorophyll", "definition": "Green pigment in plants"}),
        json!({"entity": "mitochondria", "definition": "Powerhouse of the cell"}),
    ]
}

// ------------------------------------------------- spec: unit tests

#[test]
fn unit_jsonl_parsing_with_valid_input() {
    let a = jsonl::analyse(SPEC_JSONL.as_bytes(), Some(&definitions()));
    assert_eq!(a.items, spec_items());
    assert_eq!(words(&a), [(1, "ok"), (2, "ok"), (3, "ok")]);
    for (k, l) in a.lines.iter().enumerate() {
        assert_eq!(l.status, LineStatus::Ok { item: k });
    }
    assert_eq!((a.counts.ok, a.counts.invalid_json, a.counts.truncated), (3, 0, 0));
    // Without the final newline the last line is still complete.
    let a = jsonl::analyse(SPEC_JSONL.trim_end().as_bytes(), Some(&definitions()));
    assert_eq!(a.items, spec_items());
    // Without a schema every value is kept, objects or not (json.loads keeps them).
    let a = jsonl::analyse(b"{\"a\": 1}\n42\n\"s\"\n[1, 2]\nnull\n", None);
    assert_eq!(
        a.items,
        vec![json!({"a": 1}), json!(42), json!("s"), json!([1, 2]), Value::Null]
    );
}

#[test]
fn unit_jsonl_parsing_with_empty_lines() {
    // Blank, spaces-and-tabs, a CR alone, and Unicode spaces Python strips.
    let text = "\n{\"entity\": \"a\", \"definition\": \"x\"}\n   \t\n\r\n\u{3000}\u{a0}\n{\"entity\": \"b\", \"definition\": \"y\"}\n\n";
    let a = jsonl::analyse(text.as_bytes(), Some(&definitions()));
    assert_eq!(
        words(&a),
        [
            (1, "empty"),
            (2, "ok"),
            (3, "empty"),
            (4, "empty"),
            (5, "empty"),
            (6, "ok"),
            (7, "empty")
        ]
    );
    assert_eq!(
        a.items,
        vec![
            json!({"entity": "a", "definition": "x"}),
            json!({"entity": "b", "definition": "y"})
        ]
    );
    assert_eq!(a.counts.empty, 5);
    // A response of blank lines keeps nothing.
    let a = jsonl::analyse(b"\n \n", None);
    assert!(a.items.is_empty());
    assert_eq!(words(&a), [(1, "empty"), (2, "empty")]);
}

#[test]
fn unit_jsonl_parsing_with_markdown_code_fences() {
    let s = definitions();
    let body = "{\"entity\": \"a\", \"definition\": \"x\"}\n{\"entity\": \"b\", \"definition\": \"y\"}";
    let both = vec![
        json!({"entity": "a", "definition": "x"}),
        json!({"entity": "b", "definition": "y"}),
    ];
    // Leading fence with each tag the reference's regex knows, and none.
    // The regex removes ```json (tried before ```jsonl) or bare ```: what it
    // leaves (`l`, `python`) is a line TrustGraph parses and logs as
    // invalid JSON, and cutline says so.
    for (open, first) in [
        ("```jsonl", "invalid_json"),
        ("```json", "fence"),
        ("```", "fence"),
        ("```python", "invalid_json"),
    ] {
        let text = format!("{open}\n{body}\n```\n");
        let a = jsonl::analyse(text.as_bytes(), Some(&s));
        assert_eq!(a.items, both, "{open}");
        assert_eq!(words(&a), [(1, first), (2, "ok"), (3, "ok"), (4, "fence")], "{open}");
        assert_eq!(a.lines[0].status.is_fence_remnant(), first == "invalid_json");
    }
    // Never closed (the response was cut after the last line).
    let a = jsonl::analyse(format!("```jsonl\n{body}\n").as_bytes(), Some(&s));
    assert_eq!(a.items, both);
    // A fence in the middle and prose after the block.
    let text = format!("```jsonl\n{body}\n```\nThat is all.\n```\n{{\"entity\": \"c\", \"definition\": \"z\"}}\n```");
    let a = jsonl::analyse(text.as_bytes(), Some(&s));
    assert_eq!(
        words(&a),
        [
            (1, "invalid_json"),
            (2, "ok"),
            (3, "ok"),
            (4, "fence"),
            (5, "invalid_json"),
            (6, "fence"),
            (7, "ok"),
            (8, "fence")
        ]
    );
    assert_eq!(a.items.len(), 3);
    // Indented fences and CRLF.
    let text = format!("  ```jsonl\r\n{}\r\n  ```\r\n", body.replace('\n', "\r\n"));
    let a = jsonl::analyse(text.as_bytes(), Some(&s));
    assert_eq!(a.items, both);
}

#[test]
fn unit_jsonl_parsing_with_truncated_final_line() {
    let text = "{\"entity\": \"a\", \"definition\": \"x\"}\n{\"entity\": \"b\", \"definition\": \"y\"}\n{\"entity\": \"c\", \"defin";
    let a = jsonl::analyse(text.as_bytes(), Some(&definitions()));
    assert_eq!(words(&a), [(1, "ok"), (2, "ok"), (3, "truncated")]);
    assert_eq!(
        a.items,
        vec![
            json!({"entity": "a", "definition": "x"}),
            json!({"entity": "b", "definition": "y"})
        ]
    );
    // The column is where the input ran out: one past the 22 characters.
    assert_eq!(parse_error(line_status(&a, 3)), (23, "EOF while parsing a string"));
    assert_eq!(a.counts.truncated, 1);
    // Cut after a key, after a colon, inside a number, a literal, an escape.
    for (cut, message) in [
        ("{\"entity\"", "EOF while parsing an object"),
        ("{\"entity\":", "EOF while parsing a value"),
        ("{\"n\": 12.", "EOF while parsing a value"),
        ("{\"ok\": tr", "EOF while parsing a value"),
        ("{\"s\": \"a\\u00", "EOF while parsing a string"),
        ("{\"s\": \"日本", "EOF while parsing a string"),
    ] {
        let a = jsonl::analyse(cut.as_bytes(), None);
        assert_eq!(words(&a), [(1, "truncated")], "{cut}");
        assert_eq!(
            parse_error(&a.lines[0].status),
            (cut.chars().count() + 1, message),
            "{cut}"
        );
    }
    // A line that ran out but was then terminated did not run out: it is broken.
    let a = jsonl::analyse(b"{\"entity\": \"c\", \"defin\n{\"a\": 1}", None);
    assert_eq!(words(&a), [(1, "invalid_json"), (2, "ok")]);
    // The whole response cut inside the first line keeps nothing.
    let a = jsonl::analyse(b"{\"entity\": \"a\", ", Some(&definitions()));
    assert!(a.items.is_empty());
    assert_eq!(words(&a), [(1, "truncated")]);
    // Cut mid-character: the last line ends in half a UTF-8 character.
    let full = "{\"e\": \"a\"}\n{\"e\": \"日\"}";
    let cut = &full.as_bytes()[..full.len() - 3];
    let a = jsonl::analyse(cut, None);
    assert_eq!(a.items, vec![json!({"e": "a"})]);
    assert_eq!(words(&a), [(1, "ok"), (2, "truncated")]);
}

#[test]
fn unit_jsonl_parsing_with_invalid_json_lines_interspersed() {
    let text = concat!(
        "Here are the definitions:\n",
        "{\"entity\": \"a\", \"definition\": \"x\"}\n",
        "{'entity': 'b', 'definition': 'y'}\n",
        "{\"entity\": \"c\", \"definition\": \"z\"},\n",
        "  {\"entity\": \"d\" \"definition\": \"w\"}\n",
        "{\"entity\": \"e\", \"definition\": \"v\"}\n",
        "[{\"entity\": \"f\", \"definition\": \"u\"}]\n",
        "{\"entity\": \"g\", \"definition\": \"t\"}\n",
    );
    let a = jsonl::analyse(text.as_bytes(), Some(&definitions()));
    assert_eq!(
        words(&a),
        [
            (1, "invalid_json"),
            (2, "ok"),
            (3, "invalid_json"),
            (4, "invalid_json"),
            (5, "invalid_json"),
            (6, "ok"),
            (7, "schema_invalid"),
            (8, "ok")
        ]
    );
    assert_eq!(
        a.items,
        vec![
            json!({"entity": "a", "definition": "x"}),
            json!({"entity": "e", "definition": "v"}),
            json!({"entity": "g", "definition": "t"})
        ]
    );
    assert_eq!(a.lines[5].status, LineStatus::Ok { item: 1 });
    // Prose: `H` cannot start a value.
    assert_eq!(parse_error(line_status(&a, 1)), (1, "expected value"));
    // Single quotes: the parser wants a key string at column 2.
    assert_eq!(parse_error(line_status(&a, 3)), (2, "key must be a string"));
    // A trailing comma: the value (34 characters) is complete, the comma is extra.
    assert_eq!(parse_error(line_status(&a, 4)), (35, "trailing characters"));
    // A missing comma; columns count the leading spaces of the line.
    assert_eq!(parse_error(line_status(&a, 5)), (18, "expected `,` or `}`"));
    // An array is JSON, but not the object the schema wants.
    assert_eq!(
        schema_errors(line_status(&a, 7)),
        [r#"/ [{"entity":"f","definition":"u"}] is not of type "object""#]
    );
}

#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[test]
fn unit_schema_validation_with_oneof_discriminated_unions() {
    let s = kg_union();
    assert_eq!(s.union_tags(), ["definition", "relationship"]);
    let text = concat!(
        "{\"type\": \"definition\", \"entity\": \"DNA\", \"definition\": \"Molecule carrying genetic instructions\"}\n",
        "{\"type\": \"relationship\", \"subject\": \"DNA\", \"predicate\": \"located_in\", \"object\": \"cell nucleus\"}\n",
        "{\"type\": \"topic\", \"entity\": \"RNA\"}\n",
        "{\"entity\": \"RNA\", \"definition\": \"x\"}\n",
        "{\"type\": 3}\n",
        "{\"type\": \"definition\", \"entity\": 5, \"definition\": \"x\"}\n",
        "{\"type\": \"relationship\", \"subject\": \"RNA\", \"predicate\": \"transcribed_from\", \"object\": \"DNA\", \"object-entity\": \"yes\"}\n",
        "[\"definition\"]\n",
        "{\"type\": \"relationship\", \"subject\": \"RNA\", \"predicate\": \"transcribed_from\", \"object\": \"DNA\", \"object-entity\": true}\n",
    );
    let a = jsonl::analyse(text.as_bytes(), Some(&s));
    assert_eq!(
        words(&a),
        [
            (1, "ok"),
            (2, "schema_invalid"),
            (3, "schema_invalid"),
            (4, "schema_invalid"),
            (5, "schema_invalid"),
            (6, "schema_invalid"),
            (7, "schema_invalid"),
            (8, "schema_invalid"),
            (9, "ok")
        ]
    );
    // The selected branch's error, not "not valid under any of the given schemas".
    assert_eq!(
        schema_errors(line_status(&a, 2)),
        ["relationship: /object-entity is required"]
    );
    assert_eq!(
        schema_errors(line_status(&a, 3)),
        [r#"/type "topic" is not one of: definition, relationship"#]
    );
    assert_eq!(
        schema_errors(line_status(&a, 4)),
        ["/type is required (one of: definition, relationship)"]
    );
    assert_eq!(
        schema_errors(line_status(&a, 5)),
        ["/type is a number, not a string (one of: definition, relationship)"]
    );
    assert_eq!(
        schema_errors(line_status(&a, 6)),
        [r#"definition: /entity 5 is not of type "string""#]
    );
    assert_eq!(
        schema_errors(line_status(&a, 7)),
        [r#"relationship: /object-entity "yes" is not of type "boolean""#]
    );
    assert_eq!(schema_errors(line_status(&a, 8)), ["/ is an array, not an object"]);
    // Pointer, message and branch are separate fields.
    match line_status(&a, 2) {
        LineStatus::SchemaInvalid { errors } => {
            assert_eq!(errors[0].pointer, "/object-entity");
            assert_eq!(errors[0].message, "is required");
            assert_eq!(errors[0].branch.as_deref(), Some("relationship"));
        }
        other => panic!("{other:?}"),
    }
    // Valid under the branch its `type` selects, yet rejected by a keyword
    // beside the union: that keyword's error, not a made-up union message.
    let mut with_source = kg_union_schema();
    with_source["required"] = json!(["source"]);
    let errs = CompiledSchema::compile(&with_source)
        .unwrap()
        .validate(&json!({"type": "definition", "entity": "a", "definition": "b"}))
        .unwrap_err();
    let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
    assert_eq!(text, ["/source is required"]);
    // ... or matching two branches of a `oneOf` (two branches share a tag).
    let both = CompiledSchema::compile(&json!({"oneOf": [
        {"properties": {"type": {"const": "a"}}},
        {"properties": {"type": {"const": "a"}}, "required": ["x"]}
    ]}))
    .unwrap();
    let errs = both.validate(&json!({"type": "a", "x": 1})).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert!(errs[0].message.contains("more than one"), "{}", errs[0]);
    // Several errors of one branch are all reported, each with its pointer.
    let errs = s.validate(&json!({"type": "relationship", "subject": 1})).unwrap_err();
    let mut pointers: Vec<&str> = errs.iter().map(|e| e.pointer.as_str()).collect();
    pointers.sort_unstable();
    assert_eq!(pointers, ["/object", "/object-entity", "/predicate", "/subject"]);
}

#[test]
fn unit_backward_compatibility_text_and_json_prompts_unchanged() {
    use cutline::prompt::ResponseType;
    use cutline::run::Analysis;
    // text: as is.
    let raw = "  Any *text* at all, ```json [1] ``` included.\n";
    let a = Analysis::of(ResponseType::Text, None, raw, cutline::output::tg::TgPython::default());
    assert_eq!(a, Analysis::Text);
    assert_eq!(a.data(raw)["items"], json!([raw]));
    // json: the whole text, stripped, when there is no fence.
    let s = definition_array();
    let a = json::analyse(&format!("\n  [{}]\n\n", SPEC_JSONL.trim_end().replace('\n', ",\n")), &s);
    assert_eq!(a.status, JsonStatus::Ok);
    assert_eq!(a.items, spec_items());
    // The first fenced block (tag `json` or none) wins, prose around it ignored.
    for text in [
        "Sure! Here:\n```json\n[{\"entity\": \"a\", \"definition\": \"x\"}]\n```\nAnd a second:\n```json\n[]\n```",
        "```\n[{\"entity\": \"a\", \"definition\": \"x\"}]\n```",
        "```json[{\"entity\": \"a\", \"definition\": \"x\"}]```",
    ] {
        let a = json::analyse(text, &s);
        assert_eq!(a.status, JsonStatus::Ok, "{text}");
        assert_eq!(a.items, vec![json!({"entity": "a", "definition": "x"})], "{text}");
    }
    // Another tag is part of the content, as in the reference's regex: not JSON.
    let a = json::analyse("```jsonc\n[]\n```", &s);
    assert_eq!(a.status, JsonStatus::InvalidJson);
    assert_eq!(strict_stop(&a), (1, 8, false, "expected value"));
    // The whole value is validated: one bad element fails the response.
    let a = json::analyse("[{\"entity\": \"a\", \"definition\": \"x\"}, {\"entity\": \"b\"}]", &s);
    assert_eq!(a.status, JsonStatus::SchemaInvalid);
    assert!(a.items.is_empty());
    let v: Vec<String> = a.violations.iter().map(ToString::to_string).collect();
    assert_eq!(v, ["/1/definition is required"]);
    // ... while salvage still reports the good element and the bad one.
    assert_eq!(a.salvaged, vec![json!({"entity": "a", "definition": "x"})]);
    assert_eq!(a.elements.iter().map(|e| e.valid).collect::<Vec<_>>(), [true, false]);
    assert_eq!(a.elements[1].errors[0].to_string(), "/definition is required");
    // No schema: any JSON is fine; an object is one item.
    let a = json::analyse("{\"k\": 1}", &JsonSchemas::default());
    assert_eq!((a.status, a.items.clone()), (JsonStatus::Ok, vec![json!({"k": 1})]));
}

// ------------------------------------------------- spec: integration tests

#[test]
fn integration_end_to_end_extraction_with_jsonl_prompts() {
    // The schema is compiled once and reused for every line and every analyser.
    let s = definitions();
    let response = format!("```jsonl\n{SPEC_JSONL}```\n");
    let one = jsonl::analyse(response.as_bytes(), Some(&s));
    assert_eq!(one.items, spec_items());
    assert_eq!(
        words(&one),
        [(1, "invalid_json"), (2, "ok"), (3, "ok"), (4, "ok"), (5, "fence")]
    );
    // The same response streamed in 7-byte chunks gives the same analysis,
    // with each item as soon as its line ends.
    let mut st = JsonlStream::new(Some(&s));
    let mut out = Vec::new();
    let mut seen_items = Vec::new();
    for (k, chunk) in response.as_bytes().chunks(7).enumerate() {
        st.feed(chunk, &mut out);
        seen_items.push((k, st.so_far().items.len()));
    }
    assert_eq!(st.finish(&mut out), one);
    let kept: Vec<&Value> = out
        .iter()
        .filter_map(|c| match c {
            Completed::Line(_, Some(v)) => Some(v),
            _ => None,
        })
        .collect();
    assert_eq!(kept.len(), 3);
    // The first item is out once the chunk holding its newline has been fed.
    let first_nl = response.find("}\n").unwrap() + 1;
    let chunk_of_nl = first_nl / 7;
    assert_eq!(seen_items[chunk_of_nl - 1].1, 0);
    assert_eq!(seen_items[chunk_of_nl].1, 1);
    // Serialised line outcomes carry status and details as flat fields.
    let v = serde_json::to_value(&one.lines[1]).unwrap();
    assert_eq!(v, json!({"line": 2, "status": "ok", "item": 0}));
}

#[test]
fn integration_extraction_with_simulated_truncation() {
    let s = definitions();
    let cuts = boundaries(SPEC_JSONL, Tokenizer::O200kBase);
    let line_ends: Vec<usize> = SPEC_JSONL.match_indices('\n').map(|(i, _)| i).collect();
    // At every token limit, the items are the lines whose closing brace made it.
    for &c in &cuts {
        let a = jsonl::analyse(&SPEC_JSONL.as_bytes()[..c], Some(&s));
        let complete = line_ends.iter().filter(|&&nl| nl <= c).count();
        assert_eq!(a.items, spec_items()[..complete].to_vec(), "cut at byte {c}");
        // Never more than one line is cut, and only the last.
        assert!(a.counts.truncated <= 1);
        assert_eq!(a.counts.invalid_json, 0, "cut at byte {c}");
    }
    // The sweep reports the same at every token cut, in one pass.
    let sweep_s = SweepSchemas {
        json: definition_array(),
        line: Some(definitions()),
    };
    let points = sweep(SPEC_JSONL.as_bytes(), &cuts, &sweep_s);
    assert_eq!(points, naive_sweep(SPEC_JSONL, &cuts, &sweep_s));
    assert_eq!(points.last().unwrap().jsonl_items, 3);
    assert_eq!(points.iter().map(|p| p.json_items).max(), Some(0));
}

#[test]
fn integration_mixed_type_extraction_with_type_discriminator() {
    let text = concat!(
        "{\"type\": \"definition\", \"entity\": \"DNA\", \"definition\": \"Molecule carrying genetic instructions\"}\n",
        "{\"type\": \"relationship\", \"subject\": \"DNA\", \"predicate\": \"located_in\", \"object\": \"cell nucleus\", \"object-entity\": true}\n",
        "{\"type\": \"definition\", \"entity\": \"RNA\", \"definition\": \"Molecule that carries genetic information\"}\n",
        "{\"type\": \"relationship\", \"subject\": \"RNA\", \"predicate\": \"transcribed_from\", \"object\": \"DNA\", \"object-entity\": true}\n",
    );
    let a = jsonl::analyse(text.as_bytes(), Some(&kg_union()));
    assert_eq!(a.items.len(), 4);
    let types: Vec<&str> = a.items.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["definition", "relationship", "definition", "relationship"]);
    // Categorising by `type`, as downstream code does.
    let rels: Vec<&Value> = a.items.iter().filter(|v| v["type"] == "relationship").collect();
    assert_eq!(rels[1]["predicate"], "transcribed_from");
    // Truncated inside the last relationship: three kept, the fourth reported.
    let cut = &text[..text.len() - 30];
    let a = jsonl::analyse(cut.as_bytes(), Some(&kg_union()));
    assert_eq!(words(&a), [(1, "ok"), (2, "ok"), (3, "ok"), (4, "truncated")]);
}

#[test]
fn integration_ontology_extraction_with_all_three_types() {
    let text = concat!(
        "{\"type\": \"entity\", \"entity\": \"Cornish pasty\", \"entity_type\": \"fo/Recipe\"}\n",
        "{\"type\": \"entity\", \"entity\": \"beef\", \"entity_type\": \"fo/Food\"}\n",
        "{\"type\": \"relationship\", \"subject\": \"Cornish pasty\", \"subject_type\": \"fo/Recipe\", \"relation\": \"fo/has_ingredient\", \"object\": \"beef\", \"object_type\": \"fo/Food\"}\n",
        "{\"type\": \"attribute\", \"entity\": \"Cornish pasty\", \"entity_type\": \"fo/Recipe\", \"attribute\": \"fo/serves\", \"value\": \"4 people\"}\n",
        "{\"type\": \"attribute\", \"entity\": \"beef\", \"entity_type\": \"fo/Food\", \"attribute\": \"fo/weight\"}\n",
        "{\"type\": \"class\", \"entity\": \"x\"}\n",
    );
    let s = ontology();
    assert_eq!(s.union_tags(), ["entity", "relationship", "attribute"]);
    let a = jsonl::analyse(text.as_bytes(), Some(&s));
    let types: Vec<&str> = a.items.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["entity", "entity", "relationship", "attribute"]);
    assert_eq!(schema_errors(line_status(&a, 5)), ["attribute: /value is required"]);
    assert_eq!(
        schema_errors(line_status(&a, 6)),
        [r#"/type "class" is not one of: entity, relationship, attribute"#]
    );
}

// ------------------------------------------------- spec: quality tests

fn as_array(lines: &str) -> String {
    format!("[\n{}\n]", lines.trim_end().replace('\n', ",\n"))
}

#[test]
fn quality_compare_extraction_results_jsonl_vs_json_array() {
    let jl = jsonl::analyse(SPEC_JSONL.as_bytes(), Some(&definitions()));
    let ja = json::analyse(&as_array(SPEC_JSONL), &definition_array());
    assert_eq!(ja.status, JsonStatus::Ok);
    // Complete output: both formats give identical data.
    assert_eq!(jl.items, ja.items);
    assert_eq!(ja.salvaged, ja.items);
}

#[test]
fn quality_verify_truncation_resilience_jsonl_yields_partial_results_where_json_fails() {
    let array = as_array(SPEC_JSONL);
    // Cut both formats inside the third object.
    let lines_cut = &SPEC_JSONL[..SPEC_JSONL.find("mitochondria").unwrap()];
    let array_cut = &array[..array.find("mitochondria").unwrap()];
    let jl = jsonl::analyse(lines_cut.as_bytes(), Some(&definitions()));
    let ja = json::analyse(array_cut, &definition_array());
    assert_eq!(jl.items, spec_items()[..2].to_vec());
    assert_eq!(ja.status, JsonStatus::InvalidJson);
    assert!(ja.items.is_empty(), "strict JSON loses everything");
    assert_eq!(strict_stop(&ja), (4, 13, true, "EOF while parsing a string"));
    // Salvage recovers what strict lost: the two complete elements, no more.
    assert_eq!(ja.salvaged, spec_items()[..2].to_vec());
    let stop = ja.salvage_stop.as_ref().unwrap();
    assert_eq!((stop.reason, stop.line, stop.column), (StopReason::Eof, 4, 13));
    // At every byte cut: JSONL keeps at least as much as strict JSON, and
    // strict JSON keeps nothing until the closing bracket.
    for c in 0..array.len() {
        let ja = json::analyse(&array[..c], &definition_array());
        assert!(ja.items.is_empty(), "cut {c}");
    }
}

// ------------------------------------------------- json: status and position

#[test]
fn json_status_ok_invalid_schema_invalid_with_position() {
    let s = definition_array();
    let ok = json::analyse("[{\"entity\": \"a\", \"definition\": \"x\"}]", &s);
    assert_eq!(
        (ok.status, ok.error.is_none(), ok.violations.is_empty()),
        (JsonStatus::Ok, true, true)
    );
    // Truncated: the input ran out at the end of the text (line 3, column 15).
    let cut = json::analyse("[\n{\"entity\": \"a\", \"definition\": \"x\"},\n{\"entity\": \"b\"", &s);
    assert_eq!(cut.status, JsonStatus::InvalidJson);
    assert_eq!(strict_stop(&cut), (3, 15, true, "EOF while parsing an object"));
    // Broken syntax: where it broke, not truncated.
    let broken = json::analyse(
        "[\n{\"entity\": \"a\", \"definition\": \"x\"}\n{\"entity\": \"b\"}]",
        &s,
    );
    assert_eq!(strict_stop(&broken), (3, 1, false, "expected `,` or `]`"));
    // Positions are in the whole response, in characters, past any fence.
    let fenced = json::analyse(
        "Voilà 日本:\n```json\n[{\"entity\": \"é\", \"definition\": 1 2}]\n```",
        &s,
    );
    assert_eq!(strict_stop(&fenced), (3, 34, false, "expected `,` or `}`"));
    // A fence that never closed is no block to the reference's regex: it
    // parses the whole text and stops at the backticks. Salvage sees the cut.
    let open = json::analyse("```json\n[{\"entity\": \"a\"", &s);
    assert_eq!(strict_stop(&open), (1, 1, false, "expected value"));
    let stop = open.salvage_stop.as_ref().unwrap();
    assert_eq!((stop.reason, stop.line, stop.column), (StopReason::Eof, 2, 16));
    // A raw newline inside a string: the error points at the newline itself.
    let newline = json::analyse("[{\"entity\": \"a\nb\", \"definition\": \"x\"}]", &s);
    assert_eq!(
        strict_stop(&newline),
        (
            1,
            15,
            false,
            "control character (\\u0000-\\u001F) found while parsing a string"
        )
    );
    // Schema invalid: the value, and every violation with its pointer.
    let invalid = json::analyse("{\"entity\": \"a\"}", &s);
    assert_eq!(invalid.status, JsonStatus::SchemaInvalid);
    assert_eq!(invalid.value, Some(json!({"entity": "a"})));
    assert_eq!(
        invalid.violations[0].to_string(),
        r#"/ {"entity":"a"} is not of type "array""#
    );
    // Empty response: ran out at the end of the text.
    let empty = json::analyse("  \n", &s);
    assert_eq!(strict_stop(&empty), (2, 1, true, "EOF while parsing a value"));
    // Serialised status is one of the three words.
    for (a, w) in [(&ok, "ok"), (&cut, "invalid_json"), (&invalid, "schema_invalid")] {
        assert_eq!(serde_json::to_value(a).unwrap()["status"], w);
    }
}

// ------------------------------------------------- salvage

fn salvaged_values(text: &str) -> Vec<Value> {
    json::analyse(text, &JsonSchemas::default()).salvaged
}

#[test]
fn salvage_never_invents_the_cut_element() {
    // json_repair / jsonrepair / partial-json return a third {"a": null} or {} here.
    assert_eq!(
        salvaged_values(r#"[{"a": 1}, {"a": 2}, {"a""#),
        vec![json!({"a": 1}), json!({"a": 2})]
    );
    for cut in [
        r#"[{"a": 1}, {"a": 2}, "#,
        r#"[{"a": 1}, {"a": 2}, {"#,
        r#"[{"a": 1}, {"a": 2}, {"a": "#,
        r#"[{"a": 1}, {"a": 2}, {"a": 3"#,
        r#"[{"a": 1}, {"a": 2}, {"a": 3,"#,
        r#"[{"a": 1}, {"a": 2}, {"a": "x"#,
        r#"[{"a": 1}, {"a": 2}, {"a": [1, 2]"#,
        r#"[{"a": 1}, {"a": 2}, {"a": {}"#,
    ] {
        assert_eq!(salvaged_values(cut), vec![json!({"a": 1}), json!({"a": 2})], "{cut}");
    }
    // A number or literal is complete only once a delimiter follows it.
    assert_eq!(salvaged_values("[1, 22"), vec![json!(1)]);
    assert_eq!(salvaged_values("[1, 22 "), vec![json!(1), json!(22)]);
    assert_eq!(salvaged_values("[true, nul"), vec![json!(true)]);
    assert_eq!(salvaged_values("[1, 2]"), vec![json!(1), json!(2)]);
    // Nothing complete: nothing.
    assert!(salvaged_values("[{\"a\": 1").is_empty());
    assert!(salvaged_values("[").is_empty());
    assert!(salvaged_values("").is_empty());
}

#[test]
fn salvage_brackets_braces_and_escaped_quotes_inside_strings() {
    let text = r#"[{"a": "x]}\"{["}, {"b": "\\"}, {"c": "]\"]", "d": ["}"]}, {"e": "\""#;
    assert_eq!(
        salvaged_values(text),
        vec![
            json!({"a": "x]}\"{["}),
            json!({"b": "\\"}),
            json!({"c": "]\"]", "d": ["}"]})
        ]
    );
    // An escaped backslash right before the closing quote closes the string.
    assert_eq!(salvaged_values(r#"["a\\", "b"#), vec![json!("a\\")]);
}

#[test]
fn salvage_fenced_never_closed_and_stop_reasons() {
    let s = definition_array();
    let text = "Here you go:\n```json\n[\n  {\"entity\": \"a\", \"definition\": \"x\"},\n  {\"entity\": 7, \"definition\": \"y\"},\n  {\"entity\": \"c\", \"definition\": \"z\"},\n  {\"entity\": \"d\", \"defi";
    let a = json::analyse(text, &s);
    assert_eq!(a.status, JsonStatus::InvalidJson);
    assert_eq!(
        a.salvaged,
        vec![
            json!({"entity": "a", "definition": "x"}),
            json!({"entity": "c", "definition": "z"})
        ]
    );
    let lines: Vec<(usize, usize, bool)> = a.elements.iter().map(|e| (e.index, e.line, e.valid)).collect();
    assert_eq!(lines, [(0, 4, true), (1, 5, false), (2, 6, true)]);
    assert_eq!(
        a.elements[1].errors[0].to_string(),
        r#"/entity 7 is not of type "string""#
    );
    let stop = a.salvage_stop.as_ref().unwrap();
    assert_eq!((stop.reason, stop.line, stop.column), (StopReason::Eof, 7, 24));
    // On the fence line itself.
    assert_eq!(salvaged_values("```json [1, 2, 3"), vec![json!(1), json!(2)]);
    // A missing comma: salvage keeps every element and says where it broke.
    let a = json::analyse("[{\"a\": 1}, {\"a\": 2} {\"a\": 3}]", &JsonSchemas::default());
    assert_eq!(a.salvaged, vec![json!({"a": 1}), json!({"a": 2}), json!({"a": 3})]);
    assert!(a.salvage_stop.is_none());
    let b = &a.broken[0];
    assert_eq!((b.line, b.column, b.end_line), (1, 21, 1));
    assert_eq!(b.error.message, "expected ',' or ']' after an element");
    // A broken element is not kept; salvage resumes at the next one.
    let a = json::analyse("[{\"a\": 1}, {\"a\" 2}, {\"a\": 3}]", &JsonSchemas::default());
    assert_eq!(a.salvaged, vec![json!({"a": 1}), json!({"a": 3})]);
    assert!(a.salvage_stop.is_none());
    assert_eq!(a.broken[0].error.message, "expected `:`");
    // With no element start after the break, it ends salvage there.
    let a = json::analyse("[{\"a\": 1}, {\"a\" 2}]", &JsonSchemas::default());
    assert_eq!(a.salvaged, vec![json!({"a": 1})]);
    assert_eq!(a.salvage_stop.as_ref().unwrap().reason, StopReason::Syntax);
    // Prose only: no array.
    let a = json::analyse("I could not find any.", &JsonSchemas::default());
    assert_eq!(a.salvage_stop.as_ref().unwrap().reason, StopReason::NoArray);
    // A closed array: no stop.
    assert!(json::analyse("[1]", &JsonSchemas::default()).salvage_stop.is_none());
}

#[test]
fn salvage_object_of_arrays_checks_each_property_schema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "definitions": {"type": "array", "items": definition_schema()},
            "relationships": {"type": "array", "items": {"$ref": "#/$defs/rel"}}
        },
        "$defs": {"rel": {"type": "object", "required": ["s", "p", "o"]}}
    });
    let s = JsonSchemas::compile(Some(&schema)).unwrap();
    let text = r#"{"definitions": [{"entity": "a", "definition": "x"}, {"entity": "b"}], "relationships": [{"s": 1, "p": 2, "o": 3}, {"s": 1}, {"s": 4, "p"#;
    let a = json::analyse(text, &s);
    assert_eq!(
        a.salvaged,
        vec![
            json!({"entity": "a", "definition": "x"}),
            json!({"s": 1, "p": 2, "o": 3})
        ]
    );
    let props: Vec<(&str, bool)> = a
        .elements
        .iter()
        .map(|e| (e.property.as_deref().unwrap(), e.valid))
        .collect();
    assert_eq!(
        props,
        [
            ("definitions", true),
            ("definitions", false),
            ("relationships", true),
            ("relationships", false)
        ]
    );
    let errs: Vec<String> = a.elements[3].errors.iter().map(ToString::to_string).collect();
    assert_eq!(errs, ["/p is required", "/o is required"]);
}

// ------------------------------------------------- jsonl edge cases

#[test]
fn jsonl_crlf_lines() {
    let text = "{\"entity\": \"a\", \"definition\": \"x\"}\r\n\r\n{\"entity\": \"b\", \"definition\": \"y\"}\r\n{\"entity\": \"c\"";
    let a = jsonl::analyse(text.as_bytes(), Some(&definitions()));
    assert_eq!(words(&a), [(1, "ok"), (2, "empty"), (3, "ok"), (4, "truncated")]);
    assert_eq!(a.items.len(), 2);
    // A CR does not end a line: `\r` alone separates nothing.
    let a = jsonl::analyse(b"{\"a\": 1}\r{\"a\": 2}", None);
    assert_eq!(words(&a), [(1, "invalid_json")]);
}

#[test]
fn jsonl_bom_less_and_bom() {
    let a = jsonl::analyse(b"{\"a\": 1}\n", None);
    assert_eq!(a.items, vec![json!({"a": 1})]);
    // Python's json.loads rejects a BOM and strip() keeps it: the line is
    // dropped, as the reference drops it.
    let a = jsonl::analyse("\u{feff}{\"a\": 1}\n{\"a\": 2}\n".as_bytes(), None);
    assert_eq!(words(&a), [(1, "invalid_json"), (2, "ok")]);
    assert_eq!(parse_error(&a.lines[0].status), (1, "expected value"));
    assert_eq!(a.items, vec![json!({"a": 2})]);
}

#[test]
fn numbers_keep_their_exact_value() {
    let id = "1234567890123456789012345";
    let line = format!("{{\"id\": {id}, \"score\": 0.10, \"big\": 1e400, \"neg\": -0}}");
    let a = jsonl::analyse(line.as_bytes(), None);
    // Digits as written; serde_json spells an exponent with its sign (same value).
    assert_eq!(
        serde_json::to_string(&a.items[0]).unwrap(),
        format!("{{\"id\":{id},\"score\":0.10,\"big\":1e+400,\"neg\":-0}}")
    );
    assert_eq!(a.items[0]["id"].to_string(), id);
    // Strict JSON and salvage too.
    let arr = format!("[{{\"id\": {id}}}, {{\"id\": {id}1}}, {id}, {{\"id\"");
    let j = json::analyse(&arr, &JsonSchemas::default());
    assert_eq!(j.salvaged.len(), 3);
    assert_eq!(j.salvaged[0]["id"].to_string(), id);
    assert_eq!(j.salvaged[1]["id"].to_string(), format!("{id}1"));
    assert_eq!(j.salvaged[2].to_string(), id);
    let j = json::analyse(&format!("[{id}]"), &JsonSchemas::default());
    assert_eq!(j.items[0].to_string(), id);
}

#[test]
fn jsonl_leading_jsonl_fence_and_trailing_fence() {
    let s = definitions();
    // TrustGraph removes ```json and parses the `l` left.
    let a = jsonl::analyse(b"```jsonl\n{\"entity\": \"a\", \"definition\": \"x\"}\n```", Some(&s));
    assert_eq!(words(&a), [(1, "invalid_json"), (2, "ok"), (3, "fence")]);
    // Blank lines between fence and content and after the closing fence.
    let a = jsonl::analyse(
        b"\n\n```jsonl\n\n{\"entity\": \"a\", \"definition\": \"x\"}\n\n```\n\n",
        Some(&s),
    );
    assert_eq!(
        words(&a),
        [
            (1, "empty"),
            (2, "empty"),
            (3, "invalid_json"),
            (4, "empty"),
            (5, "ok"),
            (6, "empty"),
            (7, "fence"),
            (8, "empty")
        ]
    );
}

/// The reference removes the leading fence with a regex and the trailing
/// fence by slicing, *before* splitting lines: an object sharing a line
/// with either fence is kept.
#[test]
fn jsonl_objects_on_fence_lines_as_the_reference_keeps_them() {
    // Leading fence with the object on the same line.
    let a = jsonl::analyse(b"```json {\"a\": 1}\n{\"a\": 2}\n```", None);
    assert_eq!(a.items, vec![json!({"a": 1}), json!({"a": 2})]);
    assert_eq!(words(&a), [(1, "ok"), (2, "ok"), (3, "fence")]);
    let a = jsonl::analyse(b"```{\"a\": 1}", None);
    assert_eq!(a.items, vec![json!({"a": 1})]);
    // Trailing fence glued to the last object.
    let a = jsonl::analyse(b"{\"a\": 1}\n{\"a\": 2}```\n\n", None);
    assert_eq!(a.items, vec![json!({"a": 1}), json!({"a": 2})]);
    assert_eq!(words(&a), [(1, "ok"), (2, "ok"), (3, "empty")]);
    // Both on one line.
    let a = jsonl::analyse(b"  ```json {\"a\": 1} ```  ", None);
    assert_eq!(a.items, vec![json!({"a": 1})]);
    // Only the *last* line's fence is removed: elsewhere the line is broken.
    let a = jsonl::analyse(b"{\"a\": 1}```\n{\"a\": 2}", None);
    assert_eq!(words(&a), [(1, "invalid_json"), (2, "ok")]);
    assert_eq!(parse_error(&a.lines[0].status), (9, "trailing characters"));
    // Only the *first* line's fence is removed.
    let a = jsonl::analyse(b"{\"a\": 1}\n```json {\"a\": 2}", None);
    assert_eq!(words(&a), [(1, "ok"), (2, "fence")]);
    // Python tries `json` before `jsonl`: `^```(?:json|jsonl)?` leaves the
    // `l`, so an object after ```jsonl on the same line is lost.
    let a = jsonl::analyse(b"```jsonl {\"a\": 1}\n{\"a\": 2}", None);
    assert_eq!(a.items, vec![json!({"a": 2})]);
    assert_eq!(words(&a), [(1, "invalid_json"), (2, "ok")]);
    assert_eq!(parse_error(&a.lines[0].status), (8, "expected value"));
    // ... and the `l` alone is a line too, while a later fence line is
    // skipped.
    let a = jsonl::analyse(b"```jsonl\n```python\n{\"a\": 2}", None);
    assert_eq!(words(&a), [(1, "invalid_json"), (2, "fence"), (3, "ok")]);
    // A fence closing a truncated line means it was not cut.
    let a = jsonl::analyse(b"{\"a\": 1}\n{\"a\": ```", None);
    assert_eq!(words(&a), [(1, "ok"), (2, "invalid_json")]);
}

// ------------------------------------------------- streaming

#[test]
fn streaming_split_anywhere_equals_one_shot() {
    let js = definition_array();
    let line = definitions();
    let texts = [
        "```jsonl\n{\"entity\": \"光合作用\", \"definition\": \"植物 🌱 \\\"x\\\"\"}\r\n\n{\"entity\": \"b\"}\nnope\n{\"entity\": \"c\", \"definition\": \"}]\"}```\n".to_owned(),
        format!("```json\n{}", as_array(SPEC_JSONL)),
        "[{\"entity\": \"a\", \"definition\": \"x\"}, {\"entity\": \"日本".to_owned(),
        "{\"a\": 1}```\n".to_owned(),
    ];
    for text in &texts {
        let one_l = jsonl::analyse(text.as_bytes(), Some(&line));
        let one_j = json::analyse(text, &js);
        for step in 1..=9 {
            let (l, j) = stream_both(text, step, Some(&line), &js);
            assert_eq!(l, one_l, "step {step}: {text}");
            assert_eq!(j, one_j, "step {step}: {text}");
        }
    }
}

#[test]
fn streaming_emits_each_item_as_it_completes() {
    let js = JsonSchemas::default();
    let text = "[{\"a\": 1}, {\"a\": \"}\"}, 33, {\"a\"";
    let mut st = JsonStream::new(&js);
    let mut out = Vec::new();
    let mut when = Vec::new();
    for (i, b) in text.as_bytes().iter().enumerate() {
        let before = out.len();
        st.feed(std::slice::from_ref(b), &mut out);
        if out.len() > before {
            when.push(i);
        }
    }
    // After the closing braces at 8 and 20, and the comma after 33 at 25.
    assert_eq!(when, [8, 20, 25]);
    let values: Vec<Value> = out
        .into_iter()
        .map(|c| match c {
            Completed::Element(e) => e.value,
            Completed::Line(..) => panic!(),
        })
        .collect();
    assert_eq!(values, vec![json!({"a": 1}), json!({"a": "}"}), json!(33)]);
    assert_eq!(st.finish(&mut Vec::new()).salvaged.len(), 3);
    // JSONL: a line is out when its newline arrives.
    let mut st = JsonlStream::new(None);
    let mut out = Vec::new();
    st.feed(b"{\"a\": 1}", &mut out);
    assert!(out.is_empty());
    st.feed(b"\n{\"a\"", &mut out);
    assert_eq!(out.len(), 1);
    // A line ending in a fence waits: only a later line (or the end) tells
    // whether the reference strips that fence.
    st.feed(b": 2}```\n", &mut out);
    assert_eq!(out.len(), 1);
    st.feed(b"\n", &mut out);
    assert_eq!(out.len(), 1);
    let a = st.finish(&mut out);
    assert_eq!(out.len(), 3);
    assert_eq!(a.items, vec![json!({"a": 1}), json!({"a": 2})]);
}

// ------------------------------------------------- sweep

#[test]
fn sweep_equals_one_shot_at_every_cut() {
    let s = SweepSchemas {
        json: definition_array(),
        line: Some(definitions()),
    };
    let texts = [
        as_array(SPEC_JSONL),
        format!("Sure:\n```json\n{}\n```\nDone.", as_array(SPEC_JSONL)),
        format!("```jsonl\n{SPEC_JSONL}```"),
        SPEC_JSONL.replace('\n', "\r\n"),
        "{\"entity\": \"a\", \"definition\": \"x\"}```\n\u{3000}\n{\"entity\": \"b\", \"definition\": \"y\"} ```  \n"
            .to_owned(),
        "```json {\"entity\": \"a\", \"definition\": \"x\"}\u{3000}\n```".to_owned(),
        "[{\"entity\": \"日本\", \"definition\": \"x\"}] \u{3000} ".to_owned(),
        "12 ```\n".to_owned(),
    ];
    for text in &texts {
        let cuts: Vec<usize> = (0..=text.len()).collect();
        assert_eq!(
            sweep(text.as_bytes(), &cuts, &s),
            naive_sweep(text, &cuts, &s),
            "{text:?}"
        );
        let tok = boundaries(text, Tokenizer::Cl100kBase);
        assert_eq!(
            sweep(text.as_bytes(), &tok, &s),
            naive_sweep(text, &tok, &s),
            "{text:?}"
        );
    }
}
