//! A run's plan: the rendered prompt and every request parameter decided in
//! one place, with the precedence (`llm::params`) and the model's profile
//! (`llm::profile`, less what the server refused earlier in the process).
//! Pure: the prompt, its variables, the command line's values and the
//! target's profile and defaults in; the request and its reasons out.

use serde_json::{Map, Value};

use super::{Spec, StartError};
use crate::llm::params::{self, Adjustment, Settings};
use crate::llm::profile::{Param, Profile};
use crate::llm::registry::Target;
use crate::llm::structured::{self, Path};
use crate::llm::{ProviderInfo, Request};
use crate::prompt::ResponseType;

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
    pub continues: Option<crate::session::Continues>,
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

    /// Leave `param` off after the server refused it: stop sequences move to
    /// the client, a sampling value goes back to the model's default.
    pub fn drop_refused(&mut self, param: Param, status: u16, message: String) {
        match param {
            Param::Temperature => self.request.temperature = None,
            Param::TopP => self.request.top_p = None,
            Param::Stop => self.client_stop = std::mem::take(&mut self.request.stop),
        }
        self.adjustments.push(Adjustment::Refused { param, status, message });
    }

    /// Whether the request still sends `param`.
    pub fn sends(&self, param: Param) -> bool {
        match param {
            Param::Temperature => self.request.temperature.is_some(),
            Param::TopP => self.request.top_p.is_some(),
            Param::Stop => !self.request.stop.is_empty(),
        }
    }
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
        Self {
            request: Request {
                system: rec.system.clone(),
                prompt: rec.rendered.clone(),
                max_tokens,
                stop: rec.params.stop.clone(),
                temperature: rec.params.temperature,
                top_p: rec.params.top_p,
                response_schema: None,
                headers: Vec::new(),
                prefill: rec.prefill.clone(),
                prefill_tokens: Vec::new(),
                grammar: None,
            },
            path: Path::parse(&rec.structured_path).unwrap_or(Path::None),
            client_stop: Vec::new(),
            settings,
            adjustments: rec.adjustments.clone(),
            profile: crate::llm::profile::lookup(crate::llm::config::Kind::Replay, ""),
            undefined: Vec::new(),
            continues: rec.continues,
        }
    }
}

/// The schema a response recorded on `path` is analysed against. A
/// prompt schema that does not compile (a TrustGraph prompt loads with one)
/// rejects every value, as TrustGraph's `validate` does at run time: it is
/// analysed as `false`, and [`schema_problem`] says why.
pub fn analysis_schema(path: Path, prompt_schema: Option<&Value>) -> Option<Value> {
    if schema_problem(prompt_schema).is_some() {
        return Some(Value::Bool(false));
    }
    match (path, prompt_schema) {
        (Path::NativeWrapped, Some(s)) => Some(params::wrap(s)),
        (_, s) => s.cloned(),
    }
}

/// Why a prompt's schema rejects every value, when it does not compile.
pub fn schema_problem(prompt_schema: Option<&Value>) -> Option<String> {
    let e = crate::output::schema::CompiledSchema::compile(prompt_schema?).err()?;
    Some(format!(
        "{e}; every value is rejected, as TrustGraph rejects them at run time"
    ))
}

/// Plan `spec` on `target`.
pub fn plan(spec: &Spec, target: &Target) -> Result<Plan, StartError> {
    let info = target.provider.info();
    plan_with(spec, target, &info)
}

fn plan_with(spec: &Spec, target: &Target, info: &ProviderInfo) -> Result<Plan, StartError> {
    let p = &spec.prompt;
    let rendered = crate::prompt::render_with(p, &Map::new(), &spec.vars, spec.undefined)
        .map_err(|e| StartError::Config(e.to_string()))?;
    let prompt_layer = params::Layer::of_prompt(p);
    let settings = params::resolve(&spec.cli, &prompt_layer, &target.layer, target.wire);
    let profile = target.profile.with_learned(&info.name, &info.model);
    let path = params::structured_path(&settings, p.schema.as_ref(), p.response_type == ResponseType::Json);
    let fitted = settings.fit(&profile, path, p.schema.as_ref());
    let system = match (fitted.path, &p.schema) {
        (Path::Prompt, Some(schema)) => structured::augment_system(&rendered.system, schema),
        _ => rendered.system,
    };
    let request = Request {
        system,
        prompt: rendered.prompt,
        max_tokens: settings.max_tokens.value,
        stop: fitted.stop,
        temperature: fitted.temperature,
        top_p: fitted.top_p,
        response_schema: fitted.native_schema,
        headers: spec.headers.clone(),
        prefill: String::new(),
        prefill_tokens: Vec::new(),
        grammar: fitted.grammar,
    };
    Ok(Plan {
        request,
        path: fitted.path,
        client_stop: fitted.client_stop,
        settings,
        adjustments: fitted.adjustments,
        profile,
        undefined: rendered.undefined,
        continues: None,
    })
}
