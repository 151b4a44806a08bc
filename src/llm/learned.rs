//! What cutline learned of each model, kept per provider base URL and model
//! in the user's cache directory (`models.json`), so the next process sends
//! a request that works the first time.
//!
//! Three sources, each an [`Overrides`] laid over the seed profile: the
//! provider's Models API (read once per model, refreshed after a week),
//! then what servers refused ([`crate::llm::adapt`]) and what `cutline
//! probe` found. Every fact keeps its [`Evidence`], which `cutline models`
//! shows. The store lives in memory for the process; the binaries call
//! [`persist_to`] so it is also read from and written through to the file
//! (merged with what other processes wrote since, then replaced
//! atomically). Library callers that never call it, tests among them, keep
//! what they learn to themselves.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::profile::{Overrides, Profile};

/// How a fact was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The provider's Models API said so.
    ModelsApi,
    /// A server refused a request that had it (HTTP 400/404/422).
    Refusal,
    /// `cutline probe` sent a tiny request to find out.
    Probe,
}

impl Source {
    /// The word for people.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ModelsApi => "models api",
            Self::Refusal => "refusal",
            Self::Probe => "probe",
        }
    }
}

/// Why one fact is believed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The fact, for people (`temperature: not accepted`).
    pub fact: String,
    /// Where it came from.
    pub source: Source,
    /// The HTTP status of a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The server's words (scrubbed, shortened), or the probe's finding.
    pub message: String,
    /// When, in ms since the epoch.
    pub at_ms: u64,
}

/// What a provider's Models API said of a model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelsApi {
    /// When it was read, in ms since the epoch.
    pub fetched_ms: u64,
    /// The capabilities it reported (`None` fields: it did not say).
    #[serde(default)]
    pub facts: Overrides,
    /// `active`, `deprecated` or `retired`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<String>,
    /// When it was deprecated (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated_at: Option<String>,
    /// When it retires (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retires_at: Option<String>,
}

/// Everything known of one model at one base URL.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The provider's base URL (the provider name where it has none).
    pub base_url: String,
    /// The model id.
    pub model: String,
    /// What the Models API said, when it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<ModelsApi>,
    /// What refusals and probes taught, over the Models API.
    #[serde(default)]
    pub learned: Overrides,
    /// Why each fact is believed, oldest first.
    #[serde(default)]
    pub evidence: Vec<Evidence>,
}

impl Entry {
    /// The overrides in force: the Models API's, then the learned ones.
    pub fn overrides(&self) -> Overrides {
        self.api
            .as_ref()
            .map_or_else(Overrides::default, |a| a.facts)
            .then(&self.learned)
    }
}

/// The file's shape.
#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    #[serde(default)]
    models: Vec<Entry>,
}

const VERSION: u32 = 1;

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Today's date in UTC as `YYYY-MM-DD`.
pub fn today() -> String {
    date_of_days(i64::try_from(now_ms() / 86_400_000).unwrap_or(0))
}

/// The civil date `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn date_of_days(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// How long a Models API answer is trusted before it is read again.
pub const API_TTL_MS: u64 = 7 * 24 * 3600 * 1000;

#[derive(Default)]
struct Store {
    file: Option<PathBuf>,
    loaded: bool,
    entries: Vec<Entry>,
    /// (base, model) whose Models API was asked in this process (answered
    /// or not), so a model without one is asked once per process.
    asked: Vec<(String, String)>,
}

static STORE: Mutex<Store> = Mutex::new(Store {
    file: None,
    loaded: false,
    entries: Vec::new(),
    asked: Vec::new(),
});

fn store() -> std::sync::MutexGuard<'static, Store> {
    STORE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The default file: `models.json` in cutline's cache directory.
pub fn default_path() -> PathBuf {
    super::local::cache_dir().join("models.json")
}

/// The variable naming the file (empty: keep nothing on disk).
pub const FILE_ENV: &str = "CUTLINE_LEARNED_FILE";

/// The file a binary keeps what it learns in: `$CUTLINE_LEARNED_FILE`
/// (`None` when it is set empty), else [`default_path`].
pub fn file_from_env(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    match var(FILE_ENV) {
        Some(v) if v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => Some(default_path()),
    }
}

/// Read from and write through to `path` from now on.
pub fn persist_to(path: PathBuf) {
    let mut s = store();
    s.file = Some(path);
    s.loaded = false;
}

/// The file in use, if any.
pub fn file() -> Option<PathBuf> {
    store().file.clone()
}

/// The format version of the file at `path` when a newer cutline wrote
/// it: such a file is neither read nor ever written over (an older
/// format would drop what the newer one knows).
pub fn newer_version(path: &Path) -> Option<u32> {
    #[derive(Deserialize)]
    struct Head {
        version: u32,
    }
    let bytes = crate::limits::read(path).ok()?;
    let v = serde_json::from_slice::<Head>(&bytes).ok()?.version;
    (v > VERSION).then_some(v)
}

/// Why a newer file is left alone, for people.
pub fn newer_words(path: &Path, v: u32) -> String {
    format!(
        "{}: written by a newer cutline (format {v}; this one reads {VERSION}): not read, and never written over; \
         upgrade cutline or set {FILE_ENV} to another file",
        path.display()
    )
}

/// Hold the learned file's lock (`<file>.lock`, beside it) while it is
/// read, merged and replaced: processes learning at once otherwise each
/// replace the file with their own merge and drop the others' entries.
/// Blocks until it is free; `None` (unlocked) only when the lock file
/// cannot be opened, which the write then reports.
fn lock(path: &Path) -> Option<std::fs::File> {
    let mut name = path.file_name()?.to_os_string();
    name.push(".lock");
    let lock_path = path.with_file_name(name);
    if let Some(dir) = lock_path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let f = crate::limits::open_write(&lock_path, true).ok()?;
    f.lock().ok()?;
    Some(f)
}

fn read_file(path: &Path) -> Vec<Entry> {
    let bytes = match crate::limits::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            tracing::warn!("{}: {e}; what cutline learned of models is not read", path.display());
            return Vec::new();
        }
    };
    match serde_json::from_slice::<File>(&bytes) {
        Ok(f) if f.version == VERSION => f.models,
        Ok(f) => {
            tracing::warn!("{}", newer_words(path, f.version));
            Vec::new()
        }
        Err(e) => {
            tracing::warn!("{}: {e}; what cutline learned of models is not read", path.display());
            Vec::new()
        }
    }
}

fn load(s: &mut Store) {
    if s.loaded {
        return;
    }
    s.loaded = true;
    if let Some(path) = s.file.clone() {
        for e in read_file(&path) {
            merge(&mut s.entries, e);
        }
    }
}

/// `e` into `entries`: a newer Models API answer wins, learned facts of
/// `entries` (this process's, newer) win over the file's.
fn merge(entries: &mut Vec<Entry>, e: Entry) {
    match entries
        .iter_mut()
        .find(|x| x.base_url == e.base_url && x.model == e.model)
    {
        None => entries.push(e),
        Some(x) => {
            if e.api.as_ref().map(|a| a.fetched_ms) > x.api.as_ref().map(|a| a.fetched_ms) {
                x.api = e.api;
            }
            x.learned = e.learned.then(&x.learned);
            for ev in e.evidence {
                if !x.evidence.contains(&ev) {
                    x.evidence.push(ev);
                }
            }
            x.evidence.sort_by_key(|ev| ev.at_ms);
        }
    }
}

/// Write the store through to its file, merged with what is there now.
fn save(s: &Store) {
    let Some(path) = &s.file else { return };
    let _held = lock(path);
    if let Some(v) = newer_version(path) {
        tracing::warn!("{}", newer_words(path, v));
        return;
    }
    let mut all = read_file(path);
    for e in &s.entries {
        merge(&mut all, e.clone());
    }
    write_file(path, all);
}

/// Replace the file with `models`, atomically.
fn write_file(path: &Path, models: Vec<Entry>) {
    let file = File {
        version: VERSION,
        models,
    };
    let write = || -> std::io::Result<()> {
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir)?;
        crate::limits::write_atomic(path, &serde_json::to_vec_pretty(&file)?)
    };
    if let Err(e) = write() {
        tracing::warn!("could not keep what cutline learned in {}: {e}", path.display());
    }
}

fn entry_mut<'a>(s: &'a mut Store, base: &str, model: &str) -> &'a mut Entry {
    let i = match s.entries.iter().position(|e| e.base_url == base && e.model == model) {
        Some(i) => i,
        None => {
            s.entries.push(Entry {
                base_url: base.to_owned(),
                model: model.to_owned(),
                ..Entry::default()
            });
            s.entries.len() - 1
        }
    };
    &mut s.entries[i]
}

/// What is known of `model` at `base` (a copy).
pub fn entry(base: &str, model: &str) -> Option<Entry> {
    let mut s = store();
    load(&mut s);
    s.entries
        .iter()
        .find(|e| e.base_url == base && e.model == model)
        .cloned()
}

/// `seed` with what is known of `model` at `base` laid over it; its family
/// is then `learned`, so what it leaves off says where that came from.
pub fn profile(seed: Profile, base: &str, model: &str) -> Profile {
    let Some(o) = entry(base, model).map(|e| e.overrides()).filter(|o| !o.is_empty()) else {
        return seed;
    };
    Profile {
        family: LEARNED_FAMILY,
        ..seed.over(&o)
    }
}

/// The family of a profile that learned facts refined.
pub const LEARNED_FAMILY: &str = "learned";

/// Learn `delta` of `model` at `base`, for this process and (when
/// persisting) the next ones.
pub fn learn(base: &str, model: &str, delta: &Overrides, evidence: Evidence) {
    let mut s = store();
    load(&mut s);
    let e = entry_mut(&mut s, base, model);
    let now = e.learned.then(delta);
    if now == e.learned {
        return;
    }
    e.learned = now;
    e.evidence.push(evidence);
    save(&s);
}

/// Keep what the Models API said of `model` at `base`.
pub fn set_api(base: &str, model: &str, api: ModelsApi) {
    let mut s = store();
    load(&mut s);
    entry_mut(&mut s, base, model).api = Some(api);
    save(&s);
}

/// Whether the Models API should be asked about `model` at `base` now: not
/// asked yet in this process and no answer younger than [`API_TTL_MS`].
/// Marks it asked.
pub fn should_ask(base: &str, model: &str, now_ms: u64) -> bool {
    let mut s = store();
    load(&mut s);
    let key = (base.to_owned(), model.to_owned());
    if s.asked.contains(&key) {
        return false;
    }
    s.asked.push(key);
    let fresh = s
        .entries
        .iter()
        .find(|e| e.base_url == base && e.model == model)
        .and_then(|e| e.api.as_ref())
        .is_some_and(|a| now_ms.saturating_sub(a.fetched_ms) < API_TTL_MS);
    !fresh
}

/// Every entry, in the order learned.
pub fn entries() -> Vec<Entry> {
    let mut s = store();
    load(&mut s);
    s.entries.clone()
}

/// Forget every entry whose model or base URL is `what` (every entry when
/// `None`; a base URL with or without its trailing `/`); returns how many
/// were forgotten.
pub fn forget(what: Option<&str>) -> usize {
    let url = |u: &str| u.trim_end_matches('/').to_owned();
    forget_where(|e| what.is_none_or(|w| e.model == w || url(&e.base_url) == url(w)))
}

/// Forget what is known of `model` at `base` (a probe starts afresh).
pub fn forget_one(base: &str, model: &str) -> usize {
    forget_where(|e| e.base_url == base && e.model == model)
}

fn forget_where(gone: impl Fn(&Entry) -> bool) -> usize {
    let mut s = store();
    load(&mut s);
    let before = s.entries.len();
    s.entries.retain(|e| !gone(e));
    s.asked.clear();
    let Some(path) = s.file.clone() else {
        return before - s.entries.len();
    };
    let _held = lock(&path);
    if newer_version(&path).is_some() {
        return 0;
    }
    // Written anew: a merge with the file would bring them back.
    let mut all: Vec<Entry> = read_file(&path);
    let forgotten = all.iter().filter(|e| gone(e)).count().max(before - s.entries.len());
    all.retain(|e| !gone(e));
    for e in &s.entries {
        merge(&mut all, e.clone());
    }
    s.entries.clone_from(&all);
    write_file(&path, all);
    forgotten
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(date_of_days(0), "1970-01-01");
        assert_eq!(date_of_days(20_787), "2026-11-30");
        assert_eq!(date_of_days(11_016), "2000-02-29");
    }

    #[test]
    fn merge_keeps_the_newest_api_answer_and_this_process_facts() {
        let mut entries = vec![Entry {
            base_url: "b".into(),
            model: "m".into(),
            learned: Overrides {
                temperature: Some(false),
                ..Overrides::default()
            },
            api: Some(ModelsApi {
                fetched_ms: 5,
                ..ModelsApi::default()
            }),
            ..Entry::default()
        }];
        merge(
            &mut entries,
            Entry {
                base_url: "b".into(),
                model: "m".into(),
                learned: Overrides {
                    temperature: Some(true),
                    prefill: Some(false),
                    ..Overrides::default()
                },
                api: Some(ModelsApi {
                    fetched_ms: 9,
                    ..ModelsApi::default()
                }),
                ..Entry::default()
            },
        );
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].learned.temperature, Some(false));
        assert_eq!(entries[0].learned.prefill, Some(false));
        assert_eq!(entries[0].api.as_ref().map(|a| a.fetched_ms), Some(9));
    }
}
