//! Properties of the output engine over generated responses.
//!
//! Responses are JSONL and JSON-array outputs of small objects whose strings
//! carry quotes, brackets, braces, backslashes, escapes, fences and
//! multi-byte characters (CJK, emoji, U+3000), plus a noise generator of
//! JSON-ish fragments. For **every byte prefix** (so also mid-UTF-8):
//!
//! - nothing panics;
//! - the items recovered are a prefix of the full output's items, and every
//!   salvaged element is one that was generated: never an invented one;
//! - the streaming analysers fed arbitrary chunks equal the one-shot ones;
//! - the sweep at each cut equals the one-shot analysers run on that prefix.

use cutline::output::json::{self, JsonSchemas, JsonStatus, OutlineView};
use cutline::output::jsonl::{self, LineStatus};
use cutline::output::schema::CompiledSchema;
use cutline::output::stream::{Completed, JsonStream, JsonlStream};
use cutline::output::sweep::{SweepPoint, SweepSchemas, sweep};
use proptest::prelude::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------- schemas

fn item_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}},
        "required": ["entity", "definition"]
    })
}

struct Schemas {
    line: CompiledSchema,
    json: JsonSchemas,
    sweep: SweepSchemas,
    /// An array of a discriminated union, whose element errors are read by
    /// branch while the whole array's are the validator's own.
    union: JsonSchemas,
    /// The array schema with length bounds that generated arrays meet and
    /// miss: judged by the elements within them, by the validator outside.
    bounded: JsonSchemas,
    /// An object of two array properties, one of them required and
    /// bounded, and no other property allowed.
    object: JsonSchemas,
}

fn union_schema() -> Value {
    json!({
        "type": "array",
        "items": {"oneOf": [
            {"type": "object", "properties": {"type": {"const": "term"}, "entity": {"type": "string"}},
             "required": ["type", "entity"]},
            {"type": "object", "properties": {"type": {"const": "note"}, "definition": {"type": "string"}},
             "required": ["type", "definition"]}
        ]}
    })
}

fn schemas() -> &'static Schemas {
    static S: std::sync::OnceLock<Schemas> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let whole = json!({"type": "array", "items": item_schema()});
        Schemas {
            line: CompiledSchema::compile(&item_schema()).unwrap(),
            json: JsonSchemas::compile(Some(&whole)).unwrap(),
            sweep: SweepSchemas {
                json: JsonSchemas::compile(Some(&whole)).unwrap(),
                line: Some(CompiledSchema::compile(&item_schema()).unwrap()),
            },
            union: JsonSchemas::compile(Some(&union_schema())).unwrap(),
            bounded: JsonSchemas::compile(Some(
                &json!({"type": "array", "items": item_schema(), "minItems": 2, "maxItems": 3}),
            ))
            .unwrap(),
            object: JsonSchemas::compile(Some(&json!({
                "type": "object",
                "properties": {
                    "definitions": {"type": "array", "items": item_schema(), "minItems": 1},
                    "notes": {"$ref": "#/$defs/notes"}
                },
                "required": ["definitions"],
                "additionalProperties": false,
                "$defs": {"notes": {"type": "array", "items": {"type": "object"}}}
            })))
            .unwrap(),
        }
    })
}

// ---------------------------------------------------------------- generators

/// String content with everything that can fool a structural scanner.
fn tricky_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("a"),
            Just("Zq"),
            Just(" "),
            Just("\""),
            Just("\\"),
            Just("\\\""),
            Just("]"),
            Just("}"),
            Just("["),
            Just("{"),
            Just(","),
            Just(":"),
            Just("\n"),
            Just("\t"),
            Just("\u{1}"),
            Just("日本"),
            Just("é"),
            Just("🌱"),
            Just("\u{3000}"),
            Just("```"),
            Just("/"),
        ],
        0..6,
    )
    .prop_map(|v| v.concat())
}

/// A JSON string literal: serialised, or hand-written escapes.
fn json_string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => tricky_text().prop_map(|s| serde_json::to_string(&s).unwrap()),
        1 => prop_oneof![
            Just(r#""a\"b""#.to_owned()),
            Just(r#""\\""#.to_owned()),
            Just(r#""\u00e9\ud83c\udf31""#.to_owned()),
            Just(r#""x\/y\b\f\r""#.to_owned()),
            Just(r#""}]\"{[""#.to_owned()),
        ],
    ]
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        json_string(),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("1234567890123456789012345".to_owned()),
        Just("-0.10".to_owned()),
        Just("6.02e23".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        Just("null".to_owned()),
    ]
}

/// A small object as JSON text. Mostly valid against the item schema; a
/// non-string definition or a missing one makes it schema-invalid.
fn object() -> impl Strategy<Value = String> {
    (
        json_string(),
        prop_oneof![3 => json_string(), 1 => scalar()],
        any::<bool>(),
        prop::option::of(prop::collection::vec(scalar(), 0..3)),
        prop_oneof![Just(", "), Just(","), Just(" ,  ")],
    )
        .prop_map(|(e, d, with_def, extra, sep)| {
            let mut fields = vec![format!("\"entity\":{e}")];
            if with_def {
                fields.push(format!("\"definition\": {d}"));
            }
            if let Some(list) = extra {
                fields.push(format!("\"n\": [{}]", list.join(sep)));
            }
            format!("{{{}}}", fields.join(sep))
        })
}

/// An object of arrays as a model writes one: members drawn from the
/// schema's two keys and one it does not allow, a key sometimes repeated,
/// a member sometimes not an array.
fn object_doc() -> impl Strategy<Value = String> {
    let member = (
        prop_oneof![Just("definitions"), Just("notes"), Just("other")],
        prop_oneof![
            6 => prop::collection::vec(object(), 0..4).prop_map(|objs| format!("[{}]", objs.join(", "))),
            1 => scalar(),
        ],
    );
    (
        prop::collection::vec(member, 0..4),
        prop_oneof![Just(", "), Just(",\n  ")],
        prop_oneof![Just(("", "")), Just(("```json\n", "\n```"))],
    )
        .prop_map(|(members, sep, (open, close))| {
            let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
            format!("{open}{{{}}}{close}", body.join(sep))
        })
}

/// A generated response and the values it holds, in order.
#[derive(Debug, Clone)]
struct Doc {
    text: String,
    values: Vec<Value>,
}

fn parse_all(objs: &[String]) -> Vec<Value> {
    objs.iter().map(|o| serde_json::from_str(o).unwrap()).collect()
}

fn jsonl_doc() -> impl Strategy<Value = Doc> {
    (
        prop::collection::vec((object(), 0..3usize), 0..6),
        prop_oneof![Just("\n"), Just("\r\n")],
        prop_oneof![Just(""), Just("```jsonl"), Just("```json"), Just("```")],
        any::<bool>(),
        prop_oneof![Just(""), Just("\n"), Just("  \n"), Just("\u{3000}"), Just("\n\n")],
    )
        .prop_map(|(lines, nl, fence, close, tail)| {
            let mut text = String::new();
            if !fence.is_empty() {
                text.push_str(fence);
                text.push_str(nl);
            }
            for (obj, blanks) in &lines {
                text.push_str(obj);
                text.push_str(nl);
                for _ in 0..*blanks {
                    text.push_str(nl);
                }
            }
            if close {
                text.push_str("```");
            }
            text.push_str(tail);
            let objs: Vec<String> = lines.into_iter().map(|(o, _)| o).collect();
            Doc {
                text,
                values: parse_all(&objs),
            }
        })
}

fn array_doc() -> impl Strategy<Value = Doc> {
    (
        prop::collection::vec(object(), 0..6),
        prop_oneof![Just(","), Just(", "), Just(",\n  "), Just("\r\n,")],
        prop_oneof![Just(""), Just("\n"), Just(" ")],
        prop_oneof![
            Just(("", "")),
            Just(("```json\n", "\n```")),
            Just(("```\n", "\n```\n")),
            Just(("Here it is:\n```json\n", "\n```\nDone.")),
            Just(("```json ", "```")),
        ],
    )
        .prop_map(|(objs, sep, pad, (open, close))| {
            let text = format!("{open}[{pad}{}{pad}]{close}", objs.join(sep));
            Doc {
                text,
                values: parse_all(&objs),
            }
        })
}

/// How one element of an array is damaged, as a model breaks JSON.
#[derive(Debug, Clone, Copy)]
enum Damage {
    /// Its `{` dropped.
    OpenBrace,
    /// Its `}` dropped.
    CloseBrace,
    /// The colon after its first key dropped.
    Colon,
    /// The comma after it dropped (nothing is lost then).
    Separator,
}

/// A JSON array with one element damaged: the text, the generated values,
/// and the values salvage must keep (all but the damaged element).
#[derive(Debug, Clone)]
struct Damaged {
    text: String,
    values: Vec<Value>,
    keep: Vec<Value>,
}

fn damaged_doc() -> impl Strategy<Value = Damaged> {
    (
        prop::collection::vec(object(), 2..7),
        any::<prop::sample::Index>(),
        prop_oneof![
            Just(Damage::OpenBrace),
            Just(Damage::CloseBrace),
            Just(Damage::Colon),
            Just(Damage::Separator)
        ],
        any::<bool>(),
    )
        .prop_map(|(mut objs, at, damage, lines)| {
            let values = parse_all(&objs);
            let k = at.index(objs.len() - 1);
            let el = &mut objs[k];
            match damage {
                Damage::OpenBrace => drop(el.remove(0)),
                Damage::CloseBrace => drop(el.pop()),
                // `object()` writes `{"entity":` first.
                Damage::Colon => drop(el.remove(9)),
                Damage::Separator => {}
            }
            let (open, sep, close) = if lines {
                ("[\n  ", ",\n  ", "\n]")
            } else {
                ("[", ", ", "]")
            };
            let mut text = open.to_owned();
            for (i, o) in objs.iter().enumerate() {
                text.push_str(o);
                if i + 1 < objs.len() {
                    let damaged_sep = matches!(damage, Damage::Separator) && i == k;
                    text.push_str(if damaged_sep { &sep[1..] } else { sep });
                }
            }
            text.push_str(close);
            let mut keep = values.clone();
            if !matches!(damage, Damage::Separator) {
                keep.remove(k);
            }
            Damaged { text, values, keep }
        })
}

/// JSON-ish noise: fragments that make every parser state reachable.
fn noise() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("{"),
            Just("}"),
            Just("["),
            Just("]"),
            Just("\""),
            Just("\\"),
            Just(","),
            Just(":"),
            Just(" "),
            Just("\n"),
            Just("\r\n"),
            Just("1"),
            Just("23"),
            Just("-"),
            Just("e"),
            Just("true"),
            Just("nul"),
            Just("```"),
            Just("```json"),
            Just("```jsonl"),
            Just("json"),
            Just("\"a\""),
            Just("{\"entity\": \"x\", \"definition\": \"y\"}"),
            Just("日"),
            Just("\u{3000}"),
            Just("\u{a0}"),
            Just("x"),
        ],
        0..24,
    )
    .prop_map(|v| v.concat())
}

// ---------------------------------------------------------------- oracles

/// The one-shot analysers on each cut (JSON reads the prefix lossily: a cut
/// can fall inside a UTF-8 character).
fn naive_sweep(text: &[u8], cuts: &[usize], s: &SweepSchemas) -> Vec<SweepPoint> {
    cuts.iter()
        .enumerate()
        .map(|(tokens, &c)| {
            let j = json::analyse(&String::from_utf8_lossy(&text[..c]), &s.json);
            let l = jsonl::analyse(&text[..c], s.line.as_ref());
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

fn is_prefix<T: PartialEq>(short: &[T], long: &[T]) -> bool {
    short.len() <= long.len() && short == &long[..short.len()]
}

/// Feed `text` to both streaming analysers in chunks of the given sizes
/// (cycled); check the running views on the way.
fn stream_in(
    text: &[u8],
    sizes: &[usize],
) -> (
    cutline::output::jsonl::JsonlAnalysis,
    cutline::output::json::JsonAnalysis,
    Vec<Completed>,
) {
    let s = schemas();
    let mut lines = JsonlStream::new(Some(&s.line));
    let mut array = JsonStream::new(&s.json);
    let mut out = Vec::new();
    let mut at = 0;
    let mut turn = 0;
    while at < text.len() {
        let end = (at + sizes[turn % sizes.len()].max(1)).min(text.len());
        lines.feed(&text[at..end], &mut out);
        array.feed(&text[at..end], &mut out);
        assert_eq!(lines.text(), &text[..end]);
        assert_eq!(array.text(), &text[..end]);
        at = end;
        turn += 1;
    }
    let l = lines.finish(&mut out);
    let a = array.finish(&mut out);
    (l, a, out)
}

fn check_stream_equals_one_shot(text: &[u8], sizes: &[usize]) -> Result<(), TestCaseError> {
    let s = schemas();
    let (l, j, out) = stream_in(text, sizes);
    let one_l = jsonl::analyse(text, Some(&s.line));
    let one_j = json::analyse(&String::from_utf8_lossy(text), &s.json);
    prop_assert_eq!(&l, &one_l);
    prop_assert_eq!(&j, &one_j);
    // What was emitted, in order, is what the analyses hold.
    let lines: Vec<_> = out
        .iter()
        .filter_map(|c| match c {
            Completed::Line(o, _) => Some(o.clone()),
            Completed::Element(_) => None,
        })
        .collect();
    prop_assert_eq!(lines, one_l.lines);
    let elements: Vec<Value> = out
        .iter()
        .filter_map(|c| match c {
            Completed::Element(e) => Some(e.value.clone()),
            Completed::Line(..) => None,
        })
        .collect();
    let one_elements: Vec<Value> = one_j.elements.iter().map(|e| e.value.clone()).collect();
    prop_assert_eq!(elements, one_elements);
    Ok(())
}

fn check_sweep_every_byte(text: &[u8]) -> Result<(), TestCaseError> {
    let s = &schemas().sweep;
    let cuts: Vec<usize> = (0..=text.len()).collect();
    prop_assert_eq!(sweep(text, &cuts, s), naive_sweep(text, &cuts, s));
    Ok(())
}

/// `parse`'s outline of every prefix serialises to the same bytes as the
/// full analysis, with the array schema, a bounded one, a union one, an
/// object one and none.
fn check_outline_every_byte(text: &[u8]) -> Result<(), TestCaseError> {
    let none = JsonSchemas::default();
    for cut in 0..=text.len() {
        let t = String::from_utf8_lossy(&text[..cut]);
        let all = schemas();
        for s in [&all.json, &all.bounded, &all.union, &all.object, &none] {
            let full = serde_json::to_string(&json::analyse(&t, s)).unwrap();
            let o = json::outline(t.as_bytes(), s);
            let view = serde_json::to_string(&OutlineView {
                outline: &o,
                text: t.as_bytes(),
            })
            .unwrap();
            prop_assert_eq!(&view, &full, "cut {}", cut);
        }
    }
    Ok(())
}

fn valid(v: &Value) -> bool {
    schemas().line.is_valid(v)
}

// ---------------------------------------------------------------- properties

proptest! {
    // 96 cases each keeps the file near 5 s in debug; set PROPTEST_CASES for
    // a deeper hunt.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(96),
        ..ProptestConfig::default()
    })]

    /// JSONL: every prefix keeps a prefix of the full output's items, only
    /// the last line of a prefix can be cut, and the sweep agrees.
    #[test]
    fn jsonl_every_prefix(doc in jsonl_doc()) {
        let s = schemas();
        let bytes = doc.text.as_bytes();
        let full = jsonl::analyse(bytes, None);
        prop_assert_eq!(&full.items, &doc.values);
        let full_s = jsonl::analyse(bytes, Some(&s.line));
        let expect: Vec<Value> = doc.values.iter().filter(|v| valid(v)).cloned().collect();
        prop_assert_eq!(&full_s.items, &expect);
        // Only what TrustGraph leaves of an opening fence (the `l` of
        // ```jsonl) is not JSON.
        let remnants = full_s.lines.iter().filter(|l| l.status.is_fence_remnant()).count();
        prop_assert_eq!(full_s.counts.invalid_json + full_s.counts.truncated, remnants);
        for cut in 0..=bytes.len() {
            let a = jsonl::analyse(&bytes[..cut], Some(&s.line));
            prop_assert!(is_prefix(&a.items, &full_s.items), "cut {}: {:?}", cut, a.items);
            // Before the last line of the prefix, every line is whole.
            if let Some((_, before)) = a.lines.split_last() {
                for l in before {
                    prop_assert!(
                        l.status.is_fence_remnant()
                            || !matches!(l.status, LineStatus::InvalidJson { .. } | LineStatus::Truncated { .. }),
                        "cut {}: line {} is {:?}", cut, l.line, l.status
                    );
                }
            }
        }
        check_sweep_every_byte(bytes)?;
    }

    /// JSON arrays: strict JSON has the items only when the whole array
    /// (and its fence) arrived; salvage recovers a prefix of the elements,
    /// each one generated, never an invented one; the sweep agrees.
    #[test]
    fn array_every_prefix(doc in array_doc()) {
        let s = schemas();
        let full = json::analyse(&doc.text, &s.json);
        let expect: Vec<Value> = doc.values.iter().filter(|v| valid(v)).cloned().collect();
        let all_valid = expect.len() == doc.values.len();
        // A fence inside a string is a fence to the reference's regex (it
        // takes the first ``` after the opening one), so only then may the
        // strict parse of a complete array fail.
        let fence_in_strings = doc.values.iter().any(|v| v.to_string().contains("```"));
        if !fence_in_strings {
            prop_assert_eq!(full.status, if all_valid { JsonStatus::Ok } else { JsonStatus::SchemaInvalid });
        }
        let full_elements: Vec<Value> = full.elements.iter().map(|e| e.value.clone()).collect();
        prop_assert_eq!(&full_elements, &doc.values);
        prop_assert_eq!(&full.salvaged, &expect);
        let bytes = doc.text.as_bytes();
        for cut in 0..=bytes.len() {
            let a = json::analyse(&String::from_utf8_lossy(&bytes[..cut]), &s.json);
            let got: Vec<Value> = a.elements.iter().map(|e| e.value.clone()).collect();
            prop_assert!(is_prefix(&got, &doc.values), "cut {}: invented {:?}", cut, got);
            prop_assert!(is_prefix(&a.salvaged, &expect), "cut {}: {:?}", cut, a.salvaged);
            prop_assert!(a.items.is_empty() || a.items == full.items, "cut {}", cut);
            if a.status == JsonStatus::InvalidJson {
                prop_assert!(a.error.is_some() && a.value.is_none());
            }
        }
        check_sweep_every_byte(bytes)?;
        check_outline_every_byte(bytes)?;
    }

    /// Streaming, chunks split anywhere (inside UTF-8 characters, escapes,
    /// numbers, fences): the result equals the one-shot analysis, for the
    /// whole response and for a cut one.
    #[test]
    fn stream_equals_one_shot(
        doc in prop_oneof![jsonl_doc(), array_doc()],
        sizes in prop::collection::vec(1..9usize, 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = doc.text.as_bytes();
        check_stream_equals_one_shot(bytes, &sizes)?;
        let c = cut.index(bytes.len() + 1);
        check_stream_equals_one_shot(&bytes[..c], &sizes)?;
    }

    /// One damaged element (a dropped brace, colon or comma) loses only
    /// itself: salvage resumes at the next element and keeps every later
    /// one, and at every cut keeps only generated elements, in order.
    #[test]
    fn a_broken_element_loses_only_itself(doc in damaged_doc()) {
        let s = schemas();
        let full = json::analyse(&doc.text, &s.json);
        let got: Vec<Value> = full.elements.iter().map(|e| e.value.clone()).collect();
        prop_assert_eq!(&got, &doc.keep, "{}", doc.text);
        let bytes = doc.text.as_bytes();
        for cut in 0..=bytes.len() {
            let a = json::analyse(&String::from_utf8_lossy(&bytes[..cut]), &s.json);
            let got: Vec<Value> = a.elements.iter().map(|e| e.value.clone()).collect();
            prop_assert!(is_prefix(&got, &doc.keep), "cut {}: {:?}", cut, got);
            prop_assert!(got.iter().all(|v| doc.values.contains(v)));
        }
        check_sweep_every_byte(bytes)?;
        check_outline_every_byte(bytes)?;
        check_stream_equals_one_shot(bytes, &[3, 1, 7])?;
    }

    /// An object of arrays: `parse`'s outline agrees with the full analysis
    /// at every byte cut, whether salvage's walk or the whole validator
    /// judges it.
    #[test]
    fn object_of_arrays_outline_every_prefix(text in object_doc()) {
        check_outline_every_byte(text.as_bytes())?;
    }

    /// Noise: no panic anywhere; streaming and sweep still agree with the
    /// one-shot analysers at every byte cut.
    #[test]
    fn noise_agrees_everywhere(text in noise(), sizes in prop::collection::vec(1..5usize, 1..4)) {
        let bytes = text.as_bytes();
        check_stream_equals_one_shot(bytes, &sizes)?;
        check_sweep_every_byte(bytes)?;
        check_outline_every_byte(bytes)?;
    }

    /// Arbitrary bytes (invalid UTF-8 included): nothing panics, and the
    /// streaming analysers still equal the one-shot ones.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64), sizes in prop::collection::vec(1..5usize, 1..4)) {
        let s = schemas();
        check_stream_equals_one_shot(&bytes, &sizes)?;
        let cuts: Vec<usize> = (0..=bytes.len()).collect();
        let points = sweep(&bytes, &cuts, &s.sweep);
        prop_assert_eq!(points.len(), cuts.len());
        // JSONL reads bytes as they are: it agrees at every cut even here.
        for (p, &c) in points.iter().zip(&cuts) {
            prop_assert_eq!(p.jsonl_items, jsonl::analyse(&bytes[..c], s.sweep.line.as_ref()).items.len());
        }
    }
}
