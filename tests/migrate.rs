//! Prompt migration JSON-array → JSONL: the bundled prompts against their
//! JSONL twins, union migration, unconvertible schemas, template rewriting
//! and flags.

mod support;

use cutline::output::schema::CompiledSchema;
use cutline::prompt::{self, Migration, PromptConfig, ResponseType, Unconvertible, migrate};
use serde_json::{Map, Value, json};

fn bundled() -> Vec<PromptConfig> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let (prompts, errors, _) = cutline::store::load_dir(&dir);
    assert!(errors.is_empty(), "bundled prompts load: {errors:?}");
    prompts
}

fn json_prompt(schema: Value, template: &str) -> PromptConfig {
    PromptConfig {
        id: "p".into(),
        template: template.into(),
        response_type: ResponseType::Json,
        schema: Some(schema),
        ..PromptConfig::default()
    }
}

/// Lines of a template that are JSON objects (few-shot lines of a JSONL prompt).
fn object_lines(template: &str) -> Vec<Value> {
    template
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(Value::is_object)
        .collect()
}

/// The sample plus its mutations: each required field missing, a wrong
/// type, an extra property, a wrong and a missing `type` tag.
fn mutations(sample: &Value) -> Vec<Value> {
    let mut out = vec![sample.clone()];
    let Value::Object(m) = sample else { return out };
    for k in m.keys() {
        let mut missing = m.clone();
        missing.remove(k);
        out.push(Value::Object(missing));
        let mut wrong = m.clone();
        wrong.insert(k.clone(), if m[k].is_string() { json!(5) } else { json!("x") });
        out.push(Value::Object(wrong));
    }
    let mut extra = m.clone();
    extra.insert("zz_extra".into(), json!("x"));
    out.push(Value::Object(extra));
    let mut tag = m.clone();
    tag.insert("type".into(), json!("bogus"));
    out.push(Value::Object(tag));
    out.push(json!([]));
    out.push(json!("text"));
    out
}

#[test]
fn every_bundled_json_prompt_migrates_to_what_its_twin_accepts() {
    let prompts = bundled();
    let mut checked = 0;
    for src in prompts.iter().filter(|p| p.response_type == ResponseType::Json) {
        let Some(twin_id) = &src.twin else { continue };
        let twin = prompts
            .iter()
            .find(|p| &p.id == twin_id)
            .unwrap_or_else(|| panic!("twin {twin_id} of {}", src.id));
        let m = migrate(src, None).unwrap();
        assert!(m.unconvertible.is_empty(), "{}: {:?}", src.id, m.unconvertible);
        assert_eq!(m.config.id, format!("{}-jsonl", src.id));
        assert_eq!(m.config.twin.as_deref(), Some(src.id.as_str()));
        assert_eq!(m.config.response_type, ResponseType::Jsonl);
        let ours = CompiledSchema::compile(m.config.schema.as_ref().unwrap()).unwrap();
        let theirs = CompiledSchema::compile(twin.schema.as_ref().unwrap()).unwrap();

        // Samples: the twin's few-shot lines and the migrated (re-serialised)
        // examples of the JSON prompt, each with its mutations.
        let twin_lines = object_lines(&twin.template);
        let our_lines = object_lines(&m.config.template);
        assert!(!our_lines.is_empty(), "{}: no examples rewritten", src.id);
        assert!(!twin_lines.is_empty(), "{twin_id}: no few-shot lines");
        let mut samples = 0;
        for s in twin_lines.iter().chain(&our_lines) {
            for v in mutations(s) {
                assert_eq!(
                    ours.is_valid(&v),
                    theirs.is_valid(&v),
                    "{}: verdicts differ on {v}",
                    src.id
                );
                samples += 1;
            }
        }
        assert!(samples > 20);
        // Every example the JSON prompt had is a valid line of the twin.
        for l in &our_lines {
            assert!(theirs.is_valid(l), "{}: {l}", src.id);
        }

        check_loads_renders_round_trips(&m);
        checked += 1;
    }
    assert!(checked >= 6, "checked {checked} JSON prompts");
}

fn check_loads_renders_round_trips(m: &Migration) {
    let cfg = &m.config;
    // TOML: loads back to the same prompt.
    let text = prompt::to_toml(cfg);
    let (back, _) = prompt::load_toml("migrated.toml", &text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", cfg.id));
    assert_eq!(back.template, cfg.template);
    assert_eq!(back.system, cfg.system);
    assert_eq!(back.schema, cfg.schema);
    assert_eq!(back.response_type, ResponseType::Jsonl);
    assert_eq!(back.twin, cfg.twin);
    // Renders with its first sample input, variables kept.
    assert!(cfg.template.contains("{{"), "{}: variables kept", cfg.id);
    let vars = prompt::input_vars(cfg, None).unwrap();
    let r = prompt::render(cfg, &Map::new(), &vars).unwrap();
    assert!(!r.prompt.contains("{{"));
    // TrustGraph bundle: loads back.
    let bundle = prompt::to_trustgraph_bundle(std::slice::from_ref(cfg), &cfg.system);
    let bytes = serde_json::to_vec(&bundle).unwrap();
    let (loaded, _) = prompt::load_bytes("bundle.json", &bytes).unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].id, cfg.id);
    assert_eq!(loaded[0].template, cfg.template);
    assert_eq!(loaded[0].schema, cfg.schema);
    assert_eq!(loaded[0].response_type, ResponseType::Jsonl);
}

#[test]
fn union_migration_exact_schema_with_defs_and_refs() {
    let src = json_prompt(
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "entities": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"$ref": "#/$defs/name"}},
                    "required": ["name"],
                    "additionalProperties": false
                }},
                "addresses": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "of": {"$ref": "#/properties/entities/items/properties/name"}}
                }}
            },
            "required": ["entities", "addresses"],
            "additionalProperties": false,
            "$defs": {"name": {"type": "string", "minLength": 1}}
        }),
        "{{text}}",
    );
    let m = migrate(&src, Some("p2")).unwrap();
    assert_eq!(m.unconvertible, vec![]);
    assert_eq!(m.config.id, "p2");
    assert_eq!(
        m.config.schema.unwrap(),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"type": {"const": "entity"}, "name": {"$ref": "#/$defs/name"}},
                    "required": ["type", "name"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {"type": {"const": "address"}, "street": {"type": "string"}, "of": {"$ref": "#/oneOf/0/properties/name"}},
                    "required": ["type"]
                }
            ],
            "$defs": {"name": {"type": "string", "minLength": 1}}
        })
    );
}

#[test]
fn array_migration_moves_defs_to_the_new_root() {
    let src = json_prompt(
        json!({
            "type": "array",
            "items": {"$ref": "#/$defs/row"},
            "$defs": {"row": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}
        }),
        "",
    );
    let m = migrate(&src, None).unwrap();
    assert_eq!(m.unconvertible, vec![]);
    let schema = m.config.schema.unwrap();
    assert_eq!(
        schema,
        json!({"$ref": "#/$defs/row", "$defs": {"row": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}})
    );
    let c = CompiledSchema::compile(&schema).unwrap();
    assert!(c.is_valid(&json!({"a": 1})));
    assert!(!c.is_valid(&json!({"b": 1})));
}

fn unconvertible(schema: Value) -> (Option<Value>, Vec<Unconvertible>) {
    let m = migrate(&json_prompt(schema, ""), None).unwrap();
    (m.config.schema, m.unconvertible)
}

fn u(pointer: &str, message: &str) -> Unconvertible {
    Unconvertible {
        pointer: pointer.into(),
        message: message.into(),
    }
}

#[test]
fn unconvertible_schemas_are_reported_with_exact_messages() {
    assert_eq!(
        unconvertible(json!(true)),
        (None, vec![u("", "the schema is a boolean, not an object schema")])
    );
    assert_eq!(
        unconvertible(json!({"type": "string"})),
        (
            None,
            vec![u(
                "",
                "the root type \"string\" is neither an array nor an object of arrays"
            )]
        )
    );
    assert_eq!(
        unconvertible(json!({"type": "array", "items": true})),
        (
            None,
            vec![u("/items", "the array has no object `items` schema to use per line")]
        )
    );
    assert_eq!(
        unconvertible(json!({"type": "object", "properties": {
            "rows": {"type": "array", "items": {"type": "object"}},
            "count": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}}
        }})),
        (
            None,
            vec![
                u("/properties/count", "property `count` is not an array of objects"),
                u("/properties/tags", "property `tags` is not an array of objects"),
            ]
        )
    );
    assert_eq!(
        unconvertible(json!({"type": "object", "properties": {
            "kinds": {"type": "array", "items": {"type": "object", "properties": {"type": {"type": "string"}}}}
        }})),
        (
            None,
            vec![u(
                "/properties/kinds/items/properties/type",
                "the items of `kinds` already have a `type` property; it cannot also be the tag"
            )]
        )
    );
    // Whole-array constraints are dropped and reported; the line schema stays.
    let (schema, reports) = unconvertible(json!({"type": "array", "minItems": 1, "items": {"type": "object"}}));
    assert_eq!(schema, Some(json!({"type": "object"})));
    assert_eq!(
        reports,
        vec![u(
            "/minItems",
            "`minItems` constrains the whole array and has no per-line form; dropped"
        )]
    );
    assert_eq!(
        unconvertible(json!({"type": "array", "items": {"type": "object", "properties": {"next": {"$ref": "#"}}}})),
        (
            None,
            vec![u("/items", "`$ref` \"#\" points outside the per-line schema")]
        )
    );
}

#[test]
fn non_json_prompts_are_refused() {
    let mut p = json_prompt(json!({"type": "object"}), "");
    p.response_type = ResponseType::Jsonl;
    let e = migrate(&p, None).unwrap_err();
    assert_eq!(e.response_type, ResponseType::Jsonl);
    assert_eq!(
        e.to_string(),
        "prompt `p` has response type `jsonl`; only `json` prompts are migrated"
    );
}

const FIXTURE: &str = r#"Find the people. Answer with a JSON array of objects, one object per line.
Each object has "name" and "age".

Output:
[
  {"name": "Ada", "age": 36},
  {"name": "Alan", "age": 41}
]
###
A compact one: [{"name":"Bo","age":3}]
Broken: [{"name": "{{who}}", "age": {{age}}}]
Give the list of people in a JSON list.
Wrong: [{"name": 5}]
Text: {{text}}
Output:
"#;

const EXPECTED: &str = r#"Find the people. Answer with JSONL: one JSON object per line.
Each object has "name" and "age".

Output:
{"name": "Ada", "age": 36}
{"name": "Alan", "age": 41}
###
A compact one: {"name":"Bo","age":3}
Broken: [{"name": "{{who}}", "age": {{age}}}]
Give the list of people in JSONL: one JSON object per line.
Wrong: [{"name": 5}]
Text: {{text}}
Output:
"#;

fn people() -> Value {
    json!({"type": "array", "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": false
    }})
}

#[test]
fn template_rewrite_is_exact_and_flags_carry_their_lines() {
    let mut src = json_prompt(people(), FIXTURE);
    src.description = "People, as one JSON array.".into();
    let m = migrate(&src, None).unwrap();
    assert_eq!(m.config.template, EXPECTED);
    assert_eq!(m.config.description, "People, one JSON object per line (JSONL).");
    let flags: Vec<(usize, &str)> = m.flags.iter().map(|f| (f.line, f.message.as_str())).collect();
    assert_eq!(
        flags,
        vec![
            (
                11,
                "array example holds template syntax and cannot be parsed; rewrite it as one object per line by hand"
            ),
            (
                12,
                "`list` not rewritten: say here by hand that the answer is one JSON object per line (JSONL)"
            ),
            (
                13,
                "array example has elements that do not match the schema; left as is"
            ),
        ]
    );
    assert!(m.flags.iter().all(|f| f.part == "prompt"));
    // The rewritten prompt renders with its variables untouched until then.
    let mut vars = Map::new();
    for k in ["who", "age", "text"] {
        vars.insert(k.into(), json!("x"));
    }
    let r = prompt::render(&m.config, &Map::new(), &vars).unwrap();
    assert!(r.prompt.contains("Text: x\n"));
}

#[test]
fn union_template_rewrite_puts_type_first() {
    let schema = json!({"type": "object", "properties": {
        "entities": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        "relationships": {"type": "array", "items": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}}}}
    }});
    let template = "Answer with one JSON object with the arrays \"entities\" and \"relationships\".\nOutput:\n{\n  \"entities\": [{\"name\": \"A\"}, {\"name\": \"B\"}],\n  \"relationships\": [{\"from\": \"A\", \"to\": \"B\"}]\n}\n###\n{{text}}\n";
    let mut src = json_prompt(schema, template);
    src.description = "Things, as one JSON object of two arrays.".into();
    let m = migrate(&src, None).unwrap();
    assert_eq!(
        m.config.description,
        "Things, one JSON object per line, told apart by \"type\" (JSONL discriminated union)."
    );
    assert_eq!(
        m.config.template,
        "Answer with one JSON object with the arrays \"entities\" and \"relationships\".\nOutput:\n{\"type\": \"entity\", \"name\": \"A\"}\n{\"type\": \"entity\", \"name\": \"B\"}\n{\"type\": \"relationship\", \"from\": \"A\", \"to\": \"B\"}\n###\n{{text}}\n"
    );
    assert_eq!(m.flags.len(), 1);
    assert_eq!(m.flags[0].line, 1);
    assert_eq!(
        m.flags[0].message,
        "`arrays` not rewritten: say here by hand that the answer is one JSON object per line (JSONL)"
    );
}

fn cli(args: &[&str]) -> std::process::Output {
    let prompts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .env("CUTLINE_LEARNED_FILE", "")
        .args(["--prompts", prompts.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_prints_records_and_writes_atomically() {
    let out = cli(&["migrate", "agent-kg-extract"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        json!({"_format": "jsonl", "_schema": "cutline.migrate/1", "_version": 1})
    );
    let last = lines.last().unwrap();
    assert_eq!(last["type"], json!("migrated"));
    // The bundled twin has `agent-kg-extract-jsonl`: the default id is the
    // first free one.
    assert_eq!(last["id"], json!("agent-kg-extract-jsonl-2"));
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == json!("flag") && l["line"] == json!(1))
    );

    let dir = tempfile::tempdir().unwrap();
    let toml_path = dir.path().join("m.toml");
    let out = cli(&[
        "--output",
        "json",
        "migrate",
        "extract-definitions",
        "--write",
        toml_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["data"]["id"], json!("extract-definitions-jsonl-2"));
    assert_eq!(env["data"]["written"], json!(toml_path.to_str().unwrap()));
    assert_eq!(env["data"]["replaced"], Value::Null);
    assert_eq!(env["data"]["flags"], json!([]));
    let written = std::fs::read_to_string(&toml_path).unwrap();
    assert_eq!(env["data"]["toml"].as_str().unwrap(), written);
    let (p, _) = prompt::load_toml("m.toml", &written).unwrap();
    assert_eq!(p.response_type, ResponseType::Jsonl);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left");

    let tg_path = dir.path().join("m.json");
    let out = cli(&[
        "migrate",
        "extract-topics",
        "--format",
        "trustgraph",
        "--write",
        tg_path.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    // A TOML prompt deploys as a bundle of the whole workspace: the twelve
    // bundled prompts and the migration, under an id of its own (the old
    // twin is kept: replacing it takes `--id extract-topics-jsonl`).
    let (loaded, _) = prompt::load_bytes("m.json", &std::fs::read(&tg_path).unwrap()).unwrap();
    assert_eq!(loaded.len(), 13);
    assert_eq!(loaded.last().unwrap().id, "extract-topics-jsonl-2");
    assert_eq!(loaded.iter().filter(|p| p.id == "extract-topics-jsonl").count(), 1);
}

/// `--write` over an existing file, or with an id a prompt of the prompts
/// directory has, is refused (exit 11, nothing written) until `--force`;
/// what was written and replaced is said; a link is never written through.
#[test]
fn cli_write_refuses_to_replace_without_force_and_says_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.toml");
    std::fs::write(&path, "kept").unwrap();
    let p = path.to_str().unwrap();
    let out = cli(&["--output", "json", "migrate", "extract-definitions", "--write", p]);
    assert_eq!(out.status.code(), Some(11));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["error"]["category"], "conflict");
    assert_eq!(
        env["error"]["message"],
        format!(
            "not written: the migration would replace the file {p}; --force writes over it, or pick another path or --id"
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept");

    let out = cli(&[
        "--output",
        "pretty",
        "migrate",
        "extract-definitions",
        "--write",
        p,
        "--force",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("wrote: {p}: prompt \"extract-definitions-jsonl-2\" (toml), replacing the file {p}\n")
    );
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("id = \"extract-definitions-jsonl-2\"")
    );

    // An id the prompts directory has: replacing that prompt is the overwrite.
    let fresh = dir.path().join("fresh.toml");
    let f = fresh.to_str().unwrap();
    let out = cli(&[
        "--output",
        "json",
        "migrate",
        "extract-definitions",
        "--id",
        "extract-definitions-jsonl",
        "--write",
        f,
    ]);
    assert_eq!(out.status.code(), Some(11));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    let twin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/extract-definitions-jsonl.toml");
    assert_eq!(
        env["error"]["detail"]["replaced"],
        json!({"file": false, "prompt": "extract-definitions-jsonl", "in": twin.to_str().unwrap()})
    );
    assert!(!fresh.exists());

    // A link is refused, --force or not.
    let link = dir.path().join("link.toml");
    std::os::unix::fs::symlink(&fresh, &link).unwrap();
    let out = cli(&[
        "--output",
        "json",
        "migrate",
        "extract-definitions",
        "--write",
        link.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(4));
    assert!(!fresh.exists());
}

#[test]
fn cli_refuses_to_write_an_unconvertible_migration() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("bad.toml");
    std::fs::write(
        &src,
        "id = \"bad\"\nresponse-type = \"json\"\nprompt = \"{{text}}\"\nschema = '{\"type\": \"string\"}'\n",
    )
    .unwrap();
    let target = dir.path().join("out.toml");
    let out = cli(&[
        "--output",
        "json",
        "migrate",
        src.to_str().unwrap(),
        "--write",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(9));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["error"]["category"], json!("unconvertible"));
    assert_eq!(
        env["error"]["detail"]["unconvertible"][0]["message"],
        json!("the root type \"string\" is neither an array nor an object of arrays")
    );
    assert!(!target.exists());
}

// ---------------------------------------------------------------- --check

/// An Ollama `/api/chat` NDJSON answer of `text` in one piece, ending with `reason`.
fn ollama(text: &str, reason: &str) -> support::Reply {
    let delta = json!({"model": "m", "message": {"role": "assistant", "content": text}, "done": false});
    let done = json!({"model": "m", "message": {"role": "assistant", "content": ""}, "done": true,
        "done_reason": reason, "prompt_eval_count": 10, "eval_count": 7});
    support::Reply::ndjson(&[&delta.to_string(), &done.to_string()])
}

/// Run `migrate extract-definitions --check` on the provider `o` at `url`
/// (an Ollama server), recording into `sessions`; returns the exit code
/// and the `--output json` envelope.
async fn check(url: &str, sessions: &std::path::Path, extra: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("cutline.toml");
    std::fs::write(
        &config,
        format!("[[provider]]\nname = \"o\"\nkind = \"ollama\"\nbase_url = \"{url}\"\nmodel = \"m\"\n"),
    )
    .unwrap();
    let mut args: Vec<String> = ["--sessions", sessions.to_str().unwrap(), "--output", "json"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    args.extend(["migrate", "extract-definitions", "--check", "--input", "photosynthesis"].map(str::to_owned));
    if !extra.contains(&"--provider") {
        args.extend(["--provider", "o"].map(str::to_owned));
    }
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let out = tokio::task::spawn_blocking(move || {
        let prompts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
        assert_cmd::Command::cargo_bin("cutline")
            .unwrap()
            .env("CUTLINE_LEARNED_FILE", "")
            .env("CUTLINE_CONFIG", &config)
            .args(["--prompts", prompts.to_str().unwrap()])
            .args(&args)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let envelope: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code().unwrap(), envelope)
}

const ORIGINAL: &str = r#"[{"entity": "Chlorophyll", "definition": "a green pigment"},
{"entity": "stomata", "definition": "tiny pores"}]"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_same_items_passes_and_sends_both_prompts_at_the_generous_limit() {
    let server = support::Server::start(vec![
        ollama(ORIGINAL, "stop"),
        // Case and spacing differ: keys are normalised.
        ollama("{\"entity\": \"chlorophyll\", \"definition\": \"a  green pigment\"}\n{\"entity\": \"Stomata\", \"definition\": \"tiny pores\"}\n", "stop"),
    ])
    .await;
    let sessions = tempfile::tempdir().unwrap();
    let (code, env) = check(&server.url(), sessions.path(), &[]).await;
    assert_eq!(code, 0, "{env:#}");
    let c = &env["data"]["check"];
    assert_eq!(c["same"], 1);
    assert_eq!(c["different"], 0);
    assert_eq!(c["max_tokens"], 2048);
    assert_eq!(c["keys"]["default"], json!(["entity", "definition"]));
    assert_eq!(c["provider"], "o");
    let input = &c["inputs"][0];
    assert_eq!(input["input"], "photosynthesis");
    assert_eq!(input["verdict"], "same");
    assert_eq!(input["finish"], json!(["stop", "stop"]));
    assert_eq!(input["report"]["total"], json!({"both": 2, "only_a": 0, "only_b": 0}));
    // Both runs recorded, in order, in one session.
    let session = c["session"].as_str().unwrap();
    let loaded = cutline::session::load(std::path::Path::new(session)).unwrap();
    let ids: Vec<&str> = loaded.runs.iter().map(|r| r.prompt_id.as_str()).collect();
    assert_eq!(ids, ["extract-definitions", "extract-definitions-jsonl-2"]);
    assert_eq!(input["runs"][0], json!(loaded.runs[0].run_id));
    // Two requests: the original prompt, then the migrated one, same input and limit.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let (a, b) = (reqs[0].json(), reqs[1].json());
    assert_eq!(a["options"]["num_predict"], 2048);
    assert_eq!(b["options"]["num_predict"], 2048);
    let user = |v: &Value| {
        v["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(user(&a).contains("JSON array"), "{}", user(&a));
    assert!(!user(&b).contains("JSON array"), "{}", user(&b));
    assert!(user(&b).contains("chloroplasts"), "same sample input");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_different_items_exits_8_naming_the_keys() {
    let server = support::Server::start(vec![
        ollama(ORIGINAL, "stop"),
        ollama("{\"entity\": \"chlorophyll\", \"definition\": \"a green pigment\"}\n{\"entity\": \"glucose\", \"definition\": \"a sugar\"}\n", "stop"),
    ])
    .await;
    let sessions = tempfile::tempdir().unwrap();
    let (code, env) = check(&server.url(), sessions.path(), &["--max-tokens", "300"]).await;
    assert_eq!(code, 8, "{env:#}");
    assert_eq!(env["ok"], false);
    assert_eq!(env["error"]["category"], "check_failed");
    assert_eq!(
        env["error"]["message"],
        "migrate --check: 1 of 1 input(s) extract different items, 0 inconclusive"
    );
    let t = &env["error"]["detail"]["check"]["inputs"][0]["report"]["types"][0];
    assert_eq!(t["only_a_keys"], json!(["stomata | tiny pores"]));
    assert_eq!(t["only_b_keys"], json!(["glucose | a sugar"]));
    assert_eq!(server.requests()[0].json()["options"]["num_predict"], 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_with_a_side_cut_by_the_limit_is_inconclusive() {
    let server = support::Server::start(vec![
        ollama(
            r#"[{"entity": "chlorophyll", "definition": "a green pigment"}, {"entity": "sto"#,
            "length",
        ),
        ollama(
            "{\"entity\": \"chlorophyll\", \"definition\": \"a green pigment\"}\n",
            "stop",
        ),
    ])
    .await;
    let sessions = tempfile::tempdir().unwrap();
    let (code, env) = check(&server.url(), sessions.path(), &["--max-tokens", "20"]).await;
    assert_eq!(code, 8);
    let input = &env["error"]["detail"]["check"]["inputs"][0];
    assert_eq!(input["verdict"], "inconclusive");
    assert_eq!(
        input["reason"],
        "the original run was cut at 20 tokens; raise --max-tokens"
    );
    assert_eq!(input["finish"], json!(["length", "stop"]));
    assert_eq!(
        env["error"]["message"],
        "migrate --check: 0 of 1 input(s) extract different items, 1 inconclusive"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_replays_recorded_runs_of_exactly_the_rendered_prompts() {
    let server = support::Server::start(vec![
        ollama(ORIGINAL, "stop"),
        ollama("{\"entity\": \"chlorophyll\", \"definition\": \"a green pigment\"}\n{\"entity\": \"stomata\", \"definition\": \"tiny pores\"}\n", "stop"),
    ])
    .await;
    let sessions = tempfile::tempdir().unwrap();
    let (code, _) = check(&server.url(), sessions.path(), &[]).await;
    assert_eq!(code, 0);
    // No server this time: replay finds both runs by their rendered text.
    let (code, env) = check(
        "http://127.0.0.1:9",
        sessions.path(),
        &["--provider", "replay", "--no-record"],
    )
    .await;
    assert_eq!(code, 0, "{env:#}");
    assert_eq!(env["data"]["check"]["inputs"][0]["verdict"], "same");
    assert_eq!(env["data"]["check"]["session"], Value::Null);
    assert_eq!(server.requests().len(), 2);
    // Replay over an empty sessions dir says what is missing.
    let empty = tempfile::tempdir().unwrap();
    let (code, env) = check("http://127.0.0.1:9", empty.path(), &["--provider", "replay"]).await;
    assert_eq!(code, 5);
    let msg = env["error"]["message"].as_str().unwrap();
    assert_eq!(
        msg,
        format!(
            "replay: no recording in {} answers this request: there is no recording of prompt \
             \"extract-definitions\" nor of any prompt with these variables; run it on the local model (`cutline \
             setup local` installs it, then `--provider local`), or play a recording on purpose with `cutline \
             replay SESSION#N`",
            empty.path().display()
        )
    );
    // Refused before any session was opened for the runs.
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
}

#[test]
fn check_flags_need_check_and_limits_are_validated() {
    let out = cli(&["migrate", "extract-definitions", "--provider", "local"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--check"));
    let out = cli(&["migrate", "extract-definitions", "--check", "--max-tokens", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("\"0\" is not a max-token limit: use a positive number or `none`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn common_array_wording_becomes_jsonl_wording() {
    let schema = json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}});
    let template = "Find things in {{text}}.\nReturn a list of objects with `a`.\nOutput only the array.\nOutput only the JSON array, nothing else.\n";
    let m = prompt::migrate(&json_prompt(schema, template), None).unwrap();
    assert_eq!(
        m.config.template,
        "Find things in {{text}}.\nReturn JSONL: one JSON object per line with `a`.\nOutput only the JSON lines, one object per line.\nOutput only the JSON lines, one object per line, nothing else.\n"
    );
    assert_eq!(m.flags, vec![]);
}

/// TrustGraph's `schema-selection` answers with schema names: an array of
/// strings. Its lines are strings, so the wording says so and a flag on the
/// schema tells the author, rather than "one JSON object per line".
#[test]
fn items_that_are_not_objects_are_named_and_flagged() {
    let src = json_prompt(
        json!({"type": "array", "items": {"type": "string"}}),
        "Pick schemas for {{question}}.\nOutput only the array, e.g. [\"a\", \"b\"].",
    );
    let m = migrate(&src, None).unwrap();
    assert_eq!(
        m.config.template,
        "Pick schemas for {{question}}.\nOutput only the JSON lines, one string per line, e.g. \"a\"\n\"b\"."
    );
    assert_eq!(m.config.schema, Some(json!({"type": "string"})));
    assert_eq!(m.flags.len(), 1, "{:?}", m.flags);
    let flag = &m.flags[0];
    assert_eq!((flag.part, flag.line), ("schema", 0));
    assert!(
        flag.message
            .starts_with("the items are not objects: each line will be one JSON string"),
        "{}",
        flag.message
    );

    // Objects stay objects, unflagged; mixed types are "values".
    let objects = migrate(
        &json_prompt(
            json!({"type": "array", "items": {"properties": {"a": {}}}}),
            "Output a JSON array.",
        ),
        None,
    )
    .unwrap();
    assert_eq!(objects.config.template, "Output JSONL: one JSON object per line.");
    assert!(objects.flags.is_empty(), "{:?}", objects.flags);
    let mixed = migrate(
        &json_prompt(
            json!({"type": "array", "items": {"type": ["string", "integer"]}}),
            "Output a JSON array.",
        ),
        None,
    )
    .unwrap();
    assert_eq!(mixed.config.template, "Output JSONL: one JSON value per line.");
    assert_eq!(mixed.flags[0].part, "schema");
}
