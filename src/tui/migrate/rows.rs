//! The Migrate tab's rows: what turning the selected JSON-array prompt into
//! JSONL changes (unified line diffs of template, system prompt and schema),
//! what one output line looks like, every template place the author must
//! check (with its line), and the schema parts that have no per-line form.
//! Built once per migration ([`rows`], kept in [`super::MigrateView`]) as
//! text and a kind; the view gives each kind its colour.

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::prompt::PromptConfig;
use crate::prompt::migrate::Migration;
use crate::tui::text;

/// What a row is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A section heading.
    Heading,
    /// A hunk header (`@@ -a,b +c,d @@`).
    Hunk,
    /// An unchanged line.
    Same,
    /// A line only the original has.
    Removed,
    /// A line only the migration has.
    Added,
    /// Plain text.
    Note,
    /// Something to check by hand.
    Flag,
    /// Something that was not converted.
    Bad,
    /// All is well.
    Good,
}

/// One row of the tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Its kind.
    pub kind: Kind,
    /// Its text (one line, no newline).
    pub text: String,
    /// Byte ranges of `text` that changed, word by word, against the line
    /// it replaces or is replaced by (a removed line paired with an added
    /// one): where the eye should go in a long line.
    pub changed: Vec<std::ops::Range<usize>>,
}

fn row(kind: Kind, text: impl Into<String>) -> Row {
    Row {
        kind,
        text: text.into(),
        changed: Vec::new(),
    }
}

fn pretty(v: Option<&Value>) -> String {
    v.map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
        .unwrap_or_default()
}

/// A unified line diff of `old` and `new` (three lines of context).
pub fn diff(old: &str, new: &str, out: &mut Vec<Row>) {
    if old == new {
        out.push(row(Kind::Note, rust_i18n::t!("tui.pane.unchanged").into_owned()));
        return;
    }
    let d = TextDiff::from_lines(old, new);
    let u = d.unified_diff();
    for hunk in u.iter_hunks() {
        out.push(row(Kind::Hunk, hunk.header().to_string()));
        let from = out.len();
        for c in hunk.iter_changes() {
            let (kind, sign) = match c.tag() {
                ChangeTag::Equal => (Kind::Same, ' '),
                ChangeTag::Delete => (Kind::Removed, '-'),
                ChangeTag::Insert => (Kind::Added, '+'),
            };
            let v = c.value();
            let v = v.strip_suffix('\n').unwrap_or(v);
            out.push(row(kind, format!("{sign}{}", text::clean(v))));
        }
        mark_words(&mut out[from..]);
    }
}

/// In each run of removed lines followed by as many added ones, mark the
/// words each pair changed.
fn mark_words(rows: &mut [Row]) {
    let mut i = 0;
    while i < rows.len() {
        let dels = rows[i..].iter().take_while(|r| r.kind == Kind::Removed).count();
        let adds = rows[i + dels..].iter().take_while(|r| r.kind == Kind::Added).count();
        if dels > 0 && dels == adds {
            for k in i..i + dels {
                let (a, b) = rows.split_at_mut(k + dels);
                let (old, new) = (&mut a[k], &mut b[0]);
                (old.changed, new.changed) = changed_words(&old.text[1..], &new.text[1..]);
            }
        }
        i += (dels + adds).max(1);
    }
}

/// The byte ranges (after the sign column) each side changed.
fn changed_words(old: &str, new: &str) -> (Vec<std::ops::Range<usize>>, Vec<std::ops::Range<usize>>) {
    let d = TextDiff::from_words(old, new);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut at_a, mut at_b) = (1, 1);
    for c in d.iter_all_changes() {
        let n = c.value().len();
        match c.tag() {
            ChangeTag::Equal => {
                at_a += n;
                at_b += n;
            }
            ChangeTag::Delete => {
                push_range(&mut a, at_a..at_a + n);
                at_a += n;
            }
            ChangeTag::Insert => {
                push_range(&mut b, at_b..at_b + n);
                at_b += n;
            }
        }
    }
    (a, b)
}

fn push_range(v: &mut Vec<std::ops::Range<usize>>, r: std::ops::Range<usize>) {
    match v.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => v.push(r),
    }
}

/// What one output line of the migrated prompt is: per `type` branch of a
/// union, or the single object shape, with required and other fields.
pub fn line_summary(schema: Option<&Value>) -> Vec<String> {
    let Some(schema) = schema else {
        return vec![rust_i18n::t!("tui.pane.line_any").into_owned()];
    };
    let branches: Vec<&Value> = ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array))
        .map_or_else(|| vec![schema], |a| a.iter().collect());
    let union = branches.len() > 1 || schema.get("oneOf").is_some();
    let mut out = Vec::new();
    if union {
        out.push(rust_i18n::t!("tui.pane.line_union", n = branches.len()).into_owned());
    } else {
        out.push(rust_i18n::t!("tui.pane.line_object").into_owned());
    }
    for b in branches {
        let props = b.get("properties").and_then(Value::as_object);
        let tag = props
            .and_then(|p| p.get("type"))
            .and_then(|t| t.get("const").or_else(|| t.get("enum").and_then(|e| e.get(0))))
            .and_then(Value::as_str);
        let required: Vec<&str> = b
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).filter(|n| *n != "type").collect())
            .unwrap_or_default();
        let optional: Vec<&str> = props
            .map(|p| {
                p.keys()
                    .map(String::as_str)
                    .filter(|k| *k != "type" && !required.contains(k))
                    .collect()
            })
            .unwrap_or_default();
        let mut parts = Vec::new();
        if let Some(t) = tag {
            parts.push(format!("type = {t:?}"));
        } else if union {
            parts.push(rust_i18n::t!("tui.pane.no_type_const").into_owned());
        }
        let required = if required.is_empty() {
            "-".into()
        } else {
            required.join(", ")
        };
        parts.push(rust_i18n::t!("tui.pane.required", fields = required).into_owned());
        if !optional.is_empty() {
            parts.push(rust_i18n::t!("tui.pane.optional", fields = optional.join(", ")).into_owned());
        }
        let line = format!("  {}", parts.join(" · "));
        out.push(line);
    }
    out
}

/// Every row of the tab for `src` and its migration.
pub fn rows(src: &PromptConfig, result: &Result<Migration, crate::prompt::migrate::NotJson>) -> Vec<Row> {
    let mut out = Vec::new();
    let m = match result {
        Ok(m) => m,
        Err(e) => {
            out.push(row(Kind::Bad, format!("✗ {e}")));
            return out;
        }
    };
    let new = &m.config;
    if m.unconvertible.is_empty() && m.flags.is_empty() {
        out.push(row(Kind::Good, rust_i18n::t!("tui.pane.migrate_clean").into_owned()));
    } else {
        out.push(row(
            if m.unconvertible.is_empty() {
                Kind::Flag
            } else {
                Kind::Bad
            },
            rust_i18n::t!(
                "tui.pane.migrate_summary",
                flags = m.flags.len(),
                unconvertible = m.unconvertible.len()
            )
            .into_owned(),
        ));
    }
    if !m.unconvertible.is_empty() {
        out.push(row(Kind::Heading, rust_i18n::t!("tui.pane.h_unconverted").into_owned()));
        for u in &m.unconvertible {
            let at = if u.pointer.is_empty() { "/" } else { &u.pointer };
            out.push(row(Kind::Bad, format!("✗ {at}: {}", u.message)));
        }
    }
    if !m.flags.is_empty() {
        out.push(row(Kind::Heading, rust_i18n::t!("tui.pane.h_flags").into_owned()));
        for f in &m.flags {
            out.push(row(Kind::Flag, format!("⚑ {} line {}: {}", f.part, f.line, f.message)));
        }
    }
    out.push(row(Kind::Heading, rust_i18n::t!("tui.pane.h_line").into_owned()));
    if new.schema.is_none() && src.schema.is_some() {
        out.push(row(Kind::Bad, rust_i18n::t!("tui.pane.no_line_schema").into_owned()));
    } else {
        out.extend(
            line_summary(new.schema.as_ref())
                .into_iter()
                .map(|l| row(Kind::Note, l)),
        );
    }
    out.push(row(Kind::Heading, rust_i18n::t!("tui.pane.h_template").into_owned()));
    diff(&src.template, &new.template, &mut out);
    out.push(row(Kind::Heading, rust_i18n::t!("tui.pane.h_system").into_owned()));
    diff(&src.system, &new.system, &mut out);
    out.push(row(Kind::Heading, rust_i18n::t!("tui.pane.h_schema").into_owned()));
    diff(&pretty(src.schema.as_ref()), &pretty(new.schema.as_ref()), &mut out);
    if src.description != new.description {
        out.push(row(Kind::Heading, rust_i18n::t!("tui.pane.h_description").into_owned()));
        diff(&src.description, &new.description, &mut out);
    }
    out
}
