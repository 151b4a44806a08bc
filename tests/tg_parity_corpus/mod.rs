//! The generated corpus of tests/tg_parity.rs: hard responses for every
//! cause of issue 22, and templates. Deterministic (a seeded generator).

use serde_json::{Value, json};

/// One response case.
pub struct Case {
    pub name: String,
    pub kind: &'static str,
    pub response: String,
    pub schema: Option<Value>,
}

impl Case {
    pub fn to_reference(&self) -> Value {
        let mut v = json!({"kind": self.kind, "response": self.response});
        if let Some(s) = &self.schema {
            v["schema"] = s.clone();
        }
        v
    }
}

fn entity() -> Value {
    json!({"type": "object", "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["entity", "definition"]})
}

const GOOD: &str = r#"{"entity": "river", "definition": "flowing water"}"#;
const GOOD2: &str = r#"{"entity": "lake", "definition": "still water"}"#;
const BAD_SCHEMA: &str = r#"{"entity": "sea"}"#;

fn deep_arrays(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

fn deep_objects(n: usize) -> String {
    format!("{}1{}", "{\"a\": ".repeat(n), "}".repeat(n))
}

fn digits(n: usize) -> String {
    let mut s = String::with_capacity(n);
    for i in 0..n {
        s.push(char::from(b'1' + u8::try_from(i % 9).unwrap_or(0)));
    }
    s
}

struct Gen(Vec<Case>);

impl Gen {
    fn add(&mut self, name: impl Into<String>, response: impl Into<String>, schema: Option<Value>) {
        self.0.push(Case {
            name: name.into(),
            kind: "jsonl",
            response: response.into(),
            schema,
        });
    }
    /// The same lines without a schema and with the entity schema.
    fn both(&mut self, name: &str, response: &str) {
        self.add(format!("{name} (no schema)"), response, None);
        self.add(format!("{name} (entity)"), response, Some(entity()));
    }
}

#[allow(clippy::too_many_lines, reason = "the corpus is a table of cases; one case per line")]
pub fn corpus_jsonl() -> Vec<Case> {
    let mut g = Gen(Vec::new());
    // 1. Integers past Python's 4300 digits: ValueError from json.loads, even
    //    on a malformed or cut line, unless a syntax error comes first.
    for n in [4300, 4301, 6000] {
        let d = digits(n);
        g.both(
            &format!("int {n} good line"),
            &format!("{GOOD}\n{{\"entity\": \"n\", \"definition\": \"x\", \"id\": {d}}}\n{GOOD2}"),
        );
        g.both(
            &format!("int {n} bad line"),
            &format!("{GOOD}\n{{\"id\": {d}, oops}}\n{GOOD2}"),
        );
        g.both(&format!("int {n} cut line"), &format!("{GOOD}\n{{\"id\": {d}"));
        g.add(format!("int {n} negative"), format!("{GOOD}\n[-{d}]"), None);
        g.add(format!("int {n} bare then dot"), format!("{d}.\n{GOOD}"), None);
        g.add(format!("int {n} exponent cut"), format!("{GOOD}\n[{d}e"), None);
    }
    let d = digits(5000);
    g.add("int after syntax error", format!("{GOOD}\n{{oops {d}}}"), None);
    g.add(
        "int in a string",
        format!("{{\"entity\": \"{d}\", \"definition\": \"x\"}}"),
        Some(entity()),
    );
    g.add("float 5000 digits", format!("[1.{d}]\n[{d}.5]\n[{d}e3]"), None);
    g.add("int past deep line", format!("{}\n[{d}]", deep_arrays(200)), None);
    // 2. Nesting around both runtimes' json.loads limits, whole and cut.
    for n in [
        127, 128, 129, 500, 978, 979, 980, 981, 996, 2000, 9993, 9994, 9995, 9996, 12000,
    ] {
        g.add(
            format!("arrays {n}"),
            format!("{GOOD}\n{}\n{GOOD2}", deep_arrays(n)),
            None,
        );
        g.add(format!("arrays {n} cut"), format!("{GOOD}\n{}", "[".repeat(n)), None);
    }
    for n in [979, 980, 9994, 9995] {
        g.add(format!("objects {n}"), format!("{}\n{GOOD}", deep_objects(n)), None);
        g.add(
            format!("objects {n} entity"),
            format!("{GOOD}\n{}", deep_objects(n)),
            Some(entity()),
        );
        g.add(format!("deep {n} after error"), format!("x{}", deep_arrays(n)), None);
        g.add(
            format!("deep {n} inside string"),
            format!("[\"{}\"]", "[".repeat(n)),
            None,
        );
    }
    // 3. The warning path: a rejected value pretty-printed into the log.
    for n in [320, 325, 326, 327, 328, 329, 335, 600] {
        g.add(
            format!("warn arrays {n}"),
            format!("{GOOD}\n{}", deep_arrays(n)),
            Some(entity()),
        );
        g.add(
            format!("warn objects {n}"),
            format!("{}\n{GOOD}", deep_objects(n)),
            Some(json!({"type": "array"})),
        );
        g.add(
            format!("warn property {n}"),
            format!("{{\"entity\": {}, \"definition\": \"x\"}}", deep_arrays(n)),
            Some(entity()),
        );
        g.add(
            format!("deep accepted {n}"),
            deep_arrays(n),
            Some(json!({"type": "array"})),
        );
    }
    g.add(
        "warn then parse raise",
        format!("{}\n{}", deep_arrays(400), deep_arrays(12000)),
        Some(entity()),
    );
    g.add(
        "warn then bad line",
        format!("{}\n{{oops\n{GOOD}", deep_arrays(400)),
        Some(entity()),
    );
    // 4. Falsy schemas: no validation at all.
    for s in [
        json!(false),
        json!({}),
        json!(0),
        json!(""),
        json!([]),
        json!(null),
        json!(true),
        json!(0.0),
    ] {
        g.add(
            format!("falsy {s}"),
            format!("{GOOD}\n{BAD_SCHEMA}\n42\n\"s\""),
            Some(s),
        );
    }
    g.add(
        "truthy invalid schema",
        format!("{GOOD}\n{BAD_SCHEMA}"),
        Some(json!({"type": "strin"})),
    );
    g.add("schema 1", format!("{GOOD}\n{BAD_SCHEMA}"), Some(json!(1)));
    g.add("schema list", GOOD, Some(json!([{"type": "object"}])));
    // 5. format is never asserted; drafts as Python's jsonschema picks them.
    let drafts = [
        None,
        Some("http://json-schema.org/draft-03/schema#"),
        Some("http://json-schema.org/draft-04/schema#"),
        Some("http://json-schema.org/draft-06/schema#"),
        Some("http://json-schema.org/draft-07/schema#"),
        Some("https://json-schema.org/draft/2019-09/schema"),
        Some("https://json-schema.org/draft/2020-12/schema"),
        Some("https://example.com/my-dialect"),
    ];
    for (i, d) in drafts.iter().enumerate() {
        let with = |mut s: Value| {
            if let Some(d) = d {
                s["$schema"] = json!(d);
            }
            s
        };
        g.add(
            format!("format draft {i}"),
            "{\"e\": \"not an email\", \"t\": \"yesterday\", \"ip\": \"999.1.1.1\", \"u\": \"::\"}\n{\"e\": \"a@b.c\"}",
            Some(with(json!({"properties": {"e": {"format": "email"}, "t": {"format": "date-time"}, "ip": {"format": "ipv4"}, "u": {"format": "uri"}}}))),
        );
        g.add(
            format!("dependencies draft {i}"),
            "{\"a\": 1}\n{\"a\": 1, \"b\": 2}\n{\"b\": 2}",
            Some(with(json!({"dependencies": {"a": ["b"]}}))),
        );
        g.add(
            format!("dependentRequired draft {i}"),
            "{\"a\": 1}\n{\"a\": 1, \"b\": 2}",
            Some(with(json!({"dependentRequired": {"a": ["b"]}}))),
        );
        g.add(
            format!("exclusiveMaximum bool draft {i}"),
            "{\"n\": 5}\n{\"n\": 4}\n{\"n\": 6}",
            Some(with(
                json!({"properties": {"n": {"maximum": 5, "exclusiveMaximum": true}}}),
            )),
        );
        g.add(
            format!("items array draft {i}"),
            "[1, \"a\"]\n[\"a\", 1]\n[1, 2, 3]",
            Some(with(
                json!({"items": [{"type": "integer"}, {"type": "string"}], "prefixItems": [{"type": "string"}]}),
            )),
        );
        g.add(
            format!("required bool draft {i}"),
            "{\"b\": 1}\n{\"a\": 1}",
            Some(with(json!({"type": "object", "properties": {"a": {"required": true}}}))),
        );
        g.add(
            format!("integer 1.0 draft {i}"),
            "1.0\n1\n1.5",
            Some(with(json!({"type": "integer"}))),
        );
    }
    // 6. Non-finite numbers and 1e400 against integer, const, bounds.
    let nonfinite = "NaN\nInfinity\n-Infinity\n1e400\n-1e400\n[NaN]\n{\"n\": NaN}\n3";
    for s in [
        json!({"type": "integer"}),
        json!({"type": "number"}),
        json!({"maximum": 10}),
        json!({"minimum": 0}),
        json!({"exclusiveMaximum": 10}),
        json!({"const": 0}),
        json!({"enum": [0, 1e308]}),
        json!({"multipleOf": 2}),
        json!({"not": {"type": "integer"}}),
        json!({"type": ["integer", "string"]}),
        json!({"items": {"maximum": 1}}),
        json!({"properties": {"n": {"minimum": 1}}}),
        json!({"uniqueItems": true}),
    ] {
        g.add(format!("non-finite {s}"), nonfinite, Some(s));
    }
    g.add("non-finite no schema", nonfinite, None);
    g.add(
        "nan unique",
        "[NaN, NaN]\n[1e400, 1e401]",
        Some(json!({"uniqueItems": true})),
    );
    // 7. Python's `re` in `pattern`.
    let pattern_lines = "\"a\"\n\"a\\n\"\n\"a\\n\\n\"\n\"\\u001c\"\n\" \"\n\"café\"\n\"٣\"\n\"²\"\n\"ab\"\n\"\\u0085\"\n\"[\"\n\"x-y\"\n7";
    for p in [
        "^a$",
        "a$",
        "^a\\Z",
        "a\\Z",
        "\\Aa",
        "^\\s$",
        "^\\S$",
        "^[\\s]$",
        "^\\w+$",
        "^\\d$",
        "^\\W$",
        "^\\D$",
        "\\p{L}",
        "\\P{L}",
        "a\\z",
        "(?P<x>a)(?P=x)?",
        "(a)\\1",
        "^[[]$",
        "^[a-]$",
        "[",
        "a{,2}",
        "^.$",
        "(?i)A",
        "(?s)a.",
        "(?m)a$",
        "x(?=-)",
        "(?<=x)-",
        "\\bab\\b",
        "^(?:a|b)+$",
        "\\u0061",
        "\\x61",
        "\\141",
        "[^\\W]",
        "\\e",
        "a++",
        "(?>a)",
        "^\\x1c$",
        "[&&a]",
        "[a&&b]",
        "^[\\d-z]+$",
        "^\\$",
        "$",
        "^$",
        "a|$",
    ] {
        g.add(format!("pattern {p:?}"), pattern_lines, Some(json!({"pattern": p})));
    }
    g.add(
        "patternProperties $",
        "{\"a\": 1}\n{\"a\\n\": 1}\n{\"b\": \"x\"}",
        Some(json!({"patternProperties": {"^a$": {"type": "string"}}})),
    );
    g.add(
        "patternProperties bad",
        "{\"a\": 1}",
        Some(json!({"patternProperties": {"\\p{L}": {"type": "string"}}})),
    );
    g.add(
        "property pattern refused",
        "{\"entity\": \"a\", \"definition\": \"b\"}\n{\"definition\": 3}",
        Some(json!({"properties": {"entity": {"type": "string", "pattern": "\\p{L}"}}})),
    );
    // 8. Fences as TrustGraph strips them.
    let body = format!("{GOOD}\n{GOOD2}");
    for tag in [
        "",
        "json",
        "jsonl",
        "JSON",
        "JSONL",
        "python",
        "jsonc",
        "jsonlines",
        "json5",
        "ndjson",
        " json",
        "json ",
        "text",
    ] {
        g.both(&format!("fence {tag:?}"), &format!("```{tag}\n{body}\n```"));
        g.add(format!("fence {tag:?} unclosed"), format!("```{tag}\n{body}"), None);
    }
    g.add("four backticks", format!("````\n{body}\n````"), None);
    g.add("four backticks jsonl", format!("````jsonl\n{body}\n````"), None);
    g.add("fence object same line", format!("```json {GOOD}\n{GOOD2}```"), None);
    g.add("fence jsonl same line", format!("```jsonl {GOOD}\n{GOOD2}\n```"), None);
    g.add("fence blank lines", format!("\n\n```json\n\n\n{body}\n\n```\n\n"), None);
    g.add("fence spaces", format!("  ```   \n  {body}  \n  ```  "), None);
    g.add(
        "fence twice",
        format!("```json\n{GOOD}\n```\n```json\n{GOOD2}\n```"),
        None,
    );
    g.add("fence mid", format!("{GOOD}\n```\n{GOOD2}"), None);
    g.add("fence only", "```json\n```", None);
    g.add("fence close tag", format!("```json\n{body}\n```json"), None);
    g.add("fence text after", format!("```json\n{body}\n```\nThat is all."), None);
    g.add("prose then fence", format!("Here:\n```json\n{body}\n```"), None);
    g.add("fence crlf", format!("```jsonl\r\n{GOOD}\r\n{GOOD2}\r\n```\r\n"), None);
    g.add("fence tab", format!("```\tjson\n{body}\n```"), None);
    g.add("fence jsonl blank", format!("```jsonl\n\n{body}\n```"), None);
    g.add("fence last line object", format!("{GOOD}\n{GOOD2}```"), None);
    g.add(
        "backticks in string",
        format!("{{\"entity\": \"```\", \"definition\": \"x\"}}\n{GOOD}"),
        Some(entity()),
    );
    // 9. Our own: whitespace, BOM, grammar corners, surrogates.
    for (name, text) in [
        ("crlf", format!("{GOOD}\r\n{GOOD2}\r\n")),
        ("unit separator end", format!("{GOOD}\u{1f}\n{GOOD2}\u{1c}")),
        ("nbsp around", format!("\u{a0}{GOOD}\u{a0}\n\u{3000}{GOOD2}")),
        ("line separator", format!("{GOOD}\u{2028}\n{GOOD2}")),
        ("nel", format!("{GOOD}\u{85}{GOOD2}")),
        ("bom first", format!("\u{feff}{GOOD}\n{GOOD2}")),
        ("bom second", format!("{GOOD}\n\u{feff}{GOOD2}")),
        ("vertical tab", format!("{GOOD}\u{b}\n\u{c}{GOOD2}")),
        ("empty", String::new()),
        ("blank", "  \n\t\n ".to_owned()),
        (
            "duplicate keys",
            "{\"entity\": 1, \"definition\": \"x\", \"entity\": \"a\"}".to_owned(),
        ),
        (
            "trailing comma",
            "{\"entity\": \"a\", \"definition\": \"x\",}\n[1,]".to_owned(),
        ),
        ("single quotes", "{'entity': 'a', 'definition': 'x'}".to_owned()),
        (
            "control char",
            "{\"entity\": \"a\tb\", \"definition\": \"x\"}".to_owned(),
        ),
        (
            "escaped control",
            "{\"entity\": \"a\\tb\", \"definition\": \"x\"}".to_owned(),
        ),
        (
            "lone surrogate",
            "{\"entity\": \"\\ud800\", \"definition\": \"x\"}\n[\"\\udc00x\"]".to_owned(),
        ),
        (
            "surrogate pair",
            "{\"entity\": \"\\ud83d\\ude00\", \"definition\": \"x\"}".to_owned(),
        ),
        ("bad escape", "{\"entity\": \"\\q\", \"definition\": \"x\"}".to_owned()),
        ("extra data", format!("{GOOD} {GOOD2}\n{GOOD},")),
        ("scalars", "1\n\"s\"\ntrue\nnull\n[]\n{}".to_owned()),
        ("leading zero", "01\n-0\n0.5\n.5\n1.\n-\n+1".to_owned()),
        ("exponents", "1e5\n1E+5\n1e-5\n1e\n2.5e3".to_owned()),
        ("nan words", "nan\nNAN\ninfinity\n-NaN\n+Infinity".to_owned()),
        (
            "big exact",
            "{\"entity\": \"a\", \"definition\": \"x\", \"n\": 123456789012345678901234567890}".to_owned(),
        ),
        ("unicode escapes", "[\"\\u00e9\", \"\\u0000\"]\n[\"\\u12\"]".to_owned()),
        ("nul raw", "[\"a\u{0}\"]".to_owned()),
        ("prose", format!("Here are the entities:\n{GOOD}\nHope this helps!")),
        ("markdown list", format!("- {GOOD}\n* {GOOD2}")),
        ("numbered", format!("1. {GOOD}\n2) {GOOD2}")),
        ("cut in string", format!("{GOOD}\n{{\"entity\": \"riv")),
        ("cut after colon", format!("{GOOD}\n{{\"entity\":")),
        ("cut inside escape", format!("{GOOD}\n[\"a\\")),
        ("array of objects line", format!("[{GOOD}, {GOOD2}]")),
        ("json array pretty", format!("[\n  {GOOD},\n  {GOOD2}\n]")),
        ("deep 1000 with good", format!("{GOOD}\n{}\n{GOOD2}", deep_arrays(1000))),
    ] {
        g.both(name, &text);
    }
    // 10. Mixed random responses.
    let mut rng = fastrand::Rng::with_seed(22);
    let pieces: Vec<String> = vec![
        GOOD.into(),
        GOOD2.into(),
        BAD_SCHEMA.into(),
        "not json".into(),
        "{\"entity\": \"x\", \"definition\": NaN}".into(),
        "{\"entity\": \"x\", \"definition\": \"\\ud800\"}".into(),
        String::new(),
        "```".into(),
        "[1, 2".into(),
        deep_arrays(50),
        "{\"entity\": \"ü\", \"definition\": \"ß\"}".into(),
        "  \t ".into(),
        "{\"entity\": \"a\", \"definition\": \"b\", \"extra\": [1, {\"k\": null}]}".into(),
    ];
    let schemas = [
        None,
        Some(entity()),
        Some(json!({"type": "object", "additionalProperties": false, "properties": {"entity": {}, "definition": {}}})),
        Some(json!({"properties": {"definition": {"type": "number"}}})),
    ];
    for i in 0..70 {
        let n = rng.usize(1..9);
        let mut lines: Vec<String> = (0..n).map(|_| pieces[rng.usize(..pieces.len())].clone()).collect();
        if rng.bool() {
            lines.insert(0, format!("```{}", ["", "json", "jsonl"][rng.usize(..3)]));
            lines.push("```".into());
        }
        let mut text = lines.join(if rng.u8(..4) == 0 { "\r\n" } else { "\n" });
        if rng.bool() {
            let cut = rng.usize(..=text.len());
            let cut = (0..=cut).rev().find(|&c| text.is_char_boundary(c)).unwrap_or(0);
            text.truncate(cut);
        }
        g.add(format!("mixed {i}"), text, schemas[rng.usize(..schemas.len())].clone());
    }
    g.0
}

#[allow(clippy::too_many_lines, reason = "the corpus is a table of cases; one case per line")]
pub fn corpus_json() -> Vec<Case> {
    let mut out = Vec::new();
    let mut add = |name: &str, response: String, schema: Option<Value>| {
        out.push(Case {
            name: name.into(),
            kind: "json",
            response,
            schema,
        });
    };
    let arr = json!({"type": "array", "items": entity()});
    let list = format!("[{GOOD}, {GOOD2}]");
    add("plain", list.clone(), Some(arr.clone()));
    add("plain no schema", list.clone(), None);
    add("fenced", format!("```json\n{list}\n```"), Some(arr.clone()));
    add("fenced jsonl tag", format!("```jsonl\n{list}\n```"), Some(arr.clone()));
    add("fenced JSON tag", format!("```JSON\n{list}\n```"), None);
    add("fenced python tag", format!("```python\n{list}\n```"), None);
    add("fenced no tag", format!("```\n{list}\n```"), None);
    add(
        "prose around fence",
        format!("Sure!\n```json\n{list}\n```\nDone."),
        None,
    );
    add("two fences", "```json\n[1]\n```\n```json\n[2]\n```".into(), None);
    add("fence unclosed", format!("```json\n{list}"), None);
    add("prose no fence", format!("Sure! {list}"), None);
    add("rejected", format!("[{BAD_SCHEMA}]"), Some(arr.clone()));
    add("cut", format!("[{GOOD}, {{\"entity\": "), Some(arr.clone()));
    add("trailing comma", format!("[{GOOD},]"), None);
    add("empty", String::new(), None);
    add(
        "nan",
        "[NaN, Infinity]".into(),
        Some(json!({"type": "array", "items": {"type": "number"}})),
    );
    add(
        "nan integer",
        "[NaN]".into(),
        Some(json!({"type": "array", "items": {"type": "integer"}})),
    );
    add("1e400 max", "[1e400]".into(), Some(json!({"items": {"maximum": 5}})));
    add("surrogate", "[\"\\ud800\"]".into(), None);
    let d = digits(5000);
    add("big int", format!("[{d}]"), None);
    add("big int cut", format!("[{d}"), None);
    add(
        "big int 4300",
        format!("[{}]", digits(4300)),
        Some(json!({"type": "array"})),
    );
    add("big int in fence", format!("```json\n{{\"n\": {d}}}\n```"), None);
    for n in [979, 980, 9994, 9995] {
        add(&format!("deep {n}"), deep_arrays(n), None);
        add(&format!("deep {n} cut"), "[".repeat(n), None);
    }
    for n in [326, 327, 328, 329] {
        add(&format!("warn {n}"), deep_arrays(n), Some(json!({"type": "object"})));
        add(
            &format!("warn objects {n}"),
            deep_objects(n),
            Some(json!({"type": "array"})),
        );
    }
    for s in [json!(false), json!({}), json!(0), json!(""), json!([])] {
        add(&format!("falsy {s}"), "[1, \"x\"]".into(), Some(s));
    }
    add("invalid schema", "[1]".into(), Some(json!({"type": "strin"})));
    add("pattern $", "\"a\\n\"".into(), Some(json!({"pattern": "^a$"})));
    add("pattern p{L}", "\"a\"".into(), Some(json!({"pattern": "\\p{L}"})));
    add("format", "\"nope\"".into(), Some(json!({"format": "email"})));
    add(
        "dependencies",
        "{\"a\": 1}".into(),
        Some(json!({"dependencies": {"a": ["b"]}})),
    );
    add(
        "object of arrays",
        format!("{{\"definitions\": [{GOOD}], \"relationships\": []}}"),
        None,
    );
    add("jsonl given", format!("{GOOD}\n{GOOD2}"), Some(arr));
    out
}
/// Templates: `{"kind": "render", "template", "vars"}`.
#[allow(clippy::too_many_lines, reason = "the corpus is a table of cases; one case per line")]
pub fn corpus_templates() -> Vec<Value> {
    let v = json!({
        "items": ["a", "b", "c"], "none": [], "name": "Ada", "n": 3, "d": {"k": "v", "j": 2},
        "text": "Hello World", "flag": true, "nothing": null, "f": 2.5, "nested": {"list": [{"x": 1}, {"x": 2}]}
    });
    let templates = [
        "{% for i in items %}{{ i }}{% empty %}none{% endfor %}",
        "{% for i in none %}{{ i }}{% empty %}none{% endfor %}",
        "{% for i in missing %}{{ i }}{% empty %}none{% endfor %}",
        "{{ items|len }} {{ none|len }}",
        "{{ name|len }}",
        "{{ i + 1 }}",
        "{{ n + 1 }}",
        "{{ n * 2 }}",
        "{{ name|upper }} {{ name|lower }}",
        "{{ text|title }}",
        "{{ items|join(', ') }}",
        "{{ items|join }}",
        "{{ missing|default('x') }}",
        "{% if n == 3 %}three{% else %}other{% endif %}",
        "{% if n > 2 %}big{% endif %}",
        "{% if flag and name %}yes{% endif %}",
        "{% if not flag %}no{% else %}yes{% endif %}",
        "{% if nothing %}a{% elif flag %}b{% else %}c{% endif %}",
        "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
        "{% for x in nested.list %}{{ x.x }}{% endfor %}",
        "{# a comment #}{{ name }}",
        "{{ f }} {{ n }} {{ flag }} {{ nothing }} {{ d }} {{ items }}",
        "{% for i in items %}{{ loop.index }}{% endfor %}",
        "{% for i in items %}{{ forloop.index }}{% endfor %}",
        "{{ items[0] }} {{ items.0 }}",
        "{{ d['k'] }} {{ d.k }}",
        "{{ name }",
        "{% if %}x{% endif %}",
        "{% for i in items %}{{ i }}",
        "{% unknowntag %}",
        "{{ name|nosuchfilter }}",
        "{{ 'lit' }} {{ \"dq\" }} {{ 42 }}",
        "{% with x = n %}{{ x }}{% endwith %}",
        "{% set x = 1 %}{{ x }}",
        "{{ name|first }} {{ items|last }}",
        "{{ text|lower|upper }}",
        "{% for i in items %}{% if i == 'b' %}{% break %}{% endif %}{{ i }}{% endfor %}",
        "{{ n|string }}",
        "{{ items|length }}",
        "{{ name if flag else 'x' }}",
        "  {% for i in items %}\n  {{ i }}\n  {% endfor %}\n",
        "{% raw %}{{ x }}{% endraw %}",
        "{{ flag ?? name :: 'no' }} {{ nothing ?? 'a' :: n }}",
        "{{ nothing or missing or name }} {{ nothing || f }}",
        "{$ '<b>\"x\"</b>' $} {{ '<i>' }}",
        "{% with a = name & b = n %}{{ a }}-{{ b }}{% endwith %}",
        "{% if 'b' in items %}in{% endif %}{% if 'z' not in items %} out{% endif %}",
        "{% if n >= 3 and name == 'Ada' or flag %}yes{% else %}no{% endif %}",
        "{% if n < 2 || nothing %}a{% elif n <= 3 && flag %}b{% endif %}",
        "{% for i in items %}{{ loop.count }}/{{ loop.length }}{% if loop.is_last %}.{% else %},{% endif %}{% endfor %}",
        "{% for x in nested.list %}{% for i in items %}{{ x.x }}{{ i }}{% endfor %};{% endfor %}",
        "{% for k, v in d.items() %}{{ k }}{% empty %}-{% endfor %}|{% for c in name %}{{ c }}.{% endfor %}",
        "{% for i in n %}x{% empty %}not iterable{% endfor %}",
        "{{ \"it's a dog's life\"|title }} {{ text|truncatewords(1) }} {{ text|truncatechars(8) }}",
        "{{ missing|default('d') }} {{ missing|if_undefined('u') }} {{ name|is_defined }} {{ missing|len }}",
        "{{ items|reversed|join('-') }} {{ items|index(1) }} {{ items|slice(1) }} {{ n|even }} {{ n|odd }}",
        "{{ name|wrap('b') }} {{ n|divisible_by(3) }} {{ items|first|upper }} {{ name|startswith('A') }}",
        "{% trim %}   padded   {% endtrim %}|{% spaceless %}<a>  </a>{% endspaceless %}",
        "{{ items|repr }} {{ d|str }} {{ f|str }} {{ [1, 'two', None, True]|str }} {{ {'k': [1, (2)]} }}",
        "{% for i in items %}{% endif %}{% endfor %}",
        "{% endfor %}",
        "{% %}",
        "{{ }}",
        "{{ items|join(, ) }}",
        "{# unclosed comment",
        "{% for in items %}x{% endfor %}",
        "{% with a %}{% endwith %}",
        "Ünïcödé {{ name }} ✓ {{ '✓'|upper }}",
        "{{ 0x1F }} {{ 1_000 }} {{ -2.50 }} {{ 1e3 }} {{ .5 }}",
        "{{ \"a'b'c o'neil x' y\"|title }}",
        "{{ d.missing.deeper }}{% if d.missing.deeper %}x{% endif %}{{ items.9 }}",
    ];
    templates
        .iter()
        .map(|t| json!({"kind": "render", "template": t, "vars": v}))
        .collect()
}
