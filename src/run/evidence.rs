//! A run's finish reason checked against its own evidence. Providers report
//! the wrong reason (a cut JSON answer with `stop` or `tool_calls`; `length`
//! well short of the limit), and a wrong `stop` is how recall falls silently
//! while every run says "completed". Pure: the record and its analysis in,
//! the disagreements out.

use super::Analysis;
use crate::llm::FinishReason;
pub use crate::llm::mismatch::Mismatch;
use crate::session::RunRecord;

/// Whether the answer's text ends inside a value (JSON) or a line (JSONL).
fn ends_cut(a: &Analysis) -> bool {
    match a {
        Analysis::Text => false,
        Analysis::Json(j) => j.error.as_ref().is_some_and(|e| e.truncated),
        Analysis::Jsonl(l) => l.counts.truncated > 0,
    }
}

/// The disagreements between `r`'s finish and its evidence. `structured_cut`
/// says the structured-output check found the JSON cut short.
pub fn check(r: &RunRecord, a: &Analysis, structured_cut: bool) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let raw = || r.raw_reason.clone().unwrap_or_else(|| r.finish.as_str().to_owned());
    let said_done = matches!(r.finish, FinishReason::Stop | FinishReason::ToolCalls);
    // A stop cutline applied itself ends the text where it chose.
    let client_stop = r
        .raw_reason
        .as_deref()
        .is_some_and(|x| x.contains("applied by cutline"));
    let tokens = r.usage.completion_tokens;
    if let (Some(tokens), Some(limit)) = (tokens, r.params.max_tokens) {
        if said_done && !client_stop && tokens >= limit && ends_cut(a) {
            out.push(Mismatch::StopButCut {
                reported: raw(),
                tokens,
                limit,
            });
        }
        if r.finish == FinishReason::Length && tokens < limit {
            out.push(Mismatch::LengthUnderLimit { tokens, limit });
        }
    }
    if said_done && structured_cut && !out.iter().any(|m| matches!(m, Mismatch::StopButCut { .. })) {
        out.push(Mismatch::StructuredCut { reported: raw() });
    }
    let real_pieces = !r.pieces.is_empty() && r.pieces.iter().all(|p| !p.delta);
    if let (true, Some(reported), None) = (real_pieces, tokens, &r.error) {
        let counted = u32::try_from(r.pieces.len()).unwrap_or(u32::MAX);
        if counted != reported {
            out.push(Mismatch::UsageDisagrees { reported, counted });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Piece, Usage};

    fn record(text: &str, finish: FinishReason, raw: &str, tokens: u32, limit: u32) -> RunRecord {
        RunRecord {
            kind: crate::session::RecordKind::Run,
            run_id: "r#1".into(),
            started_ms: 0,
            prompt_id: "p".into(),
            response_type: crate::prompt::ResponseType::Json,
            prompt: serde_json::json!({}),
            system: String::new(),
            rendered: String::new(),
            variables: serde_json::Map::new(),
            provider: crate::llm::ProviderInfo {
                name: "t".into(),
                kind: "openai".into(),
                model: "m".into(),
                base_url: None,
            },
            params: crate::session::Params {
                max_tokens: Some(limit),
                ..Default::default()
            },
            text: text.into(),
            thinking: String::new(),
            pieces: Vec::new(),
            finish,
            raw_reason: Some(raw.into()),
            usage: Usage {
                completion_tokens: Some(tokens),
                ..Usage::default()
            },
            error: None,
            first_token_ms: None,
            total_ms: 0,
            structured_path: crate::llm::structured::Path::None,
            adjustments: Vec::new(),
            checks: Vec::new(),
            prefill: String::new(),
            token_ids: Vec::new(),
            continues: None,
            continuation_token: None,
            batch: None,
            analysis: serde_json::json!({}),
        }
    }

    fn json(text: &str) -> Analysis {
        Analysis::of(
            crate::prompt::ResponseType::Json,
            None,
            text,
            crate::output::tg::TgPython::default(),
        )
    }

    #[test]
    fn a_cut_answer_reported_as_stop_at_the_limit() {
        let text = "[{\"a\": 1}, {\"a\": 2";
        let r = record(text, FinishReason::Stop, "stop", 64, 64);
        assert_eq!(
            check(&r, &json(text), false),
            vec![Mismatch::StopButCut {
                reported: "stop".into(),
                tokens: 64,
                limit: 64
            }]
        );
        // Under the limit, a cut text is the model's own doing: no claim.
        let r = record(text, FinishReason::Stop, "stop", 30, 64);
        assert!(check(&r, &json(text), false).is_empty());
        // Tool calls with a cut structured answer.
        let r = record(text, FinishReason::ToolCalls, "tool_calls", 30, 64);
        assert_eq!(
            check(&r, &json(text), true),
            vec![Mismatch::StructuredCut {
                reported: "tool_calls".into()
            }]
        );
    }

    #[test]
    fn length_under_the_limit_and_usage_that_disagrees() {
        let text = "[1, 2]";
        let r = record(text, FinishReason::Length, "length", 10, 64);
        assert_eq!(
            check(&r, &json(text), false),
            vec![Mismatch::LengthUnderLimit { tokens: 10, limit: 64 }]
        );
        let mut r = record(text, FinishReason::Stop, "eos", 5, 64);
        r.pieces = ["[1", ",", " 2", "]"]
            .iter()
            .map(|t| Piece {
                text: (*t).into(),
                ms: 0,
                delta: false,
            })
            .collect();
        assert_eq!(
            check(&r, &json(text), false),
            vec![Mismatch::UsageDisagrees {
                reported: 5,
                counted: 4
            }]
        );
        r.usage.completion_tokens = Some(4);
        assert!(check(&r, &json(text), false).is_empty());
    }
}
