//! A 24-prompt TrustGraph prompt set of our own (short templates in the
//! shapes TrustGraph ships: text, json with array / object / object-of-arrays
//! schemas, jsonl with `object-schema`), written in each shape a TrustGraph
//! user holds: the configurator's `config.json` (raw values) and a
//! `tg-show-config` dump of the config store (encoded strings), each with
//! `template-index` (2.7) and without (2.8).

#![allow(dead_code, reason = "shared by several test binaries; each uses a part")]

use cutline::prompt::trustgraph::encode;
use serde_json::{Map, Value, json};

/// The shared system prompt of the set.
pub const SYSTEM: &str = "You answer tersely.";

fn obj_schema(props: &[&str]) -> Value {
    let p: Map<String, Value> = props
        .iter()
        .map(|k| ((*k).to_owned(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": p, "required": props})
}

/// The 24 template entries, in index order: `(id, entry)`.
#[allow(clippy::too_many_lines, reason = "the 24 templates are one table, in index order")]
pub fn templates() -> Vec<(String, Value)> {
    let text = |t: &str| json!({"prompt": t, "response-type": "text"});
    let lines = |t: &str, s: Value| json!({"prompt": t, "response-type": "jsonl", "object-schema": s});
    let structured = |t: &str, s: Option<Value>| match s {
        Some(s) => json!({"prompt": t, "response-type": "json", "schema": s}),
        None => json!({"prompt": t, "response-type": "json"}),
    };
    let list = vec![
        ("question", json!({"prompt": "{{question}}"})),
        ("extract-concepts", text("Concepts in: {{text}}")),
        (
            "extract-definitions",
            lines(
                "Terms in {{text}}, one per line.",
                obj_schema(&["entity", "definition"]),
            ),
        ),
        (
            "extract-relationships",
            lines("Triples in {{text}}.", obj_schema(&["subject", "predicate", "object"])),
        ),
        (
            "extract-topics",
            lines("Topics in {{text}}.", obj_schema(&["topic", "definition"])),
        ),
        (
            "extract-rows",
            json!({"prompt": "Rows of {{schema.name}} in {{text}}.", "response-type": "jsonl"}),
        ),
        (
            "kg-synthesis",
            text("{% for e in knowledge %}({{e.s}}) {{e.p}} ({{e.o}})\n{% endfor %}Q: {{query}}"),
        ),
        (
            "document-prompt",
            text("{% for d in documents %}{{d}}\n{% endfor %}Q: {{query}}"),
        ),
        (
            "agent-react",
            text(
                "{% for t in tools %}- {{t.name}}{% if t.description %}: {{t.description}}{% endif %}\n{% endfor %}{{question}}",
            ),
        ),
        (
            "agent-kg-extract",
            lines(
                "Facts in {{text}}.",
                json!({"oneOf": [
                    {"type": "object", "properties": {"type": {"const": "definition"}, "entity": {"type": "string"}}, "required": ["type", "entity"]},
                    {"type": "object", "properties": {"type": {"const": "relationship"}, "subject": {"type": "string"}}, "required": ["type", "subject"]}
                ]}),
            ),
        ),
        (
            "schema-selection",
            structured(
                "Pick schemas for {{question}}. Output only the array.",
                Some(json!({"type": "array", "items": {"type": "string"}})),
            ),
        ),
        (
            "graphql-generation",
            structured(
                "{% for s in schemas %}{{ s.name }}{% for f in s.fields %} {{ f.name }}{% if f.description %}: {{ f.description }}{% endif %}{% endfor %}\n{% endfor %}Q: {{ question }}",
                Some(json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})),
            ),
        ),
        (
            "diagnose-structured-data",
            structured("What format is {{sample}}?", None),
        ),
        ("diagnose-xml", structured("Describe the XML {{sample}}.", None)),
        ("diagnose-json", structured("Describe the JSON {{sample}}.", None)),
        ("diagnose-csv", structured("Describe the CSV {{sample}}.", None)),
        (
            "extract-with-ontologies",
            lines(
                "{% for id, c in classes.items() %}- {{id}}{% if c.comment %}: {{c.comment}}{% endif %}\n{% endfor %}{{text}}",
                json!({"oneOf": [
                    {"type": "object", "properties": {"type": {"const": "entity"}, "entity": {"type": "string"}}, "required": ["type", "entity"]}
                ]}),
            ),
        ),
        ("task-type-classify", text("Classify: {{question}}")),
        ("pattern-select", text("Pick a pattern for {{question}}")),
        (
            "plan-create",
            structured(
                "Plan {{question}} as a JSON array of steps.",
                Some(json!({"type": "array", "items": obj_schema(&["goal"])})),
            ),
        ),
        (
            "plan-step-execute",
            structured(
                "Do {{goal}}.",
                Some(json!({"type": "object", "properties": {"answer": {"type": "string"}}})),
            ),
        ),
        ("plan-synthesise", text("Sum up {{question}}")),
        (
            "supervisor-decompose",
            structured(
                "Split {{question}}.",
                Some(
                    json!({"type": "object", "properties": {"goals": {"type": "array", "items": {"type": "string"}}}, "required": ["goals"]}),
                ),
            ),
        ),
        ("supervisor-synthesise", text("Merge answers to {{question}}")),
    ];
    list.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// The configurator's `config.json`: raw values under `prompt`, with other
/// config types beside it.
pub fn configurator(indexed: bool) -> Value {
    let mut prompt = Map::new();
    prompt.insert("system".into(), json!(SYSTEM));
    let t = templates();
    if indexed {
        prompt.insert(
            "template-index".into(),
            json!(t.iter().map(|(k, _)| k).collect::<Vec<_>>()),
        );
    }
    for (k, v) in t {
        prompt.insert(format!("template.{k}"), v);
    }
    json!({
        "prompt": prompt,
        "tool": {"knowledge-query": {"id": "knowledge-query", "type": "knowledge-query"}},
        "flow-blueprint": {"default": {"description": "the default flow"}},
    })
}

/// What TrustGraph's template seeder stores for a configurator config
/// (`json.dumps` of every value), as `tg-show-config` prints it: every
/// config type, every value a JSON-encoded string.
pub fn config_store(indexed: bool) -> Value {
    let Value::Object(types) = configurator(indexed) else {
        unreachable!()
    };
    let mut out = Map::new();
    for (ty, entries) in types {
        let Value::Object(entries) = entries else {
            unreachable!()
        };
        let enc: Map<String, Value> = entries
            .into_iter()
            .map(|(k, v)| (k, Value::String(encode(&v))))
            .collect();
        out.insert(ty, Value::Object(enc));
    }
    Value::Object(out)
}

/// `tg-show-config`'s stdout: a `Version:` line, then the JSON with indent 4.
pub fn show_config_text(indexed: bool) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(&config_store(indexed), &mut ser).expect("serialise");
    format!("Version: 7\n{}\n", String::from_utf8(buf).expect("utf-8"))
}

/// Python with `ibis` and `jsonschema` (pinned), in a venv under the user
/// cache dir, made on first use, as `scripts/bench-reference.sh` makes its
/// own. Fails the test (with why) when the venv cannot be made.
pub fn python() -> std::path::PathBuf {
    use std::path::PathBuf;
    use std::process::Command;
    use std::sync::OnceLock;
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .expect("HOME or XDG_CACHE_HOME");
        let venv = cache.join("cutline/tg-reference-venv");
        let py = venv.join("bin/python");
        let ready = Command::new(&py)
            .args(["-c", "import ibis, jsonschema; assert ibis.__version__ == '3.3.0'"])
            .status()
            .is_ok_and(|s| s.success());
        if !ready {
            let ok = Command::new("python3")
                .arg("-m")
                .arg("venv")
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success())
                && Command::new(venv.join("bin/pip"))
                    .args(["install", "-q", "ibis==3.3.0", "jsonschema==4.26.0"])
                    .status()
                    .is_ok_and(|s| s.success());
            assert!(
                ok,
                "cannot make the reference venv {} (python3 -m venv; pip install ibis jsonschema)",
                venv.display()
            );
        }
        py
    })
    .clone()
}

/// Run `scripts/reference_tg.py` with `args`, `stdin` fed in; its JSON output.
pub fn reference(args: &[&str], stdin: &str) -> Value {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(python())
        .arg("scripts/reference_tg.py")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn python");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("python");
    assert!(
        out.status.success(),
        "reference_tg.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("reference output is JSON")
}
