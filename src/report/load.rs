//! What the report is built from, read from disk: a session's runs with
//! their prompts rebuilt, the prompts directory's twins and sample-input
//! names, and the gold sets. The one loader for `cutline report` and the
//! workbench's `x`; the rest of `report` stays pure.

use std::collections::BTreeMap;
use std::path::Path;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use serde_json::Value;

use super::{Input, RunInput, Summarised};
use crate::eval::{Gold, TablePrompt};
use crate::output::sweep::SweepSchemas;
use crate::prompt::{PromptConfig, ResponseType};
use crate::session::Session;

/// The report's input for `session`, the runs numbered `picked` selected
/// (numbers as in `session#N`), with what `prompts` says about each prompt.
/// Problems (torn lines, unknown prompts, bad gold sets) become notes on
/// the page.
pub fn input(session: Session, picked: &[usize], prompts: &Path, py: crate::output::tg::TgPython) -> Input {
    let numbers: Vec<usize> = (0..session.runs.len())
        .map(|i| usize::try_from(session.number(i)).unwrap_or(i + 1))
        .collect();
    let mut notes = session.warnings.clone();
    let (configs, _, _) = crate::store::load_dir(prompts);
    let by_id: BTreeMap<&str, &PromptConfig> = configs.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut unknown: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut gold = BTreeMap::new();
    let mut runs = Vec::with_capacity(session.runs.len());
    for (i, record) in session.runs.into_iter().enumerate() {
        let number = numbers[i];
        let known = by_id.get(record.prompt_id.as_str()).copied();
        if known.is_none() {
            unknown.entry(record.prompt_id.clone()).or_default().push(number);
        }
        if let Some(cfg) = known
            && !gold.contains_key(&cfg.id)
        {
            match crate::eval::inputs::gold_of(cfg, &prompts.join("gold"), &[]) {
                Ok(Some(g)) => {
                    gold.insert(cfg.id.clone(), g);
                }
                Ok(None) => {}
                Err(e) => notes.push(format!("gold set of {}: {e}", cfg.id)),
            }
        }
        let prompt = record.prompt_config().map(|cfg| {
            let jsonl = cfg.response_type == ResponseType::Jsonl;
            let schemas = SweepSchemas::of_response_python(jsonl, cfg.schema.as_ref());
            (cfg, schemas)
        });
        runs.push(RunInput {
            number,
            twin: known.and_then(|c| c.twin.clone()),
            input: known.and_then(|c| {
                c.inputs
                    .iter()
                    .find(|s| s.vars == record.variables)
                    .map(|s| s.name.clone())
            }),
            selected: picked.contains(&number),
            prompt,
            record,
        });
    }
    for (id, numbers) in unknown {
        let numbered: Vec<String> = numbers.iter().map(|n| format!("#{n}")).collect();
        notes.push(format!(
            "prompt {id:?} (runs {}) is not in {}: its twin, sample input names and gold set are unknown",
            numbered.join(", "),
            prompts.display()
        ));
    }
    Input {
        session_id: session.header.id.clone(),
        source: session.path.display().to_string(),
        notes,
        runs,
        gold,
        summarised: None,
        py,
    }
}

/// Which runs a report draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// These run numbers (and their twins).
    Runs(Vec<usize>),
    /// Every run, or for a large session the worst ones (see [`CARDS_MAX`]).
    All,
    /// The last run (one chart).
    Last,
}

/// A session with more runs than this is summarised: its table covers
/// every run, its cards only the worst.
pub const CARDS_MAX: usize = 200;

/// Cards drawn for the worst runs of a summarised session.
pub const WORST: usize = 20;

/// What the first pass keeps of each run: enough to find twins.
struct Meta {
    number: usize,
    prompt_id: String,
    vars: u64,
    limit: Option<u32>,
}

fn hash_of(v: &serde_json::Map<String, Value>) -> u64 {
    crate::eval::fnv64(&[Value::Object(v.clone()).to_string().as_bytes()])
}

/// Why a session file gives no report input.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The session file cannot be read.
    #[error("{file}: {source}")]
    Read {
        /// The session file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The session file holds no run.
    #[error("{file}: the session holds no runs")]
    Empty {
        /// The session file.
        file: String,
    },
    /// The caller's choice of runs was refused (its own error, kept as
    /// the source; the message is its message).
    #[error("{0}")]
    Pick(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The report's input for the session file at `path`, read run by run: a
/// first pass numbers the runs (and for a large session summarises each and
/// ranks the worst), `decide` then says which runs to draw, and a second
/// pass keeps only those and their twins. Memory follows what is shown.
/// `decide`'s error becomes [`LoadError::Pick`].
pub fn from_file<E: std::error::Error + Send + Sync + 'static>(
    path: &Path,
    prompts: &Path,
    py: crate::output::tg::TgPython,
    decide: impl FnOnce(&[usize]) -> Result<Pick, E>,
) -> Result<Input, LoadError> {
    let label = |source: std::io::Error| LoadError::Read {
        file: path.display().to_string(),
        source,
    };
    let (configs, _, _) = crate::store::load_dir(prompts);
    let by_id: BTreeMap<&str, &PromptConfig> = configs.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut metas = Vec::new();
    crate::session::each_run(path, &mut |r| {
        metas.push(Meta {
            number: usize::try_from(crate::session::run_number(&r, metas.len())).unwrap_or(metas.len() + 1),
            vars: hash_of(&r.variables),
            limit: r.params.max_tokens,
            prompt_id: r.prompt_id,
        });
    })
    .map_err(label)?;
    if metas.is_empty() {
        return Err(LoadError::Empty {
            file: path.display().to_string(),
        });
    }
    let numbers: Vec<usize> = metas.iter().map(|m| m.number).collect();
    let (shown, summarised) = match decide(&numbers).map_err(|e| LoadError::Pick(Box::new(e)))? {
        Pick::Runs(v) => (v, None),
        Pick::Last => (vec![*numbers.last().unwrap_or(&1)], None),
        Pick::All if numbers.len() <= CARDS_MAX => (numbers.clone(), None),
        Pick::All => {
            let (s, worst) = summarise(path, &by_id, prompts, py).map_err(label)?;
            (worst, Some(s))
        }
    };
    // The twins of the runs shown: the twin prompt, same variables and limit.
    let twin_of = |id: &str| by_id.get(id).and_then(|c| c.twin.clone());
    let shown_set: HashSet<usize> = shown.iter().copied().collect();
    let wanted: HashSet<(String, u64, Option<u32>)> = metas
        .iter()
        .filter(|m| shown_set.contains(&m.number))
        .filter_map(|m| Some((twin_of(&m.prompt_id)?, m.vars, m.limit)))
        .collect();
    let keep: HashSet<usize> = metas
        .iter()
        .filter(|m| shown_set.contains(&m.number) || wanted.contains(&(m.prompt_id.clone(), m.vars, m.limit)))
        .map(|m| m.number)
        .collect();
    drop(metas);
    let mut runs = Vec::new();
    let mut i = 0;
    let scanned = crate::session::each_run(path, &mut |r| {
        let n = usize::try_from(crate::session::run_number(&r, i)).unwrap_or(i + 1);
        i += 1;
        if keep.contains(&n) {
            runs.push(r);
        }
    })
    .map_err(label)?;
    let session = crate::session::Session {
        path: path.to_owned(),
        header: scanned.header,
        runs,
        warnings: scanned.warnings,
    };
    let mut out = input(session, &shown, prompts, py);
    out.summarised = summarised;
    Ok(out)
}

/// How bad a run looks: failed, cut with nothing kept, not parsed, fewest
/// items (greater is worse).
type Badness = (bool, bool, bool, Reverse<usize>);

/// Every run of a large session reduced to its summary (each prompt
/// snapshot rebuilt once), and the numbers of the [`WORST`] runs: failed,
/// then cut with nothing kept, then not parsed, then fewest items.
fn summarise(
    path: &Path,
    by_id: &BTreeMap<&str, &PromptConfig>,
    prompts: &Path,
    py: crate::output::tg::TgPython,
) -> std::io::Result<(Summarised, Vec<usize>)> {
    let mut configs: HashMap<String, Option<PromptConfig>> = HashMap::new();
    let mut gold: BTreeMap<String, Option<Gold>> = BTreeMap::new();
    let mut s = Summarised::default();
    let mut worst: BinaryHeap<(Reverse<Badness>, usize)> = BinaryHeap::new();
    let mut i = 0;
    crate::session::each_run(path, &mut |r| {
        let number = usize::try_from(crate::session::run_number(&r, i)).unwrap_or(i + 1);
        i += 1;
        s.runs += 1;
        let h = crate::eval::prompt_hash(&r.prompt);
        let cfg = configs.entry(h).or_insert_with(|| r.prompt_config().ok());
        let Some(cfg) = cfg.as_ref() else { return };
        let analysis = crate::run::Analysis::of(cfg.response_type, cfg.schema.as_ref(), &r.text, py);
        let g = gold.entry(cfg.id.clone()).or_insert_with(|| {
            by_id.get(cfg.id.as_str()).and_then(|c| {
                crate::eval::inputs::gold_of(c, &prompts.join("gold"), &[])
                    .ok()
                    .flatten()
            })
        });
        let input_name = by_id
            .get(cfg.id.as_str())
            .and_then(|c| c.inputs.iter().find(|x| x.vars == r.variables).map(|x| x.name.clone()))
            .unwrap_or_else(|| "-".into());
        let sum = crate::eval::summarise(
            crate::eval::record_key(&r),
            &input_name,
            &r,
            &analysis,
            g.as_ref(),
            false,
        );
        let score = (
            sum.failed(),
            sum.truncated && sum.items == 0,
            !sum.parse_ok,
            Reverse(sum.items),
        );
        worst.push((Reverse(score), number));
        if worst.len() > WORST {
            worst.pop();
        }
        if !s.prompts.iter().any(|p| p.id == cfg.id) {
            s.prompts.push(TablePrompt {
                id: cfg.id.clone(),
                response_type: cfg.response_type,
                twin: by_id.get(cfg.id.as_str()).and_then(|c| c.twin.clone()),
            });
        }
        if !s.limits.contains(&r.params.max_tokens) {
            s.limits.push(r.params.max_tokens);
        }
        s.summaries.push(sum);
    })?;
    s.limits.sort_by_key(|l| (l.is_none(), *l));
    let ids: Vec<String> = s.prompts.iter().map(|p| p.id.clone()).collect();
    for p in &mut s.prompts {
        p.twin = p.twin.take().filter(|t| ids.contains(t));
    }
    let mut numbers: Vec<usize> = worst.into_iter().map(|(_, n)| n).collect();
    numbers.sort_unstable();
    Ok((s, numbers))
}
