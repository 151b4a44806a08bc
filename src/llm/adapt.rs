//! What a refusal teaches: a 400/404/422 that names a field of the request
//! body cutline sent, or says the endpoint is wrong, becomes a change to the
//! model's profile (an [`Overrides`] delta) that `run::stream` learns,
//! keeps (`llm::learned`) and sends again with.
//!
//! The error text is matched against the body's own keys and values, not
//! against a list of phrases: a field is refused when the error names it
//! (quoted, dotted, or as a distinctive name such as `reasoning_effort`).
//! So a model that refuses a field in words nobody has seen yet is still
//! understood. Pure: the refusal, the body and the profile in; the lesson
//! out.

use enumset::EnumSet;
use serde_json::Value;

use super::profile::{Api, Effort, Native, Overrides, Profile, ThinkingForm, TokenField};

/// What one refusal taught.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lesson {
    /// The change to the model's profile.
    pub delta: Overrides,
    /// The fact, for people (`temperature: not accepted`).
    pub fact: String,
}

impl Lesson {
    fn new(fact: &str, delta: Overrides) -> Self {
        Self {
            delta,
            fact: fact.to_owned(),
        }
    }
}

/// The lesson of a refusal with `status` and error text `message`, for a
/// request of `body` posted to `url` under `profile`; `None` when the error
/// names nothing cutline can change.
pub fn lesson(status: Option<u16>, message: &str, body: &Value, url: &str, profile: &Profile) -> Option<Lesson> {
    if !matches!(status, Some(400 | 404 | 422)) {
        return None;
    }
    let text = message.to_ascii_lowercase();
    let keys = sent_keys(body);
    // A bound on a value (`temperature: range: 0..1`) refuses the value
    // sent, not the field: the field stays, and nothing is learned.
    let bounded = states_a_bound(&text);
    let says = |k: &str| !bounded && keys.iter().any(|s| s == k) && mentions(&text, k);
    endpoint(&text, url)
        .or_else(|| prefill(&text, body))
        .or_else(|| sampling(&says))
        .or_else(|| {
            ["stop", "stop_sequences"].into_iter().any(&says).then(|| {
                Lesson::new(
                    "stop sequences: not accepted",
                    Overrides {
                        stop: Some(false),
                        ..Overrides::default()
                    },
                )
            })
        })
        .or_else(|| thinking(&text, &says, body, profile))
        .or_else(|| effort(&text, &says, body, profile))
        .or_else(|| native(&says).filter(|_| !about_this_schema(&text, body)))
        .or_else(|| token_field(&says))
}

/// Whether `text` states a bound on a value rather than refusing a field:
/// a range (`0..1`, `between 0 and 2`, `[0, 2]`) or a comparison with a
/// number (`<= 1`, `≥ 0`). A refusal of the field itself (`is not
/// supported`, `only the default (1) value`) names no range.
fn states_a_bound(text: &str) -> bool {
    let b = text.as_bytes();
    let digit_at = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let num_after = |mut i: usize| {
        while b.get(i).is_some_and(|c| *c == b' ' || *c == b'=' || *c == b'-') {
            i += 1;
        }
        digit_at(i)
    };
    let range_dots = text
        .match_indices("..")
        .any(|(i, _)| i > 0 && digit_at(i - 1) && num_after(i + 2));
    let comparison = b
        .iter()
        .enumerate()
        .any(|(i, c)| matches!(c, b'<' | b'>') && num_after(i + 1))
        || ["≤", "≥"]
            .iter()
            .any(|op| text.match_indices(op).any(|(i, _)| num_after(i + op.len())));
    let between = text.match_indices("between ").any(|(i, _)| {
        let rest = &text[i + 8..];
        rest.starts_with(|c: char| c.is_ascii_digit() || c == '-')
            && rest
                .split_once(" and ")
                .is_some_and(|(_, r)| r.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
    });
    let interval = text.match_indices('[').any(|(i, _)| {
        let rest = &text[i + 1..];
        rest.split_once(']').is_some_and(|(inside, _)| {
            let parts: Vec<&str> = inside.split(',').map(str::trim).collect();
            parts.len() == 2 && parts.iter().all(|p| p.parse::<f64>().is_ok())
        })
    });
    range_dots || comparison || between || interval
}

/// Whether `text` names a key inside the schema the request sent (a
/// keyword such as `minItems`, or a property name): the refusal is of this
/// prompt's schema, so the model's native structured output is not given
/// up for every prompt on one prompt's evidence.
fn about_this_schema(text: &str, body: &Value) -> bool {
    fn keys_in(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    out.push(k.to_ascii_lowercase());
                    keys_in(v, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| keys_in(v, out)),
            _ => {}
        }
    }
    fn schemas<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    if matches!(
                        k.as_str(),
                        "schema" | "responseJsonSchema" | "responseSchema" | "json_schema"
                    ) && v.get("name").is_none()
                    {
                        out.push(v);
                    } else {
                        schemas(v, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| schemas(v, out)),
            _ => {}
        }
    }
    // Words every error envelope has: never evidence of a schema's own key.
    const ENVELOPE: [&str; 6] = ["type", "message", "code", "param", "error", "status"];
    let mut found = Vec::new();
    schemas(body, &mut found);
    let mut keys = Vec::new();
    for s in &found {
        keys_in(s, &mut keys);
    }
    keys.iter()
        .filter(|k| !ENVELOPE.contains(&k.as_str()))
        .any(|k| mentions_word(text, k))
}

/// Every key of `body`'s objects in snake case (`topP` is `top_p`),
/// outside the conversation
/// itself (`messages`, `contents`, `input`, `system`), whose text is the
/// user's and not a parameter.
fn sent_keys(body: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    out.push(snake(k));
                    if !matches!(
                        k.as_str(),
                        "messages" | "contents" | "input" | "system" | "systemInstruction"
                    ) {
                        walk(v, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, &mut out);
    out
}

/// `key` in lower snake case: `thinkingBudget` is `thinking_budget`.
fn snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Whether `text` (lower-cased) names the field `key` (snake case) in
/// either spelling (`thinking_budget`, `thinkingbudget` for
/// `thinkingBudget`).
pub fn mentions(text: &str, key: &str) -> bool {
    mentions_word(text, key) || (key.contains('_') && mentions_word(text, &key.replace('_', "")))
}

/// Whether `text` names `key` as a whole word that is quoted, part of a
/// dotted path, followed by `:` or `=`, or, for a distinctive name (with
/// `_`, or eight letters or more), anywhere.
fn mentions_word(text: &str, key: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let distinctive = key.contains('_') || key.len() >= 8;
    text.match_indices(key).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + key.len()..].chars().next();
        if before.is_some_and(word) || after.is_some_and(word) {
            return false;
        }
        distinctive
            || before.is_some_and(|c| matches!(c, '\'' | '"' | '`' | '.'))
            || after.is_some_and(|c| matches!(c, '\'' | '"' | '`' | '.' | ':' | '='))
    })
}

/// A chat completions request to a model only `/responses` serves.
fn endpoint(text: &str, url: &str) -> Option<Lesson> {
    let chat = url.ends_with("/chat/completions");
    (chat && (text.contains("/responses") || text.contains("chat/completions") && text.contains("responses"))).then(
        || {
            Lesson::new(
                "endpoint: /responses only",
                Overrides {
                    api: Some(Api::Responses),
                    ..Overrides::default()
                },
            )
        },
    )
}

/// A conversation that ends with the assistant's turn (a prefill), refused
/// by a message that names that role.
fn prefill(text: &str, body: &Value) -> Option<Lesson> {
    let last_role = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str);
    (last_role == Some("assistant") && (text.contains("assistant") || text.contains("prefill"))).then(|| {
        Lesson::new(
            "assistant prefill: not accepted",
            Overrides {
                prefill: Some(false),
                ..Overrides::default()
            },
        )
    })
}

fn sampling(says: &impl Fn(&str) -> bool) -> Option<Lesson> {
    let t = says("temperature");
    let p = says("top_p");
    let only = |fact: &str, o: Overrides| Some(Lesson::new(fact, o));
    match (t, p) {
        (true, true) => only(
            "temperature and top_p: not together",
            Overrides {
                sampling_together: Some(false),
                ..Overrides::default()
            },
        ),
        (true, false) => only(
            "temperature: not accepted",
            Overrides {
                temperature: Some(false),
                ..Overrides::default()
            },
        ),
        (false, true) => only(
            "top_p: not accepted",
            Overrides {
                top_p: Some(false),
                ..Overrides::default()
            },
        ),
        (false, false) => None,
    }
}

/// The thinking form sent, refused: the model does without that form, and
/// takes the other one when the message names it.
fn thinking(text: &str, says: &impl Fn(&str) -> bool, body: &Value, profile: &Profile) -> Option<Lesson> {
    let anthropic = body.pointer("/thinking/type").and_then(Value::as_str);
    let gemini = body.pointer("/generationConfig/thinkingConfig");
    let (sent, other) = match (anthropic, gemini) {
        (Some("enabled"), _) if says("thinking") || says("budget_tokens") => (ThinkingForm::Budget, "adaptive"),
        (Some("adaptive"), _) if says("thinking") => (ThinkingForm::Adaptive, "budget_tokens"),
        (_, Some(g)) if g.get("thinkingBudget").is_some() && (says("thinking_budget") || says("thinking_config")) => {
            (ThinkingForm::Budget, "thinking_level")
        }
        (_, Some(g)) if g.get("thinkingLevel").is_some() && (says("thinking_level") || says("thinking_config")) => {
            (ThinkingForm::Level, "thinking_budget")
        }
        _ if body.get("think").is_some() && says("think") => (ThinkingForm::Budget, ""),
        _ => return None,
    };
    let mut forms: EnumSet<ThinkingForm> = profile.thinking - sent;
    let named = match sent {
        ThinkingForm::Budget if other == "adaptive" => ThinkingForm::Adaptive,
        ThinkingForm::Budget => ThinkingForm::Level,
        ThinkingForm::Adaptive | ThinkingForm::Level => ThinkingForm::Budget,
    };
    if !other.is_empty() && (text.contains(other) || text.contains(&other.replace('_', ""))) {
        forms |= named;
    }
    let fact = if forms.is_empty() {
        "thinking: not accepted".to_owned()
    } else {
        format!(
            "thinking: {}",
            forms.iter().map(form_word).collect::<Vec<_>>().join(", ")
        )
    };
    Some(Lesson {
        delta: Overrides {
            thinking: Some(forms),
            ..Overrides::default()
        },
        fact,
    })
}

/// The word for a thinking form.
pub fn form_word(f: ThinkingForm) -> &'static str {
    match f {
        ThinkingForm::Budget => "budget",
        ThinkingForm::Adaptive => "adaptive",
        ThinkingForm::Level => "level",
    }
}

/// The effort level sent, refused: the levels the message names (when it
/// lists the allowed ones), else every level the profile had but that one.
fn effort(text: &str, says: &impl Fn(&str) -> bool, body: &Value, profile: &Profile) -> Option<Lesson> {
    let sent = ["/reasoning_effort", "/reasoning/effort", "/output_config/effort"]
        .iter()
        .find_map(|p| body.pointer(p))
        .and_then(Value::as_str)
        .and_then(Effort::parse);
    let named = says("reasoning_effort") || says("effort") || says("reasoning");
    let sent = sent.filter(|_| named)?;
    let listed: EnumSet<Effort> = Effort::ALL
        .into_iter()
        .filter(|e| *e != sent && mentions(text, e.as_str()))
        .collect();
    let levels = if listed.is_empty() {
        profile.effort - sent
    } else {
        listed
    };
    let fact = if levels.is_empty() {
        "effort: not accepted".to_owned()
    } else {
        format!(
            "effort: {}",
            levels.iter().map(Effort::as_str).collect::<Vec<_>>().join(", ")
        )
    };
    Some(Lesson {
        delta: Overrides {
            effort: Some(levels),
            ..Overrides::default()
        },
        fact,
    })
}

fn native(says: &impl Fn(&str) -> bool) -> Option<Lesson> {
    if says("output_config") {
        return Some(Lesson::new(
            "structured output: forced tool, not output_config",
            Overrides {
                native: Some(Native::ToolInput),
                ..Overrides::default()
            },
        ));
    }
    ["response_format", "response_json_schema", "json_schema"]
        .into_iter()
        .any(says)
        .then(|| {
            Lesson::new(
                "structured output: no native schema",
                Overrides {
                    native: Some(Native::None),
                    ..Overrides::default()
                },
            )
        })
}

fn token_field(says: &impl Fn(&str) -> bool) -> Option<Lesson> {
    let (field, fact) = if says("max_tokens") {
        (
            TokenField::MaxCompletionTokens,
            "max-token field: max_completion_tokens",
        )
    } else if says("max_completion_tokens") {
        (TokenField::MaxTokens, "max-token field: max_tokens")
    } else {
        return None;
    };
    Some(Lesson::new(
        fact,
        Overrides {
            token_field: Some(field),
            ..Overrides::default()
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::kind::Kind;
    use crate::llm::profile::lookup;
    use serde_json::json;

    fn learn(status: u16, message: &str, body: &Value) -> Option<Overrides> {
        let p = lookup(Kind::Anthropic, "claude-x");
        lesson(Some(status), message, body, "http://h/v1/messages", &p).map(|l| l.delta)
    }

    #[test]
    fn sampling_refusals_name_the_field() {
        let body = json!({"model": "m", "temperature": 0, "top_p": 0.9, "messages": []});
        let deprecated = r#"{"type":"error","error":{"type":"invalid_request_error","message":"`temperature` is deprecated for this model."}}"#;
        assert_eq!(learn(400, deprecated, &body).unwrap().temperature, Some(false));
        let both = "`temperature` and `top_p` cannot both be specified for this model. Please use only one.";
        assert_eq!(learn(400, both, &body).unwrap().sampling_together, Some(false));
        let not_sent = json!({"model": "m", "messages": []});
        assert_eq!(learn(400, deprecated, &not_sent), None, "only a field that was sent");
        assert_eq!(learn(401, deprecated, &body), None);
        let prose = json!({"stop_sequences": ["x"], "stop": ["y"]});
        assert_eq!(
            learn(400, "the model did not stop", &prose),
            None,
            "a bare word is not a field"
        );
    }

    #[test]
    fn prefill_thinking_effort_and_endpoint() {
        let prefilled = json!({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "{"}]});
        let msg =
            "This model does not support assistant message prefill. The conversation must end with a user message.";
        assert_eq!(learn(400, msg, &prefilled).unwrap().prefill, Some(false));
        let enabled = json!({"thinking": {"type": "enabled", "budget_tokens": 2048}});
        let msg = "`thinking.type=enabled` is not supported for this model. Use `thinking.type=adaptive` and `output_config.effort` to control thinking behavior.";
        assert_eq!(
            learn(400, msg, &enabled).unwrap().thinking,
            Some(EnumSet::only(ThinkingForm::Adaptive))
        );
        let effort = json!({"reasoning_effort": "minimal"});
        let msg = "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'.";
        let p = lookup(Kind::Openai, "o3");
        let l = lesson(Some(400), msg, &effort, "http://h/v1/chat/completions", &p).unwrap();
        assert_eq!(l.delta.effort, Some(Effort::Low | Effort::Medium | Effort::High));
        let msg = "This model is only supported in v1/responses and not in v1/chat/completions.";
        let l = lesson(
            Some(404),
            msg,
            &json!({"model": "o3-pro"}),
            "http://h/v1/chat/completions",
            &p,
        )
        .unwrap();
        assert_eq!(l.delta.api, Some(Api::Responses));
        let gemini = json!({"generationConfig": {"thinkingConfig": {"thinkingBudget": 1024}}});
        let msg = r#"{"error":{"code":400,"message":"thinking_budget is not supported by this model; use thinkingLevel","status":"INVALID_ARGUMENT"}}"#;
        let p = lookup(Kind::Gemini, "gemini-x");
        let l = lesson(Some(400), msg, &gemini, "http://h/x", &p).unwrap();
        assert_eq!(l.delta.thinking, Some(EnumSet::only(ThinkingForm::Level)));
    }
}
