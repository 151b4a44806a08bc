//! The answers batch rounds have brought back (`<session>.answers.jsonl`,
//! beside the manifest): one line per call, its key and its transcript
//! (with the batch and custom id that answered it), appended and synced as
//! each comes back. A strategy's later calls depend on these answers, and
//! its runs are recorded only when its cell ends, so a process stopped
//! between rounds would otherwise lose answers the provider already
//! billed; the same command reads them back and asks only for the rest.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::limits::Line;
use crate::llm::Transcript;

/// One kept answer.
#[derive(Debug, Serialize, Deserialize)]
struct Kept {
    key: String,
    transcript: Transcript,
}

/// The answers file of the session file `session` (`x.jsonl` →
/// `x.answers.jsonl`).
pub fn path_for(session: &Path) -> PathBuf {
    session.with_extension("answers.jsonl")
}

/// An answers file that does not read.
#[derive(Debug, thiserror::Error)]
pub enum AnswersError {
    /// It cannot be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line (not the last) is not a kept answer.
    #[error("{path}:{line}: not a kept batch answer: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// Why: serde_json's error, or io's for a line over the cap.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The answers kept so far, by call key, and the file they go to.
#[derive(Debug, Default)]
pub struct Answers {
    by_key: HashMap<String, Transcript>,
    path: Option<PathBuf>,
}

impl Answers {
    /// The answers at `path` (none when there is no file yet); new ones
    /// are appended there. A torn last line (a crash mid-write) is dropped:
    /// its call is asked again.
    pub fn open(path: &Path) -> Result<Self, AnswersError> {
        let read_err = |source| AnswersError::Read {
            path: path.to_owned(),
            source,
        };
        // Appended to and cut here: a link is refused before it is read.
        crate::limits::check_writable(path).map_err(read_err)?;
        let file = match crate::limits::open_regular(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    by_key: HashMap::new(),
                    path: Some(path.to_owned()),
                });
            }
            Err(e) => return Err(read_err(e)),
        };
        // Line by line: the file grows with every answer of a big eval,
        // so only one line at a time is held beside the answers kept.
        let cap = usize::try_from(crate::limits::max_file_bytes()).unwrap_or(usize::MAX);
        let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
        let (mut by_key, mut buf, mut good, mut n) = (HashMap::new(), Vec::new(), 0u64, 0);
        while let Some(kind) = crate::limits::next_line(&mut reader, &mut buf, cap).map_err(read_err)? {
            n += 1;
            let parsed = match kind {
                Line::TooLong(len) => Err(crate::limits::line_too_long(len, cap).into()),
                _ if buf.iter().all(u8::is_ascii_whitespace) => {
                    good += buf.len() as u64 + 1;
                    continue;
                }
                _ => serde_json::from_slice::<Kept>(&buf).map_err(Into::into),
            };
            match (parsed, kind) {
                (Ok(l), kind) => {
                    by_key.insert(l.key, l.transcript);
                    good += buf.len() as u64 + 1;
                    if let Line::Last { ended: false } = kind {
                        // Whole but for its newline: end it, so the next
                        // answer starts a line of its own.
                        crate::limits::open_write(path, true)
                            .and_then(|mut f| f.write_all(b"\n"))
                            .map_err(read_err)?;
                    }
                }
                (Err(_), Line::Last { ended: false }) => {
                    // A torn last line (a crash mid-write): cut it off, so
                    // its call is asked again and the next answer starts a
                    // line of its own. A whole line that does not read is
                    // an error below, never cut: it may be a paid answer.
                    crate::limits::open_write(path, false)
                        .and_then(|f| f.set_len(good))
                        .map_err(read_err)?;
                }
                (Err(source), _) => {
                    return Err(AnswersError::Parse {
                        path: path.to_owned(),
                        line: n,
                        source,
                    });
                }
            }
        }
        Ok(Self {
            by_key,
            path: Some(path.to_owned()),
        })
    }

    /// The answer kept for `key`.
    pub fn get(&self, key: &str) -> Option<&Transcript> {
        self.by_key.get(key)
    }

    /// Keep `t` as the answer to `key`, on disk before in memory.
    pub fn keep(&mut self, key: &str, t: Transcript) -> std::io::Result<()> {
        if let Some(path) = &self.path {
            let line = Kept {
                key: key.to_owned(),
                transcript: t,
            };
            let mut text = serde_json::to_vec(&line)?;
            text.push(b'\n');
            let mut f = crate::limits::open_write(path, true)?;
            f.write_all(&text)?;
            f.sync_data()?;
            self.by_key.insert(line.key, line.transcript);
        } else {
            self.by_key.insert(key.to_owned(), t);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_back_and_a_torn_last_line_is_asked_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.answers.jsonl");
        let mut a = Answers::open(&path).unwrap();
        let t = Transcript {
            text: "x".into(),
            ..Transcript::default()
        };
        a.keep("k1", t.clone()).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"{\"key\":\"k2\",\"tran");
        std::fs::write(&path, &bytes).unwrap();
        let back = Answers::open(&path).unwrap();
        assert_eq!(back.get("k1"), Some(&t));
        assert_eq!(back.get("k2"), None);
        assert_eq!(
            std::fs::read(&path).unwrap().last(),
            Some(&b'\n'),
            "the torn line is cut off"
        );
        // A whole last line that reads is ended, never cut.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.pop();
        std::fs::write(&path, &bytes).unwrap();
        let back = Answers::open(&path).unwrap();
        assert_eq!(back.get("k1"), Some(&t));
        assert_eq!(std::fs::read(&path).unwrap().last(), Some(&b'\n'));
        // A whole last line that does not read is an error, and is kept.
        std::fs::write(&path, b"{}\n").unwrap();
        let e = Answers::open(&path).unwrap_err().to_string();
        assert!(e.contains("s.answers.jsonl:1: not a kept batch answer"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"{}\n");
        std::fs::write(&path, b"nonsense\n{}\n").unwrap();
        let e = Answers::open(&path).unwrap_err().to_string();
        assert!(
            e.ends_with("s.answers.jsonl:1: not a kept batch answer: expected ident at line 1 column 2"),
            "{e}"
        );
    }
}
