//! TrustGraph's prompt configurations as TrustGraph users hold them: every
//! shape loads through `cutline prompts`, exports keep the source's shape.

mod tg_support;

use std::fs;

use assert_cmd::Command;
use serde_json::Value;

fn cutline() -> Command {
    let mut c = Command::cargo_bin("cutline").expect("binary");
    c.env_remove("CUTLINE_PROMPTS").env_remove("CUTLINE_SESSIONS");
    c
}

fn envelope(args: &[&str]) -> (Value, i32) {
    let out = cutline().args(args).arg("--output").arg("json").output().expect("run");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not one JSON envelope: {text:?}: {e}"));
    (v, out.status.code().unwrap_or(-1))
}

/// `cutline parse RESPONSE --prompt PROMPT`, as an envelope.
fn parse_with_prompt(response: &std::path::Path, prompt: &std::path::Path) -> (Value, i32) {
    envelope(&[
        "parse",
        response.to_str().unwrap(),
        "--prompt",
        prompt.to_str().unwrap(),
    ])
}

fn ids() -> Vec<String> {
    tg_support::templates().into_iter().map(|(k, _)| k).collect()
}

#[test]
fn prompts_lists_all_24_in_every_shape() {
    let cases = [
        (
            "configurator-2.7",
            serde_json::to_string_pretty(&tg_support::configurator(true)).unwrap(),
            "configurator",
        ),
        (
            "configurator-2.8",
            serde_json::to_string_pretty(&tg_support::configurator(false)).unwrap(),
            "configurator/no-index",
        ),
        ("store-2.7", tg_support::show_config_text(true), "config-store"),
        (
            "store-2.8",
            tg_support::show_config_text(false),
            "config-store/no-index",
        ),
    ];
    for (name, text, shape) in cases {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("config.json"), &text).unwrap();
        let (v, code) = envelope(&["prompts", "--dir", dir.path().to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {v}");
        assert_eq!(v["data"]["errors"], Value::Array(vec![]), "{name}");
        let prompts = v["data"]["prompts"].as_array().unwrap();
        let got: Vec<&str> = prompts.iter().map(|p| p["id"].as_str().unwrap()).collect();
        assert_eq!(got, ids(), "{name}");
        assert!(prompts.iter().all(|p| p["shape"] == shape), "{name}: {prompts:?}");
        let defs = prompts.iter().find(|p| p["id"] == "extract-definitions").unwrap();
        assert_eq!(
            (&defs["schema"], &defs["object_schema"]),
            (&Value::from("none"), &Value::from("{entity, definition}")),
            "{name}"
        );
        let types: Vec<&str> = prompts.iter().map(|p| p["response_type"].as_str().unwrap()).collect();
        assert_eq!(types.iter().filter(|t| **t == "jsonl").count(), 6, "{name}");
        assert_eq!(types.iter().filter(|t| **t == "json").count(), 9, "{name}");
    }
}

#[test]
fn single_prompt_shape_is_named() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("ask.json"),
        r#"{"prompt": "{{question}}", "response-type": "text"}"#,
    )
    .unwrap();
    let (v, code) = envelope(&["prompts", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(v["data"]["prompts"][0]["id"], "ask");
    assert_eq!(v["data"]["prompts"][0]["shape"], "trustgraph-prompt");
}

fn write_configurator(dir: &std::path::Path) -> String {
    let path = dir.join("config.json");
    fs::write(
        &path,
        serde_json::to_string_pretty(&tg_support::configurator(true)).unwrap(),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn render_with_vars_file_equals_ibis_and_lists_undefined() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_configurator(dir.path());
    let vars = serde_json::json!({"classes": {"person": {"comment": "A human."}, "river": {}}, "text": "Rivers run."});
    let vars_path = dir.path().join("v.json");
    fs::write(&vars_path, vars.to_string()).unwrap();
    let reference = format!("{config}#extract-with-ontologies");
    let (v, code) = envelope(&["render", &reference, "--vars", vars_path.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let template = tg_support::templates()
        .into_iter()
        .find(|(k, _)| k == "extract-with-ontologies")
        .unwrap()
        .1;
    let case = serde_json::json!([{"template": template["prompt"], "vars": vars}]);
    let ibis = tg_support::reference(&["render"], &case.to_string());
    assert_eq!(v["data"]["prompt"], ibis[0]);
    assert_eq!(v["data"]["prompt"], "- person: A human.\n- river\nRivers run.");
    assert_eq!(v["data"]["system"], tg_support::SYSTEM);
    assert_eq!(v["data"]["undefined"], serde_json::json!(["classes.river.comment"]));
    assert_eq!(
        v["warnings"],
        serde_json::json!([
            "prompt \"extract-with-ontologies\": `classes.river.comment` is undefined; rendered empty (false in `if`), as TrustGraph (ibis) does"
        ])
    );
    let (v, code) = envelope(&[
        "render",
        &reference,
        "--vars",
        vars_path.to_str().unwrap(),
        "--strict-vars",
    ]);
    assert_ne!(code, 0);
    assert_eq!(v["error"]["category"], "config_invalid", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("undefined variable `c.comment`"),
        "{v}"
    );
    fs::write(&vars_path, "[1]").unwrap();
    let (v, code) = envelope(&["render", &reference, "--vars", vars_path.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert_eq!(
        v["error"]["message"],
        format!(
            "{}: --vars expects a JSON object of variables, found an array",
            vars_path.display()
        )
    );
}

fn migrate_tg(source: &str, extra: &[&str]) -> (Value, i32) {
    let mut args = vec!["migrate", source, "--format", "trustgraph"];
    args.extend_from_slice(extra);
    envelope(&args)
}

#[test]
fn in_place_migration_inside_a_bundle_deploys_in_trustgraphs_loader() {
    for (name, text) in [
        (
            "configurator",
            serde_json::to_string_pretty(&tg_support::configurator(true)).unwrap(),
        ),
        ("config-store", tg_support::show_config_text(true)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("config.json");
        fs::write(&src, &text).unwrap();
        let out = dir.path().join("out.json");
        let reference = format!("{}#plan-create", src.display());
        let (v, code) = migrate_tg(&reference, &["--id", "plan-create", "--write", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {v}");
        let before = tg_support::reference(&["load", src.to_str().unwrap()], "");
        let after = tg_support::reference(&["load", out.to_str().unwrap()], "");
        assert_eq!(after["ids"], before["ids"], "{name}: index order kept");
        assert_eq!(after["ids"].as_array().unwrap().len(), 24, "{name}");
        assert_eq!(after["system"], tg_support::SYSTEM, "{name}");
        assert_eq!(after["raw"]["system"], before["raw"]["system"], "{name}");
        for (key, value) in before["raw"].as_object().unwrap() {
            if key != "template.plan-create" {
                assert_eq!(&after["raw"][key], value, "{name}: {key} byte-identical");
            }
        }
        let migrated = &after["prompts"]["plan-create"];
        assert_eq!(migrated["response-type"], "jsonl", "{name}");
        assert_eq!(migrated["schema"]["required"], serde_json::json!(["goal"]), "{name}");
        let written = fs::read_to_string(&out).unwrap();
        assert!(!written.starts_with("Version:"), "{name}: the export is JSON");
    }
}

#[test]
fn object_returning_prompt_is_unconvertible() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_configurator(dir.path());
    let (v, code) = migrate_tg(&format!("{config}#graphql-generation"), &[]);
    assert_eq!(code, 9, "{v}");
    assert_eq!(v["error"]["category"], "unconvertible");
    assert_eq!(
        v["error"]["message"],
        "unconvertible: the schema of `graphql-generation` is neither an array nor an object of arrays (property \
         `query` is not an array of objects); its callers expect one value, not a list of lines, so a JSONL twin is \
         a different contract (--force migrates anyway)"
    );
    let (v, code) = migrate_tg(&format!("{config}#graphql-generation"), &["--force"]);
    assert_eq!(code, 0, "{v}");
}

#[test]
fn single_prompt_exports_as_a_single_prompt_and_ids_are_names() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("plan.json");
    let entry = &tg_support::templates()[19].1;
    fs::write(&src, entry.to_string()).unwrap();
    let (v, code) = migrate_tg(src.to_str().unwrap(), &[]);
    assert_eq!(code, 0, "{v}");
    let exported: Value = serde_json::from_str(v["data"]["trustgraph"].as_str().unwrap()).unwrap();
    assert_eq!(
        exported,
        serde_json::json!({
            "prompt": "Plan {{question}} as JSONL: one JSON object per line of steps.",
            "response-type": "jsonl",
            "schema": {"type": "object", "properties": {"goal": {"type": "string"}}, "required": ["goal"]}
        })
    );
    let (v, code) = migrate_tg(src.to_str().unwrap(), &["--id", "../x"]);
    assert_eq!(code, 2, "{v}");
    assert_eq!(
        v["error"]["message"],
        "--id: \"../x\" is not a prompt id: it holds a path separator (an id is a name, never a path)"
    );
}

#[test]
fn object_schema_is_ignored_as_trustgraph_ignores_it_and_its_rejects_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let prompt = dir.path().join("defs.json");
    let schema = serde_json::json!({"type": "object", "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["entity", "definition"]});
    fs::write(
        &prompt,
        serde_json::json!({"prompt": "{{text}}", "response-type": "jsonl", "object-schema": schema}).to_string(),
    )
    .unwrap();
    let response = dir.path().join("r.txt");
    fs::write(
        &response,
        "{\"entity\":\"a\"}\n{\"entity\":\"b\",\"definition\":\"c\"}\n",
    )
    .unwrap();
    let (v, code) = parse_with_prompt(&response, &prompt);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["data"]["items"],
        serde_json::json!([{"entity": "a"}, {"entity": "b", "definition": "c"}])
    );
    assert_eq!(v["data"]["object_schema"]["ignored_by_trustgraph"], true);
    let rejects = v["data"]["object_schema"]["would_reject"].as_array().unwrap();
    assert_eq!(rejects.len(), 1);
    assert_eq!(rejects[0]["line"], 1);
    assert_eq!(rejects[0]["errors"][0]["pointer"], "/definition");
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("`object-schema` would reject line(s) 1; TrustGraph ignores"),
        "{v}"
    );
    // The JSONL stream: the line record and the summary say it too.
    let out = cutline()
        .args([
            "parse",
            response.to_str().unwrap(),
            "--prompt",
            prompt.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let line1 = records.iter().find(|r| r["type"] == "line" && r["line"] == 1).unwrap();
    assert_eq!(line1["status"], "ok");
    assert_eq!(line1["object_schema_errors"][0]["pointer"], "/definition");
    let line2 = records.iter().find(|r| r["type"] == "line" && r["line"] == 2).unwrap();
    assert!(line2.get("object_schema_errors").is_none());
    let summary = records.iter().find(|r| r["type"] == "summary").unwrap();
    assert_eq!(summary["object_schema_rejects"], serde_json::json!([1]));
    assert_eq!(summary["items"], 2);
}

#[test]
fn python_json_lines_are_kept_and_output_stays_strict_json() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    fs::write(
        &schema,
        r#"{"type": "object", "properties": {"confidence": {"type": "number"}}, "required": ["confidence"]}"#,
    )
    .unwrap();
    let response = dir.path().join("r.txt");
    // Past the 9994 containers json.loads opens on Python 3.13.
    let deep = format!("{{\"confidence\": 1, \"x\": {}{}}}", "[".repeat(9996), "]".repeat(9996));
    fs::write(
        &response,
        format!("{{\"confidence\": NaN, \"w\": \"\\ud800\"}}\n{{\"confidence\": -Infinity}}\n{deep}\n"),
    )
    .unwrap();
    let args = [
        "parse",
        response.to_str().unwrap(),
        "--as",
        "jsonl",
        "--schema",
        schema.to_str().unwrap(),
    ];
    let (v, code) = envelope(&args);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["data"]["items"],
        serde_json::json!([{"confidence": null, "w": "\u{fffd}"}, {"confidence": null}])
    );
    assert_eq!(
        v["data"]["lines"][0]["not_standard"],
        serde_json::json!(["NaN", "\\ud800"])
    );
    assert_eq!(v["data"]["lines"][1]["not_standard"], serde_json::json!(["-Infinity"]));
    assert_eq!(v["data"]["lines"][2]["status"], "too_deep");
    assert_eq!(v["data"]["lines"][2]["depth"], 9995);
    assert_eq!(v["data"]["counts"]["invalid_json"], 1);
    // The response-level verdict: TrustGraph's consumer raises on line 3 and
    // returns nothing, whatever lines 1 and 2 hold.
    assert_eq!(
        v["data"]["raises"],
        serde_json::json!({"line": 3, "kind": "recursion", "depth": 9995})
    );
    assert_eq!(
        v["warnings"],
        serde_json::json!([
            "the service fails this whole response: RecursionError at line 3 (json.loads nests 9995 deep), so \
             TrustGraph gets 0 items; the lines alone keep 2"
        ])
    );
    assert_eq!(
        v["data"]["lines"][2]["message"],
        "nesting depth 9995 is past Python 3.13's limit (9994): TrustGraph's json.loads raises RecursionError, \
         which parse_jsonl does not catch, so the whole response fails there"
    );
    // JSONL records are strict JSON too (the helper parses each one).
    let out = cutline().args(args).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let first: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("strict JSON"))
        .collect();
    let line1 = first.iter().find(|r| r["type"] == "line" && r["line"] == 1).unwrap();
    assert_eq!(line1["not_standard"], serde_json::json!(["NaN", "\\ud800"]));
    let summary = first.iter().find(|r| r["type"] == "summary").unwrap();
    assert_eq!(
        summary["raises"],
        serde_json::json!({"line": 3, "kind": "recursion", "depth": 9995})
    );
    // A response within the limit has no verdict.
    fs::write(&response, "{\"confidence\": 1}\n").unwrap();
    let (v, _) = envelope(&args);
    assert!(v["data"].get("raises").is_none(), "{v}");
}

#[test]
fn sidecar_sample_inputs_hold_structured_values() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_configurator(dir.path());
    let inputs = serde_json::json!({
        "extract-with-ontologies": {"rivers": {"classes": {"river": {"comment": "Flows."}}, "text": "The Nile."}},
        "no-such-prompt": {}
    });
    fs::write(dir.path().join("config.inputs.json"), inputs.to_string()).unwrap();
    let (v, code) = envelope(&["prompts", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["data"]["prompts"].as_array().unwrap().len(),
        24,
        "the sidecar is not a prompt file"
    );
    let p = v["data"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "extract-with-ontologies")
        .unwrap();
    assert_eq!(p["inputs"], serde_json::json!(["rivers"]));
    assert!(
        v["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .ends_with("config.inputs.json: no prompt `no-such-prompt` in the file beside it (ignored)")),
        "{v}"
    );
    let (v, code) = envelope(&["render", &format!("{config}#extract-with-ontologies")]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["prompt"], "- river: Flows.\nThe Nile.");
}

#[test]
fn schema_that_does_not_compile_loads_and_rejects_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let prompt = dir.path().join("p.json");
    fs::write(
        &prompt,
        "{\"prompt\": \"x\",\n\"response-type\": \"jsonl\",\n\"schema\": {\"type\": \"strin\"}}",
    )
    .unwrap();
    let (v, code) = envelope(&["prompts", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["prompts"].as_array().unwrap().len(), 1);
    let w = v["warnings"][0].as_str().unwrap();
    assert!(
        w.starts_with(&format!("{}:3: schema does not compile at /type: ", prompt.display())),
        "{w}"
    );
    assert!(
        w.ends_with("; TrustGraph loads it and rejects every value at run time, and so does cutline"),
        "{w}"
    );
    let response = dir.path().join("r.txt");
    fs::write(&response, "{\"a\": 1}\n\"s\"\n").unwrap();
    let (v, code) = parse_with_prompt(&response, &prompt);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["items"], serde_json::json!([]));
    assert_eq!(v["data"]["counts"]["schema_invalid"], 2);
}

#[test]
fn python_json_value_for_the_json_response_type() {
    let dir = tempfile::tempdir().unwrap();
    let response = dir.path().join("r.txt");
    fs::write(&response, "```json\n[{\"c\": NaN}, {\"c\": 1}]\n```\n").unwrap();
    let (v, code) = envelope(&["parse", response.to_str().unwrap(), "--as", "json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["status"], "ok");
    assert_eq!(v["data"]["items"], serde_json::json!([{"c": null}, {"c": 1}]));
    assert_eq!(v["data"]["not_standard"], serde_json::json!(["NaN"]));
}

#[test]
fn migrate_check_reads_vars_through_the_shared_reader() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("plan.json");
    fs::write(&src, tg_support::templates()[19].1.to_string()).unwrap();
    let vars = dir.path().join("v.json");
    fs::write(&vars, "[1]").unwrap();
    let (v, code) = envelope(&[
        "migrate",
        src.to_str().unwrap(),
        "--check",
        "--provider",
        "replay",
        "--vars",
        vars.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{v}");
    assert_eq!(
        v["error"]["message"],
        format!(
            "{}: --vars expects a JSON object of variables, found an array",
            vars.display()
        )
    );
    // --vars belongs to --check.
    let out = cutline()
        .args(["migrate", src.to_str().unwrap(), "--vars", vars.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `--tg-python` picks the runtime whose limits apply: a line 990 deep
/// parses on TrustGraph's Python 3.13 and fails the whole response on 3.11.
#[test]
fn tg_python_picks_the_nesting_limit() {
    let dir = tempfile::tempdir().unwrap();
    let response = dir.path().join("r.txt");
    let deep = format!("{}{}", "[".repeat(990), "]".repeat(990));
    fs::write(&response, format!("{{\"a\": 1}}\n{deep}\n")).unwrap();
    let path = response.to_str().unwrap();
    // The kept value nests past serde_json's default limit: read the
    // summary record only.
    let out = cutline().args(["parse", path, "--as", "jsonl"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let summary: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(summary["type"], "summary");
    assert!(summary.get("raises").is_none(), "{summary}");
    assert_eq!(summary["counts"]["ok"], 2);
    let (v, code) = envelope(&["parse", path, "--as", "jsonl", "--tg-python", "3.11"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["data"]["raises"],
        serde_json::json!({"line": 2, "kind": "recursion", "depth": 980})
    );
    let (v, code) = envelope(&["parse", path, "--as", "jsonl", "--tg-python", "2.7"]);
    assert_ne!(code, 0, "{v}");
}

/// A `json` response with an integer past Python's 4300 digits: TrustGraph's
/// `json.loads` raises `ValueError`, which `invoke` does not turn into its
/// "JSON parse fail": the service fails the response with it, and `parse`
/// says so beside cutline's own reading.
#[test]
fn json_response_type_says_which_exception_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let response = dir.path().join("r.txt");
    fs::write(&response, format!("```json\n[{}]\n```\n", "7".repeat(5000))).unwrap();
    let (v, code) = envelope(&["parse", response.to_str().unwrap(), "--as", "json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["status"], "ok");
    assert_eq!(v["data"]["raises"]["exception"], "ValueError");
    let w = v["warnings"][0].as_str().unwrap();
    assert!(
        w.starts_with("the service fails this whole response: ValueError"),
        "{w}"
    );
    // `--output pretty` says it too, after cutline's own reading.
    let out = cutline()
        .args([
            "parse",
            response.to_str().unwrap(),
            "--as",
            "json",
            "--output",
            "pretty",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "strict JSON: ok, 1 items",
            "the service fails this whole response: ValueError (Exceeds the limit (4300 digits) for integer string \
             conversion: value has 5000 digits), where cutline's own reading says what the text holds"
        ]
    );
}

/// A single TrustGraph prompt has no system: TrustGraph renders it with its
/// workspace's. cutline takes that from `--system FILE`, else from the
/// bundle beside it, else renders without one and says so.
#[test]
fn single_prompts_render_with_the_workspace_system() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    fs::create_dir(&prompts).unwrap();
    let single = prompts.join("plan.json");
    fs::write(&single, r#"{"prompt": "Plan {{q}}.", "response-type": "text"}"#).unwrap();
    let system_file = dir.path().join("system.txt");
    fs::write(&system_file, "The workspace's own system.").unwrap();
    let render = |extra: &[&str]| {
        let mut args = vec![
            "render",
            single.to_str().unwrap(),
            "--var",
            "q=tea",
            "--prompts",
            prompts.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        envelope(&args)
    };

    let (v, code) = render(&[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["system"], "");
    let (v, _) = envelope(&["prompts", "--prompts", prompts.to_str().unwrap()]);
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`plan` is a single TrustGraph prompt with no system")),
        "{v}"
    );

    let (v, code) = render(&["--system", system_file.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["system"], "The workspace's own system.");
    assert_eq!(v["data"]["prompt"], "Plan tea.");

    fs::write(prompts.join("config.json"), tg_support::show_config_text(true)).unwrap();
    let (v, code) = render(&[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["system"], tg_support::SYSTEM, "the bundle's system");
    let (v, _) = render(&["--system", system_file.to_str().unwrap()]);
    assert_eq!(v["data"]["system"], "The workspace's own system.", "--system wins");

    fs::write(&system_file, b"ok\xff\xfe").unwrap();
    let (v, code) = render(&["--system", system_file.to_str().unwrap()]);
    assert_eq!(code, 3, "{v}");
    assert_eq!(
        v["error"]["message"],
        format!(
            "{}: --system: the file is not UTF-8 (invalid byte at offset 2)",
            system_file.display()
        )
    );
}

/// `--tg-loader index` reads bundles as TrustGraph 2.8.13 and older do:
/// only what `template-index` lists, so a 2.8 bundle without one loads
/// nothing there.
#[test]
fn the_loader_switch_reads_bundles_as_old_trustgraph() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("config.json"), tg_support::show_config_text(false)).unwrap();
    let d = dir.path().to_str().unwrap();
    let (v, code) = envelope(&["prompts", "--prompts", d]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["data"]["prompts"].as_array().unwrap().len(), 24);
    let (v, _) = envelope(&["prompts", "--prompts", d, "--tg-loader", "index"]);
    assert_eq!(v["data"]["prompts"], serde_json::json!([]), "{v}");
    let errors = v["data"]["errors"].to_string();
    assert!(
        errors.contains("no `template-index`: TrustGraph 2.8.13 and older load only the ids the index lists"),
        "{v}"
    );
}

/// `--tg-python` is global: `compare` judges on the chosen Python too. A
/// line 990 deep is an item on 3.13 and a line past the limit on 3.11.
#[test]
fn compare_follows_the_chosen_python() {
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts");
    fs::create_dir(&prompts).unwrap();
    fs::write(
        prompts.join("p.toml"),
        "id = \"p\"\nresponse-type = \"jsonl\"\nprompt = \"x\"\n",
    )
    .unwrap();
    let a = dir.path().join("a.txt");
    let b = dir.path().join("b.txt");
    fs::write(&a, "{\"a\": 1}\n{\"b\": 2}\n").unwrap();
    let deep = format!("{}{}", "[".repeat(990), "]".repeat(990));
    fs::write(&b, format!("{{\"a\": 1}}\n{{\"b\": 2}}\n{deep}\n")).unwrap();
    let compare = |py: &str| {
        let out = cutline()
            .args([
                "compare",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "--prompt-a",
                "p",
                "--prompt-b",
                "p",
            ])
            .args([
                "--prompts",
                prompts.to_str().unwrap(),
                "--tg-python",
                py,
                "--output",
                "json",
            ])
            .output()
            .unwrap();
        // The deep item nests past serde_json's default limit.
        let mut de = serde_json::Deserializer::from_slice(&out.stdout);
        de.disable_recursion_limit();
        let v: Value = serde::Deserialize::deserialize(&mut de).unwrap();
        (v["data"]["b"]["kept"].clone(), v["data"]["b"]["judged"].clone())
    };
    assert_eq!(compare("3.13"), (serde_json::json!(3), serde_json::json!(3)));
    assert_eq!(compare("3.11"), (serde_json::json!(2), serde_json::json!(3)));
}
