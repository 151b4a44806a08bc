//! The sweep against a naive recount of every prefix.

use super::*;
use crate::output::{json, jsonl};
use serde_json::json;

fn naive(text: &[u8], cuts: &[usize], schemas: &SweepSchemas) -> Vec<SweepPoint> {
    cuts.iter()
        .enumerate()
        .map(|(tokens, &c)| {
            let p = String::from_utf8_lossy(&text[..c]);
            let valid_utf8 = std::str::from_utf8(&text[..c]).is_ok();
            let j = json::analyse(&p, &schemas.json);
            let l = jsonl::analyse(&text[..c], schemas.line.as_ref());
            SweepPoint {
                tokens,
                bytes: c,
                json_items: if valid_utf8 { j.items.len() } else { 0 },
                salvaged_items: j.salvaged.len(),
                jsonl_items: l.items.len(),
            }
        })
        .collect()
}

fn schemas() -> SweepSchemas {
    let item = json!({"type": "object", "properties": {"e": {"type": "string"}}, "required": ["e"]});
    SweepSchemas {
        json: JsonSchemas::compile(Some(&json!({"type": "array", "items": item}))).unwrap(),
        line: Some(CompiledSchema::compile(&item).unwrap()),
    }
}

#[test]
fn every_byte_cut_matches_naive() {
    let s = schemas();
    for text in [
        "[\n{\"e\": \"a\"},\n{\"e\": 1},\n{\"e\": \"b\"}\n]\n",
        "```json\n[{\"e\": \"a\"}, {\"e\": \"b\"}]\n```\nThat is all.",
        "{\"e\": \"a\"}\n{\"e\": \"b\"},\n\n{\"x\": 1}\n{\"e\": \"日本\"}  \n{\"e\": \"c",
        "  123  ",
        "[1, 22, {\"e\": \"]\"}] trailing",
    ] {
        let cuts: Vec<usize> = (0..=text.len()).collect();
        assert_eq!(
            sweep(text.as_bytes(), &cuts, &s),
            naive(text.as_bytes(), &cuts, &s),
            "{text}"
        );
    }
}

/// Lines and arrays judged from their kind and length (a root-only schema,
/// or none) count as the full parse and validation count them.
#[test]
fn root_only_schemas_match_naive() {
    let texts = [
        "[{\"a\":1},{\"a\":1}]\n[]\n[1, \"],\", [2, 3]]\n{\"a\": [1, 2]}\n[1,\n",
        "[{\"a\":1},{\"a\":2},{\"a\":3}]",
        "{\"x\": \"}\"}\n[\"\\\"\", {\"k\": []}]\n[NaN]\n[1e400, \"\\ud800\"]\n",
        "```json\n[[1], [2, 3], []]\n```",
    ];
    for item in [
        json!({"type": "array"}),
        json!({"type": "object"}),
        json!({"type": ["array", "object"], "maxItems": 2, "title": "t"}),
        json!({"minItems": 1}),
        json!(true),
        json!(false),
    ] {
        let s = SweepSchemas::of_item(&item).unwrap();
        for text in texts {
            let cuts: Vec<usize> = (0..=text.len()).collect();
            assert_eq!(
                sweep(text.as_bytes(), &cuts, &s),
                naive(text.as_bytes(), &cuts, &s),
                "{item} {text}"
            );
        }
    }
    let none = SweepSchemas::default();
    for text in texts {
        let cuts: Vec<usize> = (0..=text.len()).collect();
        assert_eq!(
            sweep(text.as_bytes(), &cuts, &none),
            naive(text.as_bytes(), &cuts, &none),
            "{text}"
        );
    }
}
