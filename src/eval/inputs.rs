//! Inputs of an eval: a directory (one file per input) or a JSONL file (one
//! object of variables per line). Errors name the file, the line and the
//! cause, so a bad line in a thousand-line file is found at once.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use crate::output::schema::kind_of;
use crate::prompt::PromptConfig;

/// One input: variables to render a prompt with.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// Id: the file stem, the line's `id`, `line-N`, or the sample input name.
    pub id: String,
    /// Variables.
    pub vars: Map<String, Value>,
}

/// The variable a plain-text input fills: the only variable of the prompt's
/// first sample input when it has exactly one, else `text`.
pub fn main_variable(p: &PromptConfig) -> String {
    match p.inputs.first() {
        Some(i) if i.vars.len() == 1 => i.vars.keys().next().cloned().unwrap_or_else(|| "text".into()),
        _ => "text".into(),
    }
}

/// A `.txt` input as it comes from a directory: its text fills the prompt's
/// main variable, so it is kept as text until the prompt is known.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// An object of variables.
    Vars(Map<String, Value>),
    /// Plain text for the prompt's main variable.
    Text(String),
}

/// An input before it meets a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct RawInput {
    /// Id.
    pub id: String,
    /// Content.
    pub source: Source,
}

impl RawInput {
    /// The variables this input gives `prompt`.
    pub fn for_prompt(&self, prompt: &PromptConfig) -> Input {
        let vars = match &self.source {
            Source::Vars(v) => v.clone(),
            Source::Text(t) => {
                let mut m = Map::new();
                m.insert(main_variable(prompt), Value::String(t.clone()));
                m
            }
        };
        Input {
            id: self.id.clone(),
            vars,
        }
    }
}

fn utf8(label: &str, bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        let (line, col) = crate::output::position::line_col(e.as_bytes(), e.utf8_error().valid_up_to());
        format!("{label}:{line}:{col}: invalid UTF-8")
    })
}

/// Read `path`: a directory of `.txt` / `.json` files, or a `.jsonl` file.
pub fn load(path: &Path) -> Result<Vec<RawInput>, String> {
    let label = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| format!("{label}: {e}"))?;
    if meta.is_dir() {
        load_dir(path)
    } else {
        load_jsonl(path)
    }
}

fn load_dir(dir: &Path) -> Result<Vec<RawInput>, String> {
    let label = dir.display().to_string();
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{label}: {e}"))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("txt") || e.eq_ignore_ascii_case("json"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{label}: no .txt or .json inputs in the directory"));
    }
    let mut out: Vec<RawInput> = Vec::new();
    for f in files {
        let flabel = f.display().to_string();
        let id = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(prev) = out.iter().find(|i| i.id == id) {
            return Err(format!(
                "{flabel}: input id {:?} is already taken by another file in {label} ({})",
                prev.id, "a .txt and a .json with the same stem"
            ));
        }
        let bytes = crate::limits::read(&f).map_err(|e| format!("{flabel}: {e}"))?;
        let text = utf8(&flabel, bytes)?;
        let is_json = f.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let source = if is_json {
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => Source::Vars(m),
                Ok(other) => {
                    return Err(format!(
                        "{flabel}: expected a JSON object of variables, got {}",
                        kind_of(&other)
                    ));
                }
                Err(e) => {
                    return Err(format!(
                        "{flabel}:{}:{}: bad JSON: {}",
                        e.line(),
                        e.column(),
                        crate::output::json::strip_position(&e.to_string())
                    ));
                }
            }
        } else {
            Source::Text(text)
        };
        out.push(RawInput { id, source });
    }
    Ok(out)
}

fn load_jsonl(path: &Path) -> Result<Vec<RawInput>, String> {
    let label = path.display().to_string();
    let file = crate::limits::open_regular(path).map_err(|e| format!("{label}: {e}"))?;
    let mut out: Vec<RawInput> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
        let n = i + 1;
        let bytes = line.map_err(|e| format!("{label}:{n}: {e}"))?;
        let text = utf8(&format!("{label}:{n}"), bytes).map_err(|e| e.replacen(":1:", ":", 1))?;
        let t = text.trim();
        if t.is_empty() {
            continue;
        }
        let mut vars = match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                return Err(format!(
                    "{label}:{n}: expected a JSON object of variables, got {}",
                    kind_of(&other)
                ));
            }
            Err(e) => {
                return Err(format!(
                    "{label}:{n}:{}: bad JSON: {}",
                    e.column(),
                    crate::output::json::strip_position(&e.to_string())
                ));
            }
        };
        let id = match vars.remove("id") {
            None => format!("line-{n}"),
            Some(Value::String(s)) if !s.trim().is_empty() => s,
            Some(Value::Number(x)) => x.to_string(),
            Some(other) => {
                return Err(format!(
                    "{label}:{n}: `id` must be a non-empty string or a number, got {}",
                    kind_of(&other)
                ));
            }
        };
        if let Some(prev) = seen.insert(id.clone(), n) {
            return Err(format!("{label}:{n}: input id {id:?} is already used on line {prev}"));
        }
        out.push(RawInput {
            id,
            source: Source::Vars(vars),
        });
    }
    if out.is_empty() {
        return Err(format!("{label}: no inputs (the file holds no JSON object lines)"));
    }
    Ok(out)
}

/// A gold set: one JSON item per non-blank line of a JSONL file (invalid
/// UTF-8 replaced). The one reader for `compare --gold`, `eval`, `report`
/// and the workbench.
///
/// # Errors
/// The file cannot be read (`file: cause`) or a line is not JSON
/// (`file:line: bad JSON: cause`).
pub fn read_gold(path: &Path) -> Result<Vec<Value>, String> {
    let label = path.display();
    let bytes = crate::limits::read(path).map_err(|e| format!("{label}: {e}"))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| format!("{label}:{}: bad JSON: {e}", i + 1))?;
        items.push(v);
    }
    Ok(items)
}

/// The gold set for the first of `ids` that has one: `<dir>/<id>.jsonl`
/// (a prompt's own id, then its twin's), with the file's name. The one
/// lookup `eval`, `report` and the workbench's Compare tab share.
pub fn find_gold(dir: &Path, ids: &[String]) -> Result<Option<(String, Vec<Value>)>, String> {
    for id in ids {
        let path = dir.join(format!("{id}.jsonl"));
        if path.is_file() {
            return Ok(Some((path.display().to_string(), read_gold(&path)?)));
        }
    }
    Ok(None)
}

/// The gold set of `cfg` ([`find_gold`] over its id and twin), annotating
/// its first sample input; `fields` are the `--key` fields, if any.
pub fn gold_of(cfg: &PromptConfig, dir: &Path, fields: &[String]) -> Result<Option<super::Gold>, String> {
    let Some(first) = cfg.inputs.first() else {
        return Ok(None);
    };
    let ids: Vec<String> = std::iter::once(cfg.id.clone()).chain(cfg.twin.clone()).collect();
    Ok(find_gold(dir, &ids)?.map(|(file, items)| super::Gold::new(file, items, cfg, &first.vars, fields)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in.jsonl");
        std::fs::write(&p, "{\"text\":\"a\"}\n\n{\"text\": \"b\",}\n").unwrap();
        let e = load(&p).unwrap_err();
        assert!(e.starts_with(&format!("{}:3:", p.display())), "{e}");
        assert!(e.contains("bad JSON"), "{e}");
        std::fs::write(&p, "{\"id\":\"x\",\"text\":\"a\"}\n[1]\n").unwrap();
        let e = load(&p).unwrap_err();
        assert!(
            e.ends_with(":2: expected a JSON object of variables, got an array"),
            "{e}"
        );
        std::fs::write(&p, "{\"id\":\"x\"}\n{\"id\":\"x\"}\n").unwrap();
        assert!(
            load(&p)
                .unwrap_err()
                .ends_with(":2: input id \"x\" is already used on line 1")
        );
        std::fs::write(&p, "{\"id\":\"x\",\"text\":\"a\"}\n{\"text\":\"b\"}\n").unwrap();
        let ok = load(&p).unwrap();
        assert_eq!(ok[0].id, "x");
        assert_eq!(ok[1].id, "line-2");
        assert_eq!(
            ok[0].source,
            Source::Vars(serde_json::from_str(r#"{"text":"a"}"#).unwrap())
        );
    }
}
