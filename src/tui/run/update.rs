//! Runs: starting one (single, twins, a continuation), cancelling, and folding in what the runner reports.

use std::sync::Arc;

use super::{Origin, Phase, Prefill, RunEnd, RunJob, RunMsg, RunView, Shown, Source, Target};
use crate::llm::FinishReason;
use crate::llm::params::Structured;
use crate::llm::structured::Path as StructuredPath;
use crate::prompt::{PromptConfig, ResponseType};
use crate::run::Spec;
use crate::tui::Effect;
use crate::tui::choice::ProviderChoice;
use crate::tui::component::Nav;
use crate::tui::runs::{prompt_of_record, reference};
use crate::tui::state::{OutPane, State, Tab};

pub(in crate::tui) fn new_job(s: &mut State, prompt: &PromptConfig, source: Source) -> (RunView, Effect) {
    let schemas = Arc::new(super::schemas_for(prompt));
    let id = s.next_id;
    s.next_id += 1;
    let provider = match source {
        Source::Recording { .. } => ProviderChoice::Replay,
        Source::Prompt(_) => s.provider.clone(),
    };
    let mut view = RunView::starting(id, prompt, schemas.clone(), provider.label(), s.max_tokens);
    view.tg_python = s.tg_python;
    view.started_ms = s.clock_ms;
    view.origin = Some(Arc::new(Origin {
        provider: provider.clone(),
        source: source.clone(),
    }));
    let job = RunJob {
        id,
        provider,
        source,
        schemas,
        max_tokens: s.max_tokens,
        tg_python: s.tg_python,
        sessions_dir: s.sessions_dir.clone(),
        prefill: Prefill::default(),
    };
    (view, Effect::Start(Box::new(job)))
}

pub(in crate::tui) fn spec(s: &State, prompt: PromptConfig, vars: serde_json::Map<String, serde_json::Value>) -> Spec {
    let mut spec = Spec::new(prompt, vars).limit(s.max_tokens);
    spec.tg_python = s.tg_python;
    spec.cli.structured = s.structured.map(|p| match p {
        StructuredPath::Native | StructuredPath::NativeWrapped | StructuredPath::Grammar => Structured::Native,
        StructuredPath::Prompt => Structured::Prompt,
        StructuredPath::None => Structured::Off,
    });
    spec
}

/// Structured output: off → native → prompt → off.
pub(in crate::tui) fn cycle_structured(s: &mut State) {
    s.structured = match s.structured {
        None => Some(StructuredPath::Native),
        Some(StructuredPath::Native) => Some(StructuredPath::Prompt),
        Some(_) => None,
    };
    s.info(rust_i18n::t!("tui.msg.structured", mode = s.structured_label()));
}

/// `c`: run the selected prompt again from the answer on show: a JSONL
/// answer the limit cut, or any answer the provider left incomplete with
/// its continuation token (Gemini's), as `run --continue` goes on. The new
/// run resends the token when there is one, else starts from the text (its
/// complete lines, for a provider that cannot prefill), under the same
/// limit.
pub(in crate::tui) fn continue_run(s: &mut State) -> Vec<Effect> {
    let Some(Shown::Single(r)) = &s.shown else {
        s.info(rust_i18n::t!("tui.status.continue_what").into_owned());
        return Vec::new();
    };
    let cut = r.finish == Some(FinishReason::Length) && r.response_type == ResponseType::Jsonl;
    let resumable = r
        .finish
        .is_some_and(|f| crate::run::continuation::resumable(f, r.continuation_token.as_deref()));
    if r.live() || !(cut || resumable) {
        s.info(rust_i18n::t!("tui.status.continue_what").into_owned());
        return Vec::new();
    }
    let prefill = Prefill {
        text: r.text.clone(),
        token_ids: r.token_ids.clone(),
        continuation_token: r.continuation_token.clone(),
    };
    let prompt_id = r.prompt_id.clone();
    let mut out = run(s);
    let started = out.iter_mut().find_map(|e| match e {
        Effect::Start(job) => Some(job),
        _ => None,
    });
    match started {
        Some(job) if matches!(&s.shown, Some(Shown::Single(v)) if v.prompt_id == prompt_id) => {
            job.prefill = prefill;
            if let Some(Shown::Single(v)) = &mut s.shown {
                v.continues = true;
            }
            let says = if resumable {
                rust_i18n::t!("tui.status.resuming")
            } else {
                rust_i18n::t!("tui.status.continuing")
            };
            s.info(says.into_owned());
        }
        Some(_) => {
            s.info(rust_i18n::t!("tui.status.continue_what").into_owned());
            return s.cancel_live();
        }
        None => {}
    }
    out
}

/// Start one run of `prompt` from `source` in place of what is on show.
fn start_single(s: &mut State, prompt: &PromptConfig, source: Source, out: &mut Vec<Effect>) {
    let (view, eff) = new_job(s, prompt, source);
    out.extend(s.cancel_live());
    s.show(Shown::Single(Box::new(view)));
    out.push(eff);
}

/// `r`: run what is chosen (on the Prompts tab the Prompts component
/// opened the selection first).
pub(in crate::tui) fn run(s: &mut State) -> Vec<Effect> {
    if s.tab == Tab::Sessions
        && let Some((si, Some(ri))) = s.sessions.selected_row()
    {
        s.target = Target::Recording(si, ri);
    }
    let mut out = Vec::new();
    match s.target.clone() {
        Target::None => {
            s.info(rust_i18n::t!("tui.msg.choose_first"));
            return out;
        }
        Target::Prompt => {
            if !s.local_guard() {
                return out;
            }
            let Some(e) = &s.editor else { return out };
            let (prompt, vars) = match e.config() {
                Ok(x) => x,
                Err(err) => {
                    s.error(rust_i18n::t!("tui.msg.cannot_run", error = err));
                    return out;
                }
            };
            let source = Source::Prompt(Box::new(spec(s, prompt.clone(), vars)));
            start_single(s, &prompt, source, &mut out);
        }
        Target::Recording(si, ri) => {
            let Some(rec) = s.sessions.sessions.get(si).and_then(|x| x.runs.get(ri)).cloned() else {
                s.target = Target::None;
                return out;
            };
            let prompt = prompt_of_record(s, &rec);
            let reference = reference(s, si, ri);
            let source = Source::Recording {
                record: Box::new(rec),
                reference,
            };
            start_single(s, &prompt, source, &mut out);
        }
    }
    if s.tab != Tab::Sweep {
        s.tab = Tab::Run;
    }
    out
}

/// `t`: run the prompt open and its twin as a pair.
pub(in crate::tui) fn twins(s: &mut State) -> Vec<Effect> {
    let Some(e) = &s.editor else {
        s.info(rust_i18n::t!("tui.msg.twin_first"));
        return Vec::new();
    };
    let (prompt, vars) = match e.config() {
        Ok(x) => x,
        Err(err) => {
            s.error(rust_i18n::t!("tui.msg.cannot_run", error = err));
            return Vec::new();
        }
    };
    let Some(twin_id) = prompt.twin.clone() else {
        s.error(rust_i18n::t!("tui.msg.no_twin", prompt = format!("{:?}", prompt.id)));
        return Vec::new();
    };
    let Some(twin) = s.prompts.by_id(&twin_id).cloned() else {
        s.error(rust_i18n::t!(
            "tui.msg.twin_missing",
            twin = format!("{twin_id:?}"),
            prompt = format!("{:?}", prompt.id),
            dir = s.prompts_dir.display()
        ));
        return Vec::new();
    };
    let (array_prompt, lines_prompt) = if prompt.response_type == ResponseType::Jsonl {
        (twin, prompt)
    } else {
        (prompt, twin)
    };
    run_pair(s, &array_prompt, &lines_prompt, vars)
}

/// Run a JSON-array prompt and a JSONL prompt as a pair on the same
/// variables and limit (the twins of `t`, or a migration's pair).
pub(in crate::tui) fn run_pair(
    s: &mut State,
    array_prompt: &PromptConfig,
    lines_prompt: &PromptConfig,
    vars: serde_json::Map<String, serde_json::Value>,
) -> Vec<Effect> {
    if !s.local_guard() {
        return Vec::new();
    }
    s.compare.line_schema = match lines_prompt.response_type {
        ResponseType::Jsonl => lines_prompt.schema.clone(),
        _ => lines_prompt
            .schema
            .as_ref()
            .and_then(crate::prompt::migrate::line_schema),
    };
    let (va, ea) = new_job(
        s,
        array_prompt,
        Source::Prompt(Box::new(spec(s, array_prompt.clone(), vars.clone()))),
    );
    let (vb, eb) = new_job(
        s,
        lines_prompt,
        Source::Prompt(Box::new(spec(s, lines_prompt.clone(), vars))),
    );
    let mut out = s.cancel_live();
    s.show(Shown::Twins {
        json: Box::new(va),
        jsonl: Box::new(vb),
    });
    s.target = Target::Prompt;
    if s.tab != Tab::Sweep {
        s.tab = Tab::Run;
    }
    out.push(ea);
    out.push(eb);
    out
}

pub(in crate::tui) fn run_msg(s: &mut State, id: u64, msg: RunMsg) -> Vec<Effect> {
    let clock = s.clock_ms;
    let Some(r) = s.shown.as_mut().and_then(|x| x.find_mut(id)) else {
        return Vec::new();
    };
    if !r.live() {
        return Vec::new();
    }
    match msg {
        RunMsg::Started { provider, note, at_ms } => {
            r.provider = provider;
            r.note = note;
            r.started_ms = at_ms;
        }
        RunMsg::Delta {
            text,
            pieces,
            elements,
            lines,
        } => {
            r.push_delta(&text, &pieces, elements, lines);
            r.elapsed_ms = clock.saturating_sub(r.started_ms);
        }
        RunMsg::Done(end) => return done(s, id, *end),
        RunMsg::Failed(e) => {
            let why = e.to_string();
            r.phase = Phase::Failed(why.clone());
            s.error(why);
        }
    }
    Vec::new()
}

/// A run ended: fold its analyses in, compare the pair and sweep what is
/// on show once nothing is live, and say how it ended.
fn done(s: &mut State, id: u64, end: RunEnd) -> Vec<Effect> {
    let Some(r) = s.shown.as_mut().and_then(|x| x.find_mut(id)) else {
        return Vec::new();
    };
    r.token_ids = end.token_ids;
    r.continuation_token = end.continuation_token;
    r.elements.clone_from(&end.json.elements);
    r.json = Some(end.json);
    r.jsonl = end.jsonl;
    r.finish = Some(end.finish);
    r.usage = end.usage;
    r.elapsed_ms = end.total_ms;
    r.structured_path = end.structured_path;
    r.phase = match end.error {
        Some(e) => Phase::Failed(e.to_string()),
        None => Phase::Done,
    };
    let failure = match &r.phase {
        Phase::Failed(e) => Some(e.clone()),
        _ => None,
    };
    let recorded = end.recorded.clone();
    let continues = r.continues;
    r.recorded = end.recorded;
    // Cut by a limit set here, or with none set (a recording cut at the
    // limit it was made with, or the model's own).
    let cut = match (end.finish, r.max_tokens) {
        (FinishReason::Length, Some(_)) => Some(true),
        (FinishReason::Length, None) => Some(false),
        _ => None,
    };
    let notes = if end.notes.is_empty() {
        String::new()
    } else {
        format!("{}; ", end.notes.join("; "))
    };
    let mut out = Vec::new();
    if s.shown.as_ref().is_some_and(|x| !x.live()) && (s.pinned.is_some() || s.shown.as_ref().is_some_and(Shown::twins))
    {
        out.push(Effect::Nav(Nav::Compare));
    }
    say_ended(s, failure, recorded, continues, cut, &notes, &mut out);
    if s.shown.as_ref().is_some_and(|x| !x.live()) && s.tab == Tab::Sweep {
        out.push(Effect::Nav(Nav::Sweep));
    }
    out
}

/// The status after a run ended: the failure (the continuation's, when it
/// was one), where it was recorded, that the limit cut it, or its notes.
fn say_ended(
    s: &mut State,
    failure: Option<String>,
    recorded: Option<String>,
    continues: bool,
    cut: Option<bool>,
    notes: &str,
    out: &mut Vec<Effect>,
) {
    if let Some(e) = failure {
        // The provider failed midway: say why (what arrived is kept,
        // and recorded when it was).
        let kept = recorded
            .as_ref()
            .map(|r| rust_i18n::t!("tui.msg.recorded_suffix", run = r).into_owned())
            .unwrap_or_default();
        let key = if continues {
            // The recovery failed: say so, not just that a run did.
            "tui.msg.continue_failed"
        } else {
            "tui.msg.run_failed"
        };
        s.error(rust_i18n::t!(key, error = e, kept = kept));
        if recorded.is_some() {
            out.push(Effect::LoadSessions);
        }
    } else if let Some(rec) = recorded {
        s.info(rust_i18n::t!("tui.msg.recorded", notes = notes, run = rec));
        out.push(Effect::LoadSessions);
    } else if cut == Some(true) {
        s.info(rust_i18n::t!("tui.msg.cut", notes = notes));
    } else if cut == Some(false) {
        s.info(rust_i18n::t!("tui.msg.cut_no_limit", notes = notes));
    } else if !notes.is_empty() {
        s.info(notes.trim_end_matches("; ").to_owned());
    }
}

/// The clock moved: streaming runs' elapsed time follows it.
pub(in crate::tui) fn tick(s: &mut State, ms: u64) -> Vec<Effect> {
    s.clock_ms = ms;
    if let Some(shown) = &mut s.shown {
        for id in shown
            .runs()
            .iter()
            .filter(|r| r.live())
            .map(|r| r.id)
            .collect::<Vec<_>>()
        {
            if let Some(r) = shown.find_mut(id)
                && r.phase == Phase::Streaming
            {
                r.elapsed_ms = ms.saturating_sub(r.started_ms);
            }
        }
    }
    Vec::new()
}

/// What `y` copies: the focused response's text, or (in a parse pane) the
/// items the run's consumer kept, one JSON value per line (a JSON answer's
/// strict items, else the elements salvage recovered).
pub(in crate::tui) fn copy(s: &mut State) -> Vec<Effect> {
    let run = match &s.shown {
        Some(Shown::Single(r)) => r.as_ref(),
        Some(Shown::Twins { json, jsonl }) => {
            if matches!(s.focus, OutPane::Response2 | OutPane::Jsonl) {
                jsonl.as_ref()
            } else {
                json.as_ref()
            }
        }
        None => {
            s.info(rust_i18n::t!("tui.status.nothing_to_copy").into_owned());
            return Vec::new();
        }
    };
    let (what, text) = match s.focus {
        OutPane::Json | OutPane::Jsonl => {
            let items: &[serde_json::Value] = match (&run.json, run.response_type) {
                (Some(a), ResponseType::Json) if a.items.is_empty() => &a.salvaged,
                (Some(a), ResponseType::Json) => &a.items,
                _ => &run.jsonl.items,
            };
            let lines: Vec<String> = items.iter().map(serde_json::Value::to_string).collect();
            (
                rust_i18n::t!("tui.status.copied_items", n = items.len()),
                lines.join("\n"),
            )
        }
        OutPane::Response | OutPane::Response2 => (rust_i18n::t!("tui.status.copied_response"), run.text.clone()),
    };
    s.info(rust_i18n::t!("tui.status.copied", what = what, bytes = text.len()).into_owned());
    vec![Effect::Copy(text)]
}
