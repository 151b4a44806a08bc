//! Local against live against the pull, key by key. Two values are the same
//! when TrustGraph would read them the same: equal after `json.loads` (key
//! order and spacing do not matter), else equal as text. A changed value is
//! shown the way a person reviews a prompt change: the template (and a
//! system) word by word, the schema by JSON pointer, other fields by name.
//! Pure.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value, json};
use similar::{ChangeTag, TextDiff};

/// Which side changed a key since the pull.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Local and live are the same.
    Same,
    /// Changed here, live as pulled: a push writes it.
    Local,
    /// Changed live since the pull, not here: a push leaves it (and a pull
    /// takes it).
    Live,
    /// Changed on both sides, differently: a push would overwrite the
    /// live change.
    Conflict,
}

/// One key's three values and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyDiff {
    /// The config key.
    pub key: String,
    /// Which side changed it.
    pub status: Status,
    /// As pulled.
    pub base: Option<String>,
    /// In the local file.
    pub local: Option<String>,
    /// Live now.
    pub live: Option<String>,
}

/// Whether TrustGraph would read `a` and `b` the same.
pub fn same(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a == b
                || matches!(
                    (serde_json::from_str::<Value>(a), serde_json::from_str::<Value>(b)),
                    (Ok(x), Ok(y)) if x == y
                )
        }
        _ => false,
    }
}

/// Every key in scope on any side, with its status, sorted by key.
pub fn three_way(
    base: &BTreeMap<String, String>,
    local: &BTreeMap<String, String>,
    live: &BTreeMap<String, String>,
    in_scope: impl Fn(&str) -> bool,
) -> Vec<KeyDiff> {
    let keys: BTreeSet<&String> = base.keys().chain(local.keys()).chain(live.keys()).collect();
    keys.into_iter()
        .filter(|k| in_scope(k))
        .map(|k| {
            let (b, l, v) = (base.get(k), local.get(k), live.get(k));
            let (b, l, v) = (b.map(String::as_str), l.map(String::as_str), v.map(String::as_str));
            let status = if same(l, v) {
                Status::Same
            } else if same(v, b) {
                Status::Local
            } else if same(l, b) {
                Status::Live
            } else {
                Status::Conflict
            };
            KeyDiff {
                key: k.clone(),
                status,
                base: b.map(str::to_owned),
                local: l.map(str::to_owned),
                live: v.map(str::to_owned),
            }
        })
        .collect()
}

/// One run of words in a word diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Words {
    /// `=` kept, `-` only in the old value, `+` only in the new.
    pub op: &'static str,
    /// The words, with the spacing between them.
    pub text: String,
}

/// `old` → `new` word by word: a changed stretch is one removed run and
/// one added run (the spaces between its words belong to both), and equal
/// runs are joined.
pub fn words(old: &str, new: &str) -> Vec<Words> {
    let diff = TextDiff::from_words(old, new);
    let changes: Vec<(ChangeTag, &str)> = diff.iter_all_changes().map(|c| (c.tag(), c.value())).collect();
    let mut out: Vec<Words> = Vec::new();
    let push = |out: &mut Vec<Words>, op: &'static str, text: &str| {
        if text.is_empty() {
            return;
        }
        match out.last_mut() {
            Some(last) if last.op == op => last.text.push_str(text),
            _ => out.push(Words {
                op,
                text: text.to_owned(),
            }),
        }
    };
    let mut i = 0;
    while i < changes.len() {
        if changes[i].0 == ChangeTag::Equal {
            push(&mut out, "=", changes[i].1);
            i += 1;
            continue;
        }
        // A changed stretch: changes, and blank equal runs followed by more changes.
        let (mut del, mut ins) = (String::new(), String::new());
        while i < changes.len() {
            let (tag, text) = changes[i];
            let blank_inside = tag == ChangeTag::Equal
                && text.trim().is_empty()
                && changes.get(i + 1).is_some_and(|(t, _)| *t != ChangeTag::Equal);
            match tag {
                ChangeTag::Delete => del.push_str(text),
                ChangeTag::Insert => ins.push_str(text),
                ChangeTag::Equal if blank_inside => {
                    del.push_str(text);
                    ins.push_str(text);
                }
                ChangeTag::Equal => break,
            }
            i += 1;
        }
        push(&mut out, "-", &del);
        push(&mut out, "+", &ins);
    }
    out
}

/// The word diff as `git diff --word-diff=plain` writes it.
pub fn words_plain(runs: &[Words]) -> String {
    runs.iter()
        .map(|w| match w.op {
            "-" => format!("[-{}-]", w.text),
            "+" => format!("{{+{}+}}", w.text),
            _ => w.text.clone(),
        })
        .collect()
}

/// One difference inside a JSON value, by pointer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PathChange {
    /// JSON pointer (`/properties/term/type`; `` for the root).
    pub path: String,
    /// The old value (absent when added).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    /// The new value (absent when removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
}

/// Every path where `old` and `new` differ; arrays of the same length are
/// compared element by element, others as a whole.
pub fn paths(old: &Value, new: &Value) -> Vec<PathChange> {
    let mut out = Vec::new();
    walk("", old, new, &mut out);
    out
}

fn walk(at: &str, old: &Value, new: &Value, out: &mut Vec<PathChange>) {
    if old == new {
        return;
    }
    let child = |k: &str| format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                match b.get(k) {
                    Some(vb) => walk(&child(k), va, vb, out),
                    None => out.push(PathChange {
                        path: child(k),
                        old: Some(va.clone()),
                        new: None,
                    }),
                }
            }
            for (k, vb) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                out.push(PathChange {
                    path: child(k),
                    old: None,
                    new: Some(vb.clone()),
                });
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                walk(&child(&i.to_string()), va, vb, out);
            }
        }
        _ => out.push(PathChange {
            path: at.to_owned(),
            old: Some(old.clone()),
            new: Some(new.clone()),
        }),
    }
}

/// What changed from `old` to `new` in one value, as JSON: for a template
/// `{"template": [words], "schema": [paths], "fields": {name: {old, new}}}`,
/// for a system `{"system": [words]}`, else `{"text": [words]}`.
pub fn detail(key: &str, old: Option<&str>, new: Option<&str>) -> Value {
    let decode = |s: Option<&str>| s.and_then(|s| serde_json::from_str::<Value>(s).ok());
    match (decode(old), decode(new)) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => template_detail(&a, &b),
        (Some(Value::String(a)), Some(Value::String(b))) if key == crate::prompt::tg_reload::SYSTEM_KEY => {
            json!({"system": words(&a, &b)})
        }
        _ => json!({"text": words(old.unwrap_or(""), new.unwrap_or(""))}),
    }
}

/// One line of a change as a person reviews it: what changed (`template`,
/// `system`, `text`, `schema /path`, a field's name) and how, word by word
/// (a schema path or a field as one `old → new` run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// What changed.
    pub name: String,
    /// The change: removed, added and kept runs.
    pub runs: Vec<Words>,
}

/// The lines of [`detail`]'s change, in its order: the CLI prints them,
/// the workbench colours them.
pub fn review(key: &str, old: Option<&str>, new: Option<&str>) -> Vec<Part> {
    let change = detail(key, old, new);
    let Value::Object(obj) = change else { return Vec::new() };
    let show = |x: Option<&Value>| match x {
        None | Some(Value::Null) => "(none)".to_owned(),
        Some(v) => v.to_string(),
    };
    let kept = |text: String| vec![Words { op: "=", text }];
    let mut out = Vec::new();
    for (part, v) in obj {
        match part.as_str() {
            "template" | "system" | "text" => {
                let runs = serde_json::from_value::<Vec<WordRun>>(v).unwrap_or_default();
                out.push(Part {
                    name: part,
                    runs: runs.into_iter().map(WordRun::into_words).collect(),
                });
            }
            "schema" => {
                for p in serde_json::from_value::<Vec<PathChange>>(v).unwrap_or_default() {
                    let path = if p.path.is_empty() { "/".to_owned() } else { p.path };
                    out.push(Part {
                        name: format!("schema {path}"),
                        runs: kept(format!("{} → {}", show(p.old.as_ref()), show(p.new.as_ref()))),
                    });
                }
            }
            _ => {
                for (name, f) in v.as_object().into_iter().flatten() {
                    out.push(Part {
                        name: name.clone(),
                        runs: kept(format!("{} → {}", f["old"], f["new"])),
                    });
                }
            }
        }
    }
    out
}

/// [`Words`] as [`detail`] writes it, read back.
#[derive(serde::Deserialize)]
struct WordRun {
    op: String,
    text: String,
}

impl WordRun {
    fn into_words(self) -> Words {
        let op = match self.op.as_str() {
            "-" => "-",
            "+" => "+",
            _ => "=",
        };
        Words { op, text: self.text }
    }
}

fn template_detail(a: &Map<String, Value>, b: &Map<String, Value>) -> Value {
    let text = |m: &Map<String, Value>| m.get("prompt").and_then(Value::as_str).unwrap_or("").to_owned();
    let mut out = Map::new();
    let (ta, tb) = (text(a), text(b));
    if ta != tb {
        out.insert("template".into(), json!(words(&ta, &tb)));
    }
    let null = Value::Null;
    let (sa, sb) = (a.get("schema").unwrap_or(&null), b.get("schema").unwrap_or(&null));
    if sa != sb {
        out.insert("schema".into(), json!(paths(sa, sb)));
    }
    let mut fields = Map::new();
    let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for name in names.into_iter().filter(|n| *n != "prompt" && *n != "schema") {
        if a.get(name) != b.get(name) {
            fields.insert(name.clone(), json!({"old": a.get(name), "new": b.get(name)}));
        }
    }
    if !fields.is_empty() {
        out.insert("fields".into(), Value::Object(fields));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn status_says_which_side_moved() {
        let base = map(&[("a", "1"), ("b", "1"), ("c", "1"), ("d", "1")]);
        let local = map(&[("a", "1"), ("b", "2"), ("c", "1"), ("d", "2"), ("e", "1")]);
        let live = map(&[("a", " 1 "), ("b", "1"), ("c", "3"), ("d", "3")]);
        let d = three_way(&base, &local, &live, |_| true);
        let st: Vec<(&str, Status)> = d.iter().map(|k| (k.key.as_str(), k.status)).collect();
        assert_eq!(
            st,
            [
                ("a", Status::Same),
                ("b", Status::Local),
                ("c", Status::Live),
                ("d", Status::Conflict),
                ("e", Status::Local)
            ]
        );
    }

    #[test]
    fn a_template_change_is_shown_by_words_schema_by_path_fields_by_name() {
        let old = r#"{"prompt": "Return a JSON array of terms.", "response-type": "json", "schema": {"type": "array", "items": {"type": "object", "properties": {"term": {"type": "string"}}}}}"#;
        let new = r#"{"prompt": "Return one JSON object per line.", "response-type": "jsonl", "schema": {"type": "object", "properties": {"term": {"type": "string"}}}}"#;
        let d = detail("template.x", Some(old), Some(new));
        assert_eq!(
            words_plain(
                &serde_json::from_value::<Vec<WordRun>>(d["template"].clone())
                    .unwrap()
                    .into_iter()
                    .map(WordRun::into_words)
                    .collect::<Vec<_>>()
            ),
            "Return [-a-]{+one+} JSON [-array of terms.-]{+object per line.+}"
        );
        let paths: Vec<&str> = d["schema"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths, ["/type", "/items", "/properties"]);
        assert_eq!(d["fields"]["response-type"], json!({"old": "json", "new": "jsonl"}));
    }

    #[test]
    fn review_lines_read_as_the_change() {
        let old = r#"{"prompt": "Return a JSON array.", "response-type": "json", "schema": {"type": "array"}}"#;
        let new = r#"{"prompt": "Return JSON lines.", "response-type": "jsonl", "schema": {"type": "object"}}"#;
        let lines: Vec<(String, String)> = review("template.x", Some(old), Some(new))
            .into_iter()
            .map(|p| (p.name, words_plain(&p.runs)))
            .collect();
        assert_eq!(
            lines,
            [
                (
                    "template".to_owned(),
                    "Return [-a -]JSON [-array.-]{+lines.+}".to_owned()
                ),
                ("schema /type".to_owned(), "\"array\" → \"object\"".to_owned()),
                ("response-type".to_owned(), "\"json\" → \"jsonl\"".to_owned()),
            ]
        );
        let added = review("template.y", None, Some(r#"{"prompt": "Hi"}"#));
        assert_eq!(added[0].name, "text");
        assert_eq!(words_plain(&added[0].runs), "{+{\"prompt\": \"Hi\"}+}");
    }
}
