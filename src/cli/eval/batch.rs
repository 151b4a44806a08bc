//! `eval --batch`: the matrix run by the provider's batch API, its
//! manifest beside the session, and the offline pair `--batch-file` (the
//! OpenAI batch input file of every pending run, for vLLM's `run-batch` or
//! a manual upload) and `--batch-results` (an OpenAI-format output file
//! recorded as if the batch had come back).

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::setup::Who;
use super::{Args, CliEvents};
use crate::cli::io_err;
use crate::cli::out::{Category, CliError, Out};
use crate::eval::batch::{Answer, Manifest, Note, Options, manifest, time};
use crate::eval::engine::{self, Ask, Matrix, Planned};
use crate::llm::batch::{BatchApi, Item, Outcome, Window};
use crate::session::Recorder;

/// The batch flags of `eval`.
#[derive(Debug, Clone, clap::Args)]
pub struct BatchArgs {
    /// Run by the provider's batch API instead of one request at a time.
    #[arg(long)]
    pub batch: bool,
    /// `24h` (the batch APIs), or `2h` / `8h` (OpenAI's Responses
    /// background mode).
    #[arg(long, requires = "batch", value_name = "2h|8h|24h", value_parser = window_arg, default_value = "24h")]
    pub batch_window: Window,
    /// The first pause between polls (then ×1.5 each time, at most 10 min).
    #[arg(long, requires = "batch", value_name = "DURATION", value_parser = duration_arg, default_value = "10s")]
    pub poll: Duration,
    /// How long this command waits for the batches (`0`: submit and
    /// return; the same command later collects).
    #[arg(long, requires = "batch", value_name = "DURATION", value_parser = duration_arg, default_value = "24h")]
    pub wait: Duration,
    /// Times a run is sent at most (expired, cancelled or failed runs go
    /// again in later rounds; after the last, the run is recorded failed).
    #[arg(long, requires = "batch", value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub rounds: u32,
    /// Write the OpenAI batch input file of every pending run to FILE and
    /// stop (nothing is sent).
    #[arg(long, value_name = "FILE", conflicts_with = "batch_results")]
    pub batch_file: Option<PathBuf>,
    /// Record the runs of an OpenAI-format batch output file (from vLLM's
    /// `run-batch` or a batch run elsewhere), matched by custom id.
    #[arg(long, value_name = "FILE")]
    pub batch_results: Option<PathBuf>,
}

impl BatchArgs {
    /// Whether any batch mode is asked for.
    pub fn wants(&self) -> bool {
        self.batch || self.batch_file.is_some() || self.batch_results.is_some()
    }
}

fn window_arg(s: &str) -> Result<Window, String> {
    Window::parse(s).ok_or_else(|| format!("{s:?} is not a batch window: 2h, 8h or 24h"))
}

fn duration_arg(s: &str) -> Result<Duration, String> {
    time::parse(s)
}

/// A batch run ready to go: the API and how to wait.
pub struct Batch {
    /// The provider's batch API.
    pub api: Arc<dyn BatchApi>,
    /// Poll, wait, rounds.
    pub opts: Options,
    /// The window.
    pub window: Window,
}

/// The batch API of `--provider`, or a clear error naming why there is
/// none (nothing is submitted then).
pub fn prepare(args: &Args, who: &Who) -> Result<Option<Batch>, CliError> {
    if !args.batch.batch {
        return Ok(None);
    }
    let window = args.batch.batch_window;
    let api = who
        .shared
        .as_ref()
        .and_then(|t| crate::llm::batch::api(t.provider.as_ref(), window))
        .ok_or_else(|| {
        let info = who.shared.as_ref().map(|t| t.provider.info());
        let what = info.map_or_else(|| args.provider.clone(), |i| format!("{} ({}, {})", i.name, i.kind, i.model));
        let windows = if window == Window::Day {
            "batch API"
        } else {
            "background mode for that window (OpenAI's Responses API only)"
        };
        CliError::new(
            Category::Usage,
            format!(
                "{what} has no {windows}: nothing was submitted. Batches run on kinds openai, anthropic and gemini; \
                 for a self-hosted server write the requests with --batch-file and record its answers with \
                 --batch-results"
            ),
        )
    })?;
    Ok(Some(Batch {
        api,
        opts: Options {
            poll: args.batch.poll,
            wait: args.batch.wait,
            rounds: args.batch.rounds,
        },
        window,
    }))
}

/// Run the pending runs by batches, the manifest beside the session at
/// `session_path`.
pub async fn execute<W: Write>(
    args: &Args,
    (m, ask): (&Arc<Matrix>, &Arc<Ask>),
    pending: Vec<Planned>,
    b: Batch,
    (session_path, recorder): (&Path, &mut Recorder),
    events: &mut CliEvents<'_, W>,
) -> Result<engine::Executed, CliError> {
    let path = manifest::path_for(session_path);
    let session = recorder.id().to_owned();
    let mut mf = Manifest::load_for(&path, (&session, &args.provider, &ask.model), b.api.name(), b.window)?;
    let mut kept = crate::eval::batch::Answers::open(&crate::eval::batch::answers::path_for(session_path))?;
    let batching = engine::batched::Batching {
        api: b.api,
        opts: b.opts,
        manifest: &mut mf,
        path: &path,
        answers: &mut kept,
    };
    engine::batched::execute(m, ask, pending, batching, recorder, events)
        .await
        .map_err(CliError::from)
}

/// One executor note as a `batch` record.
pub fn note_record(n: &Note) -> Value {
    match n {
        Note::Adopted { local, id } => json!({"type": "batch", "event": "adopted", "local": local, "id": id}),
        Note::Forgotten { local } => json!({"type": "batch", "event": "forgotten", "local": local}),
        Note::Submitted {
            local,
            id,
            requests,
            round,
        } => {
            json!({"type": "batch", "event": "submitted", "local": local, "id": id, "requests": requests, "round": round})
        }
        Note::Polled { local, status } => json!({"type": "batch", "event": "polled", "local": local, "status": status}),
        Note::PollFailed { local, error } => {
            json!({"type": "batch", "event": "poll_failed", "local": local, "error": error.to_string()})
        }
        Note::Collected {
            local,
            answered,
            resent,
            failed,
        } => {
            json!({"type": "batch", "event": "collected", "local": local, "answered": answered, "resent": resent, "failed": failed})
        }
        Note::Waiting {
            batches,
            requests,
            next,
        } => {
            json!({"type": "batch", "event": "waiting", "batches": batches, "requests": requests, "next_poll_secs": next.as_secs_f64()})
        }
    }
}

/// Write the OpenAI batch input line of every pending run to `w` as it
/// is made (none is held); the number written.
fn write_lines(m: &Matrix, ask: &Ask, pending: &[Planned], w: &mut dyn Write) -> Result<usize, CliError> {
    let target = ask
        .shared
        .as_ref()
        .ok_or_else(|| CliError::new(Category::Usage, "--batch-file needs a configured provider, not replay"))?;
    let encoder = crate::llm::batch::file_lines(target.provider.as_ref());
    for p in pending {
        let spec = m.spec(p, ask);
        let plan = crate::run::plan(&spec, target)?;
        let item = Item {
            custom_id: crate::llm::batch::custom_id(&p.key),
            request: plan.request,
        };
        serde_json::to_writer(&mut *w, &encoder.line(&item)).map_err(|e| io_err(e.into()))?;
        w.write_all(b"\n").map_err(io_err)?;
    }
    Ok(pending.len())
}

/// `--batch-file`: write the lines and stop.
pub fn write_file<W: Write>(
    m: &Matrix,
    ask: &Ask,
    pending: &[Planned],
    file: &Path,
    out: &mut Out<W>,
) -> Result<Value, CliError> {
    // A planning error is kept apart from the writer's IO errors, so it
    // keeps its own category (the file is then not written).
    let mut planning: Option<CliError> = None;
    let mut written = 0;
    crate::limits::write_atomic_with(file, |w| match write_lines(m, ask, pending, w) {
        Ok(n) => {
            written = n;
            Ok(())
        }
        Err(e) => {
            planning = Some(e);
            Err(std::io::Error::other("not written"))
        }
    })
    .map_err(|e| {
        planning
            .take()
            .unwrap_or_else(|| CliError::new(Category::InputError, format!("{}: {e}", file.display())).because(e))
    })?;
    let rec = json!({"type": "batch_file", "path": file.display().to_string(), "requests": written});
    out.record(&rec).map_err(io_err)?;
    out.pretty(&format!("wrote {written} requests to {}\n", file.display()))
        .map_err(io_err)?;
    Ok(rec)
}

/// The results of an OpenAI-format batch output file, read line by line
/// (an output file of a big eval is larger than any file read whole);
/// an error names the file, the line and why.
fn results_of(file: &Path) -> Result<impl Iterator<Item = Result<crate::llm::batch::Result1, CliError>>, CliError> {
    let at = |n: usize, why: &dyn std::fmt::Display| {
        CliError::new(Category::InputError, format!("{}:{n}: {why}", file.display()))
    };
    let f = crate::limits::open_regular(file)
        .map_err(|e| CliError::new(Category::InputError, format!("{}: {e}", file.display())).because(e))?;
    let cap = usize::try_from(crate::limits::max_file_bytes()).unwrap_or(usize::MAX);
    let mut reader = std::io::BufReader::with_capacity(1 << 16, f);
    let mut buf = Vec::new();
    let mut n = 0;
    Ok(std::iter::from_fn(move || {
        loop {
            n += 1;
            let kind = match crate::limits::next_line(&mut reader, &mut buf, cap) {
                Ok(Some(k)) => k,
                Ok(None) => return None,
                Err(e) => return Some(Err(at(n, &e).because(e))),
            };
            if let crate::limits::Line::TooLong(len) = kind {
                return Some(Err(at(n, &crate::limits::line_too_long(len, cap))));
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line: Value = match serde_json::from_slice(&buf) {
                Ok(v) => v,
                Err(e) => return Some(Err(at(n, &format!("not JSON: {e}")).because(e))),
            };
            return Some(
                crate::llm::batch::openai::result_of(&line)
                    .ok_or_else(|| at(n, &"not a batch output line (no custom_id)")),
            );
        }
    }))
}

/// `--batch-results`: record the answers of an OpenAI-format output file,
/// each matched to its run by custom id (lines for runs not pending are
/// left alone).
pub fn record_file<W: Write>(
    m: &Arc<Matrix>,
    ask: &Arc<Ask>,
    pending: Vec<Planned>,
    file: &Path,
    recorder: &mut Recorder,
    events: &mut CliEvents<'_, W>,
) -> Result<engine::Executed, CliError> {
    // Custom id → the run's place in the plan (its key is read there, not
    // copied: 100,000 keys are ~8 MB).
    let ids: HashMap<String, usize> = pending
        .iter()
        .filter_map(|p| Some((crate::llm::batch::custom_id(&p.key), *m.index.get(&p.key)?)))
        .collect();
    let (chosen, unmatched) = chosen_lines(file, &ids)?;
    let total = chosen.len() + unmatched;
    if !pending.is_empty() && unmatched == total {
        // A file of another eval (or session, or limits): recording
        // nothing and saying nothing would look like success.
        return Err(CliError::new(
            Category::InputError,
            format!(
                "{}: none of its {total} results answers one of the {} runs this eval still needs (another \
                 session's, prompts' or limits' output?); nothing was recorded",
                file.display(),
                pending.len()
            ),
        ));
    }
    if unmatched > 0 {
        engine::Events::warn(
            events,
            format!(
                "{}: {unmatched} of its {total} results answer no run this eval still needs (recorded already, or \
                 another eval's): left alone",
                file.display()
            ),
        )
        .map_err(io_err)?;
    }
    let answered: HashSet<&str> = chosen
        .iter()
        .filter(|(_, (_, rank))| *rank > 0)
        .map(|(&i, _)| m.planned[i].key.as_str())
        .collect();
    let jobs: Vec<Planned> = pending
        .into_iter()
        .filter(|p| answered.contains(p.key.as_str()))
        .collect();
    drop(answered);
    // The second pass hands each chosen answer over as it is read: no
    // answer is held longer than its own recording.
    let mut broken: Option<CliError> = None;
    let answers = results_of(file)?.enumerate().filter_map(|(i, r)| {
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                broken.get_or_insert(e);
                return None;
            }
        };
        let at = *ids.get(&r.custom_id)?;
        if chosen.get(&at).map(|c| c.0) != Some(i) {
            return None;
        }
        let key = &m.planned[at].key;
        let answer = match r.outcome {
            Outcome::Succeeded(t) => Answer::Answered(t),
            Outcome::Errored(e) => Answer::Failed(e),
            Outcome::Expired | Outcome::Cancelled => return None,
        };
        Some((key.to_owned(), r.custom_id, answer))
    });
    let source = file.display().to_string();
    let done = engine::batched::record(m, ask, jobs, answers, &source, recorder, events).map_err(CliError::from)?;
    match broken {
        // The file changed between the two reads.
        Some(e) => Err(e),
        None => Ok(done),
    }
}

/// A pending run's place in the plan → the results line chosen for it and
/// its rank.
type Chosen = HashMap<usize, (usize, u8)>;

/// The first pass over a results file: for each pending run (by its place
/// in the plan, through `ids`, its custom id's), the line (0-based, among
/// results) that answers it and how good it is (the better of two, the
/// first of two alike: `eval::batch::one_each`'s rule), holding no answer
/// text; and how many other custom ids the file answers.
fn chosen_lines(file: &Path, ids: &HashMap<String, usize>) -> Result<(Chosen, usize), CliError> {
    let mut chosen: HashMap<usize, (usize, u8)> = HashMap::new();
    let mut unmatched: HashSet<String> = HashSet::new();
    for (i, r) in results_of(file)?.enumerate() {
        let r = r?;
        let Some(&at) = ids.get(&r.custom_id) else {
            unmatched.insert(r.custom_id);
            continue;
        };
        let rank = crate::eval::batch::rank(&r.outcome);
        match chosen.get_mut(&at) {
            Some(c) if rank > c.1 => *c = (i, rank),
            Some(_) => {}
            None => {
                chosen.insert(at, (i, rank));
            }
        }
    }
    Ok((chosen, unmatched.len()))
}
