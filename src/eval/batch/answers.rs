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

use crate::llm::Transcript;

/// One kept answer.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
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
    #[error("{path}:{line}: not a kept batch answer: {cause}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// serde's words.
        cause: String,
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
        let mut by_key = HashMap::new();
        let bytes = match crate::limits::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(AnswersError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        let mut good = 0;
        for (n, line) in lines.iter().enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                good += line.len() + 1;
                continue;
            }
            match serde_json::from_slice::<Line>(line) {
                Ok(l) => {
                    by_key.insert(l.key, l.transcript);
                    good += line.len() + 1;
                }
                Err(_) if n + 1 == lines.len() => {
                    // Cut it off, so the next answer starts a line of its own.
                    let f = std::fs::OpenOptions::new().write(true).open(path);
                    f.and_then(|f| f.set_len(good as u64))
                        .map_err(|source| AnswersError::Read {
                            path: path.to_owned(),
                            source,
                        })?;
                }
                Err(e) => {
                    return Err(AnswersError::Parse {
                        path: path.to_owned(),
                        line: n + 1,
                        cause: e.to_string(),
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
            let line = Line {
                key: key.to_owned(),
                transcript: t,
            };
            let mut text = serde_json::to_vec(&line)?;
            text.push(b'\n');
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
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
        std::fs::write(&path, b"nonsense\n{}\n").unwrap();
        let e = Answers::open(&path).unwrap_err().to_string();
        assert!(
            e.ends_with("s.answers.jsonl:1: not a kept batch answer: expected ident at line 1 column 2"),
            "{e}"
        );
    }
}
