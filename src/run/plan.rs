//! A run's plan: the rendered prompt and every request parameter decided in
//! one place, with the precedence (`llm::params`) and what the model
//! accepts now (`Target::profile`: the table's row, its Models API, what
//! refusals and probes taught, the provider's config). A plan can be fitted
//! again ([`Plan::refit`]) when a refusal teaches something mid-run: the
//! settings asked for stay, only what is sent changes. Pure: the prompt,
//! its variables, the command line's values and the profile in; the
//! request and its reasons out.

use serde_json::{Map, Value};

use super::{Spec, StartError};
use crate::llm::Request;
use crate::llm::params::{self, Adjustment, Settings};
use crate::llm::profile::Profile;
use crate::llm::registry::Target;
use crate::llm::structured::{self, Path};
use crate::prompt::ResponseType;
use crate::session::Continues;

/// What a run sends, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The request as the provider gets it.
    pub request: Request,
    /// The structured path taken.
    pub path: Path,
    /// Stop sequences cutline applies to the text (the model refuses them).
    pub client_stop: Vec<String>,
    /// Each parameter's value and level, as asked for.
    pub settings: Settings,
    /// What was changed to fit the model.
    pub adjustments: Vec<Adjustment>,
    /// The profile the plan was fitted to.
    pub profile: Profile,
    /// Undefined names the render touched.
    pub undefined: Vec<String>,
    /// Set when this call continues an earlier answer.
    pub continues: Option<Continues>,
    /// What the plan is fitted from: the rendered prompt before any
    /// schema augmentation or follow-up, the prompt's schema, its type.
    source: Source,
    /// What refusals taught during this run (kept across refits).
    learned: Vec<Adjustment>,
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Source {
    system: String,
    prompt: String,
    schema: Option<Value>,
    json_response: bool,
    /// Where what is learned of the model is kept (base URL, model).
    key: (String, String),
    /// The provider renders the prompt itself from its id and variables
    /// (a TrustGraph deployment): set when planned, with them.
    service: Option<crate::llm::trustgraph::ServicePrompt>,
}

impl Plan {
    /// The stop sequences in force, sent or applied by cutline.
    pub fn stop(&self) -> &[String] {
        if self.client_stop.is_empty() {
            &self.request.stop
        } else {
            &self.client_stop
        }
    }

    /// The schema the answer is analysed against: the prompt's, or its
    /// wrapped form on the wrapped native path (the recorded text stays
    /// verbatim, `{"items": …}`).
    pub fn analysis_schema(&self, prompt_schema: Option<&Value>) -> Option<Value> {
        analysis_schema(self.path, prompt_schema)
    }

    /// Fit the plan to `profile` again (after a refusal taught something):
    /// every sent value is decided anew from the settings asked for; a
    /// prefill the model (or thinking) does not allow becomes a follow-up
    /// turn. `prefills`: whether the wire can prefill at all.
    pub fn refit(&mut self, profile: Profile, prefills: bool) {
        let s = &self.source;
        let path = params::structured_path(&self.settings, s.schema.as_ref(), s.json_response);
        let fitted = self.settings.fit(&profile, path, s.schema.as_ref());
        let r = &mut self.request;
        r.system = match (fitted.path, &s.schema) {
            (Path::Prompt, Some(schema)) => structured::augment_system(&s.system, schema),
            _ => s.system.clone(),
        };
        r.stop = fitted.stop;
        r.temperature = fitted.temperature;
        r.top_p = fitted.top_p;
        r.response_schema = fitted.native_schema;
        r.schema_as_tool = fitted.schema_as_tool;
        r.grammar = fitted.grammar;
        r.effort = fitted.effort;
        r.thinking = fitted.thinking;
        r.api = profile.api;
        r.token_field = Some(profile.token_field);
        let mut adjustments: Vec<Adjustment> = self.learned.clone();
        adjustments.extend(fitted.adjustments);
        let prefill_ok = prefills && profile.prefill && r.thinking.is_none();
        if self.continues == Some(Continues::Prefill) && !prefill_ok {
            let kept = super::follow_up::complete_lines(&r.prefill).to_owned();
            r.prompt = super::follow_up::follow_up(&s.prompt, &kept);
            r.prefill.clear();
            r.prefill_tokens.clear();
            self.continues = Some(Continues::FollowUp);
            adjustments.push(Adjustment::FollowUp);
        }
        adjustments.extend(retiring(&profile, &s.key));
        self.path = fitted.path;
        self.client_stop = fitted.client_stop;
        if let Some(service) = &s.service {
            self.path = Path::None;
            self.client_stop.clear();
            deployment_decides(r, service, &mut adjustments);
        }
        self.adjustments = adjustments;
        self.profile = profile;
    }

    /// Remember what a refusal taught this run (the record says it).
    pub fn learned(&mut self, adjustment: Adjustment) {
        self.learned.push(adjustment);
    }

    /// Set the plan up to continue `kept` (the answer so far) by prefill,
    /// with its token ids when known; [`Self::refit`] turns it into a
    /// follow-up where the model takes no prefill.
    pub fn prefill(&mut self, kept: &str, ids: Vec<u32>) {
        kept.clone_into(&mut self.request.prefill);
        self.request.prefill_tokens = ids;
        self.continues = Some(Continues::Prefill);
    }

    /// Set the plan up to continue by a follow-up turn quoting `kept`.
    pub fn follow_up(&mut self, kept: &str) {
        self.request.prompt = super::follow_up::follow_up(&self.source.prompt, kept);
        self.continues = Some(Continues::FollowUp);
    }

    /// Set the plan up to resume an answer the provider left incomplete,
    /// with its token (the same request, plus the token).
    pub fn resume(&mut self, token: &str) {
        self.request.continuation_token = Some(token.to_owned());
        self.continues = Some(Continues::Native);
    }
}

/// A provider that renders the prompt itself (a TrustGraph deployment's
/// prompt service) is sent the prompt's id and variables, and nothing it
/// would decide itself: each value that would have been sent is recorded as
/// omitted, with the reason.
fn deployment_decides(
    r: &mut Request,
    service: &crate::llm::trustgraph::ServicePrompt,
    adjustments: &mut Vec<Adjustment>,
) {
    use crate::llm::profile::Param;
    let reason = "the deployment decides it: its prompt service renders its own template and its text-completion \
                  service applies its own settings (the max-token limit is its --max-output)";
    let mut omit = |param: Param, was_set: bool| {
        if was_set {
            adjustments.push(Adjustment::Omitted {
                param,
                reason: reason.to_owned(),
            });
        }
    };
    omit(Param::MaxTokens, r.max_tokens.take().is_some());
    omit(Param::Temperature, r.temperature.take().is_some());
    omit(Param::TopP, r.top_p.take().is_some());
    omit(Param::Stop, !std::mem::take(&mut r.stop).is_empty());
    omit(Param::Effort, r.effort.take().is_some());
    omit(Param::Thinking, r.thinking.take().is_some());
    r.response_schema = None;
    r.schema_as_tool = false;
    r.grammar = None;
    r.service = Some(service.clone());
}

/// The retirement warning for the model, when its Models API or the table
/// says it is deprecated or retires. The Models API's `lifecycle` is its
/// word (a past date on a deprecated model means retirement is overdue,
/// not done); a date from the table that has passed is a retirement.
fn retiring(profile: &Profile, (base, model): &(String, String)) -> Option<Adjustment> {
    let api = crate::llm::learned::entry(base, model).and_then(|e| e.api);
    let (date, lifecycle, source) = match api {
        Some(a) if a.retires_at.is_some() || matches!(a.lifecycle.as_deref(), Some("deprecated" | "retired")) => {
            // A date the API gives that has passed (OpenAI's
            // `shutdown_date`, which has no lifecycle beside it) says the
            // model is gone.
            let past = a
                .retires_at
                .as_deref()
                .is_some_and(|d| d.get(..10).unwrap_or(d) <= crate::llm::learned::today().as_str());
            let lifecycle = match a.lifecycle.as_deref() {
                Some(l @ ("deprecated" | "retired")) => l.to_owned(),
                _ if past => "retired".to_owned(),
                _ => "scheduled to retire".to_owned(),
            };
            (
                a.retires_at.map(|d| d.chars().take(10).collect()),
                lifecycle,
                "models api",
            )
        }
        _ => {
            let date = profile.retires?;
            let past = *date <= *crate::llm::learned::today().as_str();
            let lifecycle = if past { "retired" } else { "deprecated" };
            (Some(date.to_owned()), lifecycle.to_owned(), "profile")
        }
    };
    Some(Adjustment::Retiring {
        model: model.clone(),
        lifecycle,
        date,
        source: source.into(),
    })
}

impl Plan {
    /// The plan of a recorded run played back at `max_tokens`: its own
    /// rendered text and parameters, its structured path (so a wrapped
    /// answer is analysed as one), nothing changed.
    pub fn recorded(rec: &crate::session::RunRecord, max_tokens: Option<u32>) -> Self {
        let settings = rec.params.settings.clone().unwrap_or_else(|| {
            params::resolve(
                &params::Layer::default(),
                &params::Layer::default(),
                &params::Layer::default(),
                params::WireDefaults::default(),
            )
        });
        // The schema its path sent too, so the request is the one the
        // recording answered (`run::recorded::asked_of`).
        let asked = super::recorded::asked_of(rec);
        Self {
            request: Request {
                system: rec.system.clone(),
                prompt: rec.rendered.clone(),
                max_tokens,
                stop: rec.params.stop.clone(),
                temperature: rec.params.temperature,
                top_p: rec.params.top_p,
                prefill: rec.prefill.clone(),
                response_schema: asked.schema,
                grammar: asked.grammar,
                ..Request::default()
            },
            path: rec.structured_path,
            client_stop: Vec::new(),
            settings,
            adjustments: rec.adjustments.clone(),
            profile: crate::llm::profile::lookup(crate::llm::config::Kind::Replay, ""),
            undefined: Vec::new(),
            continues: rec.continues,
            source: Source {
                system: rec.system.clone(),
                prompt: rec.rendered.clone(),
                schema: rec.prompt_config().ok().and_then(|p| p.schema),
                json_response: rec.response_type == ResponseType::Json,
                key: (String::new(), rec.provider.model.clone()),
                service: None,
            },
            learned: rec.adjustments.clone(),
        }
    }
}

/// The schema a response recorded on `path` is analysed against. A
/// prompt schema that does not compile (a TrustGraph prompt loads with one)
/// rejects every value, as TrustGraph's `validate` does at run time
/// (`CompiledSchema::compile_python` keeps it broken), and
/// [`schema_problem`] says why.
pub fn analysis_schema(path: Path, prompt_schema: Option<&Value>) -> Option<Value> {
    if schema_problem(prompt_schema).is_some() {
        return prompt_schema.cloned();
    }
    match (path, prompt_schema) {
        (Path::NativeWrapped, Some(s)) => Some(params::wrap(s)),
        (_, s) => s.cloned(),
    }
}

/// Why a prompt's schema rejects every value, when it does not compile.
pub fn schema_problem(prompt_schema: Option<&Value>) -> Option<String> {
    let e = crate::output::schema::CompiledSchema::compile_python(prompt_schema?)?
        .broken()?
        .clone();
    Some(format!(
        "{e}; every value is rejected, as TrustGraph rejects them at run time"
    ))
}

/// Plan `spec` on `target`, fitted to what the model accepts now.
pub fn plan(spec: &Spec, target: &Target) -> Result<Plan, StartError> {
    let p = &spec.prompt;
    let rendered =
        crate::prompt::render_with(p, &Map::new(), &spec.vars, spec.undefined).map_err(StartError::Render)?;
    let prompt_layer = params::Layer::of_prompt(p);
    let settings = params::resolve(&spec.cli, &prompt_layer, &target.layer, target.wire);
    let mut plan = Plan {
        request: Request {
            prompt: rendered.prompt.clone(),
            max_tokens: settings.max_tokens.value,
            headers: spec.headers.clone(),
            ..Request::default()
        },
        path: Path::None,
        client_stop: Vec::new(),
        settings,
        adjustments: Vec::new(),
        profile: target.seed,
        undefined: rendered.undefined,
        continues: None,
        source: Source {
            system: rendered.system,
            prompt: rendered.prompt,
            schema: p.schema.clone(),
            json_response: p.response_type == ResponseType::Json,
            key: target.learned_key(),
            service: target
                .provider
                .renders_itself()
                .then(|| crate::llm::trustgraph::ServicePrompt {
                    id: p.id.clone(),
                    variables: spec.vars.clone(),
                }),
        },
        learned: Vec::new(),
    };
    plan.refit(target.profile(), target.provider.prefills());
    Ok(plan)
}
