//! The changes cutline makes to a request to fit the model, each recorded
//! with the run, warned about by the CLI and shown in the workbench's
//! status line: never silent.

use serde::{Deserialize, Serialize};

use crate::llm::profile::Param;

/// A change cutline made to fit the model, recorded with the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Adjustment {
    /// The model's profile refuses the parameter: it was not sent.
    NotSent {
        /// Which.
        param: Param,
        /// The profile row that says so.
        family: String,
    },
    /// The parameter was left off for another reason.
    Omitted {
        /// Which.
        param: Param,
        /// Why, for people.
        reason: String,
    },
    /// The wire's default temperature 0 was not sent: the model's own
    /// default sampling was used, so the run is not greedy.
    NotGreedy {
        /// Why.
        reason: String,
    },
    /// The server refused the parameter (HTTP 400 naming it): the request
    /// was sent again without it (sessions before learned capabilities).
    Refused {
        /// Which.
        param: Param,
        /// HTTP status of the refusal.
        status: u16,
        /// The server's words (scrubbed, shortened).
        message: String,
    },
    /// A refusal taught cutline what the model accepts: the request was
    /// changed, sent again, and the fact kept for the next process.
    Learned {
        /// What was learned (`temperature: not accepted`).
        fact: String,
        /// HTTP status of the refusal.
        status: u16,
        /// The server's words (scrubbed, shortened).
        message: String,
    },
    /// Thinking was sent in another form than asked, or not at all.
    Thinking {
        /// What was done and why.
        reason: String,
    },
    /// The native schema path needs an object root: the schema was sent
    /// wrapped as `{"items": …}` and the answer unwrapped.
    Wrapped,
    /// Anthropic `output_config`: keywords it does not take were moved into
    /// descriptions (the answer is validated against the full schema).
    SchemaMoved {
        /// Each keyword and where.
        keywords: Vec<String>,
    },
    /// Structured output went as a forced tool's input schema.
    ToolInput {
        /// Why.
        reason: String,
    },
    /// The model has no native schema support: the prompt path was used.
    PromptFallback {
        /// Why.
        reason: String,
    },
    /// A JSONL answer asked to be constrained was left unconstrained.
    Unconstrained {
        /// Why: the wire takes no grammar, or the schema is outside the
        /// grammar subset (naming the keyword and where).
        reason: String,
    },
    /// A continuation that would prefill went as a follow-up turn: the
    /// model takes no assistant prefill.
    FollowUp,
    /// The model is deprecated or retires soon, or already has.
    Retiring {
        /// The model id.
        model: String,
        /// `deprecated`, `retired`, or `scheduled`.
        lifecycle: String,
        /// The retirement date (`YYYY-MM-DD`), when known.
        date: Option<String>,
        /// Who says so: `models api` or `profile`.
        source: String,
    },
}

impl Adjustment {
    /// One line for a person.
    pub fn describe(&self) -> String {
        match self {
            Self::NotSent { param, family } if family == crate::llm::learned::LEARNED_FAMILY => format!(
                "{} not sent: the model refused it before (`cutline models` shows what was learned){}",
                param.as_str(),
                if *param == Param::Stop {
                    "; applied by cutline"
                } else {
                    "; the model's default was used"
                }
            ),
            Self::NotSent { param, family } => match param {
                Param::Stop => format!("stop sequences not sent ({family} models refuse them); applied by cutline"),
                p => format!(
                    "{} not sent ({family} models refuse it); the model's default was used",
                    p.as_str()
                ),
            },
            Self::Omitted { param, reason } => format!("{} not sent: {reason}", param.as_str()),
            Self::NotGreedy { reason } => {
                format!(
                    "temperature 0 not sent ({reason}); the model's default sampling was used, so the run is not greedy"
                )
            }
            Self::Refused { param, status, message } => format!(
                "the server refused `{}` (HTTP {status}: {message}); sent again without it{}",
                param.as_str(),
                if *param == Param::Stop {
                    ", stop applied by cutline"
                } else {
                    ", the model's default was used"
                }
            ),
            Self::Learned { fact, status, message } => {
                format!("learned from a refusal (HTTP {status}: {message}): {fact}; sent again and kept for next time")
            }
            Self::Thinking { reason } => format!("thinking: {reason}"),
            Self::Wrapped => {
                "native structured output with the schema wrapped in an object (unwrapped on receipt)".into()
            }
            Self::SchemaMoved { keywords } => format!(
                "output_config takes no {}: moved into descriptions (the answer is validated against the full schema)",
                keywords.join(", ")
            ),
            Self::ToolInput { reason } => format!("structured output as a forced tool's input: {reason}"),
            Self::PromptFallback { reason } => format!("structured output by prompt: {reason}"),
            Self::Unconstrained { reason } => format!("JSONL left unconstrained: {reason}"),
            Self::FollowUp => "the model takes no assistant prefill: continued by a follow-up turn".into(),
            Self::Retiring {
                model,
                lifecycle,
                date,
                source,
            } => match date {
                Some(d) if lifecycle == "retired" && *d.as_str() <= *crate::llm::learned::today().as_str() => {
                    format!("{model} is retired: it shut down on {d} ({source}); requests to it are expected to fail")
                }
                Some(d) => format!("{model} is {lifecycle}: it retires on {d} ({source})"),
                None => format!("{model} is {lifecycle} ({source})"),
            },
        }
    }
}
