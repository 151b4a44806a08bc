//! A response analysed by its response type: the one value every layer
//! above reads (runs, comparisons, tables, the report, the workbench).
//! Here, on the pure floor, so that `compare` reads it without reaching up
//! to `run`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::json::{self as json_out, JsonAnalysis, JsonSchemas};
use super::jsonl::{self, JsonlAnalysis};
use super::schema::CompiledSchema;

/// How a prompt's response is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ResponseType {
    /// Free text, returned as is.
    #[default]
    Text,
    /// One JSON value (TrustGraph's `json`).
    Json,
    /// One JSON object per line (TrustGraph's `jsonl`).
    Jsonl,
}

impl ResponseType {
    /// The word used in configs: `text`, `json`, `jsonl`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
            Self::Jsonl => "jsonl",
        }
    }

    /// Parse the config word; `None` for anything else.
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "text" => Some(Self::Text),
            "json" => Some(Self::Json),
            "jsonl" => Some(Self::Jsonl),
            _ => None,
        }
    }
}

impl fmt::Display for ResponseType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The analysis of a response by its response type.
#[derive(Debug, Clone, PartialEq)]
pub enum Analysis {
    /// Text: nothing to parse.
    Text,
    /// A JSON response.
    Json(Box<JsonAnalysis>),
    /// A JSONL response.
    Jsonl(JsonlAnalysis),
}

impl Analysis {
    /// Analyse `text` as `kind` against `schema` (read as Python's
    /// `jsonschema` reads it: a falsy schema validates nothing, one that
    /// does not compile rejects everything), for TrustGraph's service on
    /// `py`. It never fails: a schema that does not compile is TrustGraph's
    /// verdict too (every value rejected), not an error.
    pub fn of(kind: ResponseType, schema: Option<&Value>, text: &str, py: super::tg::TgPython) -> Self {
        match kind {
            ResponseType::Text => Self::Text,
            ResponseType::Json => {
                let schemas = JsonSchemas::compile_python(schema);
                let mut a = json_out::analyse(text, &schemas);
                let rejected = a.status == super::json::JsonStatus::SchemaInvalid;
                a.raises = super::tg::json_raises(text, schemas.whole.as_ref(), py, rejected);
                Self::Json(Box::new(a))
            }
            ResponseType::Jsonl => {
                let s = schema.and_then(CompiledSchema::compile_python);
                Self::Jsonl(jsonl::analyse_py(text.as_bytes(), s.as_ref(), py))
            }
        }
    }

    /// Items kept under the response type's semantics.
    pub fn items(&self) -> &[Value] {
        match self {
            Self::Text => &[],
            Self::Json(a) => &a.items,
            Self::Jsonl(a) => &a.items,
        }
    }

    /// The analysis shaped like `parse`'s data: `items`, `lines`, `status`,
    /// `salvaged`.
    pub fn data(&self, text: &str) -> Value {
        match self {
            Self::Text => json!({"response_type": "text", "items": [text], "status": "ok"}),
            Self::Json(a) => {
                let mut v = serde_json::to_value(a.as_ref()).unwrap_or(Value::Null);
                if let Value::Object(m) = &mut v {
                    m.insert("response_type".into(), "json".into());
                }
                v
            }
            Self::Jsonl(a) => {
                let status = if a.counts.invalid_json + a.counts.schema_invalid + a.counts.truncated == 0 {
                    "ok"
                } else if a.counts.truncated > 0 {
                    "truncated"
                } else {
                    "has_errors"
                };
                let mut v = json!({"response_type": "jsonl", "status": status, "items": a.items, "lines": a.lines, "counts": a.counts, "salvaged": []});
                if let Some(r) = a.raises {
                    v["raises"] = json!(r);
                }
                v
            }
        }
    }

    /// A small summary for session records and tables.
    pub fn summary(&self) -> Value {
        match self {
            Self::Text => json!({"response_type": "text"}),
            Self::Json(a) => json!({
                "response_type": "json", "status": a.status, "items": a.items.len(),
                "salvaged": a.salvaged.len(), "truncated": a.error.as_ref().is_some_and(|e| e.truncated),
            }),
            Self::Jsonl(a) => json!({"response_type": "jsonl", "items": a.items.len(), "counts": a.counts}),
        }
    }
}
