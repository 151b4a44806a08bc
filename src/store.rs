//! The prompts directory on disk: the IO around the pure `prompt` module.
//!
//! Loading never lets one bad file hide the others (a directory of prompts
//! is edited by hand and often half-broken), and saving writes a temporary
//! file and renames it, so a crash never leaves a config half-written.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::prompt::trustgraph::{put_in_bundle, to_trustgraph_prompt};
use crate::prompt::{ConfigError, PromptConfig, SourceFormat, Warning, load_bytes, to_toml};

/// The suffix of a TrustGraph-format prompt file's sample-input sidecar:
/// `config.json` has its inputs in `config.inputs.json`.
pub const SIDECAR_SUFFIX: &str = ".inputs.json";

/// Load every prompt of one file, with the sample inputs of its sidecar
/// (a `.json` file only: TOML prompts hold their own `[[input]]`s).
pub fn load_file(path: &Path) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    let label = path.display().to_string();
    let bytes = crate::limits::read(path).map_err(|e| ConfigError::new(&label, format!("cannot read: {e}")))?;
    let (mut prompts, mut warnings) = load_bytes(&label, &bytes)?;
    let is_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if let Some(sidecar) = is_json.then(|| sidecar_of(path)).flatten()
        && sidecar.is_file()
    {
        let side = sidecar.display().to_string();
        let bytes = crate::limits::read(&sidecar).map_err(|e| ConfigError::new(&side, format!("cannot read: {e}")))?;
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
    let entries = fs::read_dir(dir)
        .map_err(|e| ConfigError::new(dir.display().to_string(), format!("cannot read prompts directory: {e}")))?;
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
    let mut prompts: Vec<PromptConfig> = Vec::new();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let files = match prompt_files(dir) {
        Ok(f) => f,
        Err(e) => return (prompts, vec![e], warnings),
    };
    for path in files {
        match load_file(&path) {
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
    let as_file = |path: &Path, id: Option<&str>| -> Result<PromptConfig, ConfigError> {
        let (prompts, _) = load_file(path)?;
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
    let (mut prompts, errors, _) = load_dir(dir);
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
            set_or_clear(
                &mut obj,
                "system",
                (!p.system.is_empty()).then(|| Value::String(p.system.clone())),
            );
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
            put_in_bundle(&mut root, p, true).map_err(|e| ConfigError::new(file, format!("cannot save: {e}")))?;
            pretty(&root)
        }
    };
    write_atomic(path, &bytes).map_err(|e| ConfigError::new(file, format!("cannot save: {e}")))
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
    let bytes = crate::limits::read(path).map_err(|e| ConfigError::new(&label, format!("cannot read: {e}")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ConfigError::new(&label, format!("cannot save: the file is not JSON: {e}")))
}

fn pretty(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Write via a temporary file in the same directory and a rename, so
/// readers see the old file or the new one, never a torn one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("prompt");
    let tmp = dir.join(format!(".{name}.{}-{:08x}.tmp", std::process::id(), fastrand::u32(..)));
    let result = (|| {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
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
