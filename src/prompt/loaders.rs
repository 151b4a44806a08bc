//! What the TOML loader (`load`) and the TrustGraph one (`tg_load`) share: the
//! default prompt id and the wording of the messages both give, so a prompt
//! says the same thing whichever format it came in.

use serde_json::Value;

use crate::prompt::render::{Part, SyntaxError};

/// The warning for `object-schema` (TOML or TrustGraph JSON).
pub const OBJECT_SCHEMA_WARNING: &str = "`object-schema` is ignored by TrustGraph's loader (it reads only \
     `schema`), so no line is validated against it there, nor here; results list the lines it would reject; \
     rename it to `schema` to have them rejected (`migrate` writes `schema`)";

/// The warning for a `jsonl` prompt whose schema describes an array.
pub(crate) const JSONL_ARRAY_WARNING: &str =
    "response-type is jsonl but the schema describes an array; for jsonl the schema applies to each line's object";

/// The file stem of `label`: the default prompt id.
pub(crate) fn stem(label: &str) -> String {
    std::path::Path::new(label)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(label)
        .to_owned()
}

/// Does `schema` describe an array (a likely mistake for `jsonl`, whose
/// schema applies to each line)?
pub(crate) fn describes_array(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("array")
}

/// "template syntax error: … (template line N)".
pub(crate) fn syntax_cause(part: Part, e: &SyntaxError) -> String {
    let what = match part {
        Part::Prompt => "template",
        Part::System => "system template",
    };
    match e.line {
        Some(n) => format!("{what} syntax error: {} ({what} line {n})", e.detail),
        None => format!("{what} syntax error: {}", e.detail),
    }
}

/// serde_json's message without its " at line L column C" suffix.
pub(crate) fn json_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}
