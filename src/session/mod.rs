//! Recorded runs. A session is one JSONL file in `sessions/`: a header line,
//! then one line per run, appended and flushed as each run ends. A torn last
//! line (crash, kill -9) is skipped with a warning on load; nothing before it
//! is lost.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
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
    /// Where the reported finish disagrees with the run's evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<crate::llm::mismatch::Mismatch>,
    /// Reasoning / thinking text the provider streamed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thinking: String,
    /// Analysis summary at record time.
    pub analysis: Value,
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
            finish: Some(self.finish),
            raw_reason: self.raw_reason.clone(),
            usage: self.usage,
            error: self.error.clone(),
            first_token_ms: self.first_token_ms,
            total_ms: self.total_ms,
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
    runs: usize,
}

impl Recorder {
    /// Create a new session file in `dir` named `<stem>.jsonl` (made unique).
    pub fn create(dir: &Path, stem: &str) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let safe = safe_stem(stem);
        let mut n = 0;
        let (path, file) = loop {
            let id = if n == 0 { safe.clone() } else { format!("{safe}-{n}") };
            let path = dir.join(format!("{id}.jsonl"));
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

    /// Open an existing session file to append more runs to it.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let mut file = OpenOptions::new().append(true).open(path)?;
        lock(&file, path)?;
        let existing = load(path)?;
        // A torn last line (no newline) must not swallow the next record.
        let len = file.metadata()?.len();
        if len > 0 {
            let bytes = std::fs::read(path)?;
            if bytes.last() != Some(&b'\n') {
                file.write_all(b"\n")?;
            }
        }
        Ok(Self {
            path: path.to_owned(),
            file,
            id: existing.header.id,
            runs: existing.runs.len(),
        })
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
    /// most the line being written.
    pub fn append(&mut self, record: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.flush()?;
        self.file.sync_data()
    }

    /// Append a run.
    pub fn record(&mut self, run: &RunRecord) -> std::io::Result<()> {
        self.append(&serde_json::to_value(run)?)
    }
}

/// Load a session file. A torn or unreadable line is skipped with a warning
/// that names the file and line; every good line is kept.
pub fn load(path: &Path) -> std::io::Result<Session> {
    let file = File::open(path)?;
    let reader = BufReader::new(file);
    let label = path.display().to_string();
    let mut header = None;
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    let mut lines = reader.split(b'\n').peekable();
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
            Err(e) => {
                let what = if last && e.is_eof() {
                    "torn last line (the writer was interrupted); skipped"
                } else {
                    "unreadable line; skipped"
                };
                warnings.push(format!("{label}:{n}: {what}: {e}"));
                continue;
            }
        };
        match value.get("type").and_then(Value::as_str) {
            Some("session") => match serde_json::from_value::<Header>(value) {
                Ok(h) => header = Some(h),
                Err(e) => warnings.push(format!("{label}:{n}: bad session header: {e}")),
            },
            Some("run") => match serde_json::from_value::<RunRecord>(value) {
                Ok(r) => runs.push(r),
                Err(e) => warnings.push(format!("{label}:{n}: bad run record; skipped: {e}")),
            },
            _ => warnings.push(format!("{label}:{n}: unknown record type; skipped")),
        }
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
    Ok(Session {
        path: path.to_owned(),
        header,
        runs,
        warnings,
    })
}

/// Every `*.jsonl` session in `dir`, sorted by file name.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    out.sort();
    out
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
        if !p.is_file() {
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
            let k: usize = r.parse().unwrap_or(0);
            if k == 0 || k > session.runs.len() {
                return Err(format!(
                    "{}: run #{k} does not exist (runs 1..{})",
                    path.display(),
                    session.runs.len()
                ));
            }
            k - 1
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
    let mut best: Option<(bool, u64, RunRecord, String)> = None;
    for path in list(dir) {
        let Ok(s) = load(&path) else { continue };
        for (i, r) in s.runs.into_iter().enumerate() {
            if r.prompt_id != prompt_id || vars.is_some_and(|v| *v != r.variables) || r.pieces.is_empty() {
                continue;
            }
            let full = r.finish != FinishReason::Length && r.finish != FinishReason::Error;
            let better = best
                .as_ref()
                .is_none_or(|(bf, bt, _, _)| (full, r.started_ms) > (*bf, *bt));
            if better {
                let reference = format!("{}#{}", s.header.id, i + 1);
                best = Some((full, r.started_ms, r, reference));
            }
        }
    }
    best.map(|(_, _, r, reference)| (r, reference))
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
