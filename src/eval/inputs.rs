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

/// A prompt's own sample inputs, each named by its sample: what an eval
/// runs when it is given no inputs (`cutline eval` without `--inputs`, the
/// workbench's eval view).
pub fn samples(p: &PromptConfig) -> Vec<Input> {
    p.inputs
        .iter()
        .map(|i| Input {
            id: i.name.clone(),
            vars: i.vars.clone(),
        })
        .collect()
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
    /// [`RawInput::for_prompt`] for the last prompt to use it: its strings
    /// and map are moved, not copied.
    pub fn into_prompt(self, prompt: &PromptConfig) -> Input {
        let vars = match self.source {
            Source::Vars(v) => v,
            Source::Text(t) => {
                let mut m = Map::new();
                m.insert(main_variable(prompt), Value::String(t));
                m
            }
        };
        Input { id: self.id, vars }
    }

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

/// Why inputs or a gold set cannot be read: the file, where in it, and
/// the cause. Displayed `file[:line[:column]]: cause`.
#[derive(Debug, Clone)]
pub struct InputsError {
    /// The file (or directory).
    pub file: String,
    /// 1-based line, when the cause has one.
    pub line: Option<usize>,
    /// 1-based column on that line, when known.
    pub column: Option<usize>,
    /// What is wrong (the cause in words, when there is one).
    pub message: String,
    /// The typed error underneath (an io or serde_json error), kept as
    /// [`std::error::Error::source`]; `message` already says it, so the edge
    /// prints this error's `Display` alone. Not part of equality.
    pub source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

fn at(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl InputsError {
    fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
            source: None,
        }
    }

    fn at(mut self, line: usize, column: Option<usize>) -> Self {
        self.line = Some(line);
        self.column = column;
        self
    }

    fn because(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(std::sync::Arc::new(source));
        self
    }
}

impl PartialEq for InputsError {
    fn eq(&self, other: &Self) -> bool {
        self.file == other.file
            && self.line == other.line
            && self.column == other.column
            && self.message == other.message
    }
}

impl Eq for InputsError {}

impl std::fmt::Display for InputsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}: {}", self.file, at(self.line, self.column), self.message)
    }
}

impl std::error::Error for InputsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// `bytes` as text; invalid UTF-8 is an error at its line and column
/// (counted from `first_line`, the text's first line in the file).
fn utf8(label: &str, first_line: usize, bytes: Vec<u8>) -> Result<String, InputsError> {
    String::from_utf8(bytes).map_err(|e| {
        let (line, col) = crate::output::position::line_col(e.as_bytes(), e.utf8_error().valid_up_to());
        InputsError::new(label, "invalid UTF-8").at(first_line + line - 1, Some(col))
    })
}

/// Read `path`: a directory of `.txt` / `.json` files, or a `.jsonl` file.
pub fn load(path: &Path) -> Result<Vec<RawInput>, InputsError> {
    let label = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| InputsError::new(&label, e.to_string()).because(e))?;
    if meta.is_dir() {
        load_dir(path)
    } else {
        load_jsonl(path)
    }
}

fn load_dir(dir: &Path) -> Result<Vec<RawInput>, InputsError> {
    let label = dir.display().to_string();
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| InputsError::new(&label, e.to_string()).because(e))?
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
        return Err(InputsError::new(&label, "no .txt or .json inputs in the directory"));
    }
    let mut out: Vec<RawInput> = Vec::new();
    for f in files {
        let flabel = f.display().to_string();
        let id = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(prev) = out.iter().find(|i| i.id == id) {
            return Err(InputsError::new(
                &flabel,
                format!(
                    "input id {:?} is already taken by another file in {label} (a .txt and a .json with the same stem)",
                    prev.id
                ),
            ));
        }
        let bytes = crate::limits::read(&f).map_err(|e| InputsError::new(&flabel, e.to_string()).because(e))?;
        let text = utf8(&flabel, 1, bytes)?;
        let is_json = f.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let source = if is_json {
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => Source::Vars(m),
                Ok(other) => {
                    let cause = format!("expected a JSON object of variables, got {}", kind_of(&other));
                    return Err(InputsError::new(&flabel, cause));
                }
                Err(e) => {
                    let cause = format!("bad JSON: {}", crate::output::json::strip_position(&e.to_string()));
                    return Err(InputsError::new(&flabel, cause)
                        .at(e.line(), Some(e.column()))
                        .because(e));
                }
            }
        } else {
            Source::Text(text)
        };
        out.push(RawInput { id, source });
    }
    Ok(out)
}

fn load_jsonl(path: &Path) -> Result<Vec<RawInput>, InputsError> {
    let label = path.display().to_string();
    let file = crate::limits::open_regular(path).map_err(|e| InputsError::new(&label, e.to_string()).because(e))?;
    let mut out: Vec<RawInput> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
        let n = i + 1;
        let bytes = line.map_err(|e| InputsError::new(&label, e.to_string()).at(n, None).because(e))?;
        let text = utf8(&label, n, bytes)?;
        let t = text.trim();
        if t.is_empty() {
            continue;
        }
        let mut vars = match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                let cause = format!("expected a JSON object of variables, got {}", kind_of(&other));
                return Err(InputsError::new(&label, cause).at(n, None));
            }
            Err(e) => {
                let cause = format!("bad JSON: {}", crate::output::json::strip_position(&e.to_string()));
                return Err(InputsError::new(&label, cause).at(n, Some(e.column())).because(e));
            }
        };
        let id = match vars.remove("id") {
            None => format!("line-{n}"),
            Some(Value::String(s)) if !s.trim().is_empty() => s,
            Some(Value::Number(x)) => x.to_string(),
            Some(other) => {
                let cause = format!("`id` must be a non-empty string or a number, got {}", kind_of(&other));
                return Err(InputsError::new(&label, cause).at(n, None));
            }
        };
        if let Some(prev) = seen.insert(id.clone(), n) {
            let cause = format!("input id {id:?} is already used on line {prev}");
            return Err(InputsError::new(&label, cause).at(n, None));
        }
        // A parsed map keeps the spare room of its growth (and held the
        // `id`): built again to the size it holds (in order; serde_json's
        // map has no shrink), 100,000 inputs take ~14 MB less.
        let vars: Map<String, Value> = vars.into_iter().collect();
        out.push(RawInput {
            id,
            source: Source::Vars(vars),
        });
    }
    if out.is_empty() {
        return Err(InputsError::new(
            &label,
            "no inputs (the file holds no JSON object lines)",
        ));
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
pub fn read_gold(path: &Path) -> Result<Vec<Value>, InputsError> {
    let label = path.display().to_string();
    let bytes = crate::limits::read(path).map_err(|e| InputsError::new(&label, e.to_string()).because(e))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            InputsError::new(&label, format!("bad JSON: {e}"))
                .at(i + 1, None)
                .because(e)
        })?;
        items.push(v);
    }
    Ok(items)
}

/// The gold set for the first of `ids` that has one: `<dir>/<id>.jsonl`
/// (a prompt's own id, then its twin's), with the file's name. The one
/// lookup `eval`, `report` and the workbench's Compare tab share.
pub fn find_gold(dir: &Path, ids: &[String]) -> Result<Option<(String, Vec<Value>)>, InputsError> {
    for id in ids {
        let path = dir.join(format!("{id}.jsonl"));
        // Only a missing file means no gold set: one that is there but not
        // a regular file (a FIFO, a directory) is an error naming it, never
        // skipped as if it were not there.
        match std::fs::metadata(&path) {
            Ok(_) => return Ok(Some((path.display().to_string(), read_gold(&path)?))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(InputsError::new(path.display().to_string(), e.to_string()).because(e)),
        }
    }
    Ok(None)
}

/// The gold set of `cfg` ([`find_gold`] over its id and twin), annotating
/// its first sample input; `fields` are the `--key` fields, if any.
pub fn gold_of(cfg: &PromptConfig, dir: &Path, fields: &[String]) -> Result<Option<super::Gold>, InputsError> {
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
        // A name holding `:1:` is kept as it is (the position is a field).
        let p = dir.path().join("in:1:put.jsonl");
        let file = p.display().to_string();
        std::fs::write(&p, "{\"text\":\"a\"}\n\n{\"text\": \"b\",}\n").unwrap();
        let e = load(&p).unwrap_err();
        assert_eq!((e.file.as_str(), e.line, e.column), (file.as_str(), Some(3), Some(14)));
        assert!(e.to_string().starts_with(&format!("{file}:3:14: bad JSON")), "{e}");
        std::fs::write(&p, "{\"id\":\"x\",\"text\":\"a\"}\n[1]\n").unwrap();
        let e = load(&p).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{file}:2: expected a JSON object of variables, got an array")
        );
        std::fs::write(&p, "{\"id\":\"x\"}\n{\"id\":\"x\"}\n").unwrap();
        assert_eq!(
            load(&p).unwrap_err().to_string(),
            format!("{file}:2: input id \"x\" is already used on line 1")
        );
        std::fs::write(&p, b"{\"text\":\"a\"}\n{\"text\":\"\xff\"}\n").unwrap();
        assert_eq!(load(&p).unwrap_err().to_string(), format!("{file}:2:10: invalid UTF-8"));
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
