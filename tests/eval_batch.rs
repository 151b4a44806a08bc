//! The batch executor behind `eval --batch`, on a batch API of our own
//! that keeps its batches in memory: every run answered exactly once and
//! matched by custom id, expired and cancelled runs sent again in later
//! rounds and failed after the last, a crash between create and the
//! manifest's write adopted by tag (never a second batch), `--wait 0`
//! returning with the batches pending, a second call collecting them.
//! Time is tokio's paused clock: the polls' backoff takes no real time.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cutline::eval::batch::{self, Answer, BatchRef, EntryState, Job, Manifest, Note, Options, Sink};
use cutline::llm::batch::{BatchApi, Fut, Item, Limits, Outcome, Phase, Result1, Status, Submitted, Window};
use cutline::llm::{FinishReason, Request, Transcript};
use std::time::Duration;

/// What the fake does to a request in a given round: answer it, let it
/// expire, or fail it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    Answer,
    Expire,
    Fail,
}

#[derive(Default)]
struct World {
    /// batch id → (items, polls so far, tag).
    batches: HashMap<String, (Vec<Item>, u32, String)>,
    /// Per prompt text: fates by round (the last repeats).
    fates: HashMap<String, Vec<Fate>>,
    /// Times each prompt was sent.
    sent: HashMap<String, u32>,
    created: u32,
    /// Fail the next submit after creating the batch (a crash before the
    /// manifest's write).
    crash_after_create: bool,
    /// Polls a batch takes to end (3 when 0).
    ends_after: u32,
    /// Every result comes back twice: as the fates say, then as an error.
    twice: bool,
    /// The next create call is answered without an id.
    no_id: bool,
}

#[derive(Clone, Default)]
struct Fake(Arc<Mutex<World>>);

impl BatchApi for Fake {
    fn name(&self) -> &'static str {
        "fake batches"
    }
    fn limits(&self) -> Limits {
        Limits {
            requests: 3,
            bytes: 1 << 20,
        }
    }
    fn line(&self, item: &Item) -> serde_json::Value {
        serde_json::json!({"custom_id": item.custom_id, "prompt": item.request.prompt})
    }
    fn submit(&self, items: Vec<Item>, tag: String) -> Fut<Submitted> {
        let w = self.0.clone();
        Box::pin(async move {
            let mut w = w.lock().unwrap();
            w.created += 1;
            let id = format!("fb_{}", w.created);
            for i in &items {
                *w.sent.entry(i.request.prompt.clone()).or_insert(0) += 1;
            }
            w.batches.insert(id.clone(), (items, 0, tag));
            if std::mem::take(&mut w.crash_after_create) {
                return Err(cutline::llm::LlmError::new(
                    cutline::llm::ErrorKind::Connect,
                    "connection reset",
                ));
            }
            if std::mem::take(&mut w.no_id) {
                return Ok(Submitted::whole(""));
            }
            Ok(Submitted::whole(id))
        })
    }
    fn status(&self, b: Submitted) -> Fut<Status> {
        let w = self.0.clone();
        Box::pin(async move {
            let mut w = w.lock().unwrap();
            let ends_after = if w.ends_after == 0 { 3 } else { w.ends_after };
            let entry = w.batches.get_mut(&b.id).unwrap();
            entry.1 += 1;
            let ended = entry.1 >= ends_after;
            Ok(Status {
                phase: if ended { Phase::Ended } else { Phase::Pending },
                state: if ended { "ended".into() } else { "in_progress".into() },
                done: 0,
                failed: 0,
                total: entry.0.len() as u64,
                failure: None,
            })
        })
    }
    fn results(&self, b: Submitted) -> Fut<Vec<Result1>> {
        let w = self.0.clone();
        Box::pin(async move {
            let w = w.lock().unwrap();
            let (items, _, _) = &w.batches[&b.id];
            let twice = w.twice;
            // Reversed: results never come in the order sent.
            let results: Vec<Result1> = items
                .iter()
                .rev()
                .map(|i| {
                    let round = w.sent[&i.request.prompt] as usize - 1;
                    let fates = &w.fates[&i.request.prompt];
                    let outcome = match fates[round.min(fates.len() - 1)] {
                        Fate::Answer => Outcome::Succeeded(Box::new(Transcript {
                            text: format!("answer to {}", i.request.prompt),
                            finish: Some(FinishReason::Stop),
                            ..Transcript::default()
                        })),
                        Fate::Expire => Outcome::Expired,
                        Fate::Fail => Outcome::Errored(cutline::llm::LlmError::new(
                            cutline::llm::ErrorKind::Server,
                            "overloaded",
                        )),
                    };
                    Result1 {
                        custom_id: i.custom_id.clone(),
                        outcome,
                    }
                })
                .collect();
            let again = results.iter().filter(|_| twice).map(|r| Result1 {
                custom_id: r.custom_id.clone(),
                outcome: Outcome::Errored(cutline::llm::LlmError::new(
                    cutline::llm::ErrorKind::Server,
                    "duplicate line",
                )),
            });
            let again: Vec<Result1> = again.collect();
            Ok(results.into_iter().chain(again).collect())
        })
    }
    fn cancel(&self, _b: Submitted) -> Fut<()> {
        Box::pin(async { Ok(()) })
    }
    fn find(&self, tag: String) -> Fut<Vec<String>> {
        let w = self.0.clone();
        Box::pin(async move {
            let w = w.lock().unwrap();
            let mut ids: Vec<String> = w
                .batches
                .iter()
                .filter(|(_, b)| b.2 == tag)
                .map(|(id, _)| id.clone())
                .collect();
            ids.sort();
            Ok(ids)
        })
    }
}

#[derive(Default)]
struct Collect {
    answers: Vec<(String, BatchRef, Answer)>,
    notes: Vec<Note>,
    /// Keep only this many answers (a session that fills up).
    keep: Option<usize>,
}

impl Sink for Collect {
    fn answer(&mut self, key: &str, from: &BatchRef, answer: Answer) -> bool {
        self.answers.push((key.to_owned(), from.clone(), answer));
        self.keep.is_none_or(|n| self.answers.len() <= n)
    }
    fn note(&mut self, note: Note) {
        self.notes.push(note);
    }
}

fn jobs(n: usize) -> Vec<Job> {
    (0..n)
        .map(|i| Job {
            key: format!("key-{i}"),
            request: Request {
                prompt: format!("p{i}"),
                ..Request::default()
            },
        })
        .collect()
}

impl Fake {
    /// A fake that answers requests `p0`..`p{n-1}` at their first try.
    fn answering(n: usize) -> Self {
        let fake = Self::default();
        let mut w = fake.0.lock().unwrap();
        for i in 0..n {
            w.fates.insert(format!("p{i}"), vec![Fate::Answer]);
        }
        drop(w);
        fake
    }
}

/// A fresh manifest of session `s` and the path in a temp dir it is kept
/// at (the dir lives as long as the first value).
fn fresh_manifest() -> (tempfile::TempDir, PathBuf, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.batches.json");
    (dir, path, Manifest::new("s", "p", "m", "fake batches", Window::Day))
}

fn opts(wait: Duration) -> Options {
    Options {
        poll: Duration::from_secs(10),
        wait,
        rounds: 3,
    }
}

#[tokio::test(start_paused = true)]
async fn every_run_is_answered_once_expired_ones_go_again_and_the_last_round_fails() {
    let fake = Fake::answering(7);
    {
        let mut w = fake.0.lock().unwrap();
        w.fates.insert("p2".into(), vec![Fate::Expire, Fate::Answer]);
        w.fates.insert("p5".into(), vec![Fate::Fail]);
    }
    let (_dir, path, mut m) = fresh_manifest();
    let mut sink = Collect::default();
    let ended = batch::run(
        &fake,
        jobs(7),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::from_secs(86_400)),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 0);
    let keys: Vec<&str> = sink.answers.iter().map(|(k, _, _)| k.as_str()).collect();
    let unique: HashSet<&str> = keys.iter().copied().collect();
    assert_eq!((keys.len(), unique.len()), (7, 7), "each run once: {keys:?}");
    for (key, from, answer) in &sink.answers {
        let i: usize = key.trim_start_matches("key-").parse().unwrap();
        assert_eq!(from.custom_id, cutline::llm::batch::custom_id(key));
        match answer {
            Answer::Answered(t) => assert_eq!(t.text, format!("answer to p{i}"), "matched by custom id"),
            Answer::Failed(e) => {
                assert_eq!(i, 5);
                assert!(e.message.contains("overloaded"));
            }
        }
    }
    let w = fake.0.lock().unwrap();
    assert_eq!(w.sent["p2"], 2, "expired once, answered the second time");
    assert_eq!(w.sent["p5"], 3, "failed in every one of the three rounds");
    assert_eq!(w.sent["p0"], 1);
    // 7 runs in batches of at most 3, then the resends.
    let submitted: Vec<(usize, u32)> = sink
        .notes
        .iter()
        .filter_map(|n| match n {
            Note::Submitted { requests, round, .. } => Some((*requests, *round)),
            _ => None,
        })
        .collect();
    assert_eq!(submitted, [(3, 0), (3, 0), (1, 0), (2, 1), (1, 2)]);
    let saved = Manifest::load(&path).unwrap().unwrap();
    assert!(saved.batches.iter().all(|e| e.state == EntryState::Collected));
}

#[tokio::test(start_paused = true)]
async fn wait_zero_submits_and_returns_then_a_second_call_collects() {
    let fake = Fake::answering(4);
    let (_dir, path, mut m) = fresh_manifest();
    let mut sink = Collect::default();
    let ended = batch::run(
        &fake,
        jobs(4),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::ZERO),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 4);
    assert!(sink.answers.is_empty());
    // A new process: the manifest from disk, nothing recorded yet.
    let mut m = Manifest::load(&path).unwrap().unwrap();
    let mut sink = Collect::default();
    let ended = batch::run(
        &fake,
        jobs(4),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::from_secs(3600)),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 0);
    assert_eq!(sink.answers.len(), 4);
    assert_eq!(fake.0.lock().unwrap().created, 2, "no batch submitted twice");
}

#[tokio::test(start_paused = true)]
async fn a_crash_between_create_and_the_manifest_is_adopted_by_tag() {
    let fake = Fake::answering(2);
    fake.0.lock().unwrap().crash_after_create = true;
    let (_dir, path, mut m) = fresh_manifest();
    let mut sink = Collect::default();
    // The create call "fails" after the provider made the batch.
    assert!(
        batch::run(
            &fake,
            jobs(2),
            HashSet::new(),
            &mut m,
            &path,
            opts(Duration::ZERO),
            &mut sink
        )
        .await
        .is_err()
    );
    let saved = Manifest::load(&path).unwrap().unwrap();
    assert_eq!(saved.batches[0].state, EntryState::Creating);
    let mut m = saved;
    let mut sink = Collect::default();
    let ended = batch::run(
        &fake,
        jobs(2),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::from_secs(600)),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 0);
    assert!(
        sink.notes
            .iter()
            .any(|n| matches!(n, Note::Adopted { id, .. } if id == "fb_1"))
    );
    assert_eq!(
        fake.0.lock().unwrap().created,
        1,
        "the crashed batch was adopted, not sent again"
    );
    assert_eq!(sink.answers.len(), 2);
    // Recorded runs are never handed back again.
    let mut sink = Collect::default();
    let recorded: HashSet<String> = ["key-0".to_owned(), "key-1".to_owned()].into();
    batch::run(
        &fake,
        jobs(2),
        recorded,
        &mut m,
        &path,
        opts(Duration::from_secs(600)),
        &mut sink,
    )
    .await
    .unwrap();
    assert!(sink.answers.is_empty());
}

/// The pause between polls starts at `--poll` and grows ×1.5 after each
/// poll, never past 10 minutes (tokio's paused clock: no real waiting).
/// The batch is created first, then polled after each pause: it ends at
/// its 14th poll, after 14 pauses.
#[tokio::test(start_paused = true)]
async fn polls_back_off_by_half_again_up_to_ten_minutes() {
    let fake = Fake::answering(1);
    fake.0.lock().unwrap().ends_after = 14;
    let (_dir, path, mut m) = fresh_manifest();
    let mut sink = Collect::default();
    let started = tokio::time::Instant::now();
    let ended = batch::run(
        &fake,
        jobs(1),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::from_secs(24 * 3600)),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 0);
    let waits: Vec<f64> = sink
        .notes
        .iter()
        .filter_map(|n| match n {
            Note::Waiting { next, .. } => Some(next.as_secs_f64()),
            _ => None,
        })
        .collect();
    let want = [
        10.0,
        15.0,
        22.5,
        33.75,
        50.625,
        75.9375,
        113.906_25,
        170.859_375,
        256.289_062_5,
        384.433_593_75,
        576.650_390_625,
        600.0,
        600.0,
        600.0,
    ];
    assert_eq!(waits.len(), want.len(), "{waits:?}");
    for (got, want) in waits.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{waits:?}");
    }
    let slept = started.elapsed().as_secs_f64();
    assert!((slept - want.iter().sum::<f64>()).abs() < 0.05, "{slept}");
}

/// A caller that does not keep some answers (a record over the session's
/// line cap, a failing disk) is still handed the batch's other answers;
/// then the executor stops and the batch stays uncollected: the next call
/// hands back what was not kept, and nothing is sent again.
#[tokio::test(start_paused = true)]
async fn answers_the_caller_did_not_keep_are_collected_again_not_resent() {
    let fake = Fake::answering(3);
    let (_dir, path, mut m) = fresh_manifest();
    let mut sink = Collect {
        keep: Some(1),
        ..Collect::default()
    };
    let ended = batch::run(
        &fake,
        jobs(3),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::from_secs(600)),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 3, "the batch is still to collect");
    assert_eq!(sink.answers.len(), 3, "every answer handed on: one kept, two refused");
    assert_eq!(
        Manifest::load(&path).unwrap().unwrap().batches[0].state,
        EntryState::Submitted
    );
    let kept: HashSet<String> = [sink.answers[0].0.clone()].into();
    let mut sink = Collect::default();
    let ended = batch::run(
        &fake,
        jobs(3),
        kept,
        &mut m,
        &path,
        opts(Duration::from_secs(600)),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 0);
    assert_eq!(sink.answers.len(), 2, "the two not kept, from the same batch");
    assert_eq!(fake.0.lock().unwrap().created, 1, "nothing sent again");
}

/// Issue 32, case 5: the same custom id returned twice, an answer then an
/// error: the error replaced the paid answer (and the run went again).
/// An answer is never replaced: each run is handed on once, answered, and
/// sent once.
#[tokio::test(start_paused = true)]
async fn a_custom_id_returned_twice_keeps_its_answer() {
    let fake = Fake::answering(4);
    fake.0.lock().unwrap().twice = true;
    let (_dir, path, mut m) = fresh_manifest();
    let mut sink = Collect::default();
    let ended = batch::run(
        &fake,
        jobs(4),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::from_secs(86_400)),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 0);
    let mut got: Vec<(String, String)> = sink
        .answers
        .iter()
        .map(|(k, _, a)| match a {
            Answer::Answered(t) => (k.clone(), t.text.clone()),
            Answer::Failed(e) => (k.clone(), format!("failed: {e}")),
        })
        .collect();
    got.sort();
    let want: Vec<(String, String)> = (0..4)
        .map(|i| (format!("key-{i}"), format!("answer to p{i}")))
        .collect();
    assert_eq!(got, want);
    let w = fake.0.lock().unwrap();
    assert!(w.sent.values().all(|n| *n == 1), "{:?}", w.sent);
}

/// Issue 32, case 14: a create call answered without an id was kept as
/// `""` and polled forever (exit 10 every time). It is an error naming
/// it; the entry stays `creating`, so the next call finds the batch by its
/// tag and collects it, sending nothing twice.
#[tokio::test(start_paused = true)]
async fn a_create_call_answered_without_an_id_is_an_error_and_found_by_tag() {
    let fake = Fake::answering(2);
    fake.0.lock().unwrap().no_id = true;
    let (_dir, path, mut m) = fresh_manifest();
    let mut sink = Collect::default();
    let e = batch::run(
        &fake,
        jobs(2),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::from_secs(60)),
        &mut sink,
    )
    .await
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "fake batches: Server: the create call answered without a batch id: the batch cannot be polled; the next command \
         looks for it by its tag, or sends its runs again"
    );
    let saved = Manifest::load(&path).unwrap().unwrap();
    assert_eq!(saved.batches.len(), 1);
    assert_eq!(saved.batches[0].state, EntryState::Creating);
    let mut m = saved;
    let ended = batch::run(
        &fake,
        jobs(2),
        HashSet::new(),
        &mut m,
        &path,
        opts(Duration::from_secs(600)),
        &mut sink,
    )
    .await
    .unwrap();
    assert_eq!(ended.pending, 0);
    assert_eq!(sink.answers.len(), 2);
    assert!(
        sink.notes
            .iter()
            .any(|n| matches!(n, Note::Adopted { id, .. } if id == "fb_1"))
    );
    let w = fake.0.lock().unwrap();
    assert_eq!(w.created, 1, "one batch");
}
