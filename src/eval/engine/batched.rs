//! Batched execution: every pending run's request planned exactly as a
//! streamed run's would be, sent by the provider's batch API
//! (`eval::batch`), and each answer recorded through `run::finish` like a
//! streamed run, with the batch and custom id it came back under. Analysis,
//! replay, compare, report and budget then work on batched runs unchanged.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::{Ask, Events, ExecError, Executed, Matrix, Planned, Writer};
use crate::eval::batch::{self, Answer, BatchRef, Job, Manifest, Note, Options, Sink};
use crate::llm::batch::BatchApi;
use crate::llm::registry::Target;
use crate::run::{Plan, Spec};
use crate::session::Recorder;

/// One batched run: what it is and how it was asked.
struct Asked {
    planned: Planned,
    spec: Spec,
    plan: Plan,
}

/// The executor's answers handed to the writer.
struct Bridge<'w, 'e, E: Events> {
    m: &'w Matrix,
    target: &'w Target,
    asked: HashMap<String, Asked>,
    writer: Writer<'w>,
    events: &'e mut E,
    error: Option<std::io::Error>,
    stopped: bool,
}

impl<E: Events> Sink for Bridge<'_, '_, E> {
    fn answer(&mut self, key: &str, from: &BatchRef, answer: Answer) -> bool {
        // Not a run of this command (an earlier one's): nothing to keep.
        let Some(a) = self.asked.get(key) else { return true };
        if self.stopped || self.error.is_some() {
            return false;
        }
        let t = answer.transcript(from);
        let info = self.target.provider.info();
        let o = crate::run::finish(info, &a.spec, &a.plan, crate::session::now_ms(), &t, None);
        let unrecorded = self.writer.done.unrecorded.0;
        match self
            .writer
            .write(self.m, &a.planned, o.record, &o.analysis, self.events)
        {
            Ok(go_on) => self.stopped |= !go_on,
            Err(e) => self.error = Some(e),
        }
        self.writer.done.unrecorded.0 == unrecorded
    }

    fn note(&mut self, note: Note) {
        if let Err(e) = self.events.batch(&note) {
            self.error.get_or_insert(e);
        }
    }
}

/// What a batched execution needs besides the matrix.
pub struct Batching<'a> {
    /// The provider's batch API.
    pub api: Arc<dyn BatchApi>,
    /// Poll, wait, rounds.
    pub opts: Options,
    /// The eval's manifest.
    pub manifest: &'a mut Manifest,
    /// Where it is kept.
    pub path: &'a Path,
}

impl<'w, 'e, E: Events> Bridge<'w, 'e, E> {
    fn new(
        m: &'w Matrix,
        ask: &'w Ask,
        pending: Vec<Planned>,
        recorder: &'w mut Recorder,
        events: &'e mut E,
    ) -> Option<(Self, Vec<Job>)> {
        let target = ask.shared.as_ref()?;
        let mut asked = HashMap::new();
        let mut jobs = Vec::new();
        for p in pending {
            let spec = m.spec(&p, ask);
            // Rendered and fitted when the matrix was planned: no error here.
            let Ok(plan) = crate::run::plan(&spec, target) else {
                continue;
            };
            jobs.push(Job {
                key: p.key.clone(),
                request: plan.request.clone(),
            });
            asked.insert(p.key.clone(), Asked { planned: p, spec, plan });
        }
        let bridge = Self {
            m,
            target,
            asked,
            writer: Writer {
                recorder,
                done: Executed::default(),
            },
            events,
            error: None,
            stopped: false,
        };
        Some((bridge, jobs))
    }

    fn done(self) -> Result<Executed, ExecError> {
        match self.error {
            Some(e) => Err(ExecError::Io(e)),
            None => Ok(self.writer.done),
        }
    }
}

/// Record answers that came back by another way (an OpenAI-format batch
/// output file from `source`): each `(key, custom id, answer)` of a
/// pending run, through the same path as a batch's.
pub fn record(
    m: &Matrix,
    ask: &Ask,
    pending: Vec<Planned>,
    answers: Vec<(String, String, Answer)>,
    source: &str,
    recorder: &mut Recorder,
    events: &mut impl Events,
) -> Result<Executed, ExecError> {
    let Some((mut bridge, _)) = Bridge::new(m, ask, pending, recorder, events) else {
        return Ok(Executed::default());
    };
    for (key, custom_id, answer) in answers {
        let from = BatchRef {
            batch: source.to_owned(),
            custom_id,
        };
        // A file's answers are all at hand: one the session did not take
        // is counted as unrecorded by the writer, and a rerun records it.
        let _ = bridge.answer(&key, &from, answer);
    }
    bridge.done()
}

/// Run `pending` by the provider's batches, recording each answer.
pub async fn execute(
    m: &Matrix,
    ask: &Ask,
    pending: Vec<Planned>,
    b: Batching<'_>,
    recorder: &mut Recorder,
    events: &mut impl Events,
) -> Result<Executed, ExecError> {
    let planned_keys: HashSet<String> = pending.iter().map(|p| p.key.clone()).collect();
    let done_keys: HashSet<String> = m
        .planned
        .iter()
        .filter(|p| !planned_keys.contains(&p.key))
        .map(|p| p.key.clone())
        .collect();
    let Some((mut bridge, jobs)) = Bridge::new(m, ask, pending, recorder, events) else {
        return Ok(Executed::default());
    };
    let ended = batch::run(b.api.as_ref(), jobs, done_keys, b.manifest, b.path, b.opts, &mut bridge).await?;
    let mut done = bridge.done()?;
    done.pending = ended.pending;
    Ok(done)
}
