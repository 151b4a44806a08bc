//! Batched execution: every pending run's request planned exactly as a
//! streamed run's would be, sent by the provider's batch API
//! (`eval::batch`), and each answer recorded through `run::finish` like a
//! streamed run, with the batch and custom id it came back under. Analysis,
//! replay, compare, report and budget then work on batched runs unchanged.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::{Ask, Events, ExecError, Executed, Matrix, Planned, Writer};
use crate::eval::batch::{self, Answer, Answers, BatchRef, Job, Manifest, Note, Options, Sink};
use crate::llm::Transcript;
use crate::llm::batch::BatchApi;
use crate::llm::registry::Target;
use crate::run::{Plan, Spec};
use crate::session::Recorder;

/// Answers recorded between two syncs when they come from a file
/// (`--batch-results`): the file stays where it is, so a crash before a
/// sync loses nothing a rerun cannot record again.
const FILE_GROUP: usize = 512;

/// One pending run and, when a provider's batch sends it, the spec and
/// plan of the very request sent (recorded as sent, even if what cutline
/// knows of the model changes before the answer comes). Answers from a
/// file are planned when they come, as that file's requests were planned
/// by another command: what is held per run is then the matrix's `Planned`.
struct Asked<'w> {
    /// The matrix's own (the pending copy is let go as it is asked).
    planned: &'w Planned,
    sent: Option<Box<(Spec, Plan)>>,
}

/// The executor's answers handed to the writer.
struct Bridge<'w, 'e, E: Events> {
    m: &'w Matrix,
    ask: &'w Ask,
    target: &'w Target,
    /// By key, the matrix's own copy (100,000 keys copied were ~8 MB).
    asked: HashMap<&'w str, Asked<'w>>,
    /// Sync in groups of [`FILE_GROUP`] (answers from a file), or each
    /// answer before the executor goes on (a provider's batch: its manifest
    /// marks a batch collected only after its answers are on the disk).
    grouped: bool,
    writer: Writer<'w>,
    events: &'e mut E,
    error: Option<std::io::Error>,
    /// Where answers to runs of another eval of the session are kept.
    kept: Option<&'w mut Answers>,
}

impl<E: Events> Sink for Bridge<'_, '_, E> {
    fn answer(&mut self, key: &str, from: &BatchRef, answer: Answer) -> bool {
        if self.error.is_some() {
            return false;
        }
        let Some(asked) = self.asked.get(key) else {
            return self.keep_for_later(key, from, answer);
        };
        let planned = &asked.planned;
        let made;
        let (spec, plan) = match asked.sent.as_deref() {
            Some((spec, plan)) => (spec, plan),
            None => {
                let spec = self.m.spec(planned, self.ask);
                match crate::run::plan(&spec, self.target) {
                    Ok(plan) => {
                        made = (spec, plan);
                        (&made.0, &made.1)
                    }
                    Err(e) => {
                        self.error = Some(std::io::Error::other(e.to_string()));
                        return false;
                    }
                }
            }
        };
        let t = answer.transcript(from);
        let info = self.target.provider.info();
        let o = crate::run::finish(info, spec, plan, crate::session::now_ms(), &t, None);
        let unrecorded = self.writer.done.unrecorded.0;
        // A record over the session's line cap is refused alone (the
        // writer counts it): the batch's other answers are still recorded.
        let written = if self.grouped {
            self.writer
                .stage(self.m, planned, o.record, &o.analysis, self.events)
                .and_then(|_| {
                    if self.writer.staged.len() >= FILE_GROUP {
                        self.writer.commit_now(self.events)
                    } else {
                        Ok(())
                    }
                })
        } else {
            self.writer
                .write(self.m, planned, o.record, &o.analysis, self.events)
                .map(|_| ())
        };
        if let Err(e) = written {
            self.error = Some(e);
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
    /// Answers to runs of the session kept for the eval that asks them
    /// (`<session>.answers.jsonl`).
    pub answers: &'a mut Answers,
}

impl<'w, 'e, E: Events> Bridge<'w, 'e, E> {
    /// An answer to a run this command does not ask for (an earlier eval
    /// of the session asked more limits or inputs): it was paid for, so it
    /// is kept in the answers file until an eval that asks it records it,
    /// never dropped (its batch is then marked collected, and nothing would
    /// fetch it again). A failure is not kept: that run goes again.
    fn keep_for_later(&mut self, key: &str, from: &BatchRef, answer: Answer) -> bool {
        let (Answer::Answered(_), Some(kept)) = (&answer, self.kept.as_mut()) else {
            return true;
        };
        match kept.keep(key, answer.transcript(from)) {
            Ok(()) => true,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// Record every pending run whose answer an earlier eval kept; the
    /// keys recorded.
    fn record_kept(&mut self) -> HashSet<String> {
        let Some(kept) = self.kept.as_deref() else {
            return HashSet::new();
        };
        let mut found: Vec<(String, Transcript)> = self
            .asked
            .keys()
            .filter_map(|&k| kept.get(k).map(|t| (k.to_owned(), t.clone())))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let mut done = HashSet::new();
        for (key, mut t) in found {
            let from = t.batch.take().map_or_else(
                || BatchRef {
                    batch: String::new(),
                    custom_id: crate::llm::batch::custom_id(&key),
                },
                |b| BatchRef {
                    batch: b.id,
                    custom_id: b.custom_id,
                },
            );
            if !self.answer(&key, &from, Answer::Answered(Box::new(t))) {
                break;
            }
            done.insert(key);
        }
        done
    }

    fn new(
        m: &'w Matrix,
        ask: &'w Ask,
        pending: Vec<Planned>,
        (recorder, grouped): (&'w mut Recorder, bool),
        events: &'e mut E,
    ) -> Option<(Self, Vec<Job>)> {
        let target = ask.shared.as_ref()?;
        let mut asked = HashMap::new();
        let mut jobs = Vec::new();
        for p in pending {
            // Every pending run is the matrix's.
            let Some((key, &i)) = m.index.get_key_value(p.key.as_str()) else {
                continue;
            };
            let planned = &m.planned[i];
            let mut sent = None;
            if !grouped {
                // The requests a provider's batches send.
                let spec = m.spec(&p, ask);
                // Rendered and fitted when the matrix was planned: no error here.
                let Ok(plan) = crate::run::plan(&spec, target) else {
                    continue;
                };
                jobs.push(Job {
                    key: p.key,
                    request: plan.request.clone(),
                });
                sent = Some(Box::new((spec, plan)));
            }
            asked.insert(key.as_str(), Asked { planned, sent });
        }
        let runs = asked.len();
        let bridge = Self {
            m,
            ask,
            target,
            asked,
            grouped,
            writer: Writer::new(recorder).expecting(runs),
            events,
            error: None,
            kept: None,
        };
        Some((bridge, jobs))
    }

    fn done(mut self) -> Result<Executed, ExecError> {
        if self.error.is_none()
            && let Err(e) = self.writer.commit_now(self.events)
        {
            self.error = Some(e);
        }
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
    answers: impl IntoIterator<Item = (String, String, Answer)>,
    source: &str,
    recorder: &mut Recorder,
    events: &mut impl Events,
) -> Result<Executed, ExecError> {
    let Some((mut bridge, _)) = Bridge::new(m, ask, pending, (recorder, true), events) else {
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
    let mut done_keys: HashSet<String> = m
        .planned
        .iter()
        .filter(|p| !planned_keys.contains(&p.key))
        .map(|p| p.key.clone())
        .collect();
    let Some((mut bridge, jobs)) = Bridge::new(m, ask, pending, (recorder, false), events) else {
        return Ok(Executed::default());
    };
    bridge.kept = Some(b.answers);
    let from_kept = bridge.record_kept();
    if bridge.error.is_some() {
        return bridge.done();
    }
    let jobs: Vec<Job> = jobs.into_iter().filter(|j| !from_kept.contains(&j.key)).collect();
    done_keys.extend(from_kept);
    let ended = batch::run(b.api.as_ref(), jobs, done_keys, b.manifest, b.path, b.opts, &mut bridge).await?;
    let mut done = bridge.done()?;
    done.pending = ended.pending;
    Ok(done)
}
