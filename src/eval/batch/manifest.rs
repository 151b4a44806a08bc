//! The manifest of an eval's batches, beside its session
//! (`<session>.batches.json`): every batch with its provider id, the custom
//! id → run key of each request, its round and its state. It is written
//! before each create call (state `creating`) and after it (`submitted`,
//! with the id), so a crash between the two is found on resume (by the
//! entry's own tag, where the API takes one) and a batch is never
//! submitted twice; then after each poll and each collection. Written
//! whole and replaced atomically.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::llm::batch::{Status, Submitted, Window};

/// Where one batch is, as the eval sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    /// Written before the create call; no id known yet.
    Creating,
    /// Created: the provider is working on it.
    Submitted,
    /// Created, and its cancel asked for (`batches --cancel`): the provider
    /// ends it soon, and what it answered before is still collected.
    Cancelling,
    /// Every result recorded (or handed to a next round).
    Collected,
    /// Cancelled at the user's word by a cutline that did not collect what
    /// it had answered (manifests written before `cancelling`).
    Cancelled,
}

impl EntryState {
    /// Whether the provider may still be working on it: its runs are never
    /// submitted again, and it is polled until it ends.
    pub fn in_flight(self) -> bool {
        matches!(self, Self::Creating | Self::Submitted | Self::Cancelling)
    }

    /// Whether it has been created and not yet collected: polled, then
    /// collected once it ends.
    pub fn polled(self) -> bool {
        matches!(self, Self::Submitted | Self::Cancelling)
    }
}

/// One batch of the eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// cutline's name for it (`b1`, `b2`, …): stable before the provider's
    /// id exists.
    pub local: String,
    /// The round it was sent in (0 first; resubmissions after).
    pub round: u32,
    /// Its state.
    pub state: EntryState,
    /// When the create call started, ms since the epoch.
    pub created_ms: u64,
    /// The tag its create call carries where the API takes one: the
    /// session, this entry and a random part, so that a resume adopts only
    /// the batch this entry created (never another machine's or an older
    /// one of the same session). Empty in manifests written before it,
    /// which were tagged with the session alone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tag: String,
    /// The provider's batch, once created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<Submitted>,
    /// Each request's custom id and run key.
    pub requests: Vec<(String, String)>,
    /// The last poll's word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

/// An eval's batches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The format's version.
    pub version: u32,
    /// The session the runs are recorded in.
    pub session: String,
    /// The provider and model the batches run on.
    pub provider: String,
    /// The model.
    pub model: String,
    /// The batch API (`openai batches`, …).
    pub api: String,
    /// The window asked for.
    pub window: Window,
    /// Every batch, oldest first.
    pub batches: Vec<Entry>,
}

const VERSION: u32 = 1;

/// The manifest file of the session file `session` (`x.jsonl` →
/// `x.batches.json`).
pub fn path_for(session: &Path) -> PathBuf {
    session.with_extension("batches.json")
}

/// A manifest that does not load.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// It cannot be read (or is not a regular file, or too large).
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a manifest.
    #[error("{path}:{line}:{column}: not a batch manifest: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's error (its words are the message's).
        source: serde_json::Error,
    },
    /// A request's custom id is not the one of its run key (each is a hash
    /// of its key): the manifest was edited, and answers would be
    /// recorded under the wrong runs.
    #[error(
        "{path}: batch {local}: custom id {custom_id} is not the one of run key {key:?} (the manifest was edited): \
         nothing is recorded from it; put the manifest back as cutline wrote it"
    )]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// The entry's local name.
        local: String,
        /// The custom id it lists.
        custom_id: String,
        /// The run key it lists for it.
        key: String,
    },
    /// Its batches were sent to another provider, model or batch API than
    /// this eval's: polled here, they would never be found.
    #[error(
        "{path}: its batches were sent to {was}; this eval is on {now}: run it on {was} to collect them, or use \
         another --session"
    )]
    OtherProvider {
        /// The file.
        path: PathBuf,
        /// `provider (model, api)` of the manifest.
        was: String,
        /// `provider (model, api)` of this eval.
        now: String,
    },
    /// A newer cutline wrote it: its batches may be described in ways this
    /// one would misread, and a save would drop what it does not know.
    #[error(
        "{path}: written by a newer cutline (manifest format {version}; this one reads {VERSION}): not read, and \
         never written over; upgrade cutline or use another --session"
    )]
    Newer {
        /// The file.
        path: PathBuf,
        /// Its format.
        version: u32,
    },
    /// It cannot be written.
    #[error("{path}: cannot write the batch manifest: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Manifest {
    /// A new, empty manifest.
    pub fn new(session: &str, provider: &str, model: &str, api: &str, window: Window) -> Self {
        Self {
            version: VERSION,
            session: session.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            api: api.to_owned(),
            window,
            batches: Vec::new(),
        }
    }

    /// The manifest at `path`, `None` when there is none. Read as a stream
    /// into the manifest, not whole under the file cap: cutline writes a
    /// manifest of any size an eval needs (past the cap at about 600,000
    /// runs), so it must read back any it wrote; a file that is not one
    /// fails at its first byte that is not.
    pub fn load(path: &Path) -> Result<Option<Self>, ManifestError> {
        let file = match crate::limits::open_regular(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(ManifestError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let reader = std::io::BufReader::with_capacity(1 << 16, file);
        let m: Self = serde_json::from_reader(reader).map_err(|e| ManifestError::Parse {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            source: e,
        })?;
        if m.version > VERSION {
            return Err(ManifestError::Newer {
                path: path.to_owned(),
                version: m.version,
            });
        }
        m.check_ids(path)?;
        Ok(Some(m))
    }

    /// Every request's custom id is the hash of its run key: results are
    /// matched by custom id, so a key edited, swapped or moved would put an
    /// answer under another run.
    fn check_ids(&self, path: &Path) -> Result<(), ManifestError> {
        for e in &self.batches {
            for (custom_id, key) in &e.requests {
                if *custom_id != crate::llm::batch::custom_id(key) {
                    return Err(ManifestError::Mismatch {
                        path: path.to_owned(),
                        local: e.local.clone(),
                        custom_id: custom_id.clone(),
                        key: key.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The manifest at `path` for an eval of session `session` on
    /// `provider`, `model` and the batch API `api`: a new one when there
    /// is none, and an error when the one there was written for another
    /// provider, model or API (its batches are only found there).
    pub fn load_for(
        path: &Path,
        (session, provider, model): (&str, &str, &str),
        api: &str,
        window: Window,
    ) -> Result<Self, ManifestError> {
        let Some(m) = Self::load(path)? else {
            return Ok(Self::new(session, provider, model, api, window));
        };
        if (m.provider.as_str(), m.model.as_str(), m.api.as_str()) != (provider, model, api) {
            return Err(ManifestError::OtherProvider {
                path: path.to_owned(),
                was: format!("{} ({}, {})", m.provider, m.model, m.api),
                now: format!("{provider} ({model}, {api})"),
            });
        }
        Ok(m)
    }

    /// Write the manifest to `path`, replacing the file atomically.
    pub fn save(&self, path: &Path) -> Result<(), ManifestError> {
        let write = || -> std::io::Result<()> {
            let bytes = serde_json::to_vec_pretty(self)?;
            crate::limits::write_atomic(path, &bytes)
        };
        write().map_err(|source| ManifestError::Write {
            path: path.to_owned(),
            source,
        })
    }

    /// The next local name.
    pub fn next_local(&self) -> String {
        format!("b{}", self.batches.len() + 1)
    }

    /// A tag for the next create call: the session, the entry's local name
    /// and 64 random bits (`RandomState` is seeded from the OS), so that no
    /// other create call anywhere carries it.
    pub fn next_tag(&self, local: &str) -> String {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(crate::session::now_ms());
        h.write(local.as_bytes());
        format!("{}.{local}.{:016x}", self.session, h.finish())
    }

    /// Run keys in a batch the provider still works on (being created,
    /// submitted or being cancelled): never submitted again.
    pub fn in_flight(&self) -> impl Iterator<Item = &str> {
        self.batches
            .iter()
            .filter(|e| e.state.in_flight())
            .flat_map(|e| e.requests.iter().map(|(_, k)| k.as_str()))
    }
}
