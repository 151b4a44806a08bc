//! The matrix: every prompt × input rendered once (a template error stops
//! the eval before any request), every limit a run with its key, inputs
//! that render identically run once. Then what the session already holds:
//! each recorded run without error whose recomputed key is in the plan is
//! done, read run by run.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{Map, Value};

use crate::eval::{self, Gold, Input, KeyParts, RunSummary};
use crate::llm::params::Layer;
use crate::llm::registry::Target;
use crate::prompt::PromptConfig;
use crate::run::{Analysis, Spec};

/// A prompt of the matrix with its inputs and gold set.
pub struct PromptPlan {
    /// The prompt.
    pub cfg: PromptConfig,
    /// Its inputs.
    pub inputs: Vec<Input>,
    /// Its gold set, when one annotates it.
    pub gold: Option<Gold>,
    /// With `replay`: each input's recording, as a target (empty, or one
    /// per input).
    pub replays: Vec<Option<Target>>,
}

impl PromptPlan {
    /// The recording input `i` replays, when replaying.
    pub fn replay(&self, i: usize) -> Option<&Target> {
        self.replays.get(i).and_then(Option::as_ref)
    }
}

/// One run of the matrix.
#[derive(Debug, Clone)]
pub struct Planned {
    /// Its key.
    pub key: String,
    /// Index of its prompt in the plans.
    pub prompt: usize,
    /// Index of its input in the prompt's inputs.
    pub input: usize,
    /// Its limit.
    pub limit: Option<u32>,
}

/// What every run of an eval is asked with.
#[derive(Clone)]
pub struct Ask {
    /// The `--provider` word (part of each key).
    pub provider: String,
    /// The model (part of each key).
    pub model: String,
    /// The one target, unless each input has its recording (`replay`).
    pub shared: Option<Target>,
    /// The command line's level of the precedence.
    pub cli: Layer,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// The limits.
    pub limits: Vec<Option<u32>>,
    /// The Python TrustGraph's service runs on (`--tg-python`).
    pub tg_python: crate::output::tg::TgPython,
}

impl Ask {
    /// The spec of one prompt × input at `limit`.
    pub fn spec(&self, cfg: &PromptConfig, vars: &Map<String, Value>, limit: Option<u32>) -> Spec {
        let mut spec = Spec::new(cfg.clone(), vars.clone());
        spec.cli = self.cli.clone();
        spec.headers.clone_from(&self.headers);
        spec.tg_python = self.tg_python;
        spec.limit(limit)
    }
}

/// The planned matrix.
pub struct Matrix {
    /// Every prompt.
    pub plans: Vec<PromptPlan>,
    /// Every run, in plan order.
    pub planned: Vec<Planned>,
    /// Run key → index in `planned`.
    pub index: HashMap<String, usize>,
    /// The Python TrustGraph's service runs on, for recorded runs' verdicts.
    pub tg_python: crate::output::tg::TgPython,
}

impl Matrix {
    /// The summary table's prompts (each twin named when it is in the
    /// matrix too) and the runs of each row (a prompt's inputs), for
    /// `eval::table` over `limits` limits.
    pub fn table_prompts(&self, limits: usize) -> (Vec<eval::TablePrompt>, std::collections::BTreeMap<String, usize>) {
        let ids: Vec<&str> = self.plans.iter().map(|p| p.cfg.id.as_str()).collect();
        let prompts = self
            .plans
            .iter()
            .map(|p| eval::TablePrompt {
                id: p.cfg.id.clone(),
                response_type: p.cfg.response_type,
                twin: p.cfg.twin.clone().filter(|t| ids.contains(&t.as_str())),
            })
            .collect();
        let mut per_prompt = std::collections::BTreeMap::new();
        for p in &self.planned {
            *per_prompt.entry(self.plans[p.prompt].cfg.id.clone()).or_insert(0) += 1;
        }
        for n in per_prompt.values_mut() {
            *n /= limits.max(1);
        }
        (prompts, per_prompt)
    }

    /// The plan against what the session holds (`done`, from [`resume`]):
    /// the runs still to do, and the summaries of those recorded, both in
    /// plan order.
    pub fn split(&self, mut done: HashMap<String, RunSummary>) -> (Vec<Planned>, Vec<RunSummary>) {
        let pending = self
            .planned
            .iter()
            .filter(|p| !done.contains_key(&p.key))
            .cloned()
            .collect();
        let recorded = self.planned.iter().filter_map(|p| done.remove(&p.key)).collect();
        (pending, recorded)
    }

    /// The target of a planned run.
    pub fn target<'a>(&'a self, p: &Planned, ask: &'a Ask) -> Option<&'a Target> {
        self.plans[p.prompt].replay(p.input).or(ask.shared.as_ref())
    }

    /// The spec of a planned run.
    pub fn spec(&self, p: &Planned, ask: &Ask) -> Spec {
        let plan = &self.plans[p.prompt];
        ask.spec(&plan.cfg, &plan.inputs[p.input].vars, p.limit)
    }

    /// A recorded run reduced to its summary, when its key is planned.
    pub fn summary_of(&self, r: &crate::session::RunRecord, skipped: bool) -> Option<(String, RunSummary)> {
        let key = eval::record_key(r);
        let p = &self.planned[*self.index.get(&key)?];
        let plan = &self.plans[p.prompt];
        let path = r.structured_path;
        let schema = crate::run::analysis_schema(path, plan.cfg.schema.as_ref());
        let analysis = Analysis::of(plan.cfg.response_type, schema.as_ref(), &r.text, self.tg_python);
        let s = eval::summarise(
            key.clone(),
            &plan.inputs[p.input].id,
            r,
            &analysis,
            plan.gold.as_ref(),
            skipped,
        );
        Some((key, s))
    }
}

/// Why the matrix could not be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// A prompt does not render (or its schema does not compile).
    #[error("prompt {prompt:?}, input {input:?}: {source}")]
    Render {
        /// The prompt.
        prompt: String,
        /// The input.
        input: String,
        /// Why.
        #[source]
        source: Box<crate::run::StartError>,
    },
}

/// Plan every prompt × input × limit; the warnings name inputs that render
/// identically to an earlier one (run once).
pub fn plan(prompts: Vec<PromptPlan>, ask: &Ask) -> Result<(Matrix, Vec<String>), PlanError> {
    let mut planned: Vec<Planned> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut warnings = Vec::new();
    for (pi, pp) in prompts.iter().enumerate() {
        let ph = eval::prompt_hash(&crate::run::snapshot(&pp.cfg));
        for (ii, input) in pp.inputs.iter().enumerate() {
            let Some(target) = pp.replay(ii).or(ask.shared.as_ref()) else {
                continue;
            };
            let model = if pp.replay(ii).is_some() {
                target.provider.info().model
            } else {
                ask.model.clone()
            };
            let spec = ask.spec(&pp.cfg, &input.vars, None);
            let plan = crate::run::plan(&spec, target).map_err(|e| PlanError::Render {
                prompt: pp.cfg.id.clone(),
                input: input.id.clone(),
                source: Box::new(e),
            })?;
            let ih = eval::input_hash(&input.vars, &plan.request.system, &plan.request.prompt);
            for &limit in &ask.limits {
                let key = KeyParts {
                    prompt_id: &pp.cfg.id,
                    prompt_hash: &ph,
                    input_hash: &ih,
                    max_tokens: limit,
                    provider: &ask.provider,
                    model: &model,
                    structured: plan.path.as_str(),
                }
                .key();
                if let Some(&other) = index.get(&key) {
                    if Some(limit) == ask.limits.first().copied() {
                        let o = &planned[other];
                        let same = if o.prompt == pi {
                            prompts[pi].inputs[o.input].id.as_str()
                        } else {
                            ""
                        };
                        warnings.push(format!(
                            "prompt {:?}: input {:?} is identical to input {same:?}; run once",
                            pp.cfg.id, input.id
                        ));
                    }
                    continue;
                }
                index.insert(key.clone(), planned.len());
                planned.push(Planned {
                    key,
                    prompt: pi,
                    input: ii,
                    limit,
                });
            }
        }
    }
    Ok((
        Matrix {
            plans: prompts,
            planned,
            index,
            tg_python: ask.tg_python,
        },
        warnings,
    ))
}

/// The run keys of the session at `session` that are still in provider
/// batches (its manifest's batches being created, submitted or
/// cancelled): no path sends them again, so a streamed eval (or
/// `--batch-file`, or the workbench) leaves them to the batch eval that
/// collects them, and nothing is paid for twice.
pub fn in_batches(session: &Path) -> Result<HashSet<String>, crate::eval::batch::ManifestError> {
    let path = crate::eval::batch::manifest::path_for(session);
    Ok(crate::eval::batch::Manifest::load(&path)?
        .map(|m| m.in_flight().map(str::to_owned).collect())
        .unwrap_or_default())
}

/// `pending` without the runs in `flying` (see [`in_batches`]), and how
/// many were held back.
#[allow(
    clippy::implicit_hasher,
    reason = "called only with the std hasher; a generic hasher adds nothing"
)]
pub fn hold_in_batches(pending: Vec<Planned>, flying: &HashSet<String>) -> (Vec<Planned>, usize) {
    let before = pending.len();
    let left: Vec<Planned> = pending.into_iter().filter(|p| !flying.contains(&p.key)).collect();
    let held = before - left.len();
    (left, held)
}

/// What the session at `path` already holds of the matrix: each run
/// recorded without error (not a continuation call) whose key is planned,
/// as its summary; and the session's warnings. Read run by run.
pub fn resume(m: &Matrix, path: &Path) -> std::io::Result<(HashMap<String, RunSummary>, Vec<String>)> {
    let mut done = HashMap::new();
    if !path.is_file() {
        return Ok((done, Vec::new()));
    }
    let scanned = crate::session::each_run(path, &mut |r| {
        if r.error.is_some() || r.continues.is_some() {
            return;
        }
        if let Some((key, s)) = m.summary_of(&r, true) {
            done.insert(key, s);
        }
    })?;
    Ok((done, scanned.warnings))
}
