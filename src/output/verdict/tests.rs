use super::*;
use crate::output::analysis::ResponseType;
use crate::output::tg::TgPython;

/// Each mark as (line, sign, the report's words).
fn report_marks(a: &Analysis) -> Vec<(usize, Sign, Option<String>)> {
    marks(a)
        .iter()
        .map(|m| (m.line(), m.sign(), m.sentence(Voice::Report)))
        .collect()
}

/// The expected marks, as [`report_marks`] gives them.
fn expect(marks: &[(usize, Sign, Option<&str>)]) -> Vec<(usize, Sign, Option<String>)> {
    marks.iter().map(|(n, s, w)| (*n, *s, w.map(str::to_owned))).collect()
}

const ITEMS: &str = r#"{"type": "array", "items": {"type": "object",
    "properties": {"name": {"type": "string"}}, "required": ["name"]}}"#;

const LINE: &str = r#"{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}"#;

fn analyse(kind: ResponseType, schema: &str, text: &str, py: TgPython) -> Analysis {
    let schema: Value = serde_json::from_str(schema).unwrap();
    Analysis::of(kind, Some(&schema), text, py)
}

#[test]
fn a_cut_array_marks_its_elements_where_salvage_stopped_and_where_strict_stopped() {
    let text = "[\n  {\"name\": \"a\"},\n  {\"name\": 1},\n  {\"name\": \"c\"";
    let a = analyse(ResponseType::Json, ITEMS, text, TgPython::default());
    assert_eq!(
        report_marks(&a),
        expect(&[
            (2, Sign::Kept, Some("element 1")),
            (
                3,
                Sign::Rejected,
                Some("element 2: schema: /name 1 is not of type \"string\"")
            ),
            (4, Sign::Rejected, Some("salvage stops: an element never closed (cut)")),
            (
                4,
                Sign::Rejected,
                Some("strict parse stops (cut): EOF while parsing an object")
            ),
        ])
    );
    assert_eq!(
        summary(&a),
        "strict JSON: invalid at line 4, column 15 (cut), 0 items; salvage: 1 valid of 2 complete elements"
    );
    let Analysis::Json(j) = &a else { panic!() };
    let kinds: Vec<ElementKind> = j.elements.iter().map(|e| ElementKind::of(e, false)).collect();
    assert_eq!(kinds, [ElementKind::Salvaged, ElementKind::Invalid]);
    // The pane shows the value after the violation; pretty output the value,
    // then the violation on a line of its own.
    let second = Mark::element(&j.elements[1], false);
    assert_eq!(
        second.sentence(Voice::Pane).as_deref(),
        Some("schema error at /name: 1 is not of type \"string\" — {\"name\":1}")
    );
    assert_eq!(
        second.sentence(Voice::Pretty).as_deref(),
        Some("{\"name\":1}\n      /name 1 is not of type \"string\"")
    );
    let strict = Strict::of(Some(j), false);
    assert_eq!(strict.sign(), Sign::Rejected);
    assert_eq!(
        strict.gets(Voice::Pane).as_deref(),
        Some("  a strict consumer gets 0 items")
    );
    assert_eq!(strict.gets(Voice::Report), None);
    assert_eq!(
        strict.details(Voice::Pane),
        ["input ran out (truncated): EOF while parsing an object"]
    );
}

#[test]
fn a_jsonl_answer_marks_each_line_by_what_became_of_it() {
    let text = "{\"name\": \"a\"}\n{\"name\": 1}\nnot json\n\n```\n{\"name\": \"b\"";
    let a = analyse(ResponseType::Jsonl, LINE, text, TgPython::default());
    assert_eq!(
        report_marks(&a),
        expect(&[
            (1, Sign::Kept, Some("item 1")),
            (2, Sign::Rejected, Some("schema: /name 1 is not of type \"string\"")),
            (3, Sign::Rejected, Some("not JSON (column 2): expected ident")),
            (4, Sign::Neutral, None),
            (5, Sign::Neutral, Some("fence")),
            (6, Sign::Rejected, Some("cut at column 13")),
        ])
    );
    assert_eq!(
        summary(&a),
        "JSONL: 1 items kept; 1 invalid JSON, 1 schema-invalid, 1 truncated"
    );
    let pane: Vec<String> = marks(&a).iter().map(|m| m.sentence(Voice::Pane).unwrap()).collect();
    assert_eq!(
        pane,
        [
            "{\"name\":\"a\"}",
            "schema error at /name: 1 is not of type \"string\"",
            "invalid JSON at column 2: expected ident",
            "empty",
            "code fence (skipped)",
            "truncated at column 13: EOF while parsing an object",
        ]
    );
    let glyphs: String = marks(&a).iter().map(|m| m.sign().glyph(Voice::Pretty)).collect();
    assert_eq!(glyphs, "✓✗✗  ✗");
    let Analysis::Jsonl(j) = &a else { panic!() };
    let tally = Tally::of(j.counts);
    assert_eq!(tally.rejected(), 3);
    assert_eq!(
        tally.sentence(Voice::Pane),
        "✓ 1 kept · ✗ 1 not JSON · 1 schema · 1 cut · 2 blank"
    );
    assert_eq!(
        tally.sentence(Voice::Pretty),
        "1 items kept; 1 invalid JSON, 1 schema-invalid, 1 truncated"
    );
    assert_eq!(Fails::of(&a), None);
}

#[test]
fn a_response_trustgraph_fails_whole_says_so_before_its_lines() {
    let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    let text = format!("{{\"name\": \"a\"}}\n{deep}\n");
    let a = analyse(ResponseType::Jsonl, LINE, &text, TgPython::Py311);
    let signs: Vec<Sign> = marks(&a).iter().map(Mark::sign).collect();
    assert_eq!(signs, [Sign::Kept, Sign::Rejected]);
    let fails = Fails::of(&a).expect("TrustGraph fails it");
    assert_eq!(
        fails.sentence(Voice::Report).as_deref(),
        Some(
            "the service fails this whole response: RecursionError at line 2 (json.loads nests 980 deep), so \
             TrustGraph gets 0 items; the lines alone keep 1"
        )
    );
    assert_eq!(
        summary(&a),
        "TrustGraph: the service fails this whole response: RecursionError at line 2 (json.loads nests 980 \
         deep), so TrustGraph gets 0 items; the lines alone keep 1. JSONL: 1 items kept; 1 invalid JSON, 0 \
         schema-invalid, 0 truncated"
    );
    assert_eq!(
        fails.sentence(Voice::Pane).as_deref(),
        Some("✗ TrustGraph raises at line 2: 0 items · ")
    );
    // The pane says how deep the line nests; the report reads it as not JSON.
    let line = marks(&a)[1];
    assert_eq!(
        line.sentence(Voice::Pane).as_deref(),
        Some("nested 980 deep, past Python's limit: TrustGraph fails the whole response")
    );
    assert!(line.sentence(Voice::Report).unwrap().starts_with("not JSON (column "));
}

#[test]
fn a_whole_array_is_items_and_its_strict_verdict_is_kept() {
    let a = analyse(ResponseType::Json, ITEMS, r#"[{"name": "a"}]"#, TgPython::default());
    assert_eq!(report_marks(&a), expect(&[(1, Sign::Kept, Some("element 1"))]));
    assert_eq!(
        summary(&a),
        "strict JSON: ok, 1 items; salvage: 1 valid of 1 complete elements"
    );
    let Analysis::Json(j) = &a else { panic!() };
    assert_eq!(ElementKind::of(&j.elements[0], true), ElementKind::Item);
    let strict = Strict::of(Some(j), false);
    assert_eq!(
        strict.sentence(Voice::Pretty).as_deref(),
        Some("strict JSON: ok, 1 items")
    );
    assert_eq!(strict.gets(Voice::Pane).as_deref(), Some(" — 1 items"));
    assert_eq!(Strict::of(None, true).sign(), Sign::Neutral);
    assert_eq!(Strict::of(None, false).sentence(Voice::Report), None);
}

#[test]
fn the_voices_word_a_violation_their_own_way() {
    let v = Violation {
        pointer: String::new(),
        message: "is wrong".into(),
        branch: Some("person".into()),
    };
    assert_eq!(violation(&v, Voice::Report), " is wrong");
    assert_eq!(
        violation(&v, Voice::Pane),
        "schema error at / (union branch person): is wrong"
    );
    assert_eq!(violation(&v, Voice::Pretty), "person: / is wrong");
    assert_eq!(Sign::Neutral.glyph(Voice::Pane), '·');
    assert_eq!(Sign::Kept.good(), Some(true));
}
