//! Reading a session: line by line, each line bounded by the read cap
//! (`CUTLINE_MAX_FILE_MIB`), never the whole file at once, so a session of
//! 100,000 runs is read in memory proportional to what the reader keeps.
//! A prompt snapshot written once (`{"type": "prompt", "ref", "prompt"}`,
//! version 2) is put back into every run that refers to it.

use std::collections::HashMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Header, RunRecord, Session, list, run_number};
use crate::limits::{Line, next_line};

/// At most this many line warnings per file; the rest are counted in one.
const MAX_LINE_WARNINGS: usize = 20;

/// Load a session file whole (a reader that shows every run). A torn or
/// unreadable line is skipped with a warning that names the file and line;
/// every good line is kept. A file whose first line is not a session
/// header is not a session (an error, so a stray `.jsonl` costs one
/// warning, not one per line).
pub fn load(path: &Path) -> std::io::Result<Session> {
    let mut runs = Vec::new();
    let seen = visit(path, &mut |r| runs.push(r))?;
    Ok(Session {
        path: path.to_owned(),
        header: seen.header,
        runs,
        warnings: seen.warnings,
    })
}

/// The run number in a line cut short, when its run id arrived whole (a
/// record's `run_id` is serialised right after its `type`).
fn torn_run_number(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(br#"{"type":"run","run_id":""#)?;
    let id = &rest[..memchr::memchr(b'"', rest)?];
    let n = &id[memchr::memrchr(b'#', id)? + 1..];
    std::str::from_utf8(n).ok()?.parse().ok()
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
/// all. The same checks and warnings as [`load`].
pub fn each_run(path: &Path, each: &mut dyn FnMut(RunRecord)) -> std::io::Result<Scanned> {
    visit(path, each).map(|s| Scanned {
        header: s.header,
        warnings: s.warnings,
    })
}

/// Everything a reading of the file found besides its runs.
pub(super) struct Seen {
    pub(super) header: Header,
    pub(super) warnings: Vec<String>,
    /// The highest run number among lines that did not load.
    pub(super) torn_max: u64,
    /// The highest run number among runs that loaded.
    pub(super) run_max: u64,
    /// The prompt snapshots written, by ref.
    pub(super) prompts: HashMap<String, Value>,
}

/// The one reader of a session file: the header, each run handed on (its
/// prompt snapshot put back), the warnings, what [`Seen`] counts.
pub(super) fn visit(path: &Path, each: &mut dyn FnMut(RunRecord)) -> std::io::Result<Seen> {
    let file = crate::limits::open_regular(path)?;
    let cap = usize::try_from(crate::limits::max_file_bytes()).unwrap_or(usize::MAX);
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut v = Visitor {
        label: path.display().to_string(),
        ..Visitor::default()
    };
    let mut buf = Vec::new();
    let mut n = 0;
    while let Some(kind) = next_line(&mut reader, &mut buf, cap)? {
        n += 1;
        let last = matches!(kind, Line::Last { .. });
        if let Line::TooLong(len) = kind {
            let e = crate::limits::line_too_long(len, cap);
            if v.header.is_none() {
                return Err(e);
            }
            v.warn(n, &format!("{e}; skipped"));
            continue;
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let value: Value = match serde_json::from_slice(&buf) {
            Ok(value) => value,
            Err(_) if v.header.is_none() && (v.seen_run || !last) => return Err(not_a_session()),
            Err(e) => {
                v.torn_max = v.torn_max.max(torn_run_number(&buf).unwrap_or(0));
                let what = if last && e.is_eof() {
                    "torn last line (the writer was interrupted); skipped"
                } else {
                    "unreadable line; skipped"
                };
                v.warn(n, &format!("{what}: {e}"));
                continue;
            }
        };
        v.record(n, value, each)?;
    }
    Ok(v.finish(path))
}

/// What a reading has found so far.
#[derive(Default)]
struct Visitor {
    label: String,
    header: Option<Header>,
    seen_run: bool,
    warnings: Vec<String>,
    /// Warnings past [`MAX_LINE_WARNINGS`], counted only.
    skipped: usize,
    torn_max: u64,
    run_max: u64,
    prompts: HashMap<String, Value>,
    /// Runs loaded so far.
    index: usize,
}

impl Visitor {
    /// A warning about line `n`.
    fn warn(&mut self, n: usize, what: &str) {
        if self.warnings.len() < MAX_LINE_WARNINGS {
            self.warnings.push(format!("{}:{n}: {what}", self.label));
        } else {
            self.skipped += 1;
        }
    }

    /// Line `n`, a JSON value: the header, a prompt snapshot or a run
    /// (handed to `each`); anything before a header is not a session.
    fn record(&mut self, n: usize, value: Value, each: &mut dyn FnMut(RunRecord)) -> std::io::Result<()> {
        match value.get("type").and_then(Value::as_str) {
            Some("session") => match serde_json::from_value::<Header>(value) {
                Ok(h) => self.header = Some(h),
                Err(e) => self.warn(n, &format!("bad session header: {e}")),
            },
            _ if self.header.is_none() => return Err(not_a_session()),
            Some("prompt") => match (value.get("ref").and_then(Value::as_str), value.get("prompt")) {
                (Some(r), Some(p)) => {
                    self.prompts.insert(r.to_owned(), p.clone());
                }
                _ => self.warn(n, "bad prompt snapshot; skipped"),
            },
            Some("run") => match run_of(value, &self.prompts) {
                Ok(r) => {
                    self.seen_run = true;
                    self.run_max = self.run_max.max(run_number(&r, self.index));
                    self.index += 1;
                    each(r);
                }
                Err(e) => self.warn(n, &format!("bad run record; skipped: {e}")),
            },
            _ => self.warn(n, "unknown record type; skipped"),
        }
        Ok(())
    }

    /// What was found; a file without a header gets one from its name.
    fn finish(mut self, path: &Path) -> Seen {
        if self.skipped > 0 {
            self.warnings
                .push(format!("{}: {} more bad line(s) skipped", self.label, self.skipped));
        }
        let header = self.header.unwrap_or_else(|| {
            self.warnings.push(format!("{}: no session header", self.label));
            Header {
                kind: super::HeaderKind::Session,
                version: 1,
                id: path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                created_ms: 0,
            }
        });
        Seen {
            header,
            warnings: self.warnings,
            torn_max: self.torn_max,
            run_max: self.run_max,
            prompts: self.prompts,
        }
    }
}

/// Why a run line is not a run record (the reader skips it with a
/// warning naming the file and line).
#[derive(Debug, thiserror::Error)]
enum RunLineError {
    /// It refers to a prompt snapshot no earlier line wrote.
    #[error("its prompt snapshot {0} is not in the session")]
    NoSnapshot(String),
    /// It is not a run record's JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// A run line as a record, its prompt snapshot put back from its ref.
fn run_of(mut value: Value, prompts: &HashMap<String, Value>) -> Result<RunRecord, RunLineError> {
    if let Some(obj) = value.as_object_mut()
        && let Some(Value::String(r)) = obj.remove("prompt_ref")
    {
        let p = prompts.get(&r).ok_or(RunLineError::NoSnapshot(r))?;
        obj.insert("prompt".into(), p.clone());
    }
    Ok(serde_json::from_value(value)?)
}

fn not_a_session() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "not a session file (its first line is not a session header); skipped",
    )
}

/// Why a session reference could not be followed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No file for the reference, with the sessions that do exist.
    #[error("no session {reference:?} in {} (known: {})", dir.display(), if known.is_empty() { "none".to_owned() } else { known.join(", ") })]
    NotFound {
        /// The reference as given.
        reference: String,
        /// The sessions directory searched.
        dir: PathBuf,
        /// The ids found there.
        known: Vec<String>,
    },
    /// The file could not be read as a session.
    #[error("{}: {source}", path.display())]
    Read {
        /// The session file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The session holds no run at all.
    #[error("{}: the session holds no runs", path.display())]
    NoRuns {
        /// The session file.
        path: PathBuf,
    },
    /// The run asked for is not recorded.
    #[error("{}: no run #{wanted} in the session (recorded: {}{})", path.display(), recorded.iter().map(|n| format!("#{n}")).collect::<Vec<_>>().join(", "), if *more { ", …" } else { "" })]
    NoRun {
        /// The session file.
        path: PathBuf,
        /// The run number asked for.
        wanted: u64,
        /// The first run numbers recorded (at most 20).
        recorded: Vec<u64>,
        /// Whether more are recorded.
        more: bool,
    },
}

/// Find a session by id or path: `dir/<id>.jsonl`, a path, or `id#run`.
/// Returns the session holding only the run the reference picks (default:
/// the last), read run by run so a session of any size costs one run.
pub fn resolve(reference: &str, dir: &Path) -> Result<(Session, usize), SessionError> {
    let (file_part, run_part) = match reference.rsplit_once('#') {
        Some((f, r)) if r.chars().all(|c| c.is_ascii_digit()) && !r.is_empty() => (f, Some(r)),
        _ => (reference, None),
    };
    let path = session_path(file_part, dir)?;
    let wanted: Option<u64> = run_part.map(|r| r.parse().unwrap_or(0));
    let mut picked: Option<RunRecord> = None;
    let mut numbers: Vec<u64> = Vec::new();
    let mut i = 0;
    let seen = visit(&path, &mut |r| {
        let number = run_number(&r, i);
        i += 1;
        if numbers.len() < 21 {
            numbers.push(number);
        }
        if wanted.is_none_or(|w| w == number) {
            picked = Some(r);
        }
    });
    let seen = match seen {
        Ok(s) => s,
        Err(source) => return Err(SessionError::Read { path, source }),
    };
    let Some(run) = picked else {
        if i == 0 {
            return Err(SessionError::NoRuns { path });
        }
        let more = numbers.len() > 20;
        numbers.truncate(20);
        return Err(SessionError::NoRun {
            path,
            wanted: wanted.unwrap_or(0),
            recorded: numbers,
            more,
        });
    };
    let session = Session {
        path,
        header: seen.header,
        runs: vec![run],
        warnings: seen.warnings,
    };
    Ok((session, 0))
}

/// The file a session reference names: a path, or `dir/<id>.jsonl`
/// (`#…` after it is the caller's).
pub fn locate(file_part: &str, dir: &Path) -> Result<PathBuf, SessionError> {
    session_path(file_part, dir)
}

/// The file a session reference names: a path, or `dir/<id>.jsonl`.
fn session_path(file_part: &str, dir: &Path) -> Result<PathBuf, SessionError> {
    let direct = PathBuf::from(file_part);
    if direct.is_file() {
        return Ok(direct);
    }
    let p = dir.join(format!("{file_part}.jsonl"));
    // Anything there that is not a regular file (a FIFO) is named by the
    // reader's error, not taken for a missing session.
    if std::fs::symlink_metadata(&p).is_ok() {
        return Ok(p);
    }
    Err(SessionError::NotFound {
        reference: file_part.to_owned(),
        dir: dir.to_owned(),
        known: list(dir)
            .iter()
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect(),
    })
}
