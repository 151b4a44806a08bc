//! A finish reason that disagrees with the run's own evidence (the check
//! itself is `run::evidence`, which sees the analysis): recorded with the
//! run, so the type lives beside [`super::FinishReason`].

use serde::{Deserialize, Serialize};

/// One way the reported finish disagrees with the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mismatch {
    /// Reported `stop` (or `tool_calls`), but the text ends inside a value
    /// or a line and the output tokens reached the limit: it was cut.
    StopButCut {
        /// The provider's reason.
        reported: String,
        /// Output tokens.
        tokens: u32,
        /// The limit.
        limit: u32,
    },
    /// Reported `length` with fewer output tokens than the limit.
    LengthUnderLimit {
        /// Output tokens.
        tokens: u32,
        /// The limit.
        limit: u32,
    },
    /// Structured output whose JSON is cut short, though the finish says the
    /// model ended it.
    StructuredCut {
        /// The provider's reason.
        reported: String,
    },
    /// The reported output tokens differ from the token pieces received.
    UsageDisagrees {
        /// What the provider reported.
        reported: u32,
        /// Token pieces counted.
        counted: u32,
    },
}

impl Mismatch {
    /// One line for a person.
    pub fn describe(&self) -> String {
        match self {
            Self::StopButCut {
                reported,
                tokens,
                limit,
            } => format!(
                "the provider said `{reported}`, but the answer ends mid-value at {tokens} of {limit} tokens: it was cut by the limit"
            ),
            Self::LengthUnderLimit { tokens, limit } => {
                format!("the provider said `length` after {tokens} output tokens, under the limit of {limit}")
            }
            Self::StructuredCut { reported } => {
                format!("the provider said `{reported}`, but the structured output is cut short")
            }
            Self::UsageDisagrees { reported, counted } => {
                format!("the provider reported {reported} output tokens but streamed {counted}")
            }
        }
    }
}
