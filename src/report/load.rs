//! What the report is built from, read from disk: a session's runs with
//! their prompts rebuilt, the prompts directory's twins and sample-input
//! names, and the gold sets. The one loader for `cutline report` and the
//! workbench's `x`; the rest of `report` stays pure.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Input, RunInput};
use crate::eval::Gold;
use crate::output::sweep::SweepSchemas;
use crate::prompt::{PromptConfig, ResponseType};
use crate::session::Session;

/// The gold set of prompt `cfg`: `<dir>/<id>.jsonl`, else its twin's,
/// annotating the prompt's first sample input (as `eval` reads them).
fn gold_for(cfg: &PromptConfig, dir: &Path) -> Result<Option<Gold>, String> {
    let Some(first) = cfg.inputs.first() else {
        return Ok(None);
    };
    for id in std::iter::once(&cfg.id).chain(&cfg.twin) {
        let path = dir.join(format!("{id}.jsonl"));
        if path.is_file() {
            let items = crate::eval::inputs::read_gold(&path)?;
            let file = path.display().to_string();
            return Ok(Some(Gold::new(file, items, cfg, &first.vars, &[])));
        }
    }
    Ok(None)
}

/// The report's input for `session`, the runs numbered `picked` selected
/// (numbers as in `session#N`), with what `prompts` says about each prompt.
/// Problems (torn lines, unknown prompts, bad gold sets) become notes on
/// the page.
pub fn input(session: Session, picked: &[usize], prompts: &Path) -> Input {
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
            match gold_for(cfg, &prompts.join("gold")) {
                Ok(Some(g)) => {
                    gold.insert(cfg.id.clone(), g);
                }
                Ok(None) => {}
                Err(e) => notes.push(format!("gold set of {}: {e}", cfg.id)),
            }
        }
        let prompt = record.prompt_config().and_then(|cfg| {
            let schemas = SweepSchemas::of_response(cfg.response_type == ResponseType::Jsonl, cfg.schema.as_ref())
                .map_err(|e| format!("prompt {:?}: {e}", cfg.id))?;
            Ok((cfg, schemas))
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
    }
}
