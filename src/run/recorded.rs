//! Which recording a replay plays: one whose recorded request is the one
//! asked now (`llm::replay::Asked`: messages, stop list, sampling, schema
//! sent, and the reasoning asked), found among every session run by run;
//! never a recording of the same prompt id with another text. When none
//! matches, [`NoRecording`] names the nearest recording and what differs,
//! and the ways out.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::llm::FinishReason;
use crate::llm::replay::{Asked, Difference};
use crate::llm::structured::Path as StructuredPath;
use crate::session::RunRecord;

/// What a recording's request asked, rebuilt from the record: the rendered
/// messages and parameters it keeps, and the schema its structured path
/// sent (from its prompt snapshot). A record older than the stop list or
/// `top_p` fields reads them as none sent, as it was written.
pub fn asked_of(rec: &RunRecord) -> Asked {
    let p = &rec.params;
    let schema = rec.prompt_config().ok().and_then(|c| c.schema);
    let (native, grammar) = match (rec.structured_path, schema) {
        (StructuredPath::Native, Some(s)) => (Some(s), None),
        (StructuredPath::NativeWrapped, Some(s)) => (Some(crate::llm::params::wrap(&s)), None),
        (StructuredPath::Grammar, Some(s)) => (None, crate::llm::grammar::jsonl(&s, &p.stop).ok()),
        _ => (None, None),
    };
    Asked::new(&rec.system, &rec.rendered, &p.stop, (p.temperature, p.top_p)).with_schema(native, grammar)
}

/// The reasoning a run asked for (effort, thinking budget), which replay's
/// target never sends but which changed the recorded answer. A record
/// without settings (older than them) asked none.
fn reasoning_of(settings: Option<&crate::llm::params::Settings>) -> String {
    let Some(s) = settings else {
        return "none".to_owned();
    };
    match (s.effort.value, s.thinking_budget.value) {
        (None, None) => "none".to_owned(),
        (e, t) => format!(
            "effort {}, thinking budget {}",
            e.map_or_else(|| "none".to_owned(), |e| format!("{e:?}").to_lowercase()),
            t.map_or_else(|| "none".to_owned(), |t| t.to_string())
        ),
    }
}

/// What is looked for: the request, and who asks (for the error's words).
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    /// The request's parts that change the answer.
    pub asked: &'a Asked,
    /// The reasoning asked (effort, thinking budget).
    pub settings: &'a crate::llm::params::Settings,
    /// The prompt's id (a recording of another id with the same request
    /// matches: a migration that renders like its twin is its twin).
    pub prompt_id: &'a str,
    /// The variables.
    pub vars: &'a Map<String, Value>,
}

/// What the ways out of a refused replay are.
const WAY_OUT: &str = "run it on the local model (`cutline setup local` installs it, then `--provider local`), or \
                       play a recording on purpose with `cutline replay SESSION#N`";

/// Why no recording answers a request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoRecording {
    /// No recording of this prompt id nor of these variables: nothing near.
    #[error(
        "replay: no recording in {dir} answers this request: there is no recording of prompt {prompt_id:?} nor of \
         any prompt with these variables; {WAY_OUT}",
        dir = dir.display()
    )]
    Unrecorded {
        /// The sessions directory searched.
        dir: PathBuf,
        /// The prompt asked for.
        prompt_id: String,
    },
    /// The nearest recording (same prompt id, else the same variables)
    /// answered another request.
    #[error(
        "replay: no recording in {dir} answers this request of prompt {prompt_id:?}: the nearest, {nearest} (prompt \
         {nearest_prompt:?}{same_input}), {source}; {WAY_OUT}",
        dir = dir.display(),
        same_input = if *same_input { ", same input" } else { ", another input" }
    )]
    Differs {
        /// The sessions directory searched.
        dir: PathBuf,
        /// The prompt asked for.
        prompt_id: String,
        /// The nearest recording, `session#N`.
        nearest: String,
        /// Its prompt id.
        nearest_prompt: String,
        /// Whether it was recorded with these variables.
        same_input: bool,
        /// What differs.
        source: Difference,
    },
}

/// The nearest miss so far: (same prompt id, same variables, start) and
/// what differs, with where it is (file index, run number, prompt id).
type Near = ((bool, bool, u64), Difference, (usize, u64, String));

/// The best match so far: (same prompt id, uncut, pieces when cut,
/// start), the run, (file index, number).
type Best = ((bool, bool, usize, u64), RunRecord, (usize, u64));

/// The recording that answers `w`, among every session in `dir`: the
/// one recorded under the same prompt id first, then the latest whose request equals it and that was not cut by its own limit
/// (it replays at every limit), else the longest cut one. Read run by run; only the best so far is
/// held. Returns the run and its `session#N`.
pub fn find(dir: &Path, w: Wanted<'_>) -> Result<(RunRecord, String), Box<NoRecording>> {
    let reasoning = reasoning_of(Some(w.settings));
    let mut best: Option<Best> = None;
    let mut near: Option<Near> = None;
    let mut ids: Vec<String> = Vec::new();
    for (file, path) in crate::session::list(dir).iter().enumerate() {
        let mut index = 0;
        let mut each = |r: RunRecord| {
            let number = crate::session::run_number(&r, index);
            index += 1;
            if r.pieces.is_empty() || r.continues.is_some() {
                return;
            }
            let recorded = reasoning_of(r.params.settings.as_ref());
            let difference = asked_of(&r).difference(w.asked).or_else(|| {
                (recorded != reasoning).then(|| Difference::Reasoning {
                    recorded: recorded.clone(),
                    asked: reasoning.clone(),
                })
            });
            match difference {
                None => {
                    // The prompt's own recording first (two prompts may
                    // send the same request: twins whose schema is not
                    // sent); then uncut first (the latest); among cut ones
                    // the longest, which replays at every limit a shorter
                    // one does and more (a replay recorded at 64 tokens
                    // never hides the recording made at 768).
                    let full = r.finish != FinishReason::Length && r.finish != FinishReason::Error;
                    let own = r.prompt_id == w.prompt_id;
                    let rank = (own, full, if full { 0 } else { r.pieces.len() }, r.started_ms);
                    if best.as_ref().is_none_or(|(b, ..)| rank > *b) {
                        best = Some((rank, r, (file, number)));
                    }
                }
                Some(d) => {
                    let rank = (r.prompt_id == w.prompt_id, r.variables == *w.vars, r.started_ms);
                    if (rank.0 || rank.1) && near.as_ref().is_none_or(|(n, ..)| rank > *n) {
                        near = Some((rank, d, (file, number, r.prompt_id)));
                    }
                }
            }
        };
        // A file that cannot be read counts for nothing.
        let id = crate::session::each_run(path, &mut each).map_or_else(|_| String::new(), |s| s.header.id);
        ids.push(id);
    }
    let reference = |file: usize, n: u64| format!("{}#{n}", ids.get(file).map_or("", String::as_str));
    if let Some((_, r, (file, n))) = best {
        return Ok((r, reference(file, n)));
    }
    Err(Box::new(match near {
        Some(((_, same_input, _), difference, (file, n, nearest_prompt))) => NoRecording::Differs {
            dir: dir.to_path_buf(),
            prompt_id: w.prompt_id.to_owned(),
            nearest: reference(file, n),
            nearest_prompt,
            same_input,
            source: difference,
        },
        None => NoRecording::Unrecorded {
            dir: dir.to_path_buf(),
            prompt_id: w.prompt_id.to_owned(),
        },
    }))
}
