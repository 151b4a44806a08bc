//! Prompt configs: one `PromptConfig` from three formats (cutline TOML,
//! TrustGraph single-prompt JSON, TrustGraph config bundle), exported back to
//! TrustGraph's formats, and rendered with minijinja. Pure: callers hand in
//! bytes and a label for error messages; nothing here touches the disk.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub mod error;
pub mod ibis;
mod ibis_filters;
pub mod load;
mod loaders;
pub mod migrate;
pub mod params;
mod pyfmt;
pub mod render;
pub mod sidecar;
pub mod tg_export;
pub mod tg_load;
pub mod tg_reload;
mod toml_check;
mod toml_out;
pub mod trustgraph;

pub use error::{ConfigError, Warning};
pub use ibis::{IbisError, ibis_check};
pub use load::{load_bytes, load_bytes_for, load_toml};
pub use migrate::{Flag, Migration, Unconvertible, migrate};
pub use render::{Rendered, Undefined, input_vars, render, render_with};
pub use tg_load::{DEFAULT_SYSTEM, TgLoader};
pub use toml_out::to_toml;
pub use trustgraph::{to_trustgraph_bundle, to_trustgraph_prompt};

pub use crate::output::ResponseType;

/// Which file format a prompt came from (and is saved back to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SourceFormat {
    /// cutline's own TOML, one prompt per file.
    #[default]
    Toml,
    /// A TrustGraph single-prompt JSON object.
    TrustgraphPrompt,
    /// One `template.<id>` entry of a TrustGraph config-store bundle (every
    /// value a JSON-encoded string, as `tg-show-config` dumps it).
    TrustgraphBundle,
    /// One `template.<id>` entry of a TrustGraph configurator `config.json`
    /// (raw JSON values, as the template seeder reads them).
    TrustgraphConfig,
}

impl SourceFormat {
    /// The word `cutline prompts` shows for the shape a prompt came from.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Toml => "toml",
            Self::TrustgraphPrompt => "trustgraph-prompt",
            Self::TrustgraphBundle => "config-store",
            Self::TrustgraphConfig => "configurator",
        }
    }
}

/// Check that `id` is a name, never a path: ids become file names (sessions,
/// `migrate --write` defaults) and `path#id` references, so `../x`, `/x`
/// and separators are refused where the prompt is loaded.
pub fn check_id(id: &str) -> Result<(), IdError> {
    let why = if id.trim().is_empty() {
        IdWhy::Empty
    } else if id.contains(['/', '\\']) {
        IdWhy::Separator
    } else if id.starts_with('.') {
        IdWhy::Dot
    } else if id.chars().any(char::is_control) {
        IdWhy::Control
    } else if id.contains('#') {
        IdWhy::Hash
    } else {
        return Ok(());
    };
    Err(IdError { id: id.to_owned(), why })
}

/// A prompt id that is not a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{id:?} is not a prompt id: {why} (an id is a name, never a path)")]
pub struct IdError {
    /// The id as given.
    pub id: String,
    /// What is wrong with it.
    pub why: IdWhy,
}

/// Why an id is not a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdWhy {
    /// Empty or blank.
    #[error("it is empty")]
    Empty,
    /// `/` or a backslash.
    #[error("it holds a path separator")]
    Separator,
    /// A leading `.` (`..`, hidden files).
    #[error("it starts with `.`")]
    Dot,
    /// A control character.
    #[error("it holds a control character")]
    Control,
    /// `#`, the separator of `path#id` references.
    #[error("it holds `#`, which separates a file from an id in a prompt reference")]
    Hash,
}

/// Where a prompt was loaded from, for error messages and saving back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Origin {
    /// The file's path as given (a label; `output/` and `prompt/` do no IO).
    pub file: String,
    /// Its format.
    pub format: SourceFormat,
    /// File line of the prompt template's first line, when the format keeps
    /// template lines as file lines (TOML); render errors then name the file line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_line: Option<usize>,
    /// File line of the system template's first line, as for `template_line`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_line: Option<usize>,
    /// For a bundle entry: whether the bundle has a `template-index`
    /// (TrustGraph ≤ 2.7) or not (2.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexed: Option<bool>,
    /// For a single TrustGraph prompt, which carries no system of its own:
    /// where the workspace system it renders with came from (`--system
    /// FILE`, or the bundle beside it). Saving never writes that system into
    /// the prompt's file: it is the workspace's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_from: Option<String>,
}

/// A named sample input: variables to render the prompt with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleInput {
    /// Name, e.g. `photosynthesis` or `ja-tea`.
    pub name: String,
    /// Variables (usually `text`).
    pub vars: Map<String, Value>,
}

/// One prompt, whatever format it came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PromptConfig {
    /// Id: the TOML `id`, the file stem, or the bundle's template id.
    pub id: String,
    /// What the prompt is for.
    pub description: String,
    /// System template (may be empty).
    pub system: String,
    /// The prompt template (TrustGraph's `prompt`).
    pub template: String,
    /// How the response is read.
    pub response_type: ResponseType,
    /// JSON Schema: of the whole value for `json`, of each line for `jsonl`.
    pub schema: Option<Value>,
    /// A per-line schema under `object-schema`, which TrustGraph's loader
    /// ignores (it reads only `schema`): kept so results can say which
    /// lines it would reject, never applied, exactly as in production.
    pub object_schema: Option<Value>,
    /// Stop sequences sent with the request.
    pub stop: Vec<String>,
    /// Generation settings (cutline TOML only): the prompt's level of the
    /// run precedence.
    pub params: params::RunParams,
    /// Prompt terms: variables with defaults, below input variables.
    pub variables: Map<String, Value>,
    /// Named sample inputs.
    pub inputs: Vec<SampleInput>,
    /// Id of the prompt's twin in the other response type (JSON array ↔ JSONL).
    pub twin: Option<String>,
    /// Where it came from.
    pub origin: Origin,
}
