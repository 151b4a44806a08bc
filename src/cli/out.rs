//! The headless output contract (see the design sketch and seed 004).
//!
//! Default: JSONL — a preamble line `{"_format":"jsonl","_schema":
//! "cutline.<command>/1","_version":1}`, then one record per line, each
//! flushed as produced. `--output json` (alias `--no-stream`): one envelope
//! `{"ok","data","error","warnings","meta"}`. `--output pretty`: for people.

use std::io::{self, Write};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value, json};

/// How a data command prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// One JSON record per line after a preamble line (the default).
    #[default]
    Jsonl,
    /// One buffered envelope: `{"ok","data","error","warnings","meta"}`.
    Json,
    /// Human-readable text.
    Pretty,
}

/// Error categories scripts can branch on, with their exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Bad command-line use.
    Usage,
    /// A prompt config, schema or template that does not load.
    ConfigInvalid,
    /// An input file that cannot be read.
    InputError,
    /// A provider failed (network, HTTP status, stream).
    ProviderError,
    /// Structured output did not match its schema.
    StructuredOutputInvalid,
    /// The local model is needed but not installed.
    SetupRequired,
    /// A check ran and found a difference (`migrate --check`).
    CheckFailed,
    /// `migrate` of a prompt whose schema is neither an array nor an object
    /// of arrays: one object is a different contract than a list of lines.
    Unconvertible,
    /// The run was cut by SIGINT or SIGTERM (what arrived is kept and
    /// recorded).
    Interrupted,
    /// `eval --batch`: batches are still running when the wait ran out;
    /// the same command again collects them.
    BatchPending,
    /// `tg push` / `tg undo`: the live config changed since the pull (or
    /// since the push being undone); nothing was written.
    Conflict,
    /// A TrustGraph gateway that cannot be reached, stalls, refuses the
    /// token or answers with an error.
    DeploymentError,
    /// Anything else.
    Internal,
}

impl Category {
    /// The process exit code for this category (documented in the README).
    pub fn exit_code(self) -> i32 {
        match self {
            Self::Usage => 2,
            Self::ConfigInvalid => 3,
            Self::InputError => 4,
            Self::ProviderError => 5,
            Self::StructuredOutputInvalid => 6,
            Self::SetupRequired => 7,
            Self::CheckFailed => 8,
            Self::Unconvertible => 9,
            Self::Interrupted => crate::run::interrupt::EXIT_CODE,
            Self::BatchPending => 10,
            Self::Conflict => 11,
            Self::DeploymentError => 12,
            Self::Internal => 1,
        }
    }
}

/// A failure with its category and a message for a person.
#[derive(Debug, Clone)]
pub struct CliError {
    /// What kind of failure.
    pub category: Category,
    /// What happened, naming the file, line and cause where there is one.
    pub message: String,
    /// Extra machine-readable detail.
    pub detail: Option<Value>,
    /// The typed error it came from, kept for whoever walks the chain (a
    /// library caller, the log); the edge prints `message`, which already
    /// says it.
    pub source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

impl CliError {
    /// A new error.
    pub fn new(category: Category, message: impl Into<String>) -> Self {
        Self {
            category,
            message: message.into(),
            detail: None,
            source: None,
        }
    }

    /// An error of `category` from the typed error `e`, kept as its source.
    pub fn caused(category: Category, e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            source: Some(std::sync::Arc::new(e)),
            ..Self::new(category, String::new())
        }
        .said()
    }

    /// This error with `e` kept as its source: `message` (its own words)
    /// already says what `e` says, and is what the edge prints.
    #[must_use]
    pub fn because(mut self, e: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(std::sync::Arc::new(e));
        self
    }

    /// `message` from the cause, when none was given.
    fn said(mut self) -> Self {
        if self.message.is_empty()
            && let Some(c) = &self.source
        {
            self.message = c.to_string();
        }
        self
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// A session reference that could not be followed is the input's fault.
impl From<crate::session::SessionError> for CliError {
    fn from(e: crate::session::SessionError) -> Self {
        Self::caused(Category::InputError, e)
    }
}

/// A run whose prompt snapshot does not rebuild: the recorded config is
/// invalid.
impl From<crate::session::SnapshotError> for CliError {
    fn from(e: crate::session::SnapshotError) -> Self {
        Self::caused(Category::ConfigInvalid, e)
    }
}

impl From<crate::eval::inputs::InputsError> for CliError {
    fn from(e: crate::eval::inputs::InputsError) -> Self {
        Self::caused(Category::InputError, e)
    }
}

/// A providers file (`cutline.toml`) that does not load.
impl From<crate::llm::config::ProvidersFileError> for CliError {
    fn from(e: crate::llm::config::ProvidersFileError) -> Self {
        Self::caused(Category::ConfigInvalid, e)
    }
}

/// A prompt that does not load or render (`file:line:col: cause`).
impl From<crate::prompt::ConfigError> for CliError {
    fn from(e: crate::prompt::ConfigError) -> Self {
        Self::caused(Category::ConfigInvalid, e)
    }
}

/// A run that could not start: its prompt does not render.
impl From<crate::run::StartError> for CliError {
    fn from(e: crate::run::StartError) -> Self {
        Self::caused(Category::ConfigInvalid, e)
    }
}

/// An eval whose prompts do not render on an input.
impl From<crate::eval::engine::PlanError> for CliError {
    fn from(e: crate::eval::engine::PlanError) -> Self {
        Self::caused(Category::ConfigInvalid, e)
    }
}

/// A replay with no recording of the request: `provider_error` (replay
/// is the provider that cannot answer), its message naming the nearest
/// recording, what differs and the ways out; `detail.replay` says the same
/// for an agent. A prompt that does not render: `config_invalid`.
impl From<crate::run::target::ReplayError> for CliError {
    fn from(e: crate::run::target::ReplayError) -> Self {
        use crate::run::recorded::NoRecording;
        use crate::run::target::ReplayError;
        match e {
            ReplayError::Start(e) => e.into(),
            ReplayError::NoRecording(n) => {
                let detail = match n.as_ref() {
                    NoRecording::Unrecorded { prompt_id, .. } => {
                        serde_json::json!({"replay": {"prompt_id": prompt_id, "nearest": null}})
                    }
                    NoRecording::Differs {
                        prompt_id,
                        nearest,
                        nearest_prompt,
                        same_input,
                        source: difference,
                        ..
                    } => serde_json::json!({"replay": {
                        "prompt_id": prompt_id,
                        "nearest": nearest,
                        "nearest_prompt": nearest_prompt,
                        "same_input": same_input,
                        "differs": difference.to_string(),
                    }}),
                };
                let mut err = Self::new(Category::ProviderError, n.to_string()).because(*n);
                err.detail = Some(detail);
                err
            }
        }
    }
}

/// A provider failure: `setup_required` when the local model is missing,
/// `interrupted` when a signal cut the run, else `provider_error`. The
/// message is the error's own words and HTTP status; its kind is the
/// category's business, not a label in the text (`BadRequest:`).
impl From<&crate::llm::LlmError> for CliError {
    fn from(e: &crate::llm::LlmError) -> Self {
        use crate::llm::ErrorKind;
        let category = match e.kind {
            ErrorKind::SetupRequired => Category::SetupRequired,
            ErrorKind::Cancelled => Category::Interrupted,
            _ => Category::ProviderError,
        };
        let message = match e.status {
            Some(status) => format!("HTTP {status}: {}", e.message),
            None => e.message.clone(),
        };
        Self::new(category, message)
    }
}

impl From<crate::llm::LlmError> for CliError {
    fn from(e: crate::llm::LlmError) -> Self {
        Self::from(&e)
    }
}

/// A batch manifest beside a session that does not read or write.
impl From<crate::eval::batch::ManifestError> for CliError {
    fn from(e: crate::eval::batch::ManifestError) -> Self {
        Self::caused(Category::InputError, e)
    }
}

/// The batch answers file beside a session that does not read or write.
impl From<crate::eval::batch::AnswersError> for CliError {
    fn from(e: crate::eval::batch::AnswersError) -> Self {
        Self::caused(Category::InputError, e)
    }
}

/// An eval engine failure: output that does not write, a batch API that
/// fails (the provider's category, its API named), a batch file that
/// does not read.
impl From<crate::eval::engine::ExecError> for CliError {
    fn from(e: crate::eval::engine::ExecError) -> Self {
        use crate::eval::batch::BatchError;
        use crate::eval::engine::ExecError;
        match e {
            ExecError::Io(e) => crate::cli::io_err(e),
            ExecError::Batch(BatchError::Provider { api, source }) => {
                let mut err = Self::from(&source);
                err.message = format!("{api}: {}", err.message);
                err
            }
            ExecError::Batch(e) => Self::new(Category::InputError, e.to_string()),
            ExecError::Runtime(e) => Self::new(Category::Internal, e),
        }
    }
}

/// A TrustGraph deployment that failed: a bad URL is usage, the rest is
/// `deployment_error`.
impl From<crate::tg::TgError> for CliError {
    fn from(e: crate::tg::TgError) -> Self {
        let category = match e {
            crate::tg::TgError::Url { .. } => Category::Usage,
            _ => Category::DeploymentError,
        };
        Self::new(category, e.to_string())
    }
}

/// A pulled directory that does not read: its file's content is a config
/// error, the rest input errors.
impl From<crate::tg::local::LocalError> for CliError {
    fn from(e: crate::tg::local::LocalError) -> Self {
        use crate::tg::local::LocalError;
        let category = match e {
            LocalError::Content(_) => Category::ConfigInvalid,
            LocalError::NotPulled { .. } => Category::Usage,
            LocalError::Io { .. } | LocalError::NotRegular { .. } => Category::InputError,
        };
        Self::new(category, e.to_string())
    }
}

/// A push or undo that did not write, by why.
impl From<crate::tg::push::PushError> for CliError {
    fn from(e: crate::tg::push::PushError) -> Self {
        use crate::tg::push::PushError;
        match e {
            PushError::Local(e) => e.into(),
            PushError::Tg(e) => e.into(),
            PushError::Elsewhere { .. } | PushError::NothingToUndo { .. } => Self::new(Category::Usage, e.to_string()),
            PushError::Moved { .. } | PushError::ChangedSince { .. } => Self::new(Category::Conflict, e.to_string()),
            PushError::Refused { ref problems } => {
                let detail = problems
                    .iter()
                    .map(|(k, why)| serde_json::json!({"key": k, "reason": why}))
                    .collect::<Vec<_>>();
                let mut err = Self::new(Category::ConfigInvalid, e.to_string());
                err.detail = Some(serde_json::json!({"refused": detail}));
                err
            }
            PushError::ReadBack { .. } => Self::new(Category::DeploymentError, e.to_string()),
        }
    }
}

/// A line for people on stderr, `prefix: message`, the message sanitised
/// for the terminal ([`crate::term::clean_text`]): an error body's escape
/// sequences are shown, never acted on.
pub fn say(prefix: &str, message: &str) {
    eprintln!("{prefix}: {}", crate::term::clean_text(message));
}

/// Writes one command's output in the chosen format.
pub struct Out<W: Write> {
    w: W,
    format: Format,
    command: &'static str,
    started: Instant,
    warnings: Vec<String>,
    preamble_done: bool,
    /// The envelope was already written by [`Out::envelope`]; the result of
    /// that write, handed back by [`Out::finish`].
    written: Option<io::Result<()>>,
    /// Reused serialisation buffer: each record or envelope reaches `w` in
    /// one `write_all`, not as serde's many small writes.
    buf: Vec<u8>,
}

/// The success envelope, serialised straight from borrowed parts (the same
/// bytes as the `json!` value [`Out::finish`] used to build).
#[derive(Serialize)]
struct Envelope<'a, T: Serialize + ?Sized> {
    ok: bool,
    data: &'a T,
    error: Option<()>,
    warnings: &'a [String],
    meta: Value,
}

impl<W: Write> Out<W> {
    /// Output for `command` (its schema name is `cutline.<command>/1`).
    pub fn new(w: W, format: Format, command: &'static str) -> Self {
        Self {
            w,
            format,
            command,
            started: Instant::now(),
            warnings: Vec::new(),
            preamble_done: false,
            written: None,
            buf: Vec::new(),
        }
    }

    /// The chosen format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Note a warning (a JSONL record, an envelope entry, or a stderr line).
    pub fn warn(&mut self, message: impl Into<String>) -> io::Result<()> {
        let message = message.into();
        match self.format {
            Format::Jsonl => self.record(&json!({"type": "warning", "message": message}))?,
            Format::Pretty => say(&rust_i18n::t!("pretty.warning"), &message),
            Format::Json => {}
        }
        self.warnings.push(message);
        Ok(())
    }

    fn preamble(&mut self) -> io::Result<()> {
        if !self.preamble_done {
            self.preamble_done = true;
            let p = json!({"_format": "jsonl", "_schema": format!("cutline.{}/1", self.command), "_version": 1});
            self.write_line(&p)?;
        }
        Ok(())
    }

    /// Serialise `v` and a newline into the buffer, then write it in one go.
    fn write_line<T: Serialize + ?Sized>(&mut self, v: &T) -> io::Result<()> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, v)?;
        self.buf.push(b'\n');
        let res = self.w.write_all(&self.buf);
        // Do not keep a huge envelope's buffer around for the small records.
        if self.buf.capacity() > 1 << 20 {
            self.buf = Vec::new();
        }
        res
    }

    /// Emit one JSONL record (only in JSONL mode), flushed at once.
    pub fn record<T: Serialize + ?Sized>(&mut self, rec: &T) -> io::Result<()> {
        if self.format != Format::Jsonl {
            return Ok(());
        }
        self.preamble()?;
        self.write_line(rec)?;
        self.w.flush()
    }

    /// Write human text (only in pretty mode), sanitised for the terminal
    /// ([`crate::term::clean_text`]): a model's escape sequences are shown,
    /// never acted on.
    pub fn pretty(&mut self, text: &str) -> io::Result<()> {
        if self.format == Format::Pretty {
            let text = crate::term::clean_text(text);
            self.w.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                self.w.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    fn meta(&self) -> Value {
        json!({
            "command": self.command,
            "schema": format!("cutline.{}/1", self.command),
            "version": env!("CARGO_PKG_VERSION"),
            "duration_ms": u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// Print `data` as pretty JSON, outside the contract (the manifest).
    pub fn raw(&mut self, data: &Value) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut self.w, data)?;
        self.w.write_all(b"\n")?;
        self.w.flush()
    }

    /// In JSON mode, write the success envelope now, serialising `data`
    /// directly (no `Value` tree is built); the command then returns any
    /// value, which [`Out::finish`] ignores, handing back this write's
    /// result instead. The bytes are exactly what `finish` prints for
    /// `serde_json::to_value(data)`. Other formats: nothing.
    pub fn envelope<T: Serialize + ?Sized>(&mut self, data: &T) {
        if self.format != Format::Json || self.written.is_some() {
            return;
        }
        let res = self.write_ok(data);
        self.written = Some(res);
    }

    /// Write the success envelope around `data`.
    fn write_ok<T: Serialize + ?Sized>(&mut self, data: &T) -> io::Result<()> {
        let env = Envelope {
            ok: true,
            data,
            error: None,
            warnings: &self.warnings,
            meta: self.meta(),
        };
        // Streamed through a buffer: an envelope as large as the data is
        // never held whole (`parse` of a 300 MB array).
        let mut w = io::BufWriter::with_capacity(1 << 16, &mut self.w);
        serde_json::to_writer(&mut w, &env)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// Finish successfully: the envelope in JSON mode (`data`, unless
    /// [`Out::envelope`] already wrote it), a preamble at least in JSONL
    /// mode (so an empty result is still well-formed).
    pub fn finish(mut self, data: &Value) -> io::Result<()> {
        match self.format {
            Format::Json => match self.written.take() {
                Some(res) => res?,
                None => self.write_ok(data)?,
            },
            Format::Jsonl => self.preamble()?,
            Format::Pretty => {}
        }
        self.w.flush()
    }

    /// Finish with an error: envelope `ok:false`, a JSONL error record, or a
    /// line on stderr for people.
    pub fn fail(mut self, err: &CliError) -> io::Result<()> {
        let mut error = Map::new();
        error.insert(
            "category".into(),
            serde_json::to_value(err.category).unwrap_or(Value::Null),
        );
        error.insert("message".into(), Value::String(err.message.clone()));
        if let Some(d) = &err.detail {
            error.insert("detail".into(), d.clone());
        }
        match self.format {
            Format::Json => {
                let env =
                    json!({"ok": false, "data": null, "error": error, "warnings": self.warnings, "meta": self.meta()});
                serde_json::to_writer(&mut self.w, &env)?;
                self.w.write_all(b"\n")?;
            }
            Format::Jsonl => {
                let mut rec = Map::new();
                rec.insert("type".into(), Value::String("error".into()));
                rec.extend(error);
                self.record(&Value::Object(rec))?;
                say("error", &err.message);
            }
            Format::Pretty => say(&rust_i18n::t!("pretty.error"), &err.message),
        }
        self.w.flush()
    }
}
