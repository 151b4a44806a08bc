//! Prompt configs end to end: the three formats, every kind of bad input
//! with the exact `file:line:col: cause` it gets, rendering, exports that
//! round-trip, and the prompts directory on disk.

use std::fs;
use std::path::{Path, PathBuf};

use cutline::prompt::trustgraph::encode;
use cutline::prompt::{
    ConfigError, PromptConfig, ResponseType, SourceFormat, input_vars, load_bytes, load_toml, render, to_toml,
    to_trustgraph_bundle, to_trustgraph_prompt,
};
use cutline::store;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const GOOD: &str = "tests/fixtures/prompts/good";
const BAD: &str = "tests/fixtures/prompts/bad";

fn fixture(dir: &str, name: &str) -> (String, Vec<u8>) {
    let path = format!("{dir}/{name}");
    let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    (path, bytes)
}

fn load_one(dir: &str, name: &str) -> PromptConfig {
    let (label, bytes) = fixture(dir, name);
    let (mut ps, _) = load_bytes(&label, &bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ps.len(), 1, "{label}");
    ps.remove(0)
}

fn bad(name: &str) -> String {
    let (label, bytes) = fixture(BAD, name);
    match load_bytes(&label, &bytes) {
        Ok(_) => panic!("{label} loaded"),
        Err(e) => e.to_string(),
    }
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

// ---------------------------------------------------------------- bad input

#[test]
fn merge_conflict_markers_in_the_translated_spec() {
    // A copy of seed 001: its first marker is `<<<<<<< HEAD` on line 43.
    assert_eq!(
        bad("conflict.toml"),
        "tests/fixtures/prompts/bad/conflict.toml:43:1: unresolved git merge conflict marker `<<<<<<<`; \
         resolve the conflict first"
    );
    // The same bytes as JSON get the same answer: markers are checked first.
    let (_, bytes) = fixture(BAD, "conflict.toml");
    let e = load_bytes("spec.json", &bytes).unwrap_err();
    assert_eq!((e.line, e.column), (Some(43), Some(1)));
}

#[test]
fn invalid_utf8_names_line_and_column() {
    assert_eq!(
        bad("invalid-utf8.toml"),
        "tests/fixtures/prompts/bad/invalid-utf8.toml:1:19: invalid UTF-8"
    );
}

#[test]
fn byte_order_mark_rejected() {
    assert_eq!(
        bad("bom.toml"),
        "tests/fixtures/prompts/bad/bom.toml:1:1: file starts with a UTF-8 byte-order mark (BOM); save it without one"
    );
}

#[test]
fn toml_syntax_error() {
    assert_eq!(
        bad("toml-syntax.toml"),
        "tests/fixtures/prompts/bad/toml-syntax.toml:1:12: TOML syntax error: invalid basic string, expected `\"`"
    );
}

#[test]
fn unknown_key() {
    assert_eq!(
        bad("unknown-key.toml"),
        "tests/fixtures/prompts/bad/unknown-key.toml:2:1: unknown key `response_type`; expected one of: id, \
         description, response-type, twin, stop, temperature, top-p, max-tokens, structured, effort, system, \
         prompt, schema, object-schema, variables, input (did you mean `response-type`?)"
    );
}

#[test]
fn unknown_response_type() {
    assert_eq!(
        bad("bad-response-type.toml"),
        "tests/fixtures/prompts/bad/bad-response-type.toml:2:17: unknown response-type \"yaml\"; expected one of: \
         text, json, jsonl"
    );
}

#[test]
fn schema_string_json_error_maps_to_the_toml_line() {
    // The missing comma is on line 7 of the file (line 4 of the schema).
    assert_eq!(
        bad("schema-not-json.toml"),
        "tests/fixtures/prompts/bad/schema-not-json.toml:7:3: `schema` is not valid JSON: expected `,` or `}`"
    );
}

#[test]
fn remote_ref_does_not_compile() {
    let e = bad("schema-remote-ref.toml");
    assert!(
        e.starts_with("tests/fixtures/prompts/bad/schema-remote-ref.toml:4:1: schema does not compile at /: "),
        "{e}"
    );
    assert!(e.contains("example.com"), "{e}");
}

#[test]
fn template_syntax_error_names_file_and_template_line() {
    assert_eq!(
        bad("template-syntax.toml"),
        "tests/fixtures/prompts/bad/template-syntax.toml:5: template syntax error: ibis refuses it, so TrustGraph's \
         reload stops at this template (it and every template after it fail): Unexpected end of template. Ibis was \
         expecting a closing 'endfor' tag to close the 'for' tag opened in line 3. (template line 3)"
    );
}

#[test]
fn schema_and_object_schema_together() {
    // TrustGraph reads `schema` and ignores `object-schema`: so does cutline.
    let (ps, w) = load_bytes(
        "both.toml",
        b"prompt = \"x\"\nschema = \"{}\"\nobject-schema = '{\"required\": [\"a\"]}'\n",
    )
    .unwrap();
    assert_eq!(ps[0].schema, Some(json!({})));
    assert_eq!(ps[0].object_schema, Some(json!({"required": ["a"]})));
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].line, Some(3));
}

#[test]
fn json_syntax_error() {
    assert_eq!(
        bad("json-syntax.json"),
        "tests/fixtures/prompts/bad/json-syntax.json:4:1: invalid JSON: trailing comma"
    );
}

#[test]
fn json_that_is_neither_format() {
    assert_eq!(
        bad("neither.json"),
        "tests/fixtures/prompts/bad/neither.json: not a TrustGraph prompt: expected a `prompt` key (a single \
         prompt) or `template-index` / `template.<id>` keys (a config bundle)"
    );
}

#[test]
fn bundle_encoded_value_error_names_the_key() {
    assert_eq!(
        bad("bundle-encoded.json"),
        "tests/fixtures/prompts/bad/bundle-encoded.json:5: template.extract-rows: invalid JSON at column 38 of \
         the encoded value: expected `,` or `}`"
    );
}

#[test]
fn missing_prompt_and_wrong_types() {
    let e = load_bytes("x.toml", b"id = \"x\"\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.toml: missing required key `prompt` (the prompt template)"
    );
    let e = load_bytes("x.toml", b"prompt = \"x\"\ntwin = 3\n").unwrap_err();
    assert_eq!(e.to_string(), "x.toml:2:8: `twin` must be a string, not integer");
    let e = load_bytes("x.json", b"[1]").unwrap_err();
    assert_eq!(e.to_string(), "x.json:1:1: expected a JSON object, found an array");
}

// ------------------------------------------------------------ the formats

#[test]
fn cutline_toml_fields() {
    let p = load_one(GOOD, "extract-definitions.toml");
    assert_eq!(p.id, "extract-definitions");
    assert_eq!(p.description, "Entities and their definitions, as a JSON array");
    assert_eq!(p.response_type, ResponseType::Json);
    assert_eq!(p.twin.as_deref(), Some("extract-definitions-jsonl"));
    assert_eq!(p.stop, vec!["\n\n\n".to_owned(), "</output>".to_owned()]);
    assert_eq!(p.system, "You extract definitions. Answer in {{ lang }}.\n");
    assert!(p.template.starts_with("Study the text"));
    assert_eq!(p.schema.as_ref().and_then(|s| s.get("type")), Some(&json!("array")));
    assert_eq!(
        Value::Object(p.variables.clone()),
        json!({"lang": "English", "hints": {"style": "terse", "max": 5}})
    );
    let names: Vec<&str> = p.inputs.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["photosynthesis", "ja-tea"]);
    assert_eq!(p.origin.format, SourceFormat::Toml);
    assert_eq!(p.origin.template_line, Some(11));
    assert_eq!(p.origin.system_line, Some(8));
}

#[test]
fn schema_as_toml_table() {
    let p = load_one(GOOD, "extract-definitions-jsonl.toml");
    assert_eq!(p.response_type, ResponseType::Jsonl);
    assert_eq!(
        p.schema,
        Some(json!({
            "type": "object",
            "required": ["entity", "definition"],
            "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}}
        }))
    );
}

#[test]
fn object_schema_alias_warns() {
    let (label, bytes) = fixture(GOOD, "legacy-relationships.toml");
    let (ps, warnings) = load_bytes(&label, &bytes).unwrap();
    assert_eq!(ps[0].id, "legacy-relationships");
    assert_eq!(
        ps[0].schema, None,
        "TrustGraph validates nothing against `object-schema`"
    );
    assert_eq!(
        ps[0].object_schema.as_ref().and_then(|s| s.get("type")),
        Some(&json!("object"))
    );
    let text: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [format!(
            "{label}:4: `object-schema` is ignored by TrustGraph's loader (it reads only `schema`), so no line is \
             validated against it there, nor here; results list the lines it would reject; rename it to `schema` \
             to have them rejected (`migrate` writes `schema`)"
        )]
    );
    // The TrustGraph JSON form warns the same way.
    let json = br#"{"prompt": "x", "response-type": "jsonl", "object-schema": {"type": "object"}}"#;
    let (ps, warnings) = load_bytes("legacy.json", json).unwrap();
    assert!(ps[0].schema.is_none() && ps[0].object_schema.is_some());
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0]
            .message
            .starts_with("`object-schema` is ignored by TrustGraph's loader")
    );
}

#[test]
fn trustgraph_single_prompt() {
    let p = load_one(GOOD, "agent-kg-extract.json");
    assert_eq!(p.id, "agent-kg-extract");
    assert_eq!(p.response_type, ResponseType::Jsonl);
    assert_eq!(p.origin.format, SourceFormat::TrustgraphPrompt);
    let (_, bytes) = fixture(GOOD, "agent-kg-extract.json");
    let original: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(to_trustgraph_prompt(&p), original);
}

#[test]
fn trustgraph_bundle_round_trips_byte_for_byte() {
    let (label, bytes) = fixture(GOOD, "trustgraph-bundle.json");
    let (ps, warnings) = load_bytes(&label, &bytes).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let ids: Vec<&str> = ps.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["extract-topics", "extract-rows"]);
    let system = "You are a careful extractor. Répondez en {{ lang | default('English') }}.";
    assert!(
        ps.iter()
            .all(|p| p.system == system && p.origin.format == SourceFormat::TrustgraphBundle)
    );
    assert_eq!(ps[1].template, "Rows of {{schema_name}} from «{{text}}»");
    let exported = to_trustgraph_bundle(&ps, system);
    let original: Value = serde_json::from_slice(&bytes).unwrap();
    // Equal as JSON, and every encoded value equal as a string.
    assert_eq!(exported, original);
    assert_eq!(
        serde_json::to_string_pretty(&exported).unwrap() + "\n",
        String::from_utf8(bytes).unwrap()
    );
}

#[test]
fn bundle_to_single_prompts_and_back() {
    let (label, bytes) = fixture(GOOD, "trustgraph-bundle.json");
    let (ps, _) = load_bytes(&label, &bytes).unwrap();
    for p in &ps {
        let single = serde_json::to_vec(&to_trustgraph_prompt(p)).unwrap();
        let (mut back, _) = load_bytes(&format!("{}.json", p.id), &single).unwrap();
        let back = back.remove(0);
        assert_eq!(
            (&back.template, back.response_type, &back.schema),
            (&p.template, p.response_type, &p.schema)
        );
    }
}

#[test]
fn toml_round_trips_every_fixture() {
    let (prompts, errors, _) = store::load_dir(Path::new(GOOD));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(prompts.len(), 6);
    for p in prompts {
        let text = to_toml(&p);
        let (mut back, _) = load_toml("any-name.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        back.origin = p.origin.clone();
        assert_eq!(back, p, "{text}");
    }
}

#[test]
fn exported_bundle_encodes_like_tg_set_prompt() {
    let p = load_one(GOOD, "extract-definitions-jsonl.toml");
    let b = to_trustgraph_bundle(std::slice::from_ref(&p), "");
    // Never `"system": ""`: merged into a live config it would blank the
    // workspace's system prompt.
    assert!(b.get("system").is_none(), "{b}");
    let b = to_trustgraph_bundle(std::slice::from_ref(&p), "Be terse.");
    assert_eq!(b["system"], "\"Be terse.\"");
    assert_eq!(b["template-index"], "[\"extract-definitions-jsonl\"]");
    let entry = b["template.extract-definitions-jsonl"].as_str().unwrap();
    assert!(
        entry.starts_with("{\"id\": \"extract-definitions-jsonl\", \"prompt\": \"Study the text"),
        "{entry}"
    );
    assert_eq!(encode(&json!({"a": ["é"]})), "{\"a\": [\"\\u00e9\"]}");
}

// -------------------------------------------------------------- rendering

#[test]
fn render_with_pycompat_items_and_precedence() {
    let p = load_one(GOOD, "extract-definitions.toml");
    let vars = input_vars(&p, Some("ja-tea")).unwrap();
    let globals = obj(json!({"lang": "Klingon", "unused": 1}));
    let r = render(&p, &globals, &vars).unwrap();
    // The input's `lang` beats the prompt term, which beats the global.
    assert_eq!(r.system, "You extract definitions. Answer in Japanese.\n");
    assert_eq!(
        r.prompt,
        "Study the text and list every entity with its definition.\nstyle: terse\nmax: 5\nText:\n抹茶は粉末状の緑茶である。\n\
         Output a JSON array of {\"entity\", \"definition\"} objects.\n<output>\n"
    );
    // Without the input's lang, the term wins over the global.
    let r = render(&p, &globals, &input_vars(&p, None).unwrap()).unwrap();
    assert_eq!(r.system, "You extract definitions. Answer in English.\n");
}

#[test]
fn undefined_variable_names_variable_prompt_and_file_line() {
    let p = load_one(GOOD, "extract-definitions.toml");
    // TrustGraph's (ibis's) semantics by default: empty, and listed.
    let r = render(&p, &Map::new(), &Map::new()).unwrap();
    assert_eq!(r.undefined, ["text"]);
    assert!(r.prompt.contains("Text:\n\nOutput"), "{}", r.prompt);
    let e = cutline::prompt::render_with(&p, &Map::new(), &Map::new(), cutline::prompt::Undefined::Strict).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tests/fixtures/prompts/good/extract-definitions.toml:14: prompt \"extract-definitions\": undefined \
         variable `text` in template line 4"
    );
}

#[test]
fn unknown_input_lists_available() {
    let p = load_one(GOOD, "extract-definitions.toml");
    assert_eq!(
        input_vars(&p, Some("nope")).unwrap_err().to_string(),
        "tests/fixtures/prompts/good/extract-definitions.toml: prompt \"extract-definitions\" has no sample input \
         named \"nope\"; available: photosynthesis, ja-tea"
    );
}

#[test]
fn hostile_template_runs_out_of_fuel() {
    let text = "prompt = \"{% for i in range(10000) %}{% for j in range(10000) %}{{ i }}{% endfor %}{% endfor %}\"\n";
    let (ps, _) = load_bytes("hostile.toml", text.as_bytes()).unwrap();
    let started = std::time::Instant::now();
    let e = render(&ps[0], &Map::new(), &Map::new()).unwrap_err();
    assert!(
        e.message.starts_with("prompt \"hostile\": template ran out of fuel"),
        "{e}"
    );
    assert!(started.elapsed().as_secs() < 60);
}

#[test]
fn system_empty_stays_empty() {
    let p = load_one(GOOD, "extract-definitions-jsonl.toml");
    let r = render(&p, &Map::new(), &input_vars(&p, None).unwrap()).unwrap();
    assert_eq!(r.system, "");
    assert!(r.prompt.contains("plants turn light"));
}

// ------------------------------------------------------------ the store

#[test]
fn load_dir_reports_every_bad_file_and_skips_others() {
    let (prompts, errors, warnings) = store::load_dir(Path::new(BAD));
    assert!(prompts.is_empty());
    assert!(warnings.is_empty());
    let files: Vec<&str> = errors.iter().map(|e| e.file.rsplit('/').next().unwrap_or("")).collect();
    assert_eq!(
        files,
        [
            "bad-response-type.toml",
            "bom.toml",
            "bundle-encoded.json",
            "conflict.toml",
            "invalid-utf8.toml",
            "json-syntax.json",
            "neither.json",
            "schema-not-json.toml",
            "schema-remote-ref.toml",
            "template-syntax.toml",
            "toml-syntax.toml",
            "unknown-key.toml",
        ]
    );
}

#[test]
fn load_dir_good() {
    let (prompts, errors, warnings) = store::load_dir(Path::new(GOOD));
    assert!(errors.is_empty(), "{errors:?}");
    let ids: Vec<&str> = prompts.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "agent-kg-extract",
            "extract-definitions-jsonl",
            "extract-definitions",
            "legacy-relationships",
            "extract-topics",
            "extract-rows"
        ]
    );
    assert_eq!(warnings.len(), 1);
    assert!(prompts.iter().all(|p| p.origin.file.starts_with(GOOD)));
}

fn temp_copy(dir: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, tmp.path().join(path.file_name().unwrap())).unwrap();
    }
    tmp
}

#[test]
fn a_bad_file_does_not_hide_the_others() {
    let tmp = temp_copy(GOOD);
    fs::copy(format!("{BAD}/conflict.toml"), tmp.path().join("conflict.toml")).unwrap();
    fs::write(tmp.path().join("dup.toml"), "id = \"extract-rows\"\nprompt = \"x\"\n").unwrap();
    let (prompts, errors, _) = store::load_dir(tmp.path());
    assert_eq!(prompts.len(), 6);
    let causes: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
    assert_eq!(causes.len(), 2, "{causes:?}");
    assert!(causes[0].starts_with("unresolved git merge conflict marker"));
    assert!(
        causes[1].starts_with("duplicate prompt id \"extract-rows\" (already in "),
        "{}",
        causes[1]
    );
}

#[test]
fn resolve_by_id_path_and_fragment() {
    let dir = Path::new(GOOD);
    assert_eq!(
        store::resolve("extract-rows", dir).unwrap().template,
        "Rows of {{schema_name}} from «{{text}}»"
    );
    let p = store::resolve(&format!("{GOOD}/agent-kg-extract.json"), Path::new("/nonexistent")).unwrap();
    assert_eq!(p.id, "agent-kg-extract");
    let bundle = format!("{GOOD}/trustgraph-bundle.json");
    assert_eq!(
        store::resolve(&format!("{bundle}#extract-topics"), dir).unwrap().id,
        "extract-topics"
    );
    assert_eq!(
        store::resolve(&bundle, dir).unwrap_err().to_string(),
        format!("{bundle}: the file holds 2 prompts (extract-topics, extract-rows); name one as {bundle}#ID")
    );
    assert_eq!(
        store::resolve(&format!("{bundle}#nope"), dir).unwrap_err().to_string(),
        format!("{bundle}: no prompt with id \"nope\" in the file; available: extract-topics, extract-rows")
    );
    assert_eq!(
        store::resolve("nope", dir).unwrap_err().to_string(),
        format!(
            "nope: no prompt with id \"nope\" in {GOOD}; available: agent-kg-extract, extract-definitions-jsonl, \
             extract-definitions, legacy-relationships, extract-topics, extract-rows"
        )
    );
    assert_eq!(
        store::resolve("missing/file.toml", dir).unwrap_err().to_string(),
        "missing/file.toml: no such file"
    );
}

#[test]
fn resolve_a_broken_prompt_gives_its_error() {
    let e = store::resolve("template-syntax", Path::new(BAD)).unwrap_err();
    assert!(e.message.starts_with("template syntax error"), "{e}");
}

#[test]
fn save_toml_and_single_json_atomically() {
    let tmp = temp_copy(GOOD);
    let dir = tmp.path();
    let mut p = store::resolve("extract-definitions", dir).unwrap();
    p.description = "changed".into();
    p.stop.push("END".into());
    store::save(&p).unwrap();
    let back = store::resolve("extract-definitions", dir).unwrap();
    assert_eq!(back.description, "changed");
    assert_eq!(back.stop.last().map(String::as_str), Some("END"));
    assert_eq!(back.inputs, p.inputs);

    let mut p = store::resolve("agent-kg-extract", dir).unwrap();
    p.template.push_str("Be brief.\n");
    p.schema = None;
    store::save(&p).unwrap();
    let back = store::resolve("agent-kg-extract", dir).unwrap();
    assert!(back.template.ends_with("Be brief.\n"));
    assert_eq!(back.schema, None);
    let leftovers: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn save_bundle_entry_keeps_the_others() {
    let tmp = temp_copy(GOOD);
    let path = tmp.path().join("trustgraph-bundle.json");
    let before: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let mut p = store::resolve(&format!("{}#extract-rows", path.display()), tmp.path()).unwrap();
    p.response_type = ResponseType::Json;
    store::save(&p).unwrap();
    let after: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    for key in ["system", "template-index", "template.extract-topics"] {
        assert_eq!(after[key], before[key], "{key}");
    }
    assert_eq!(
        after["template.extract-rows"],
        "{\"id\": \"extract-rows\", \"prompt\": \"Rows of {{schema_name}} from \\u00ab{{text}}\\u00bb\", \
         \"response-type\": \"json\"}"
    );
    let back = store::resolve(&format!("{}#extract-rows", path.display()), tmp.path()).unwrap();
    assert_eq!(back.response_type, ResponseType::Json);
}

#[test]
fn save_without_a_file_is_an_error() {
    let p = PromptConfig {
        id: "x".into(),
        ..PromptConfig::default()
    };
    let e: ConfigError = store::save(&p).unwrap_err();
    assert_eq!(e.to_string(), "<prompt x>: the prompt has no file to save to");
}

// ------------------------------------------------------------ no panics

#[test]
fn every_prefix_of_every_fixture_loads_or_errors() {
    for dir in [GOOD, BAD] {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let bytes = fs::read(&path).unwrap();
            let label = path.display().to_string();
            let step = (bytes.len() / 400).max(1);
            for cut in (0..=bytes.len()).step_by(step) {
                let _ = load_bytes(&label, &bytes[..cut]);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), json in any::<bool>()) {
        let label = if json { "p.json" } else { "p.toml" };
        let _ = load_bytes(label, &bytes);
    }

    #[test]
    fn config_like_text_never_panics(
        text in "(prompt|schema|id|response-type|input|variables|stop|object-schema|template-index|template\\.a|system|[\\[\\]{}=\"'\\\\ \n,:]|\\{\\{|\\{%|%\\}|\\}\\}|'''|\"\"\"|[a-z0-9]){0,80}",
        json in any::<bool>(),
    ) {
        let label = if json { "p.json" } else { "p.toml" };
        if let Ok((ps, _)) = load_bytes(label, text.as_bytes()) {
            for p in &ps {
                let _ = render(p, &Map::new(), &Map::new());
                let _ = load_toml("p.toml", &to_toml(p));
            }
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = 100_000;
    let toml = format!(
        "prompt = \"x\"\n[variables]\nv = {}{}\n",
        "[".repeat(deep),
        "]".repeat(deep)
    );
    assert!(load_bytes("deep.toml", toml.as_bytes()).is_err());
    let json = format!(
        "{{\"prompt\": \"x\", \"schema\": {}{}}}",
        "[".repeat(deep),
        "]".repeat(deep)
    );
    assert!(load_bytes("deep.json", json.as_bytes()).is_err());
    let template = format!("prompt = \"{{{{ {}x{} }}}}\"\n", "(".repeat(deep), ")".repeat(deep));
    assert!(load_bytes("deep.toml", template.as_bytes()).is_err());
}

/// TrustGraph 2.11.1's loader on a config-store bundle: a `system` stored as
/// plain text is silently "Be helpful." there, so it loads as that here,
/// with a loud warning; a template ibis refuses stops TrustGraph's reload at
/// its key, and the error says which prompts would still serve.
#[test]
fn a_bundle_loads_as_trustgraphs_reload_takes_it() {
    let text = r#"{"prompt": {"system": "You extract.", "template.a": "{\"prompt\": \"A {{ x }}\"}"}}"#;
    let (ps, w) = load_bytes("dump.json", text.as_bytes()).unwrap();
    assert_eq!(ps[0].system, "Be helpful.");
    assert_eq!(w.len(), 1);
    assert!(
        w[0].to_string().starts_with(
            "dump.json:1: system: THE VALUE IS NOT JSON, so TrustGraph's prompt service silently uses \"Be helpful.\" \
             instead of it"
        ),
        "{}",
        w[0]
    );
    let text = r#"{"prompt": {"system": "\"S\"", "template.a": "{\"prompt\": \"A\"}",
        "template.b": "{\"prompt\": \"{% if x %}open\"}", "template.c": "{\"prompt\": \"C\"}"}}"#;
    let e = load_bytes("dump.json", text.as_bytes()).unwrap_err().to_string();
    assert!(
        e.starts_with("dump.json:2: template.b: template syntax error: ibis refuses it"),
        "{e}"
    );
    assert!(
        e.ends_with("; TrustGraph would half-load this workspace: a would serve, b, c would fail with KeyError until it is fixed"),
        "{e}"
    );
}
