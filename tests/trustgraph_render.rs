//! Rendering as TrustGraph renders: cutline's ibis semantics against the
//! real `ibis` package over templates of our own that use what the shipped
//! ones use (`.items()`, attributes of dicts, `if` on missing keys, filters,
//! newlines around tags), plus the undefined names a render lists.

mod tg_support;

use cutline::prompt::{PromptConfig, Undefined, render_with};
use serde_json::{Map, Value, json};

fn cases() -> Vec<(&'static str, Value)> {
    let classes = json!({
        "person": {"comment": "A human.", "subclass_of": "agent"},
        "city": {"subclass_of": ""},
        "river": {}
    });
    let schemas = json!([
        {"name": "orders", "description": "Orders placed", "fields": [
            {"name": "id", "type": "int", "primary_key": true, "required": true},
            {"name": "state", "type": "str", "description": "Where it is", "enum_values": ["new", "sent"]}
        ]},
        {"name": "people", "fields": []}
    ]);
    vec![
        (
            "Classes:\n{% for class_id, class_def in classes.items() %}\n- **{{class_id}}**{% if class_def.subclass_of %} (subclass of {{class_def.subclass_of}}){% endif %}{% if class_def.comment %}: {{class_def.comment}}{% endif %}\n{% endfor %}\n\nText: {{text}}\n",
            json!({"classes": classes, "text": "Rivers run."}),
        ),
        (
            "{% for schema in schemas %}**{{ schema.name }}**: {{ schema.description }}\n{% for field in schema.fields %}- {{ field.name }} ({{ field.type }}){% if field.description %}: {{ field.description }}{% endif %}{% if field.primary_key %} [PRIMARY KEY]{% endif %}{% if field.enum_values %} [OPTIONS: {{ field.enum_values|join(', ') }}]{% endif %}\n{% endfor %}{% endfor %}Q: {{ question }}",
            json!({"schemas": schemas, "question": "how many?"}),
        ),
        (
            "{% for edge in knowledge %}({{edge.s}})-[{{edge.p}}]->({{edge.o}})\n{%endfor%}\n{{query}}",
            json!({"knowledge": [{"s": "a", "p": "b", "o": "c"}, {"s": "d", "p": "e"}], "query": "q"}),
        ),
        (
            "{% if framing %}{{ framing }}\n\n{% endif %}{{ text|upper }} {{ missing }}.",
            json!({"text": "ab"}),
        ),
        (
            "{% if a and b %}both{% else %}not both{% endif %} {{ a.x.y }}|",
            json!({"a": {"x": {}}}),
        ),
        (
            "{{ n }} {{ f }} {{ big }} {{ t }} {{ no }} {{ l }} {{ d }}",
            json!({"n": 3, "f": 2.0, "big": 1e20, "t": true, "no": null, "l": ["it's", 1, 0.5], "d": {"k": "v"}}),
        ),
        (
            "  {% for x in nothing %}X{% endfor %}\n  {% if x %}\n  y\n  {% endif %}\nend\n",
            json!({}),
        ),
    ]
}

fn cfg(template: &str) -> PromptConfig {
    PromptConfig {
        id: "t".into(),
        template: template.into(),
        ..PromptConfig::default()
    }
}

fn vars(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[test]
fn ibis_and_cutline_render_the_same_bytes() {
    let cases = cases();
    let input: Vec<Value> = cases.iter().map(|(t, v)| json!({"template": t, "vars": v})).collect();
    let expected = tg_support::reference(&["render"], &Value::Array(input).to_string());
    for (i, (template, v)) in cases.iter().enumerate() {
        let got = render_with(&cfg(template), &Map::new(), &vars(v), Undefined::Ibis).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Value::String(got.prompt), expected[i], "case {i}: {template:?}");
    }
}

#[test]
fn undefined_names_touched_are_listed_in_order() {
    let (template, v) = &cases()[0];
    let got = render_with(&cfg(template), &Map::new(), &vars(v), Undefined::Ibis).unwrap();
    assert_eq!(
        got.undefined,
        [
            "classes.city.comment",
            "classes.river.subclass_of",
            "classes.river.comment"
        ]
    );
    let (template, v) = &cases()[4];
    let got = render_with(&cfg(template), &Map::new(), &vars(v), Undefined::Ibis).unwrap();
    assert_eq!(got.undefined, ["b", "a.x.y"]);
    let e = render_with(&cfg(template), &Map::new(), &vars(v), Undefined::Strict).unwrap_err();
    assert_eq!(
        e.to_string(),
        "<prompt t>: prompt \"t\": undefined variable `b` in template line 1"
    );
}
