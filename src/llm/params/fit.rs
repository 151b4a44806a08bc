//! Fitting the settings a run asks for to what the model accepts: a
//! parameter the model refuses is left off (stop sequences are then applied
//! by cutline), the wire's default temperature is sent only where the
//! model honours it, temperature and `top_p` only together where the model
//! takes both, effort and thinking in the form the model takes (within
//! Anthropic's budget rules), and the schema in the form the native path
//! needs (wrapped, fitted for `output_config`, or a forced tool). Each
//! change is an [`Adjustment`]. Pure.

use serde_json::Value;

use super::{Adjustment, Level, Settings, wrap};
use crate::llm::Thinking;
use crate::llm::profile::{Api, Effort, Native, Param, Profile, ThinkingForm};
use crate::llm::structured::Path;

/// What the request finally carries after fitting the profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// Temperature sent (`None`: left to the model).
    pub temperature: Option<f32>,
    /// `top_p` sent.
    pub top_p: Option<f32>,
    /// Stop sequences sent to the server.
    pub stop: Vec<String>,
    /// Stop sequences cutline applies to the text itself.
    pub client_stop: Vec<String>,
    /// The structured path, possibly changed to fit.
    pub path: Path,
    /// The schema sent natively (wrapped or fitted when needed).
    pub native_schema: Option<Value>,
    /// The schema goes as a forced tool's input schema.
    pub schema_as_tool: bool,
    /// The grammar sent on the grammar path.
    pub grammar: Option<String>,
    /// Reasoning effort sent.
    pub effort: Option<Effort>,
    /// Thinking sent.
    pub thinking: Option<Thinking>,
    /// What was changed, for the record.
    pub adjustments: Vec<Adjustment>,
}

/// Anthropic's thinking budget rules: at least this many tokens, and fewer
/// than `max_tokens`.
pub const ANTHROPIC_MIN_BUDGET: u32 = 1024;

impl Settings {
    /// Fit these settings to `profile` for a response `schema` (when the
    /// path is structured).
    pub fn fit(&self, profile: &Profile, path: Path, schema: Option<&Value>) -> Fitted {
        let mut adjustments = Vec::new();
        let (effort, thinking) = self.reasoning(profile, &mut adjustments);
        let (temperature, top_p) = self.sampling(profile, effort, &mut adjustments);
        let stops = self.stop.value.clone().unwrap_or_default();
        let (stop, client_stop) = if stops.is_empty() || profile.stop && profile.api == Api::Chat {
            (stops, Vec::new())
        } else if profile.stop {
            adjustments.push(Adjustment::Omitted {
                param: Param::Stop,
                reason: "the Responses API has no stop sequences; applied by cutline".into(),
            });
            (Vec::new(), stops)
        } else {
            adjustments.push(not_sent(profile, Param::Stop));
            (Vec::new(), stops)
        };
        let native = native(profile, path, schema, thinking.is_some(), &mut adjustments);
        let (path, grammar) = match (native.path, schema) {
            (Path::Grammar, Some(s)) => match grammar_for(profile, s, &stop) {
                Ok(g) => (Path::Grammar, Some(g)),
                Err(why) => {
                    adjustments.push(Adjustment::Unconstrained {
                        reason: why.to_string(),
                    });
                    (Path::None, None)
                }
            },
            (p, _) => (p, None),
        };
        Fitted {
            temperature,
            top_p,
            stop,
            client_stop,
            path,
            native_schema: native.schema,
            schema_as_tool: native.tool,
            grammar,
            effort,
            thinking,
            adjustments,
        }
    }

    /// Temperature and `top_p` as the model takes them.
    fn sampling(
        &self,
        profile: &Profile,
        effort: Option<Effort>,
        adj: &mut Vec<Adjustment>,
    ) -> (Option<f32>, Option<f32>) {
        let needs_no_effort = profile.sampling_needs_no_effort && effort != Some(Effort::None);
        let gate = |param: Param, accepts: bool, adj: &mut Vec<Adjustment>| {
            if !accepts {
                adj.push(not_sent(profile, param));
                false
            } else if needs_no_effort {
                adj.push(Adjustment::Omitted {
                    param,
                    reason: format!("{} models take sampling parameters only at effort none", profile.family),
                });
                false
            } else {
                true
            }
        };
        // Recorded even for the wire's default 0: a run without it used the
        // model's own temperature, so its replay is not exact.
        let temperature = match self.temperature.value {
            Some(_) if self.temperature.from == Level::Wire && profile.temperature && !profile.greedy => {
                adj.push(Adjustment::NotGreedy {
                    reason: not_greedy_reason(profile),
                });
                None
            }
            Some(t) if gate(Param::Temperature, profile.temperature, adj) => Some(t),
            _ => None,
        };
        let top_p = match self.top_p.value {
            Some(p) if gate(Param::TopP, profile.top_p, adj) => Some(p),
            _ => None,
        };
        if temperature.is_some() && top_p.is_some() && !profile.sampling_together {
            adj.push(Adjustment::Omitted {
                param: Param::TopP,
                reason: format!(
                    "{} models take temperature or top_p, not both; temperature was kept",
                    profile.family
                ),
            });
            return (temperature, None);
        }
        (temperature, top_p)
    }

    /// Effort and thinking as the model takes them: effort in its own field
    /// or, on Gemini 3, as the thinking level; a budget as a budget (within
    /// Anthropic's rules), else adaptive, else a level.
    fn reasoning(&self, profile: &Profile, adj: &mut Vec<Adjustment>) -> (Option<Effort>, Option<Thinking>) {
        let forms = profile.thinking;
        let mut effort = self.effort.value.and_then(|e| effort_taken(e, profile, adj));
        let mut thinking = None;
        if forms.contains(ThinkingForm::Level)
            && let Some(e) = effort.take()
        {
            thinking = Some(Thinking::Level { level: e });
        }
        let Some(budget) = self.thinking_budget.value else {
            return (effort, thinking);
        };
        if thinking.is_some() {
            adj.push(Adjustment::Thinking {
                reason: format!("budget {budget} not sent: the thinking level set by effort stands (never both)"),
            });
            return (effort, thinking);
        }
        let limit = self.max_tokens.value;
        let thinking = if forms.contains(ThinkingForm::Budget) {
            budget_within(budget, limit, profile, forms, adj)
        } else if forms.contains(ThinkingForm::Adaptive) {
            adj.push(Adjustment::Thinking {
                reason: format!(
                    "{} models take only adaptive thinking: sent instead of budget {budget}",
                    profile.family
                ),
            });
            Some(Thinking::Adaptive)
        } else if forms.contains(ThinkingForm::Level) {
            let level = level_of_budget(budget);
            adj.push(Adjustment::Thinking {
                reason: format!(
                    "{} models take a thinking level: budget {budget} sent as level {}",
                    profile.family,
                    level.as_str()
                ),
            });
            Some(Thinking::Level { level })
        } else {
            adj.push(not_sent(profile, Param::Thinking));
            None
        };
        (effort, thinking)
    }
}

/// The effort level sent for `asked`: itself where the model takes it;
/// else, where the profile says so, the nearest level it takes (never
/// `none` into thinking, nor thinking into `none`; the lower on a tie);
/// else nothing. Each change is recorded.
fn effort_taken(asked: Effort, profile: &Profile, adj: &mut Vec<Adjustment>) -> Option<Effort> {
    if profile.effort.contains(asked) {
        return Some(asked);
    }
    let rank = |e: Effort| Effort::ALL.iter().position(|x| *x == e).unwrap_or(0);
    let nearest = (profile.effort_nearest && asked != Effort::None)
        .then(|| {
            (profile.effort - Effort::None)
                .iter()
                .min_by_key(|e| (rank(*e).abs_diff(rank(asked)), rank(*e)))
        })
        .flatten();
    let taken = || profile.effort.iter().map(Effort::as_str).collect::<Vec<_>>().join(", ");
    match nearest {
        Some(e) => {
            adj.push(Adjustment::Thinking {
                reason: format!(
                    "effort {} sent as {}: {} models take {}",
                    asked.as_str(),
                    e.as_str(),
                    profile.family,
                    taken()
                ),
            });
            Some(e)
        }
        None => {
            adj.push(Adjustment::Omitted {
                param: Param::Effort,
                reason: format!("{} models do not take effort {}", profile.family, asked.as_str()),
            });
            None
        }
    }
}

/// A thinking budget within the model's rules: on Claude (whose profile
/// takes `output_config` or a forced tool) at least 1024 and below the
/// max-token limit, else adaptive thinking when the limit leaves no room.
fn budget_within(
    budget: u32,
    limit: Option<u32>,
    profile: &Profile,
    forms: enumset::EnumSet<ThinkingForm>,
    adj: &mut Vec<Adjustment>,
) -> Option<Thinking> {
    let claude = matches!(profile.native, Native::OutputConfig | Native::ToolInput);
    if !claude {
        return Some(Thinking::Budget { tokens: budget });
    }
    let Some(limit) = limit else {
        return Some(Thinking::Budget {
            tokens: budget.max(ANTHROPIC_MIN_BUDGET),
        });
    };
    if limit <= ANTHROPIC_MIN_BUDGET {
        if forms.contains(ThinkingForm::Adaptive) {
            adj.push(Adjustment::Thinking {
                reason: format!(
                    "the limit {limit} leaves no room for a budget (at least {ANTHROPIC_MIN_BUDGET}, below the limit): adaptive thinking sent"
                ),
            });
            return Some(Thinking::Adaptive);
        }
        adj.push(Adjustment::Thinking {
            reason: format!(
                "not sent: the limit {limit} leaves no room for a budget (at least {ANTHROPIC_MIN_BUDGET}, below the limit)"
            ),
        });
        return None;
    }
    let tokens = budget.clamp(ANTHROPIC_MIN_BUDGET, limit - 1);
    if tokens != budget {
        adj.push(Adjustment::Thinking {
            reason: format!(
                "budget {budget} sent as {tokens} (at least {ANTHROPIC_MIN_BUDGET}, below the limit {limit})"
            ),
        });
    }
    Some(Thinking::Budget { tokens })
}

/// The thinking level closest to a budget (Gemini's own mapping of effort
/// to budget: low 1024, medium 8192, high 24576).
fn level_of_budget(budget: u32) -> Effort {
    match budget {
        0..=1024 => Effort::Low,
        1025..=8192 => Effort::Medium,
        _ => Effort::High,
    }
}

fn not_greedy_reason(profile: &Profile) -> String {
    match profile.family {
        "gemini-3" => "Gemini 3: Google advises keeping temperature at 1.0, lower can loop".into(),
        f if f.starts_with("claude") => format!("{f} models get no sampling parameter unless one is configured"),
        f => format!("{f} models keep their own default"),
    }
}

fn not_sent(profile: &Profile, param: Param) -> Adjustment {
    Adjustment::NotSent {
        param,
        family: profile.family.to_owned(),
    }
}

/// The native schema as the model takes it.
struct NativeFit {
    path: Path,
    schema: Option<Value>,
    tool: bool,
}

fn native(
    profile: &Profile,
    path: Path,
    schema: Option<&Value>,
    thinking: bool,
    adj: &mut Vec<Adjustment>,
) -> NativeFit {
    let (Path::Native, Some(s)) = (path, schema) else {
        return NativeFit {
            path,
            schema: None,
            tool: false,
        };
    };
    let fallback = |reason: String, adj: &mut Vec<Adjustment>| {
        adj.push(Adjustment::PromptFallback { reason });
        NativeFit {
            path: Path::Prompt,
            schema: None,
            tool: false,
        }
    };
    if profile.native == Native::None {
        return fallback(format!("{} models have no native schema support", profile.family), adj);
    }
    let (path, sent) = if profile.native.object_root() && !super::is_object_root(s) {
        adj.push(Adjustment::Wrapped);
        (Path::NativeWrapped, wrap(s))
    } else {
        (Path::Native, s.clone())
    };
    let tool = |reason: String, adj: &mut Vec<Adjustment>| {
        if thinking {
            return fallback("a forced tool cannot be combined with thinking".into(), adj);
        }
        adj.push(Adjustment::ToolInput { reason });
        NativeFit {
            path,
            schema: Some(sent.clone()),
            tool: true,
        }
    };
    match profile.native {
        Native::ToolInput => tool(format!("{} models have no output_config", profile.family), adj),
        Native::OutputConfig => match crate::llm::anthropic::schema::fit(&sent) {
            Ok(f) => {
                if !f.moved.is_empty() {
                    adj.push(Adjustment::SchemaMoved { keywords: f.moved });
                }
                NativeFit {
                    path,
                    schema: Some(f.schema),
                    tool: false,
                }
            }
            Err(reason) => tool(format!("output_config cannot take this schema ({reason})"), adj),
        },
        _ => NativeFit {
            path,
            schema: Some(sent),
            tool: false,
        },
    }
}

/// Why a JSONL answer goes unconstrained where a grammar was asked for.
#[derive(Debug, thiserror::Error)]
enum NoGrammar {
    /// The model family takes no grammar.
    #[error("{family} models take no grammar")]
    NotTaken {
        /// The profile's family.
        family: &'static str,
    },
    /// The line schema has no grammar.
    #[error("{0}")]
    Schema(#[from] crate::llm::grammar::Unsupported),
}

/// The grammar for JSONL lines under `schema`, or why there is none.
fn grammar_for(profile: &Profile, schema: &Value, stop: &[String]) -> Result<String, NoGrammar> {
    if !profile.grammar {
        return Err(NoGrammar::NotTaken { family: profile.family });
    }
    Ok(crate::llm::grammar::jsonl(schema, stop)?)
}
