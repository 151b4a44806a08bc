//! Recorded runs. A session is one JSONL file in `sessions/`: a header line,
//! then one line per run, appended and flushed as each run ends. A torn last
//! line (crash, kill -9) is skipped with a warning on load; nothing before it
//! is lost. A run is referred to as `session#N` by the number in its recorded
//! run id, never by its position, so a torn line shifts no reference. Every
//! writer names its file through [`file_for`], so a session id is a name,
//! never a path, and every read is bounded by [`crate::limits`].

mod read;
mod write;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::llm::{FinishReason, LlmError, Piece, ProviderInfo, Transcript, Usage};
pub use read::{Scanned, SessionError, each_run, load, locate, resolve};
pub use write::{Recorder, SessionFull, SessionLock, VERSION, is_full};

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The line's record type (`"type": "session"`).
    #[serde(rename = "type")]
    pub kind: HeaderKind,
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

/// The record type a session's first line carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeaderKind {
    /// The header.
    #[default]
    Session,
}

/// The record type a run line carries: one word, so a line is told from
/// the header and the prompt snapshots by its `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// A run.
    #[default]
    Run,
}

fn no_structured_path() -> crate::llm::structured::Path {
    crate::llm::structured::Path::None
}

/// One recorded run: everything needed to reopen, re-analyse and replay it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The line's record type (`"type": "run"`).
    #[serde(rename = "type")]
    pub kind: RecordKind,
    /// Run id, unique within the session.
    pub run_id: String,
    /// Unix time in ms when it started.
    pub started_ms: u64,
    /// Prompt id.
    pub prompt_id: String,
    /// Response type of the prompt ("text", "json", "jsonl").
    pub response_type: crate::prompt::ResponseType,
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
    /// Structured-output path taken (`native`, `native_wrapped`, `prompt`,
    /// `grammar`, `none`; `none` when an old record has none).
    #[serde(default = "no_structured_path")]
    pub structured_path: crate::llm::structured::Path,
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

/// Why a run's prompt snapshot could not be rebuilt into a prompt config.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The snapshot does not load as a prompt (its label is
    /// `session run <id>.json`, with line and column where known).
    #[error(transparent)]
    Config(#[from] crate::prompt::ConfigError),
    /// The snapshot holds no prompt.
    #[error("session run {run_id}: no prompt snapshot")]
    Empty {
        /// The run's id.
        run_id: String,
    },
}

/// Which provider batch answered a run (one type with the transcript's).
pub use crate::llm::BatchRef;

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
    pub fn prompt_config(&self) -> Result<crate::prompt::PromptConfig, SnapshotError> {
        let label = format!("session run {}", self.run_id);
        let bytes = serde_json::to_vec(&self.prompt).unwrap_or_default();
        let (mut prompts, _) = crate::prompt::load_bytes(&format!("{label}.json"), &bytes)?;
        let mut p = prompts.pop().ok_or_else(|| SnapshotError::Empty {
            run_id: self.run_id.clone(),
        })?;
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
            // A replay of the run is not the batch's answer.
            batch: None,
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

/// A name made safe as a file stem: letters and digits (any script's),
/// `-` and `_` kept, anything else (a `/` above all) becomes `-`.
pub fn safe_stem(stem: &str) -> String {
    stem.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// A session id as its file's stem: [`safe_stem`], and when that changed
/// the id (or it is long), a hash of the id itself after it, so two ids
/// never share a file (`a b` and `a.b`, or two ids in a script a plain
/// ASCII rule would have turned into the same dashes). Applied to its own
/// output it changes nothing, so a stem read back names the same file.
pub fn session_stem(id: &str) -> String {
    /// Bytes of the stem before the hash (a file name is at most 255).
    const MAX: usize = 120;
    let safe = safe_stem(id);
    if safe == id && id.len() <= MAX + 9 {
        return safe;
    }
    let mut h: u32 = 0x811c_9dc5;
    for b in id.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    let mut cut = safe.len().min(MAX);
    while !safe.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{h:08x}", &safe[..cut])
}

/// The one rule for where a session is written: `dir/<session_stem(id)>.jsonl`,
/// always directly inside `dir` (`../x` or `/abs/x` become plain names),
/// and one file per id.
pub fn file_for(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{}.jsonl", session_stem(id)))
}

/// The number of a recorded run: the `N` of its run id `session#N`, else
/// its position (`index + 1`) for a run id without one.
pub fn run_number(run: &RunRecord, index: usize) -> u64 {
    run.run_id
        .rsplit_once('#')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(index as u64 + 1)
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
