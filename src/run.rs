//! One run, end to end: render the prompt, stream it through a provider,
//! analyse the response as its response type, check structured output, and
//! record the run in a session. Shared by `cutline run`, `replay`, `eval` and
//! the workbench.

use serde_json::{Map, Value, json};

use crate::llm::structured::{self, Path};
use crate::llm::{self, Event, FinishReason, Provider, Request, Transcript};
use crate::output::json::{self as json_out, JsonAnalysis, JsonSchemas};
use crate::output::jsonl::{self, JsonlAnalysis};
use crate::output::schema::CompiledSchema;
use crate::prompt::{PromptConfig, ResponseType};
use crate::session::{Params, Recorder, RunRecord, now_ms};

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The prompt.
    pub prompt: PromptConfig,
    /// Variables (sample input merged with overrides).
    pub vars: Map<String, Value>,
    /// Max-token limit (`None`: none).
    pub max_tokens: Option<u32>,
    /// Temperature (`None`: 0, for reproducible runs).
    pub temperature: Option<f32>,
    /// Structured output: `None` off; otherwise the path to take.
    pub structured: Option<Path>,
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
    /// Analyse `text` as `kind` against `schema`.
    pub fn of(
        kind: ResponseType,
        schema: Option<&Value>,
        text: &str,
    ) -> Result<Self, crate::output::schema::SchemaCompileError> {
        Ok(match kind {
            ResponseType::Text => Self::Text,
            ResponseType::Json => Self::Json(Box::new(json_out::analyse(text, &JsonSchemas::compile(schema)?))),
            ResponseType::Jsonl => {
                let s = schema.map(CompiledSchema::compile).transpose()?;
                Self::Jsonl(jsonl::analyse(text.as_bytes(), s.as_ref()))
            }
        })
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
                json!({"response_type": "jsonl", "status": status, "items": a.items, "lines": a.lines, "counts": a.counts, "salvaged": []})
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

/// A finished run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The record (also written to the session, when recording).
    pub record: RunRecord,
    /// The analysis.
    pub analysis: Analysis,
    /// The structured value, when structured output succeeded.
    pub parsed: Option<Value>,
    /// Why structured output failed, when it did.
    pub structured_error: Option<Box<structured::StructuredOutputInvalid>>,
}

/// Why a run could not start.
#[derive(Debug, Clone)]
pub enum StartError {
    /// The prompt does not render or its schema does not compile.
    Config(String),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Config(m) => f.write_str(m),
        }
    }
}

/// Build the provider request for a spec; returns it with the structured
/// path actually taken.
pub fn request(spec: &Spec) -> Result<(Request, Path), StartError> {
    let rendered =
        crate::prompt::render(&spec.prompt, &Map::new(), &spec.vars).map_err(|e| StartError::Config(e.to_string()))?;
    let mut req = Request {
        system: rendered.system,
        prompt: rendered.prompt,
        max_tokens: spec.max_tokens,
        stop: spec.prompt.stop.clone(),
        temperature: Some(spec.temperature.unwrap_or(0.0)),
        response_schema: None,
    };
    let path = match (spec.structured, spec.prompt.response_type, &spec.prompt.schema) {
        // A per-line schema has no native form: no structured path.
        (Some(_), ResponseType::Jsonl | ResponseType::Text, _) | (None | Some(Path::None), _, _) | (_, _, None) => {
            Path::None
        }
        (Some(Path::Prompt), ResponseType::Json, Some(schema)) => {
            req.system = structured::augment_system(&req.system, schema);
            Path::Prompt
        }
        (Some(_), ResponseType::Json, Some(schema)) => {
            req.response_schema = Some(schema.clone());
            Path::Native
        }
    };
    Ok((req, path))
}

/// Snapshot of a prompt config for the session record.
pub fn snapshot(p: &PromptConfig) -> Value {
    let mut v = crate::prompt::to_trustgraph_prompt(p);
    if let Value::Object(m) = &mut v {
        m.insert("id".into(), p.id.clone().into());
        m.insert("system".into(), p.system.clone().into());
        m.insert("stop".into(), json!(p.stop));
    }
    v
}

/// Run `spec` on `provider`, calling `on_event` as events arrive, and
/// record it in `recorder` when given.
pub async fn execute(
    provider: &dyn Provider,
    spec: &Spec,
    recorder: Option<&mut Recorder>,
    on_event: impl FnMut(&Event, &Transcript),
) -> Result<Outcome, StartError> {
    let (req, path) = request(spec)?;
    let started_ms = now_ms();
    let stream = provider.stream(req.clone());
    let transcript = llm::collect(stream, on_event).await;
    finish(provider.info(), spec, &req, path, started_ms, &transcript, recorder)
}

/// Analyse and record a transcript (also used for replays).
pub fn finish(
    info: llm::ProviderInfo,
    spec: &Spec,
    req: &Request,
    path: Path,
    started_ms: u64,
    t: &Transcript,
    recorder: Option<&mut Recorder>,
) -> Result<Outcome, StartError> {
    let p = &spec.prompt;
    let analysis = Analysis::of(p.response_type, p.schema.as_ref(), &t.text)
        .map_err(|e| StartError::Config(format!("prompt {:?}: {e}", p.id)))?;
    let (parsed, structured_error) = match (path, &p.schema) {
        (Path::Native | Path::Prompt, Some(schema)) if t.finish != Some(FinishReason::Error) => {
            match structured::check(&t.text, schema) {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(e)),
            }
        }
        _ => (None, None),
    };
    let mut record = RunRecord {
        kind: "run".into(),
        run_id: String::new(),
        started_ms,
        prompt_id: p.id.clone(),
        response_type: p.response_type.to_string(),
        prompt: snapshot(p),
        system: req.system.clone(),
        rendered: req.prompt.clone(),
        variables: spec.vars.clone(),
        provider: info,
        params: Params {
            max_tokens: spec.max_tokens,
            temperature: req.temperature,
            stop: req.stop.clone(),
        },
        text: t.text.clone(),
        pieces: t.pieces.clone(),
        finish: t.finish.unwrap_or(FinishReason::Error),
        raw_reason: t.raw_reason.clone(),
        usage: t.usage,
        error: t.error.clone(),
        first_token_ms: t.first_token_ms,
        total_ms: t.total_ms,
        structured_path: match path {
            Path::Native => "native",
            Path::Prompt => "prompt",
            Path::None => "none",
        }
        .into(),
        analysis: analysis.summary(),
    };
    if let Some(rec) = recorder {
        record.run_id = rec.next_run_id();
        if let Err(e) = rec.record(&record) {
            tracing_warn(&format!("could not record the run in {}: {e}", rec.path().display()));
        }
    }
    Ok(Outcome {
        record,
        analysis,
        parsed,
        structured_error,
    })
}

fn tracing_warn(msg: &str) {
    eprintln!("warning: {msg}");
}
