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
