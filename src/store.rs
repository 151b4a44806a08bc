//! The prompts directory on disk: the IO around the pure `prompt` module.
//!
//! Loading never lets one bad file hide the others (a directory of prompts
//! is edited by hand and often half-broken), and saving writes a temporary
//! file and renames it, so a crash never leaves a config half-written.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::prompt::trustgraph::{put_in_bundle, to_trustgraph_prompt};
use crate::prompt::{ConfigError, PromptConfig, SourceFormat, TgLoader, Warning, load_bytes_for, to_toml};

/// The suffix of a TrustGraph-format prompt file's sample-input sidecar:
/// `config.json` has its inputs in `config.inputs.json`.
pub const SIDECAR_SUFFIX: &str = ".inputs.json";

/// A prompts directory as one TrustGraph workspace: the loader of the
/// TrustGraph version it is deployed to, and the workspace's system prompt,
/// which a single TrustGraph prompt (one template, no system of its own)
/// renders with there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workspace {
    /// The prompts directory.
    pub dir: PathBuf,
    /// Which `template.*` keys of a bundle TrustGraph loads.
    pub loader: TgLoader,
    /// The workspace system from `--system FILE`: (label, text). Without it,
    /// single prompts take the system of the directory's bundles when they
    /// agree on one.
    pub system: Option<(String, String)>,
}

impl Workspace {
    /// The directory read as the current TrustGraph reads it, with no
    /// system given.
    pub fn at(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            loader: TgLoader::default(),
            system: None,
        }
    }

    /// Every prompt of the directory (see [`load_dir`]), single prompts
    /// with the workspace system.
    pub fn load(&self) -> (Vec<PromptConfig>, Vec<ConfigError>, Vec<Warning>) {
        let (mut prompts, errors, mut warnings) = load_dir_for(&self.dir, self.loader);
        let system = self.system.clone().or_else(|| bundle_system(&prompts));
        for p in &mut prompts {
            give_system(p, system.as_ref(), &mut warnings);
        }
        (prompts, errors, warnings)
    }

    /// Resolve a prompt reference (see [`resolve`]) in this workspace.
    pub fn resolve(&self, reference: &str) -> Result<PromptConfig, ConfigError> {
        let mut p = resolve_for(reference, &self.dir, self.loader)?;
        if is_bare_single(&p) {
            let system = self.system.clone().or_else(|| {
                let (prompts, _, _) = load_dir_for(&self.dir, self.loader);
                bundle_system(&prompts)
            });
            give_system(&mut p, system.as_ref(), &mut Vec::new());
        }
        Ok(p)
    }
}

/// A single TrustGraph prompt whose file gives no system.
fn is_bare_single(p: &PromptConfig) -> bool {
    p.origin.format == SourceFormat::TrustgraphPrompt && p.system.is_empty()
}

/// The one system the directory's bundles share, labelled by the first
/// bundle's file; none when there is no bundle or they disagree.
fn bundle_system(prompts: &[PromptConfig]) -> Option<(String, String)> {
    let mut bundled = prompts.iter().filter(|p| {
        matches!(
            p.origin.format,
            SourceFormat::TrustgraphBundle | SourceFormat::TrustgraphConfig
        )
    });
    let first = bundled.next()?;
    bundled
        .all(|p| p.system == first.system)
        .then(|| (first.origin.file.clone(), first.system.clone()))
}

/// Give a bare single prompt the workspace system, or say that it renders
/// without one where TrustGraph would use its workspace's.
fn give_system(p: &mut PromptConfig, system: Option<&(String, String)>, warnings: &mut Vec<Warning>) {
    if !is_bare_single(p) {
        return;
    }
    match system {
        Some((from, text)) => {
            p.system.clone_from(text);
            p.origin.system_from = Some(from.clone());
        }
        None => warnings.push(Warning {
            file: p.origin.file.clone(),
            line: None,
            message: format!(
                "`{}` is a single TrustGraph prompt with no system: TrustGraph renders it with its workspace's \
                 system ({:?} when the workspace has none); cutline renders it with none. Pass --system FILE \
                 or keep a bundle with the workspace's `system` beside it",
                p.id,
                crate::prompt::DEFAULT_SYSTEM
            ),
        }),
    }
}

/// Load every prompt of one file, with the sample inputs of its sidecar
/// (a `.json` file only: TOML prompts hold their own `[[input]]`s).
pub fn load_file(path: &Path) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    load_file_for(path, TgLoader::default())
}

/// [`load_file`] as the given TrustGraph loader reads bundles.
fn load_file_for(path: &Path, loader: TgLoader) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    let label = path.display().to_string();
    let bytes =
        crate::limits::read(path).map_err(|e| ConfigError::new(&label, format!("cannot read: {e}")).because(e))?;
    let (mut prompts, mut warnings) = load_bytes_for(&label, &bytes, loader)?;
    let is_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if let Some(sidecar) = is_json.then(|| sidecar_of(path)).flatten()
        && sidecar.is_file()
    {
        let side = sidecar.display().to_string();
        let bytes = crate::limits::read(&sidecar)
            .map_err(|e| ConfigError::new(&side, format!("cannot read: {e}")).because(e))?;
        warnings.extend(crate::prompt::sidecar::apply(&side, &bytes, &mut prompts)?);
    }
    Ok((prompts, warnings))
}

/// `dir/config.json` → `dir/config.inputs.json`.
fn sidecar_of(path: &Path) -> Option<PathBuf> {
    let stem = path.file_stem()?.to_str()?;
    Some(path.with_file_name(format!("{stem}{SIDECAR_SUFFIX}")))
}

/// The prompt files of `dir` (`*.toml`, `*.json`; not recursive), sorted by
/// file name so listings and id clashes are deterministic.
fn prompt_files(dir: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    let entries = fs::read_dir(dir).map_err(|e| {
        ConfigError::new(dir.display().to_string(), format!("cannot read prompts directory: {e}")).because(e)
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let ext = p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            !name.starts_with('.')
                && !name.to_ascii_lowercase().ends_with(SIDECAR_SUFFIX)
                && matches!(ext.as_deref(), Some("toml" | "json"))
                && p.is_file()
        })
        .collect();
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

/// Load every prompt file in `dir`; a bad file does not hide the others.
///
/// A prompt whose id an earlier file already has is reported as an error
/// and left out, so an id always names one prompt.
pub fn load_dir(dir: &Path) -> (Vec<PromptConfig>, Vec<ConfigError>, Vec<Warning>) {
    Workspace::at(dir).load()
}

fn load_dir_for(dir: &Path, loader: TgLoader) -> (Vec<PromptConfig>, Vec<ConfigError>, Vec<Warning>) {
    let mut prompts: Vec<PromptConfig> = Vec::new();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let files = match prompt_files(dir) {
        Ok(f) => f,
        Err(e) => return (prompts, vec![e], warnings),
    };
    for path in files {
        match load_file_for(&path, loader) {
            Ok((ps, ws)) => {
                warnings.extend(ws);
                for p in ps {
                    if let Some(first) = prompts.iter().find(|q| q.id == p.id) {
                        errors.push(ConfigError::new(
                            p.origin.file.clone(),
                            format!(
                                "duplicate prompt id {:?} (already in {}); skipped",
                                p.id, first.origin.file
                            ),
                        ));
                    } else {
                        prompts.push(p);
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    (prompts, errors, warnings)
}

/// One prompt of a file's prompts: the only one, or the one named `id`.
fn pick(file: &str, mut prompts: Vec<PromptConfig>, id: Option<&str>) -> Result<PromptConfig, ConfigError> {
    let ids = || prompts.iter().map(|p| p.id.as_str()).collect::<Vec<_>>().join(", ");
    match id {
        None if prompts.len() == 1 => Ok(prompts.remove(0)),
        None => Err(ConfigError::new(
            file,
            format!(
                "the file holds {} prompts ({}); name one as {file}#ID",
                prompts.len(),
                ids()
            ),
        )),
        Some(id) => match prompts.iter().position(|p| p.id == id) {
            Some(i) => Ok(prompts.remove(i)),
            None => Err(ConfigError::new(
                file,
                format!("no prompt with id {id:?} in the file; available: {}", ids()),
            )),
        },
    }
}

/// Resolve a prompt reference: a path to a config file (`path#id` picks one
/// prompt of a bundle), else a prompt id in `dir`.
///
/// When no prompt has the id but a file named after it failed to load, that
/// file's error is returned: it says why the prompt is missing.
pub fn resolve(reference: &str, dir: &Path) -> Result<PromptConfig, ConfigError> {
    Workspace::at(dir).resolve(reference)
}

fn resolve_for(reference: &str, dir: &Path, loader: TgLoader) -> Result<PromptConfig, ConfigError> {
    let as_file = |path: &Path, id: Option<&str>| -> Result<PromptConfig, ConfigError> {
        let (prompts, _) = load_file_for(path, loader)?;
        pick(&path.display().to_string(), prompts, id)
    };
    let path = Path::new(reference);
    if path.is_file() {
        return as_file(path, None);
    }
    if let Some((file, id)) = reference.rsplit_once('#') {
        if Path::new(file).is_file() {
            return as_file(Path::new(file), Some(id));
        }
        let in_dir = dir.join(file);
        if !file.is_empty() && in_dir.is_file() {
            return as_file(&in_dir, Some(id));
        }
    }
    let in_dir = dir.join(reference);
    if path.is_relative() && in_dir.is_file() {
        return as_file(&in_dir, None);
    }
    let has_ext = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml") || e.eq_ignore_ascii_case("json"));
    if reference.contains(['/', '\\']) || has_ext {
        // Something that is there but not a regular file (a FIFO) is named
        // by the reader's own error.
        if path.symlink_metadata().is_ok() {
            return as_file(path, None);
        }
        return Err(ConfigError::new(reference, "no such file"));
    }
    let (mut prompts, errors, _) = load_dir_for(dir, loader);
    if let Some(i) = prompts.iter().position(|p| p.id == reference) {
        return Ok(prompts.swap_remove(i));
    }
    if let Some(e) = errors
        .iter()
        .find(|e| Path::new(&e.file).file_stem().and_then(|s| s.to_str()) == Some(reference))
    {
        return Err(e.clone());
    }
    if prompts.is_empty() && errors.len() == 1 && errors[0].file == dir.display().to_string() {
        return Err(errors[0].clone());
    }
    let ids: Vec<&str> = prompts.iter().map(|p| p.id.as_str()).collect();
    let mut cause = format!(
        "no prompt with id {reference:?} in {}; available: {}",
        dir.display(),
        if ids.is_empty() {
            "(none)".to_owned()
        } else {
            ids.join(", ")
        }
    );
    if !errors.is_empty() {
        let _ = write!(cause, " ({} file(s) failed to load)", errors.len());
    }
    Err(ConfigError::new(reference, cause))
}

/// Save `p` like [`save`], only when its file lies directly inside `dir`,
/// the directory it belongs to: a prompt id is a name, so a file built from
/// an id like `../../x` is refused, never written.
pub fn save_in(p: &PromptConfig, dir: &Path) -> Result<(), ConfigError> {
    check_inside(Path::new(&p.origin.file), dir)?;
    save(p)
}

/// `file` is a plain file name directly inside `dir` (compared after
/// resolving links and `..`), else an error naming both.
pub fn check_inside(file: &Path, dir: &Path) -> Result<(), ConfigError> {
    let plain_name = matches!(file.components().next_back(), Some(std::path::Component::Normal(_)));
    let parent = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let inside = plain_name
        && match (fs::canonicalize(parent), fs::canonicalize(dir)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
    if inside {
        Ok(())
    } else {
        Err(ConfigError::new(
            file.display().to_string(),
            format!(
                "the file is not inside {} (a prompt id is a name, never a path)",
                dir.display()
            ),
        ))
    }
}

/// Write `p` back to `origin.file` in its own format, atomically.
///
/// A TOML prompt is rewritten whole. A TrustGraph single prompt keeps the
/// file's other keys. A bundle entry rewrites only its `template.<id>` key
/// (adding the id to `template-index` when missing) and, when the prompt's
/// system differs from the bundle's, the shared `system`.
pub fn save(p: &PromptConfig) -> Result<(), ConfigError> {
    let file = &p.origin.file;
    if file.is_empty() {
        return Err(ConfigError::new(
            format!("<prompt {}>", p.id),
            "the prompt has no file to save to",
        ));
    }
    let path = Path::new(file);
    let bytes = match p.origin.format {
        SourceFormat::Toml => to_toml(p).into_bytes(),
        SourceFormat::TrustgraphPrompt => {
            let mut obj = match read_json(path) {
                Ok(Value::Object(m)) if m.get("prompt").is_some_and(Value::is_string) => m,
                _ => serde_json::Map::new(),
            };
            obj.remove("object-schema");
            obj.remove("schema");
            if let Value::Object(fields) = to_trustgraph_prompt(p) {
                obj.extend(fields);
            }
            // A workspace system is the workspace's, not the file's.
            let own_system = p.origin.system_from.is_none() && !p.system.is_empty();
            set_or_clear(&mut obj, "system", own_system.then(|| Value::String(p.system.clone())));
            set_or_clear(
                &mut obj,
                "stop",
                (!p.stop.is_empty()).then(|| Value::Array(p.stop.iter().cloned().map(Value::String).collect())),
            );
            set_or_clear(
                &mut obj,
                "description",
                (!p.description.is_empty()).then(|| Value::String(p.description.clone())),
            );
            set_or_clear(&mut obj, "twin", p.twin.clone().map(Value::String));
            pretty(&Value::Object(obj))
        }
        SourceFormat::TrustgraphBundle | SourceFormat::TrustgraphConfig => {
            let mut root = read_json(path)?;
            put_in_bundle(&mut root, p, true)
                .map_err(|e| ConfigError::new(file, format!("cannot save: {e}")).because(e))?;
            pretty(&root)
        }
    };
    write_atomic(path, &bytes).map_err(|e| ConfigError::new(file, format!("cannot save: {e}")).because(e))
}

fn set_or_clear(obj: &mut serde_json::Map<String, Value>, key: &str, value: Option<Value>) {
    match value {
        Some(v) => {
            obj.insert(key.to_owned(), v);
        }
        None => {
            obj.remove(key);
        }
    }
}

fn read_json(path: &Path) -> Result<Value, ConfigError> {
    let label = path.display().to_string();
    let bytes =
        crate::limits::read(path).map_err(|e| ConfigError::new(&label, format!("cannot read: {e}")).because(e))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ConfigError::new(&label, format!("cannot save: the file is not JSON: {e}")).because(e))
}

fn pretty(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Write via a temporary file in the same directory and a rename, so
/// readers see the old file or the new one, never a torn one; a link (or
/// anything but a regular file) at `path` is refused, never replaced
/// ([`crate::limits::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::limits::write_atomic(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.toml");
        fs::write(&p, "old").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
