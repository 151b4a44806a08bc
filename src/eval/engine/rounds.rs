//! Strategies by batch rounds (`eval --batch --strategy`): a strategy's
//! calls depend on each other's answers (a retry doubles a cut limit, a
//! continuation starts from the kept text), so they cannot be one batch.
//! Every cell runs its strategies as it would streamed, through the one
//! run path, on a [`Queued`] provider whose calls wait for the next round;
//! when every cell still running is waiting, the round's requests go out as
//! provider batches (`eval::batch::run`: manifest, tags, backoff, resends),
//! and each answer is handed back to its call as the events a stream would
//! have given. Round after round until every cell is done.
//!
//! Resume: a call's key is its cell, its place in the cell and a hash of
//! its request, so the same command asks the same keys again. Answers are
//! kept as they come back (`eval::batch::answers`) and a rerun takes them
//! from there; batches still out are found in the manifest and collected,
//! never sent twice.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::ExecError;
use crate::eval::batch::{self, Answer, Answers, BatchRef, Job, Manifest, Note, Options, Sink};
use crate::llm::batch::BatchApi;
use crate::llm::registry::Target;
use crate::llm::{
    Describe, ErrorKind, Event, EventStream, FinishReason, LlmError, Provider, ProviderInfo, Request, Transcript,
};

/// A call waiting for its round.
struct Asked {
    key: String,
    request: Request,
    reply: oneshot::Sender<Transcript>,
}

/// What a cell's task tells the rounds: a call, or that it is done (with
/// what it got; `None` when the task ended without a result).
enum Msg<T> {
    Ask(Box<Asked>),
    Left(Option<T>),
}

/// The provider a cell's calls go through: each request is queued for the
/// next round and answered by its batch. Everything else is the real
/// provider's (its name, what it prefills, its Models API).
struct Queued<T> {
    inner: Arc<dyn Provider>,
    tx: mpsc::UnboundedSender<Msg<T>>,
    cell: String,
    calls: AtomicUsize,
}

impl<T: Send + 'static> Provider for Queued<T> {
    fn info(&self) -> ProviderInfo {
        self.inner.info()
    }

    fn prefills(&self) -> bool {
        self.inner.prefills()
    }

    fn wire(&self, req: &Request) -> Option<(String, Value)> {
        self.inner.wire(req)
    }

    fn describe(&self) -> Option<Describe> {
        self.inner.describe()
    }

    fn stream(&self, request: Request) -> EventStream {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let body = serde_json::to_vec(&request).unwrap_or_default();
        let key = format!("{}#{n}@{:016x}", self.cell, crate::eval::fnv64(&[&body]));
        let (reply, answer) = oneshot::channel();
        let _ = self.tx.send(Msg::Ask(Box::new(Asked { key, request, reply })));
        crate::llm::http::spawn_stream(move |tx| async move {
            let t = answer.await.unwrap_or_else(|_| Transcript {
                finish: Some(FinishReason::Error),
                error: Some(LlmError::new(
                    ErrorKind::Cancelled,
                    "the batch rounds stopped before this call was answered",
                )),
                ..Transcript::default()
            });
            for ev in events_of(t) {
                if tx.send(ev).await.is_err() {
                    return;
                }
            }
        })
    }
}

/// A whole answer as the events a stream gives, its batch first.
fn events_of(t: Transcript) -> Vec<Event> {
    let mut out = Vec::new();
    out.extend(t.batch.map(Event::Batch));
    if !t.thinking.is_empty() {
        out.push(Event::Thinking { text: t.thinking });
    }
    if !t.text.is_empty() {
        let pieces = if t.pieces.iter().any(|p| p.delta) {
            Vec::new()
        } else {
            t.pieces.into_iter().map(|p| p.text).collect()
        };
        out.push(Event::Delta { text: t.text, pieces });
    }
    if !t.token_ids.is_empty() {
        out.push(Event::Tokens { ids: t.token_ids });
    }
    out.extend(t.continuation_token.map(|token| Event::Resume { token }));
    out.push(match t.error {
        Some(e) => Event::Error(e),
        None => Event::Finish {
            reason: t.finish.unwrap_or(FinishReason::Stop),
            raw_reason: t.raw_reason,
            usage: t.usage,
        },
    });
    out
}

/// Sends `Left(None)` when a cell's task ends without saying so (it
/// panicked or was aborted), so the rounds never wait for it.
struct Leave<T> {
    tx: mpsc::UnboundedSender<Msg<T>>,
    said: bool,
}

impl<T> Leave<T> {
    fn with(mut self, result: T) {
        self.said = true;
        let _ = self.tx.send(Msg::Left(Some(result)));
    }
}

impl<T> Drop for Leave<T> {
    fn drop(&mut self) {
        if !self.said {
            let _ = self.tx.send(Msg::Left(None));
        }
    }
}

/// What the rounds need besides the cells.
pub struct Batching<'a> {
    /// The provider's batch API.
    pub api: Arc<dyn BatchApi>,
    /// Poll, wait, rounds.
    pub opts: Options,
    /// The manifest.
    pub manifest: &'a mut Manifest,
    /// Where it is kept.
    pub path: &'a Path,
    /// The answers kept so far.
    pub answers: &'a mut Answers,
}

/// The caller's side of the rounds.
pub trait Handler<T> {
    /// A cell ended: record it.
    fn done(&mut self, result: T) -> std::io::Result<()>;
    /// A batch step (submitted, polled, collected, waiting).
    fn note(&mut self, note: &Note) -> std::io::Result<()>;
}

/// How the rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// Rounds sent now.
    pub rounds: usize,
    /// Calls still in provider batches when the wait ran out (0: every
    /// cell is done).
    pub pending: usize,
}

/// Run every cell's `work` (named by its label and given its target, whose
/// calls wait for the rounds), sending each round's calls by `b`'s batch
/// API, and hand each cell's result to `h` as it ends. When the wait runs
/// out with calls still out, the cells still running are dropped and
/// nothing more is handed on.
pub async fn execute<C, T, F, Fut>(
    cells: Vec<(String, Target, C)>,
    work: F,
    b: Batching<'_>,
    h: &mut impl Handler<T>,
) -> Result<Ended, ExecError>
where
    C: Send + 'static,
    T: Send + 'static,
    F: Fn(C, Target) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg<T>>();
    let mut live = cells.len();
    let mut tasks = Tasks(Vec::with_capacity(live));
    for (label, target, cell) in cells {
        let queued = Queued {
            inner: target.provider.clone(),
            tx: tx.clone(),
            cell: label,
            calls: AtomicUsize::new(0),
        };
        let target = Target {
            provider: Arc::new(queued),
            ..target
        };
        let leave = Leave {
            tx: tx.clone(),
            said: false,
        };
        let fut = work(cell, target);
        tasks.0.push(tokio::spawn(async move { leave.with(fut.await) }));
    }
    drop(tx);
    let started = tokio::time::Instant::now();
    let mut round = Round { b, rounds: 0 };
    let mut asked: Vec<Asked> = Vec::new();
    let ended = loop {
        while asked.len() < live {
            match rx.recv().await {
                Some(Msg::Ask(a)) => asked.push(*a),
                Some(Msg::Left(done)) => {
                    live -= 1;
                    if let Some(done) = done {
                        h.done(done)?;
                    }
                }
                None => live = 0,
            }
        }
        if live == 0 {
            break Ended {
                rounds: round.rounds,
                pending: 0,
            };
        }
        let wait = round.b.opts.wait.saturating_sub(started.elapsed());
        let pending = round.send(std::mem::take(&mut asked), wait, h).await?;
        if pending > 0 {
            break Ended {
                rounds: round.rounds,
                pending,
            };
        }
    };
    drop(tasks);
    Ok(ended)
}

/// The cells' tasks, stopped however the rounds end (a batch call that
/// fails included): nothing more is asked or handed on.
struct Tasks<T>(Vec<tokio::task::JoinHandle<T>>);

impl<T> Drop for Tasks<T> {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// The rounds' state: the batch side and how many rounds went out.
struct Round<'a> {
    b: Batching<'a>,
    rounds: usize,
}

impl Round<'_> {
    /// Answer every call of a round: from the answers kept, else by
    /// batches (waiting at most `wait`). The calls still out when the wait
    /// runs out are counted and left unanswered (the caller stops).
    async fn send<T>(
        &mut self,
        asked: Vec<Asked>,
        wait: std::time::Duration,
        h: &mut impl Handler<T>,
    ) -> Result<usize, ExecError> {
        let mut out = Vec::new();
        for a in asked {
            match self.b.answers.get(&a.key) {
                Some(t) => {
                    let _ = a.reply.send(t.clone());
                }
                None => out.push(a),
            }
        }
        if out.is_empty() {
            return Ok(0);
        }
        self.rounds += 1;
        let jobs = out
            .iter()
            .map(|a| Job {
                key: a.key.clone(),
                request: a.request.clone(),
            })
            .collect();
        let mut sink = Keep {
            answers: &mut *self.b.answers,
            h,
            error: None,
            of: std::marker::PhantomData,
        };
        let opts = Options { wait, ..self.b.opts };
        let ended = batch::run(
            self.b.api.as_ref(),
            jobs,
            std::collections::HashSet::new(),
            self.b.manifest,
            self.b.path,
            opts,
            &mut sink,
        )
        .await?;
        if let Some(e) = sink.error {
            return Err(ExecError::Io(e));
        }
        let mut left = 0;
        let mut by_key: HashMap<String, Asked> = out.into_iter().map(|a| (a.key.clone(), a)).collect();
        for (key, a) in by_key.drain() {
            match self.b.answers.get(&key) {
                Some(t) => {
                    let _ = a.reply.send(t.clone());
                }
                None => left += 1,
            }
        }
        Ok(ended.pending.max(left))
    }
}

/// Keeps each answer as it comes back (answers of calls not asked in this
/// round too: a batch an earlier process sent for a later round).
struct Keep<'a, T, H: Handler<T>> {
    answers: &'a mut Answers,
    h: &'a mut H,
    error: Option<std::io::Error>,
    of: std::marker::PhantomData<T>,
}

impl<T, H: Handler<T>> Sink for Keep<'_, T, H> {
    fn answer(&mut self, key: &str, from: &BatchRef, answer: Answer) -> bool {
        if self.error.is_some() {
            return false;
        }
        match self.answers.keep(key, answer.transcript(from)) {
            Ok(()) => true,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    fn note(&mut self, note: Note) {
        if let Err(e) = self.h.note(&note) {
            self.error.get_or_insert(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_answer_streams_back_as_it_came() {
        let t = Transcript {
            text: "{\"a\":1}\n{\"a\"".into(),
            finish: Some(FinishReason::Length),
            raw_reason: Some("length".into()),
            batch: Some(crate::llm::BatchRef {
                id: "batch_1".into(),
                custom_id: "c1".into(),
            }),
            ..Transcript::default()
        };
        let back = crate::llm::batch::transcript(&events_of(t.clone()));
        assert_eq!(back.text, t.text);
        assert_eq!(back.finish, t.finish);
        assert_eq!(back.raw_reason, t.raw_reason);
        assert_eq!(back.batch, t.batch);
    }
}
