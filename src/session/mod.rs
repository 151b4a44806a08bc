//! Recorded runs. A session is one JSONL file in `sessions/`: a header line,
//! then one line per run, appended and flushed as each run ends. A torn last
//! line (crash, kill -9) is skipped with a warning on load; nothing before it
//! is lost. A run is referred to as `session#N` by the number in its recorded
//! run id, never by its position, so a torn line shifts no reference. Every
//! writer names its file through [`file_for`], so a session id is a name,
//! never a path, and every read is bounded by [`crate::limits`].

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::llm::{FinishReason, LlmError, Piece, ProviderInfo, Transcript, Usage};

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always "session".
    #[serde(rename = "type")]
    pub kind: String,
    /// Format version.
    pub version: u32,
    /// Session id (also the file stem).
    pub id: String,
    /// Unix time in ms when it was created.
    pub created_ms: u64,
}

/// Generation parameters of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// The max-token limit (`None`: no limit).
    pub max_tokens: Option<u32>,
    /// Temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Stop sequences in force (sent, or applied by cutline: see
    /// `adjustments`).
    #[serde(default)]
    pub stop: Vec<String>,
    /// `top_p`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Each parameter's value and the precedence level it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<crate::llm::params::Settings>,
}

/// One recorded run: everything needed to reopen, re-analyse and replay it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Always "run".
    #[serde(rename = "type")]
    pub kind: String,
    /// Run id, unique within the session.
    pub run_id: String,
    /// Unix time in ms when it started.
    pub started_ms: u64,
    /// Prompt id.
    pub prompt_id: String,
    /// Response type of the prompt ("text", "json", "jsonl").
    pub response_type: String,
    /// Snapshot of the prompt config (TrustGraph prompt object + extras).
    pub prompt: Value,
    /// Rendered system text.
    pub system: String,
    /// Rendered prompt text.
    pub rendered: String,
    /// Variables used.
    pub variables: Map<String, Value>,
    /// Who answered (never a key).
    pub provider: ProviderInfo,
    /// Parameters.
    pub params: Params,
    /// The raw text received.
    pub text: String,
    /// Token pieces with arrival times.
    pub pieces: Vec<Piece>,
    /// Normalised finish reason.
    pub finish: FinishReason,
    /// The provider's own word.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_reason: Option<String>,
    /// Token counts.
    pub usage: Usage,
    /// The failure, if the run failed (its partial text is still here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<LlmError>,
    /// Milliseconds to the first token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<u64>,
    /// Milliseconds for the whole run.
    pub total_ms: u64,
    /// Structured-output path taken ("native", "native_wrapped", "prompt",
    /// "none").
    #[serde(default)]
    pub structured_path: String,
    /// What cutline changed to fit the model (parameters not sent or
    /// refused, client-side stop, wrapped schema), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<crate::llm::params::Adjustment>,
    /// For a continuation call: the answer so far it continued from
    /// (prefilled, or quoted in a follow-up turn).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefill: String,
    /// The generated tokens' ids, one per piece (llama-server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_ids: Vec<u32>,
    /// Set on a call that continues an earlier answer: its text is the
    /// rest of an answer, not a whole one, so it is never picked as a
    /// recording to replay nor resumed as a run of an eval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<Continues>,
    /// Where the reported finish disagrees with the run's evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<crate::llm::mismatch::Mismatch>,
    /// Reasoning / thinking text the provider streamed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thinking: String,
    /// The provider's token to resume an answer it left incomplete
    /// (`finish: incomplete`), for `--continue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
    /// The provider batch that answered the run (`eval --batch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchRef>,
    /// Analysis summary at record time.
    pub analysis: Value,
}

/// Which provider batch answered a run, and the run's id in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchRef {
    /// The provider's batch id.
    pub id: String,
    /// The run's custom id in the batch.
    pub custom_id: String,
}

/// How a call continued an earlier answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Continues {
    /// The answer so far was prefilled (`prefill` holds it).
    Prefill,
    /// A follow-up turn quoted the answer's last lines.
    FollowUp,
    /// The same request resent with the provider's continuation token.
    Native,
}

impl RunRecord {
    /// The prompt the run was recorded with, rebuilt from its snapshot.
    pub fn prompt_config(&self) -> Result<crate::prompt::PromptConfig, String> {
        let label = format!("session run {}", self.run_id);
        let bytes = serde_json::to_vec(&self.prompt).unwrap_or_default();
        let (mut prompts, _) =
            crate::prompt::load_bytes(&format!("{label}.json"), &bytes).map_err(|e| e.to_string())?;
        let mut p = prompts.pop().ok_or_else(|| format!("{label}: no prompt snapshot"))?;
        p.id.clone_from(&self.prompt_id);
        if let Some(s) = self.prompt.get("system").and_then(Value::as_str) {
            s.clone_into(&mut p.system);
        }
        Ok(p)
    }

    /// The transcript view of the run (for replay and re-analysis).
    pub fn transcript(&self) -> Transcript {
        Transcript {
            text: self.text.clone(),
            thinking: self.thinking.clone(),
            pieces: self.pieces.clone(),
            token_ids: self.token_ids.clone(),
            finish: Some(self.finish),
            raw_reason: self.raw_reason.clone(),
            usage: self.usage,
            error: self.error.clone(),
            first_token_ms: self.first_token_ms,
            total_ms: self.total_ms,
            continuation_token: self.continuation_token.clone(),
        }
    }
}

/// A loaded session.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// Its file.
    pub path: PathBuf,
    /// Header line.
    pub header: Header,
    /// Runs, in order.
    pub runs: Vec<RunRecord>,
    /// Problems met while loading (a torn last line, say).
    pub warnings: Vec<String>,
}

impl Session {
    /// The number of run `index` (see [`run_number`]).
    pub fn number(&self, index: usize) -> u64 {
        run_number(&self.runs[index], index)
    }

    /// How run `index` is referred to: `session#N`, `N` from its run id.
    pub fn reference(&self, index: usize) -> String {
        format!("{}#{}", self.header.id, self.number(index))
    }
}

/// Unix time in ms.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A session id made safe as a file stem: ASCII letters, digits, `-` and
/// `_` kept, anything else (a `/` above all) becomes `-`.
pub fn safe_stem(stem: &str) -> String {
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The one rule for where a session is written: `dir/<safe_stem(id)>.jsonl`,
/// always directly inside `dir` (`../x` or `/abs/x` become plain names).
pub fn file_for(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{}.jsonl", safe_stem(id)))
}

/// The number of a recorded run: the `N` of its run id `session#N`, else
/// its position (`index + 1`) for a run id without one.
pub fn run_number(run: &RunRecord, index: usize) -> u64 {
    run.run_id
        .rsplit_once('#')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(index as u64 + 1)
}

/// Take the session file's exclusive advisory lock, so two processes never
/// append to one session (their run numbers would collide and an eval
/// would repeat the other's runs). The OS drops it when the process ends,
/// even on `kill -9`.
fn lock(file: &File, path: &Path) -> std::io::Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            format!(
                "{}: another cutline process is recording into this session; wait for it or use another session id",
                path.display()
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// An open session file, appended to run by run; it holds the file's lock.
#[derive(Debug)]
pub struct Recorder {
    path: PathBuf,
    file: File,
    id: String,
    /// The highest run number on disk.
    runs: u64,
    /// The file's length: what [`Recorder::append`] weighs against the cap.
    len: u64,
}

impl Recorder {
    /// Create a new session file in `dir` named `<stem>.jsonl` (made unique).
    pub fn create(dir: &Path, stem: &str) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let safe = safe_stem(stem);
        let mut n = 0;
        let (path, file) = loop {
            let id = if n == 0 { safe.clone() } else { format!("{safe}-{n}") };
            let path = file_for(dir, &id);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => break (path, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
                Err(e) => return Err(e),
            }
        };
        lock(&file, &path)?;
        let id = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut rec = Self {
            path,
            file,
            id: id.clone(),
            runs: 0,
            len: 0,
        };
        let header = Header {
            kind: "session".into(),
            version: 1,
            id,
            created_ms: now_ms(),
        };
        rec.append(&serde_json::to_value(&header).unwrap_or(Value::Null))?;
        Ok(rec)
    }

    /// Open an existing session file to append more runs to it. New runs
    /// are numbered after the highest run number on disk, a torn run's
    /// included.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let mut file = OpenOptions::new().append(true).read(true).open(path)?;
        lock(&file, path)?;
        let (existing, torn_max) = load_numbered(path)?;
        // A torn last line (no newline) must not swallow the next record.
        let len = file.metadata()?.len();
        if len > 0 {
            let mut last = [0u8];
            file.seek(SeekFrom::Start(len - 1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        let len = file.metadata()?.len();
        let runs = existing
            .runs
            .iter()
            .enumerate()
            .map(|(i, r)| run_number(r, i))
            .max()
            .unwrap_or(0)
            .max(torn_max);
        Ok(Self {
            path: path.to_owned(),
            file,
            id: existing.header.id,
            runs,
            len,
        })
    }

    /// Open the session `id` in `dir` to append to it, or create it: the
    /// file is [`file_for`] (a name inside `dir`, never a path), and a
    /// symlink there is never appended through.
    pub fn open_or_create(dir: &Path, id: &str) -> std::io::Result<Self> {
        let path = file_for(dir, id);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => Self::open(&path),
            Ok(_) => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{}: not a regular file (a link is never appended through)",
                    path.display()
                ),
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::create(dir, id),
            Err(e) => Err(e),
        }
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A fresh run id for this session.
    pub fn next_run_id(&mut self) -> String {
        self.runs += 1;
        format!("{}#{}", self.id, self.runs)
    }

    /// Append one record as one line, flushed and synced, so a crash loses at
    /// most the line being written. A line that would take the file past
    /// the cap cutline reads ([`crate::limits`]) is refused and nothing is
    /// written (an error of kind `FileTooLarge`), so a session is never
    /// written past what cutline can read back.
    pub fn append(&mut self, record: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let cap = crate::limits::max_file_bytes();
        let grown = self.len.saturating_add(line.len() as u64);
        if grown > cap {
            return Err(full(&self.path, line.len(), cap));
        }
        self.file.write_all(&line)?;
        self.len = grown;
        self.file.flush()?;
        self.file.sync_data()
    }

    /// Append a run.
    pub fn record(&mut self, run: &RunRecord) -> std::io::Result<()> {
        self.append(&serde_json::to_value(run)?)
    }
}

/// A session that cannot take the next record without passing the read
/// cap (the error inside the `FileTooLarge` [`Recorder::append`] returns).
#[derive(Debug, thiserror::Error)]
#[error(
    "{path}: the session is full: this record ({bytes} bytes) would take it past the {mib} MiB cutline reads back \
     ({env}), so it is not written and the session stays readable; record into another session or raise the limit"
)]
pub struct SessionFull {
    path: String,
    bytes: usize,
    mib: u64,
    env: &'static str,
}

/// Whether `e` is [`Recorder::append`] refusing a record at the read cap
/// (not the OS refusing a write, which has the same kind).
pub fn is_full(e: &std::io::Error) -> bool {
    e.get_ref()
        .is_some_and(<dyn std::error::Error + Send + Sync>::is::<SessionFull>)
}

/// The error for a record that would take the session at `path` past the
/// read cap.
fn full(path: &Path, bytes: usize, cap: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        SessionFull {
            path: path.display().to_string(),
            bytes,
            mib: cap >> 20,
            env: crate::limits::MAX_FILE_ENV,
        },
    )
}

/// At most this many line warnings per file; the rest are counted in one.
const MAX_LINE_WARNINGS: usize = 20;

/// Load a session file. A torn or unreadable line is skipped with a warning
/// that names the file and line; every good line is kept. A file whose
/// first line is not a session header is not a session (an error, so a
/// stray `.jsonl` costs one warning, not one per line), and a file over
/// the read cap ([`crate::limits`]) is an error naming its size.
pub fn load(path: &Path) -> std::io::Result<Session> {
    load_numbered(path).map(|(s, _)| s)
}

/// The run number in a line cut short, when its run id arrived whole (a
/// record's `run_id` is serialised right after its `type`).
fn torn_run_number(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(br#"{"type":"run","run_id":""#)?;
    let id = &rest[..memchr::memchr(b'"', rest)?];
    let n = &id[memchr::memrchr(b'#', id)? + 1..];
    std::str::from_utf8(n).ok()?.parse().ok()
}

/// [`load`], plus the highest run number among lines that did not load.
fn load_numbered(path: &Path) -> std::io::Result<(Session, u64)> {
    let mut runs = Vec::new();
    let (header, warnings, torn_max) = visit(path, &mut |r| runs.push(r))?;
    let session = Session {
        path: path.to_owned(),
        header,
        runs,
        warnings,
    };
    Ok((session, torn_max))
}

/// What [`each_run`] found besides the runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Scanned {
    /// Header line.
    pub header: Header,
    /// Problems met while reading, as [`Session::warnings`].
    pub warnings: Vec<String>,
}

/// Read the session at `path` run by run, handing each to `each` in order
/// (its index in the file's runs is its position in the calls), so a
/// reader that needs one run, or one line about each, never holds them
/// all (`cutline sessions`, finding a recording). The same checks and
/// warnings as [`load`].
pub fn each_run(path: &Path, each: &mut dyn FnMut(RunRecord)) -> std::io::Result<Scanned> {
    visit(path, each).map(|(header, warnings, _)| Scanned { header, warnings })
}

/// The one reader of a session file: the header, each run handed on, the
/// warnings, and the highest run number among lines that did not load.
fn visit(path: &Path, each: &mut dyn FnMut(RunRecord)) -> std::io::Result<(Header, Vec<String>, u64)> {
    let (file, cap) = crate::limits::open(path)?;
    let mut reader = BufReader::new(file.take(cap + 1));
    let label = path.display().to_string();
    let mut header = None;
    let mut seen_run = false;
    let mut warnings = Vec::new();
    let mut skipped = 0usize;
    let mut warn = |w: String| {
        if warnings.len() < MAX_LINE_WARNINGS {
            warnings.push(w);
        } else {
            skipped += 1;
        }
    };
    let mut torn_max = 0;
    let mut lines = (&mut reader).split(b'\n').peekable();
    let mut n = 0;
    while let Some(line) = lines.next() {
        n += 1;
        let line = line?;
        let last = lines.peek().is_none();
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let value: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(_) if header.is_none() && (seen_run || !last) => return Err(not_a_session()),
            Err(e) => {
                torn_max = torn_max.max(torn_run_number(&line).unwrap_or(0));
                let what = if last && e.is_eof() {
                    "torn last line (the writer was interrupted); skipped"
                } else {
                    "unreadable line; skipped"
                };
                warn(format!("{label}:{n}: {what}: {e}"));
                continue;
            }
        };
        match value.get("type").and_then(Value::as_str) {
            Some("session") => match serde_json::from_value::<Header>(value) {
                Ok(h) => header = Some(h),
                Err(e) => warn(format!("{label}:{n}: bad session header: {e}")),
            },
            _ if header.is_none() => return Err(not_a_session()),
            Some("run") => match serde_json::from_value::<RunRecord>(value) {
                Ok(r) => {
                    seen_run = true;
                    each(r);
                }
                Err(e) => warn(format!("{label}:{n}: bad run record; skipped: {e}")),
            },
            _ => warn(format!("{label}:{n}: unknown record type; skipped")),
        }
    }
    drop(lines);
    if reader.get_ref().limit() == 0 {
        return Err(crate::limits::over_cap(cap));
    }
    if skipped > 0 {
        warnings.push(format!("{label}: {skipped} more bad line(s) skipped"));
    }
    let header = header.unwrap_or_else(|| {
        warnings.push(format!("{label}: no session header"));
        Header {
            kind: "session".into(),
            version: 1,
            id: path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            created_ms: 0,
        }
    });
    Ok((header, warnings, torn_max))
}

fn not_a_session() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "not a session file (its first line is not a session header); skipped",
    )
}

/// Every `*.jsonl` session in `dir`, sorted by file name; none when the
/// directory cannot be read (see [`list_dir`] for the error).
pub fn list(dir: &Path) -> Vec<PathBuf> {
    list_dir(dir).unwrap_or_default()
}

/// Every `*.jsonl` session in `dir`, sorted by file name, or why the
/// directory cannot be read.
pub fn list_dir(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let rd = std::fs::read_dir(dir)?;
    let mut out: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    out.sort();
    Ok(out)
}

/// Find a session by id or path: `dir/<id>.jsonl`, a path, or `id#run`.
/// Returns the session and the run index the reference picks (default: last).
pub fn resolve(reference: &str, dir: &Path) -> Result<(Session, usize), String> {
    let (file_part, run_part) = match reference.rsplit_once('#') {
        Some((f, r)) if r.chars().all(|c| c.is_ascii_digit()) && !r.is_empty() => (f, Some(r)),
        _ => (reference, None),
    };
    let direct = PathBuf::from(file_part);
    let path = if direct.is_file() {
        direct
    } else {
        let p = dir.join(format!("{file_part}.jsonl"));
        // Anything there that is not a regular file (a FIFO) is named by
        // `load`'s error, not taken for a missing session.
        if std::fs::symlink_metadata(&p).is_err() {
            let known: Vec<String> = list(dir)
                .iter()
                .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .collect();
            return Err(format!(
                "no session {file_part:?} in {} (known: {})",
                dir.display(),
                if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                }
            ));
        }
        p
    };
    let session = load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if session.runs.is_empty() {
        return Err(format!("{}: the session holds no runs", path.display()));
    }
    let idx = match run_part {
        None => session.runs.len() - 1,
        Some(r) => {
            let k: u64 = r.parse().unwrap_or(0);
            let numbers: Vec<u64> = (0..session.runs.len()).map(|i| session.number(i)).collect();
            match numbers.iter().position(|&n| n == k) {
                Some(i) => i,
                None => {
                    let listed: Vec<String> = numbers.iter().take(20).map(|n| format!("#{n}")).collect();
                    let more = if numbers.len() > 20 { ", …" } else { "" };
                    return Err(format!(
                        "{}: no run #{k} in the session (recorded: {}{more})",
                        path.display(),
                        listed.join(", ")
                    ));
                }
            }
        }
    };
    Ok((session, idx))
}
/// A recorded run to replay for `prompt_id`: among every session in `dir`,
/// the latest run of that prompt whose variables equal `vars` (any variables
/// when `vars` is `None`), preferring runs that were not cut by their own
/// limit, since only those can be replayed at every limit. Returns the run
/// and its `session#n` reference.
pub fn find_recording(dir: &Path, prompt_id: &str, vars: Option<&Map<String, Value>>) -> Option<(RunRecord, String)> {
    // Read run by run: only the best so far is held, never a session.
    let mut best: Option<(bool, u64, RunRecord, u64)> = None;
    let mut best_session = String::new();
    for path in list(dir) {
        // A file that turns out unreadable counts for nothing.
        let before = best.clone();
        let mut i = 0;
        let mut found_here = false;
        let mut each = |r: RunRecord| {
            let index = i;
            i += 1;
            if r.prompt_id != prompt_id
                || vars.is_some_and(|v| *v != r.variables)
                || r.pieces.is_empty()
                || r.continues.is_some()
            {
                return;
            }
            let full = r.finish != FinishReason::Length && r.finish != FinishReason::Error;
            let better = best
                .as_ref()
                .is_none_or(|(bf, bt, ..)| (full, r.started_ms) > (*bf, *bt));
            if better {
                let number = run_number(&r, index);
                best = Some((full, r.started_ms, r, number));
                found_here = true;
            }
        };
        match each_run(&path, &mut each) {
            // The session id is the header's, known once the file is read.
            Ok(s) if found_here => best_session = s.header.id,
            Ok(_) => {}
            Err(_) => best = before,
        }
    }
    best.map(|(_, _, r, n)| (r, format!("{best_session}#{n}")))
}

#[cfg(test)]
mod tests {
    use super::Recorder;

    #[test]
    fn a_session_being_recorded_cannot_be_opened_twice() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = Recorder::create(dir.path(), "s").expect("create");
        let err = Recorder::open(first.path()).expect_err("second recorder");
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
        assert_eq!(
            err.to_string(),
            format!(
                "{}: another cutline process is recording into this session; wait for it or use another session id",
                first.path().display()
            )
        );
        let path = first.path().to_owned();
        drop(first);
        Recorder::open(&path).expect("the lock goes with the recorder");
    }
}
