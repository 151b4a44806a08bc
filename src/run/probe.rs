//! `cutline probe`: find out what a model accepts with at most
//! [`MAX_CALLS`] tiny requests (16 tokens at most each), and keep what was
//! found where refusals are kept (`llm::learned`), so every later run is
//! fitted to it from its first request.
//!
//! The probe starts from what is known of nothing: what was learned of the
//! model before is forgotten, and every parameter is offered. Then:
//! sampling (temperature, `top_p`, both at once) and stop sequences in one
//! request, resent after each refusal with what it taught (the endpoint
//! too: a chat request to a model only `/responses` serves moves there);
//! structured output with an object root, then an array root; an assistant
//! prefill where the wire has one; thinking: the Models API where the
//! provider has one, else one request in the model's form (Gemini's
//! level, Anthropic's adaptive, OpenAI's effort).

use enumset::EnumSet;
use serde::Serialize;
use serde_json::{Value, json};

use crate::llm::learned::{self, Evidence, Source};
use crate::llm::profile::{Effort, Native, Overrides, Profile, ThinkingForm};
use crate::llm::registry::Target;
use crate::llm::{LlmError, Request, Thinking, Transcript, adapt};

/// The most requests one probe sends.
pub const MAX_CALLS: usize = 8;

/// The most tokens one probe request asks for.
pub const MAX_TOKENS: u32 = 16;

/// What the probe found of one capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The capability (`temperature`, `structured output`, …).
    pub capability: String,
    /// What was found (`accepted`, `not accepted`, `object root only`, …).
    pub found: String,
    /// How: `probe`, `refusal`, `models api`, or `not probed` and why.
    pub how: String,
    /// The server's words for a refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The probe of one target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Every finding, in probe order.
    pub findings: Vec<Finding>,
    /// Requests sent (the Models API not counted).
    pub calls: usize,
}

struct Probe<'t> {
    target: &'t Target,
    base: String,
    model: String,
    profile: Profile,
    calls: usize,
    findings: Vec<Finding>,
}

/// The open profile a probe starts from: the table's wire facts (token
/// field, schema form), every parameter offered.
fn open(seed: Profile) -> Profile {
    Profile {
        temperature: true,
        greedy: true,
        top_p: true,
        sampling_together: true,
        stop: true,
        prefill: true,
        native: match seed.native {
            Native::OutputConfig | Native::ToolInput => Native::OutputConfig,
            _ => Native::AnyRoot,
        },
        ..seed
    }
}

/// Probe `target`'s model; what it finds is learned (and kept when the
/// process keeps what it learns).
pub async fn run(target: &Target) -> Report {
    let (base, model) = target.learned_key();
    learned::forget_one(&base, &model);
    let mut p = Probe {
        target,
        base,
        model,
        profile: open(target.seed.with(&target.config)),
        calls: 0,
        findings: Vec::new(),
    };
    p.sampling().await;
    p.structured().await;
    p.prefill().await;
    p.thinking().await;
    Report {
        findings: p.findings,
        calls: p.calls,
    }
}

fn base_request() -> Request {
    Request {
        prompt: "Reply with the word OK.".into(),
        max_tokens: Some(MAX_TOKENS),
        ..Request::default()
    }
}

/// How one probe request ended.
enum Sent {
    Accepted,
    Refused(adapt::Lesson, String),
    Failed(LlmError),
    OutOfCalls,
}

impl Probe<'_> {
    async fn send(&mut self, mut req: Request) -> Sent {
        if self.calls >= MAX_CALLS {
            return Sent::OutOfCalls;
        }
        self.calls += 1;
        req.api = self.profile.api;
        req.token_field = Some(self.profile.token_field);
        let wire = self.target.provider.wire(&req);
        let t: Transcript = crate::llm::collect(self.target.provider.stream(req), |_, _| {}).await;
        let Some(e) = t.error.filter(|_| t.text.is_empty()) else {
            return Sent::Accepted;
        };
        let lesson = wire.and_then(|(url, body)| adapt::lesson(e.status, &e.message, &body, &url, &self.profile));
        match lesson {
            Some(l) => Sent::Refused(l, e.message),
            None => Sent::Failed(e),
        }
    }

    fn keep(&mut self, delta: &Overrides, fact: &str, source: Source, message: &str) {
        self.profile = self.profile.over(delta);
        learned::learn(
            &self.base,
            &self.model,
            delta,
            Evidence {
                fact: fact.to_owned(),
                source,
                status: None,
                message: message.chars().take(200).collect(),
                at_ms: learned::now_ms(),
            },
        );
    }

    fn found(&mut self, capability: &str, found: &str, how: &str, message: Option<String>) {
        self.findings.push(Finding {
            capability: capability.into(),
            found: found.into(),
            how: how.into(),
            message,
        });
    }

    /// Temperature, `top_p` and stop in one request, resent after each
    /// refusal with what it taught, until one is accepted.
    async fn sampling(&mut self) {
        loop {
            let p = self.profile;
            let together = p.temperature && p.top_p && p.sampling_together;
            let req = Request {
                temperature: p.temperature.then_some(0.0),
                top_p: (p.top_p && (together || !p.temperature)).then_some(1.0),
                stop: if p.stop { vec!["\n\n".into()] } else { Vec::new() },
                ..base_request()
            };
            let sent = (req.temperature.is_some(), req.top_p.is_some(), !req.stop.is_empty());
            match self.send(req).await {
                Sent::Accepted => {
                    let yes = |on: bool| Some(on).filter(|on| *on);
                    let delta = Overrides {
                        temperature: yes(sent.0),
                        top_p: yes(sent.1),
                        sampling_together: yes(sent.0 && sent.1),
                        stop: yes(sent.2),
                        api: Some(p.api),
                        ..Overrides::default()
                    };
                    self.keep(&delta, "sampling and stop: accepted as sent", Source::Probe, "accepted");
                    for (cap, on) in [("temperature", p.temperature), ("top_p", p.top_p), ("stop", p.stop)] {
                        let found = if on { "accepted" } else { "not accepted" };
                        self.found(cap, found, "probe", None);
                    }
                    let both = if p.sampling_together {
                        "accepted"
                    } else {
                        "not accepted"
                    };
                    self.found("temperature with top_p", both, "probe", None);
                    self.found("endpoint", api_word(p), "probe", None);
                    return;
                }
                Sent::Refused(l, message) => self.keep(&l.delta, &l.fact, Source::Refusal, &message),
                Sent::Failed(e) => return self.found("sampling", "unknown", "failed", Some(e.to_string())),
                Sent::OutOfCalls => return self.found("sampling", "unknown", "not probed: out of calls", None),
            }
        }
    }

    /// A schema with an object root, then with an array root.
    async fn structured(&mut self) {
        let object = json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"], "additionalProperties": false});
        let array = json!({"type": "array", "items": {"type": "string"}});
        let form = self.profile.native;
        let request = |schema: &Value| Request {
            response_schema: Some(schema.clone()),
            ..base_request()
        };
        match self.send(request(&object)).await {
            Sent::Accepted => self.found("structured output", "accepted", "probe", None),
            Sent::Refused(l, message) => {
                self.keep(&l.delta, &l.fact, Source::Refusal, &message);
                return self.found("structured output", &l.fact, "refusal", Some(message));
            }
            Sent::Failed(e) => return self.found("structured output", "unknown", "failed", Some(e.to_string())),
            Sent::OutOfCalls => return self.found("structured output", "unknown", "not probed: out of calls", None),
        }
        let roots = match self.send(request(&array)).await {
            Sent::Accepted => Some((Native::AnyRoot, "any root")),
            Sent::Refused(..) | Sent::Failed(_) => Some((Native::ObjectRoot, "object root only")),
            Sent::OutOfCalls => None,
        };
        match roots {
            Some((native, found)) => {
                // Claude's forms are object-rooted by the wire: kept as they are.
                let claude = matches!(form, Native::OutputConfig | Native::ToolInput);
                let delta = Overrides {
                    native: Some(if claude { form } else { native }),
                    ..Overrides::default()
                };
                self.keep(&delta, &format!("structured output: {found}"), Source::Probe, found);
                self.found("schema roots", found, "probe", None);
            }
            None => self.found("schema roots", "unknown", "not probed: out of calls", None),
        }
    }

    /// An assistant prefill, where the wire has one.
    async fn prefill(&mut self) {
        if !self.target.provider.prefills() {
            return self.found("assistant prefill", "no", "the wire has none", None);
        }
        let req = Request {
            prompt: "Count from one to five.".into(),
            prefill: "One, two,".into(),
            ..base_request()
        };
        match self.send(req).await {
            Sent::Accepted => {
                let delta = Overrides {
                    prefill: Some(true),
                    ..Overrides::default()
                };
                self.keep(&delta, "assistant prefill: accepted", Source::Probe, "accepted");
                self.found("assistant prefill", "accepted", "probe", None);
            }
            Sent::Refused(l, message) => {
                self.keep(&l.delta, &l.fact, Source::Refusal, &message);
                self.found("assistant prefill", "not accepted", "refusal", Some(message));
            }
            Sent::Failed(e) => self.found("assistant prefill", "unknown", "failed", Some(e.to_string())),
            Sent::OutOfCalls => self.found("assistant prefill", "unknown", "not probed: out of calls", None),
        }
    }

    /// Thinking and effort: the Models API's word where it has one, else a
    /// request in the model's own form.
    async fn thinking(&mut self) {
        if let Some(ask) = self.target.provider.describe()
            && let Ok(Some(api)) = ask.await
        {
            let f = api.facts;
            learned::set_api(&self.base, &self.model, api);
            self.profile = self.profile.over(&f);
            // An API that says nothing of thinking (OpenAI's) leaves it
            // to a request.
            if f.thinking.is_some() || f.effort.is_some() {
                let forms = f.thinking.map_or_else(|| "not said".to_owned(), forms_word);
                self.found("thinking", &forms, "models api", None);
                let effort = f.effort.map_or_else(|| "not said".to_owned(), efforts_word);
                return self.found("effort", &effort, "models api", None);
            }
        }
        let forms = self.profile.thinking;
        let (thinking, effort) = if forms.contains(ThinkingForm::Level) {
            (Some(Thinking::Level { level: Effort::Low }), None)
        } else if forms.contains(ThinkingForm::Adaptive) {
            (Some(Thinking::Adaptive), None)
        } else if !self.profile.effort.is_empty() {
            (None, Some(Effort::Low))
        } else {
            return self.found("thinking", "not probed", "no form fits in 16 tokens", None);
        };
        let req = Request {
            effort,
            thinking,
            ..base_request()
        };
        let what = if effort.is_some() { "effort" } else { "thinking" };
        match self.send(req).await {
            Sent::Accepted => self.found(what, "accepted (low)", "probe", None),
            Sent::Refused(l, message) => {
                self.keep(&l.delta, &l.fact, Source::Refusal, &message);
                self.found(what, &l.fact, "refusal", Some(message));
            }
            Sent::Failed(e) => self.found(what, "unknown", "failed", Some(e.to_string())),
            Sent::OutOfCalls => self.found(what, "unknown", "not probed: out of calls", None),
        }
    }
}

fn api_word(p: Profile) -> &'static str {
    match p.api {
        crate::llm::profile::Api::Chat => "chat",
        crate::llm::profile::Api::Responses => "responses",
    }
}

fn forms_word(forms: EnumSet<ThinkingForm>) -> String {
    if forms.is_empty() {
        return "none".into();
    }
    forms.iter().map(adapt::form_word).collect::<Vec<_>>().join(", ")
}

fn efforts_word(levels: EnumSet<Effort>) -> String {
    if levels.is_empty() {
        return "none".into();
    }
    levels.iter().map(Effort::as_str).collect::<Vec<_>>().join(", ")
}
