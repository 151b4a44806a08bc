//! Running an eval's requests as provider batches: the executor behind
//! `eval --batch`. Not pure (it calls the provider and writes the
//! manifest); the runs it answers are handed to the caller, which records
//! them through the same `run::finish` as a streamed run.
//!
//! One call does everything a command can do in its `--wait`: adopt a
//! batch a crashed process created (found by the tag its create call
//! carried, unique to that manifest entry) or forget one that was never
//! created, collect every batch that ended (a cancelled one too: what it
//! answered before the cancel is kept), resubmit what expired, was
//! cancelled or failed, a batch that failed as a whole included (each run
//! at most `rounds` times; after the last it is handed back as a failure),
//! submit what was never sent, and poll with backoff (the first interval
//! `--poll`, ×1.5 after each poll, at most 10 minutes; a server's
//! `retry-after` is honoured by the HTTP layer, and a poll still rate
//! limited or failing after its retries is tried again at the next poll)
//! until nothing is pending or the wait runs out. Results are matched by
//! custom id, never by position, and a run already recorded is never
//! handed back twice.

pub mod answers;
pub mod manifest;
pub mod time;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use crate::llm::batch::{self, BatchApi, Item, Outcome, Phase, Status, Submitted};
use crate::llm::{ErrorKind, LlmError, Request, Transcript};
pub use answers::{Answers, AnswersError};
pub use manifest::{Entry, EntryState, Manifest, ManifestError};

/// One run to answer: its key and its fitted request.
#[derive(Debug, Clone)]
pub struct Job {
    /// The run key.
    pub key: String,
    /// The request, as a streamed run would send it.
    pub request: Request,
}

/// How long to wait, how often to look.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The first poll interval.
    pub poll: Duration,
    /// How long this command may wait for batches to end (0: submit and
    /// return).
    pub wait: Duration,
    /// Times a run is sent at most (its first batch included).
    pub rounds: u32,
}

/// The longest pause between two polls.
pub const MAX_POLL: Duration = Duration::from_secs(600);

/// What became of one run.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The provider answered: the transcript.
    Answered(Box<Transcript>),
    /// It failed in every round it was sent in: the last error.
    Failed(LlmError),
}

impl Answer {
    /// The answer as the transcript a stream would have given, with the
    /// batch and custom id it came back under: what `run::finish` records.
    pub fn transcript(self, from: &BatchRef) -> Transcript {
        let mut t = match self {
            Self::Answered(t) => *t,
            Self::Failed(e) => Transcript {
                finish: Some(crate::llm::FinishReason::Error),
                error: Some(e),
                ..Transcript::default()
            },
        };
        t.batch = Some(crate::llm::BatchRef {
            id: from.batch.clone(),
            custom_id: from.custom_id.clone(),
        });
        t
    }
}

/// Where a run's answer came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchRef {
    /// The provider's batch id.
    pub batch: String,
    /// The run's custom id in it.
    pub custom_id: String,
}

/// What the executor tells the caller as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// A batch a crashed process created was found by its tag and adopted.
    Adopted {
        /// The batch's local name (its tag).
        local: String,
        /// The provider's batch id.
        id: String,
    },
    /// A batch being created when a process stopped was not found: its
    /// runs are sent again.
    Forgotten {
        /// The batch's local name.
        local: String,
    },
    /// A batch was created.
    Submitted {
        /// The batch's local name.
        local: String,
        /// The provider's batch id.
        id: String,
        /// Requests in it.
        requests: usize,
        /// Which round of sending (1 first, more for resent runs).
        round: u32,
    },
    /// A batch was polled.
    Polled {
        /// The batch's local name.
        local: String,
        /// What the provider said of it.
        status: Status,
    },
    /// A poll or a collection failed for now (rate limited, a server
    /// error, a timeout): tried again at the next poll.
    PollFailed {
        /// The batch's local name.
        local: String,
        /// Why.
        error: LlmError,
    },
    /// An ended batch's results were collected.
    Collected {
        /// The batch's local name.
        local: String,
        /// Runs answered (recorded).
        answered: usize,
        /// Runs sent again in a later batch.
        resent: usize,
        /// Runs that failed for good.
        failed: usize,
    },
    /// Waiting before the next poll.
    Waiting {
        /// Batches still in flight.
        batches: usize,
        /// Requests in them.
        requests: usize,
        /// Time until the next poll.
        next: Duration,
    },
}

/// The caller's side: record each answer, hear each note.
pub trait Sink {
    /// Record the run `key` (answered by the batch `from`); whether it was
    /// kept for good. `false` (a record over the session's line cap, the
    /// disk failed) leaves the batch uncollected, so a later command
    /// collects what was not kept; the batch's other answers are still
    /// handed on, and then the executor stops.
    fn answer(&mut self, key: &str, from: &BatchRef, answer: Answer) -> bool;
    /// Something happened.
    fn note(&mut self, note: Note);
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// Runs still in batches the provider works on (0: all recorded).
    pub pending: usize,
}

/// A batch run that could not go on.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The provider refused or failed a batch call.
    #[error("{api}: {source}")]
    Provider {
        /// The batch API.
        api: &'static str,
        /// Its error.
        source: LlmError,
    },
    /// The manifest could not be read or written.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
}

/// How good an outcome is when a custom id comes back twice: an answer
/// over an error, an error over an expiry or a cancel (`one_each`'s rule).
pub fn rank(o: &Outcome) -> u8 {
    match o {
        Outcome::Succeeded(_) => 2,
        Outcome::Errored(_) => 1,
        Outcome::Expired | Outcome::Cancelled => 0,
    }
}

/// The results with one per custom id, in the order each first came: a
/// custom id that comes back twice keeps the better of the two (an answer
/// over an error, an error over an expiry or a cancel; the first of two
/// alike), so an error never replaces a paid answer, and no answer is
/// recorded as two runs.
pub fn one_each(results: impl IntoIterator<Item = batch::Result1>) -> Vec<batch::Result1> {
    let mut out: Vec<batch::Result1> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for r in results {
        match at.get(&r.custom_id) {
            Some(&i) => {
                if rank(&r.outcome) > rank(&out[i].outcome) {
                    out[i] = r;
                }
            }
            None => {
                at.insert(r.custom_id.clone(), out.len());
                out.push(r);
            }
        }
    }
    out
}

/// Whether a failed poll or collection may pass if tried again later: a
/// rate limit, a server error, a timeout, no connection. A body that does
/// not read (over its cap, not JSON) would fail the same way every time.
fn passing(e: &LlmError) -> bool {
    matches!(
        e.kind,
        ErrorKind::RateLimited | ErrorKind::Server | ErrorKind::Timeout | ErrorKind::Connect
    )
}

struct Exec<'a> {
    api: &'a dyn BatchApi,
    m: &'a mut Manifest,
    path: &'a Path,
    requests: HashMap<String, Request>,
    recorded: HashSet<String>,
    opts: Options,
    /// The caller stopped keeping answers: nothing more is collected.
    halted: bool,
}

impl Exec<'_> {
    fn provider(&self, source: LlmError) -> BatchError {
        BatchError::Provider {
            api: self.api.name(),
            source,
        }
    }

    fn save(&self) -> Result<(), BatchError> {
        Ok(self.m.save(self.path)?)
    }

    /// Batches in `creating`: adopted when the API finds one by the tag
    /// its create call carried, else forgotten (their runs go again).
    async fn recover(&mut self, sink: &mut impl Sink) -> Result<(), BatchError> {
        for i in 0..self.m.batches.len() {
            if self.m.batches[i].state != EntryState::Creating {
                continue;
            }
            // Manifests from before per-entry tags tagged with the session.
            let tag = match self.m.batches[i].tag.as_str() {
                "" => self.m.session.clone(),
                t => t.to_owned(),
            };
            let found = self.api.find(tag).await.map_err(|e| self.provider(e))?;
            let known: HashSet<&str> = self
                .m
                .batches
                .iter()
                .filter_map(|e| e.batch.as_ref().map(|b| b.id.as_str()))
                .collect();
            let local = self.m.batches[i].local.clone();
            match found.into_iter().find(|id| !known.contains(id.as_str())) {
                Some(id) => {
                    let e = &mut self.m.batches[i];
                    e.batch = Some(Submitted::whole(id.clone()));
                    e.state = EntryState::Submitted;
                    sink.note(Note::Adopted { local, id });
                }
                None => {
                    self.m.batches[i].state = EntryState::Collected;
                    self.m.batches[i].requests.clear();
                    sink.note(Note::Forgotten { local });
                }
            }
            self.save()?;
        }
        Ok(())
    }

    /// Times `key` was sent in a batch that ended without recording it.
    fn tries(&self, key: &str) -> u32 {
        let n = self
            .m
            .batches
            .iter()
            .filter(|e| matches!(e.state, EntryState::Collected | EntryState::Cancelled))
            .filter(|e| e.requests.iter().any(|(_, k)| k == key))
            .count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Poll every batch the provider works on once; collect the ended
    /// ones. A poll or a collection that fails for a while (a 429 past the
    /// HTTP layer's retries, a 5xx, a timeout) is noted and tried again at
    /// the next poll, within the wait; any other failure stops the command.
    async fn poll_and_collect(&mut self, sink: &mut impl Sink) -> Result<(), BatchError> {
        for i in 0..self.m.batches.len() {
            if self.halted {
                break;
            }
            let e = &self.m.batches[i];
            let Some(b) = e.batch.clone().filter(|_| e.state.polled()) else {
                continue;
            };
            let local = e.local.clone();
            let status = match self.api.status(b.clone()).await {
                Ok(s) => s,
                Err(error) if passing(&error) => {
                    sink.note(Note::PollFailed { local, error });
                    continue;
                }
                Err(e) => return Err(self.provider(e)),
            };
            self.m.batches[i].status = Some(status.clone());
            self.save()?;
            sink.note(Note::Polled {
                local: local.clone(),
                status: status.clone(),
            });
            if status.phase != Phase::Ended {
                continue;
            }
            match self.api.results(b.clone()).await {
                Ok(results) => self.collect(i, &b, &status, results, sink)?,
                Err(error) if passing(&error) => sink.note(Note::PollFailed { local, error }),
                Err(e) => return Err(self.provider(e)),
            }
        }
        Ok(())
    }

    /// Hand on every result of the ended batch `i`; a request with none
    /// failed with the batch when it failed as a whole, else its window
    /// ran out.
    fn collect(
        &mut self,
        i: usize,
        b: &Submitted,
        status: &Status,
        results: Vec<batch::Result1>,
        sink: &mut impl Sink,
    ) -> Result<(), BatchError> {
        let mut by_id: HashMap<String, Outcome> = one_each(results)
            .into_iter()
            .map(|r| (r.custom_id, r.outcome))
            .collect();
        let missing = || match &status.failure {
            Some(why) => Outcome::Errored(LlmError::new(
                ErrorKind::BadRequest,
                format!("the batch failed as a whole: {why}"),
            )),
            None if status.cancelled() => Outcome::Cancelled,
            None => Outcome::Expired,
        };
        let requests = self.m.batches[i].requests.clone();
        let (mut answered, mut resent, mut failed) = (0, 0, 0);
        // One answer the caller could not keep does not cost the others.
        let mut refused = false;
        for (custom_id, key) in &requests {
            if self.recorded.contains(key) {
                continue;
            }
            let outcome = by_id.remove(custom_id).unwrap_or_else(missing);
            let from = BatchRef {
                batch: b.id.clone(),
                custom_id: custom_id.clone(),
            };
            let error = match outcome {
                Outcome::Succeeded(t) => {
                    if !sink.answer(key, &from, Answer::Answered(t)) {
                        refused = true;
                        continue;
                    }
                    self.recorded.insert(key.clone());
                    answered += 1;
                    continue;
                }
                Outcome::Errored(e) => e,
                Outcome::Expired => LlmError::new(ErrorKind::Timeout, "the batch's window ran out before it ran"),
                Outcome::Cancelled => LlmError::new(ErrorKind::Cancelled, "the batch was cancelled before it ran"),
            };
            // This batch counts as a try once it is marked collected.
            if self.tries(key) + 1 >= self.opts.rounds {
                if !sink.answer(key, &from, Answer::Failed(error)) {
                    refused = true;
                    continue;
                }
                self.recorded.insert(key.clone());
                failed += 1;
            } else {
                resent += 1;
            }
        }
        if refused {
            // The caller kept only part of it: the batch stays as it is, so
            // a later command collects the rest, and nothing paid for is
            // sent again.
            self.halted = true;
            return Ok(());
        }
        let e = &mut self.m.batches[i];
        e.state = EntryState::Collected;
        let local = e.local.clone();
        self.save()?;
        sink.note(Note::Collected {
            local,
            answered,
            resent,
            failed,
        });
        Ok(())
    }

    /// Send every run not recorded, not in a batch, and not out of tries.
    async fn submit(&mut self, sink: &mut impl Sink) -> Result<(), BatchError> {
        let flying: HashSet<String> = self.m.in_flight().map(str::to_owned).collect();
        let mut keys: Vec<&String> = self
            .requests
            .keys()
            .filter(|k| !self.recorded.contains(*k) && !flying.contains(*k))
            .collect();
        keys.sort();
        let items: Vec<Item> = keys
            .iter()
            .map(|k| Item {
                custom_id: batch::custom_id(k),
                request: self.requests[*k].clone(),
            })
            .collect();
        let keys_by_id: HashMap<String, String> = keys.iter().map(|k| (batch::custom_id(k), (*k).clone())).collect();
        let limits = self.api.limits();
        for chunk in batch::split(items, limits, |i| self.api.line(i).to_string().len()) {
            let round = chunk
                .iter()
                .map(|i| self.tries(&keys_by_id[&i.custom_id]))
                .max()
                .unwrap_or(0);
            let local = self.m.next_local();
            let tag = self.m.next_tag(&local);
            self.m.batches.push(Entry {
                local: local.clone(),
                round,
                state: EntryState::Creating,
                created_ms: crate::session::now_ms(),
                tag: tag.clone(),
                batch: None,
                requests: chunk
                    .iter()
                    .map(|i| (i.custom_id.clone(), keys_by_id[&i.custom_id].clone()))
                    .collect(),
                status: None,
            });
            self.save()?;
            let n = chunk.len();
            let submitted = self.api.submit(chunk, tag).await.map_err(|e| self.provider(e))?;
            if submitted.id.trim().is_empty() {
                // Nothing to poll: the entry stays `creating`, so the next
                // command finds the batch by its tag or sends it again.
                return Err(self.provider(LlmError::new(
                    ErrorKind::Server,
                    "the create call answered without a batch id: the batch cannot be polled; the next command \
                     looks for it by its tag, or sends its runs again",
                )));
            }
            let id = submitted.id.clone();
            if let Some(e) = self.m.batches.last_mut() {
                e.batch = Some(submitted);
                e.state = EntryState::Submitted;
            }
            self.save()?;
            sink.note(Note::Submitted {
                local,
                id,
                requests: n,
                round,
            });
        }
        Ok(())
    }

    fn flying(&self) -> (usize, usize) {
        let open: Vec<&Entry> = self.m.batches.iter().filter(|e| e.state.polled()).collect();
        (open.len(), open.iter().map(|e| e.requests.len()).sum())
    }
}

/// Answer `jobs` by batches of `api`, keeping `manifest` at `path`, until
/// every run not in `recorded` is handed to `sink` or `opts.wait` runs out.
#[allow(
    clippy::implicit_hasher,
    reason = "called only with the std hasher; a generic hasher adds nothing"
)]
pub async fn run(
    api: &dyn BatchApi,
    jobs: Vec<Job>,
    recorded: HashSet<String>,
    manifest: &mut Manifest,
    path: &Path,
    opts: Options,
    sink: &mut impl Sink,
) -> Result<Ended, BatchError> {
    let started = tokio::time::Instant::now();
    let mut x = Exec {
        api,
        m: manifest,
        path,
        requests: jobs.into_iter().map(|j| (j.key, j.request)).collect(),
        recorded,
        opts,
        halted: false,
    };
    x.recover(sink).await?;
    let mut interval = opts.poll.max(Duration::from_millis(1));
    loop {
        x.poll_and_collect(sink).await?;
        if x.halted {
            return Ok(Ended { pending: x.flying().1 });
        }
        x.submit(sink).await?;
        let (batches, requests) = x.flying();
        if batches == 0 {
            return Ok(Ended { pending: 0 });
        }
        let left = opts.wait.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Ok(Ended { pending: requests });
        }
        let next = interval.min(left);
        sink.note(Note::Waiting {
            batches,
            requests,
            next,
        });
        tokio::time::sleep(next).await;
        // Capped before it grows: a huge `--poll` never overflows.
        interval = interval.min(MAX_POLL).mul_f64(1.5).min(MAX_POLL);
    }
}
