//! Writing a session: one locked file, appended run by run.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Header, RunRecord, file_for, now_ms, session_stem};

/// Take the session file's exclusive advisory lock, so two processes never
/// append to one session (their run numbers would collide and an eval
/// would repeat the other's runs). The OS drops it when the process ends,
/// even on `kill -9`. A lock still held is tried again for a quarter of a
/// second: a process forked by this one (any child, between its fork and
/// its exec) or one ending holds it for a moment after it is let go.
fn lock(file: &File, path: &Path) -> std::io::Result<()> {
    const TRIES: u32 = 25;
    let mut tries = 1;
    loop {
        match file.try_lock() {
            Err(std::fs::TryLockError::WouldBlock) if tries < TRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return lock_outcome(other, path),
        }
    }
}

fn lock_outcome(r: Result<(), std::fs::TryLockError>, path: &Path) -> std::io::Result<()> {
    match r {
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

/// The session's lock held without appending: whoever changes a file
/// that belongs to the session (its batch manifest) holds it, as an eval
/// recording into it does, so two processes never write back each other's
/// stale copies. Released when dropped.
#[derive(Debug)]
pub struct SessionLock {
    _file: File,
}

impl SessionLock {
    /// Take the lock of the session file at `path` (never through a link),
    /// or fail at once when another process holds it.
    pub fn take(path: &Path) -> std::io::Result<Self> {
        crate::limits::check_writable(path)?;
        let file = crate::limits::open_regular(path)?;
        lock(&file, path)?;
        Ok(Self { _file: file })
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
    /// The prompt snapshots the file holds, by ref.
    prompts: HashSet<String>,
    /// The longest line it writes (the read cap, from the environment).
    line_cap: u64,
}

/// The session format: 2 writes each prompt snapshot once and refers to it.
pub const VERSION: u32 = 2;

/// A prompt snapshot's ref: a hash of its JSON (FNV-1a, 64 bits).
fn snapshot_ref(prompt: &Value) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in prompt.to_string().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("p{h:016x}")
}

impl Recorder {
    /// Create a new session file in `dir` named `<stem>.jsonl` (made unique).
    pub fn create(dir: &Path, stem: &str) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let safe = session_stem(stem);
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
            prompts: HashSet::new(),
            line_cap: crate::limits::max_file_bytes(),
        };
        let header = Header {
            kind: super::HeaderKind::Session,
            version: VERSION,
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
        crate::limits::check_writable(path)?;
        let mut file = OpenOptions::new().append(true).read(true).open(path)?;
        lock(&file, path)?;
        // Read run by run: only the numbers and the snapshots' refs are kept.
        let seen = super::read::visit(path, &mut |_| {})?;
        if seen.header.version > VERSION {
            // Its records may mean what this cutline cannot write: older
            // ones appended would be misread by the cutline that wrote it.
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{}: written by a newer cutline (session format {}; this one writes {VERSION}): nothing is \
                     appended to it; upgrade cutline or use another session id",
                    path.display(),
                    seen.header.version
                ),
            ));
        }
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
        Ok(Self {
            path: path.to_owned(),
            file,
            id: seen.header.id,
            runs: seen.run_max.max(seen.torn_max),
            prompts: seen.prompts.into_keys().collect(),
            line_cap: crate::limits::max_file_bytes(),
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

    /// Write no line longer than `bytes` (default: the read cap of this
    /// process's `CUTLINE_MAX_FILE_MIB`; a reader with a smaller cap
    /// would skip a longer line).
    pub fn cap_lines_at(&mut self, bytes: u64) {
        self.line_cap = bytes;
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
    /// most the line being written. A line longer than a line may be when
    /// read back (the read cap, [`crate::limits`]) is refused and nothing
    /// is written (an error of kind `FileTooLarge`), so a session never
    /// holds what cutline cannot read; a session itself may grow as large
    /// as the disk allows.
    pub fn append(&mut self, record: &Value) -> std::io::Result<()> {
        self.append_unsynced(record)?;
        self.file.sync_data()
    }

    /// [`Recorder::append`] without the sync: the line is in the OS's
    /// hands, not yet on the disk, until [`Recorder::sync`] (or a handle
    /// from [`Recorder::sync_handle`]) syncs it.
    fn append_unsynced(&mut self, record: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        if line.len() as u64 > self.line_cap {
            return Err(full(&self.path, line.len(), self.line_cap));
        }
        self.file.write_all(&line)?;
        self.file.flush()
    }

    /// Make every line written so far durable (one `fdatasync`).
    pub fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    /// A second handle on the session file, to sync it off the async
    /// runtime's threads (`fdatasync` on any handle of a file syncs it).
    pub fn sync_handle(&self) -> std::io::Result<File> {
        self.file.try_clone()
    }

    /// Append a run. Its prompt snapshot is written once per session, on a
    /// `prompt` line of its own, and the run refers to it by `prompt_ref`
    /// (a run would otherwise repeat the whole prompt config). Synced
    /// before it returns.
    pub fn record(&mut self, run: &RunRecord) -> std::io::Result<()> {
        self.record_unsynced(run)?;
        self.file.sync_data()
    }

    /// [`Recorder::record`] without the sync, for group commit: a caller
    /// writes every run that finished meanwhile, syncs once, and only then
    /// tells anyone they were recorded.
    pub fn record_unsynced(&mut self, run: &RunRecord) -> std::io::Result<()> {
        let mut value = serde_json::to_value(run)?;
        if let Some(obj) = value.as_object_mut()
            && let Some(prompt) = obj.remove("prompt")
        {
            let r = snapshot_ref(&prompt);
            if !self.prompts.contains(&r) {
                self.append_unsynced(&serde_json::json!({"type": "prompt", "ref": r, "prompt": prompt}))?;
                self.prompts.insert(r.clone());
            }
            obj.insert("prompt_ref".into(), Value::String(r));
        }
        self.append_unsynced(&value)
    }
}

/// A record longer than a line of a session may be read back (the error
/// inside the `FileTooLarge` [`Recorder::append`] returns).
#[derive(Debug, thiserror::Error)]
#[error(
    "{path}: this record ({bytes} bytes) is over the {mib} MiB a line of a session may take when read back \
     ({env}), so it is not written and the session stays readable; raise the limit to keep such runs"
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
