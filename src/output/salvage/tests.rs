//! Unit tests of salvage.

use super::*;
use serde_json::json;

fn values(text: &str) -> Vec<Value> {
    salvage(text.as_bytes()).elements.into_iter().map(|e| e.value).collect()
}

/// The broken spans as text, with the parser's word.
fn broken(text: &str) -> Vec<(&str, String)> {
    salvage(text.as_bytes())
        .broken
        .into_iter()
        .map(|b| (&text[b.span], b.message))
        .collect()
}

#[test]
fn cut_array_keeps_complete_elements_only() {
    let t = r#"[{"a": 1}, {"a": "x]}\"{"}, {"a": 3, "b": {"c"#;
    assert_eq!(values(t), vec![json!({"a": 1}), json!({"a": "x]}\"{"})]);
    assert_eq!(salvage(t.as_bytes()).stop.unwrap().reason, StopReason::Eof);
}

#[test]
fn unclosed_fence() {
    let t = "```json\n[\n{\"a\": 1},\n{\"a\": 2},\n{\"a\"";
    assert_eq!(values(t), vec![json!({"a": 1}), json!({"a": 2})]);
}

/// An element whose quotes no longer balance hides its end from the
/// structural skip, which then reads to the end of the text; `serde_json`
/// already finds the break inside it, so the scan resumes after it. Found
/// by `tests/output_props.rs` (a candidate inside a string, `"]{"`).
#[test]
fn an_unbalanced_quote_loses_only_its_element() {
    let t = r#"[{"a": "x}, {"a": "y"}, {"a": "z"}]"#;
    assert_eq!(values(t), vec![json!({"a": "y"}), json!({"a": "z"})]);
    assert_eq!(broken(t), vec![(r#"{"a": "x}, "#, "expected `,` or `}`".to_owned())]);
    assert_eq!(salvage(t.as_bytes()).stop, None);
    let t = r#"["entity":"]{", "definition": "["}, {"entity":""}]"#;
    assert_eq!(values(t), vec![json!({"entity": ""})]);
    // Cut inside it, it is only cut: nothing after it has arrived.
    let t = r#"[{"a": 1}, {"a": "x}, {"#;
    assert_eq!(values(t), vec![json!({"a": 1})]);
    assert_eq!(salvage(t.as_bytes()).stop.unwrap().reason, StopReason::Eof);
}

#[test]
fn a_missing_comma_skips_nothing() {
    let t = r#"[{"a": 1}, {"a": 2} {"a": 3}]"#;
    assert_eq!(values(t), vec![json!({"a": 1}), json!({"a": 2}), json!({"a": 3})]);
    let s = salvage(t.as_bytes());
    assert_eq!(s.stop, None);
    assert_eq!(s.broken.len(), 1);
    assert_eq!((s.broken[0].span.clone(), s.broken[0].at), (20..20, 20));
}

/// The failure the issue names: a model drops one `{` and a salvage that
/// stops at the first error loses every later element.
#[test]
fn a_dropped_brace_loses_only_its_element() {
    let t = "[\n  {\"entity\": \"a\", \"definition\": \"x\"},\n  \"entity\": \"b\", \"definition\": \"y\"},\n  {\"entity\": \"c\", \"definition\": \"z\"},\n  {\"entity\": \"d\", \"definition\": \"w\"}\n]";
    let kept = values(t);
    let got: Vec<&str> = kept.iter().map(|v| v["entity"].as_str().unwrap_or("?")).collect();
    assert_eq!(got, ["a", "c", "d"]);
    assert_eq!(
        broken(t),
        vec![(
            "\"entity\": \"b\", \"definition\": \"y\"},\n  ",
            "expected ',' or ']' after an element".to_owned()
        )]
    );
}

#[test]
fn a_dropped_brace_on_one_line() {
    let t = r#"[{"e": "a"}, "e": "b"}, {"e": "c"}]"#;
    assert_eq!(values(t), vec![json!({"e": "a"}), json!({"e": "c"})]);
    assert_eq!(salvage(t.as_bytes()).stop, None);
}

/// A missing `}` makes the element swallow the next ones structurally; the
/// element is broken where JSON's grammar says so (a `{` where a key was
/// due), and the ones after it are kept, each once its delimiter arrived,
/// whether or not the array's bracket ever balances.
#[test]
fn a_dropped_closing_brace() {
    let t = "[\n  {\"e\": \"a\"},\n  {\"e\": \"b\",\n  {\"e\": \"c\"},\n  {\"e\": \"d\"}\n]";
    assert_eq!(values(t), vec![json!({"e": "a"}), json!({"e": "c"}), json!({"e": "d"})]);
    let s = salvage(t.as_bytes());
    let known: Vec<usize> = s.elements.iter().map(|e| e.known_at).collect();
    let c_comma = t.find("\"c\"},").unwrap() + 5;
    // `d` follows `c` in order: kept at its own `}`.
    assert_eq!(known, vec![14, c_comma, t.len() - 2]);
    // Cut before the array closed, the elements after the break are kept.
    let cut = &t[..t.len() - 3];
    assert_eq!(values(cut), vec![json!({"e": "a"}), json!({"e": "c"})]);
}

/// Nested objects at a deeper indent, or without the array's keys, are not
/// taken for elements.
#[test]
fn nested_objects_are_not_elements() {
    let t = "[\n  {\"e\": \"a\", \"n\": [\n    {\"x\": 1},\n    {\"x\": 2}\n  ], \"d\" 1},\n  {\"e\": \"b\"}\n]";
    assert_eq!(values(t), vec![json!({"e": "b"})]);
    let t = r#"[{"e": "a"}, {"e": "b", "n": [{"x": 1}, {"x": 2}], "d" 1}, {"e": "c"}]"#;
    assert_eq!(values(t), vec![json!({"e": "a"}), json!({"e": "c"})]);
}

/// A key whose `{` was dropped is not an element (a string waits for the
/// delimiter after it before it is kept).
#[test]
fn a_string_is_kept_only_before_a_delimiter() {
    let s = salvage(br#"["a", "b" "#);
    assert_eq!(s.elements.len(), 1);
    assert_eq!(s.elements[0].known_at, 5);
    assert_eq!(values(r#"["a", "b": 1]"#), vec![json!("a")]);
    // A string array has no element start to resume at.
    assert_eq!(
        salvage(br#"["a", "b": 1, "c"]"#).stop.unwrap().reason,
        StopReason::Syntax
    );
}

#[test]
fn no_later_start_is_a_syntax_stop() {
    let t = r#"[{"a": 1}, {"a" 2}]"#;
    assert_eq!(values(t), vec![json!({"a": 1})]);
    let s = salvage(t.as_bytes());
    let stop = s.stop.unwrap();
    assert_eq!((stop.reason, stop.offset), (StopReason::Syntax, 16));
    assert!(s.broken.is_empty());
}

#[test]
fn object_of_arrays() {
    let t = r#"{"definitions": [{"e": 1}, {"e": 2}], "relationships": [{"s": 1}, {"s""#;
    let got: Vec<(String, Value)> = salvage(t.as_bytes())
        .elements
        .into_iter()
        .map(|e| (e.property.unwrap().to_string(), e.value))
        .collect();
    assert_eq!(
        got,
        vec![
            ("definitions".into(), json!({"e": 1})),
            ("definitions".into(), json!({"e": 2})),
            ("relationships".into(), json!({"s": 1}))
        ]
    );
}

#[test]
fn resumable_equals_one_shot() {
    let texts = [
        r#"```json
[{"a": "x\"y", "n": [1, 2, {"z": "]"}]}, {"b": 12345678901234567890123}, 7, "s", {"c"#,
        "[\n  {\"e\": \"a\"},\n  \"e\": \"b\"},\n  {\"e\": \"c\",\n  {\"e\": \"d\"},\n  {\"e\": \"f\"}\n]",
        r#"[{"e": "a"} {"e": "b"}, "e": 1}, {"e": "c"}"#,
        r#"[{"a": "x}, {"a": "y"}, {"a": "z"}]"#,
        r#"["entity":"]{", "definition": "["}, {"entity":""}]"#,
    ];
    for t in texts {
        let expect = salvage(t.as_bytes());
        for step in 1..7 {
            let mut sc = ArrayScanner::new();
            let mut out = Vec::new();
            let mut end = 0;
            while end < t.len() {
                end = (end + step).min(t.len());
                sc.feed(&t.as_bytes()[..end], &mut out);
            }
            let stop = sc.finish(t.as_bytes(), &mut |e| out.push(e));
            assert_eq!(out, expect.elements, "step {step}: {t}");
            assert_eq!(stop, expect.stop, "step {step}: {t}");
            assert_eq!(sc.take_broken(), expect.broken, "step {step}: {t}");
        }
    }
}

/// Every element's `known_at` is the shortest prefix whose salvage keeps it.
#[test]
fn known_at_is_the_shortest_prefix() {
    let t = "[\n  {\"e\": \"a\"},\n  \"e\": \"b\"},\n  {\"e\": \"c\",\n  {\"e\": \"d\"},\n  1, {\"e\": \"f\"}\n]";
    let full = salvage(t.as_bytes()).elements;
    for cut in 0..=t.len() {
        let kept = salvage(&t.as_bytes()[..cut]).elements;
        let expect: Vec<&Element> = full.iter().filter(|e| e.known_at <= cut).collect();
        assert_eq!(kept.iter().collect::<Vec<_>>(), expect, "cut {cut}");
    }
}
