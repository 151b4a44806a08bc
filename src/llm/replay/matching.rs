//! What a replay must match: the parts of a request that change the
//! answer. A recording answers one request; played for another (an edited
//! template, another input, another stop list or temperature, a schema sent
//! natively) it would be another prompt's answer passed off as this one's.
//! The max-token limit is not among them: replay cuts a recording to any
//! smaller limit, which is exactly what a greedy model says under it.

use serde_json::Value;

use crate::llm::Request;

/// The parts of a request that change the answer, as replay compares them.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The system message, as sent (with a schema written into it on the
    /// prompt path).
    pub system: String,
    /// The user message, as sent.
    pub prompt: String,
    /// The stop sequences in force, sorted (their order changes nothing).
    pub stop: Vec<String>,
    /// The temperature sent (`None`: the model's own).
    pub temperature: Option<f32>,
    /// The `top_p` sent.
    pub top_p: Option<f32>,
    /// The schema sent natively (wrapped when it was).
    pub schema: Option<Value>,
    /// The GBNF grammar sent (llama-server's constrained JSONL).
    pub grammar: Option<String>,
}

impl Asked {
    /// What `req` asks.
    pub fn of(req: &Request) -> Self {
        Self::new(&req.system, &req.prompt, &req.stop, (req.temperature, req.top_p))
            .with_schema(req.response_schema.clone(), req.grammar.clone())
    }

    /// The messages, stop list and sampling of a request (no schema).
    pub fn new(system: &str, prompt: &str, stop: &[String], (temperature, top_p): (Option<f32>, Option<f32>)) -> Self {
        let mut stop = stop.to_vec();
        stop.sort();
        stop.dedup();
        Self {
            system: system.to_owned(),
            prompt: prompt.to_owned(),
            stop,
            temperature,
            top_p,
            schema: None,
            grammar: None,
        }
    }

    /// The same, with the schema and grammar sent.
    #[must_use]
    pub fn with_schema(mut self, schema: Option<Value>, grammar: Option<String>) -> Self {
        self.schema = schema;
        self.grammar = grammar;
        self
    }

    /// How `other` differs from this (the recorded request), first
    /// difference first: the messages, then the stop list, sampling and
    /// schema. `None` when a recording of this answers `other`.
    pub fn difference(&self, other: &Self) -> Option<Difference> {
        if let Some(at) = Place::first_difference(&self.system, &other.system) {
            return Some(Difference::System {
                at,
                recorded: excerpt(&self.system, at.byte),
                asked: excerpt(&other.system, at.byte),
            });
        }
        if let Some(at) = Place::first_difference(&self.prompt, &other.prompt) {
            return Some(Difference::Prompt {
                at,
                recorded: excerpt(&self.prompt, at.byte),
                asked: excerpt(&other.prompt, at.byte),
            });
        }
        if self.stop != other.stop {
            return Some(Difference::Stop {
                recorded: self.stop.clone(),
                asked: other.stop.clone(),
            });
        }
        if self.temperature != other.temperature {
            return Some(Difference::Sampling {
                param: "temperature",
                recorded: self.temperature,
                asked: other.temperature,
            });
        }
        if self.top_p != other.top_p {
            return Some(Difference::Sampling {
                param: "top_p",
                recorded: self.top_p,
                asked: other.top_p,
            });
        }
        if self.schema != other.schema || self.grammar != other.grammar {
            return Some(Difference::Schema {
                recorded: schema_words(self),
                asked: schema_words(other),
            });
        }
        None
    }
}

fn schema_words(a: &Asked) -> &'static str {
    match (&a.schema, &a.grammar) {
        (Some(_), _) => "a schema sent natively",
        (None, Some(_)) => "a JSONL grammar",
        (None, None) => "no schema sent",
    }
}

/// Where two texts first differ: line and column (from 1, in characters)
/// in both, since they are equal up to there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1, in characters.
    pub column: usize,
    /// Byte offset (in both texts).
    pub byte: usize,
}

impl Place {
    /// The first place `a` and `b` differ, or `None` when they are equal.
    pub fn first_difference(a: &str, b: &str) -> Option<Self> {
        if a == b {
            return None;
        }
        let (mut line, mut column, mut byte) = (1, 1, 0);
        for ((i, ca), cb) in a.char_indices().zip(b.chars()) {
            byte = i;
            if ca != cb {
                return Some(Self { line, column, byte });
            }
            byte = i + ca.len_utf8();
            if ca == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        Some(Self { line, column, byte })
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Up to 40 characters of `text` from byte `at`, escaped (`"…"`, or
/// `the end` when the text ends there).
fn excerpt(text: &str, at: usize) -> String {
    let rest = text.get(at..).unwrap_or_default();
    if rest.is_empty() {
        return "the end".to_owned();
    }
    let mut s: String = rest.chars().take(40).collect();
    if rest.chars().nth(40).is_some() {
        s.push('…');
    }
    format!("{s:?}")
}

/// How a request differs from the one a recording answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Difference {
    /// The system messages differ.
    #[error("its system message differs at {at}: the recording has {recorded}, this request {asked}")]
    System {
        /// Where.
        at: Place,
        /// The recording's text from there.
        recorded: String,
        /// This request's text from there.
        asked: String,
    },
    /// The user messages differ (the template or the input).
    #[error("its user message differs at {at}: the recording has {recorded}, this request {asked}")]
    Prompt {
        /// Where.
        at: Place,
        /// The recording's text from there.
        recorded: String,
        /// This request's text from there.
        asked: String,
    },
    /// The stop sequences differ.
    #[error("its stop sequences differ: the recording had {recorded:?}, this request {asked:?}")]
    Stop {
        /// The recording's.
        recorded: Vec<String>,
        /// This request's.
        asked: Vec<String>,
    },
    /// A sampling parameter differs.
    #[error("its {param} differs: the recording had {}, this request {}", Sent(*.recorded), Sent(*.asked))]
    Sampling {
        /// `temperature` or `top_p`.
        param: &'static str,
        /// The recording's.
        recorded: Option<f32>,
        /// This request's.
        asked: Option<f32>,
    },
    /// The reasoning asked for differs (effort, thinking budget): replay
    /// sends none, but the recorded answer was made with it.
    #[error("its reasoning differs: the recording asked {recorded}, this request {asked}")]
    Reasoning {
        /// The recording's, in words.
        recorded: String,
        /// This request's, in words.
        asked: String,
    },
    /// The schema sent differs.
    #[error("its schema differs: the recording had {recorded}, this request {asked}")]
    Schema {
        /// The recording's, in words.
        recorded: &'static str,
        /// This request's, in words.
        asked: &'static str,
    },
}

/// A sampling value as sent: the number, or `none sent`.
struct Sent(Option<f32>);

impl std::fmt::Display for Sent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(v) => write!(f, "{v}"),
            None => f.write_str("none sent"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(system: &str, prompt: &str) -> Asked {
        Asked::new(system, prompt, &["\n###".to_owned()], (Some(0.0), None))
    }

    #[test]
    fn the_first_difference_is_named_with_its_place() {
        let rec = asked("Be brief.", "Find terms.\nText: a\nOutput:\n");
        let banana = asked("Be brief.", "Find terms.\nANSWER ONLY WITH THE WORD BANANA\n");
        assert_eq!(
            rec.difference(&banana).map(|d| d.to_string()).as_deref(),
            Some(
                "its user message differs at line 2, column 1: the recording has \"Text: a\\nOutput:\\n\", this \
                 request \"ANSWER ONLY WITH THE WORD BANANA\\n\""
            )
        );
        let system = asked("Be long.", "Find terms.\nText: a\nOutput:\n");
        assert_eq!(
            rec.difference(&system).map(|d| d.to_string()).as_deref(),
            Some(
                "its system message differs at line 1, column 4: the recording has \"brief.\", this request \"long.\""
            )
        );
        assert_eq!(rec.difference(&rec.clone()), None);
    }

    #[test]
    fn stop_order_does_not_count_and_sampling_does() {
        let a = Asked::new("", "p", &["a".into(), "b".into()], (Some(0.0), None));
        let b = Asked::new("", "p", &["b".into(), "a".into()], (Some(0.0), None));
        assert_eq!(a.difference(&b), None);
        let hot = Asked::new("", "p", &["a".into(), "b".into()], (Some(0.7), None));
        assert_eq!(
            a.difference(&hot).map(|d| d.to_string()).as_deref(),
            Some("its temperature differs: the recording had 0, this request 0.7")
        );
        let prefix = Asked::new("", "pq", &["a".into(), "b".into()], (Some(0.0), None));
        assert_eq!(
            a.difference(&prefix).map(|d| d.to_string()).as_deref(),
            Some("its user message differs at line 1, column 2: the recording has the end, this request \"q\"")
        );
        let native = a.clone().with_schema(Some(serde_json::json!({"type": "array"})), None);
        assert_eq!(
            a.difference(&native).map(|d| d.to_string()).as_deref(),
            Some("its schema differs: the recording had no schema sent, this request a schema sent natively")
        );
    }
}
