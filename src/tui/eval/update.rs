//! The eval view's part of the reducer: `E` opens it (or goes back to the
//! pair), `r` starts the eval, `m` types the limits, `Esc` stops it, and
//! the engine's news folds into the progress and the table.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::error::NoPrompt;
use super::{Ending, EvalEnd, EvalJob, EvalMsg, EvalPlan, EvalRun, Progress};
use crate::llm::params::Structured;
use crate::llm::structured::Path as StructuredPath;
use crate::prompt::PromptConfig;
use crate::tui::Effect;
use crate::tui::component::{Id, Nav};
use crate::tui::keymap::Action;
use crate::tui::state::{Mode, State, Tab};

/// Whether the eval view is on show.
pub(in crate::tui) fn on_show(s: &State) -> bool {
    s.tab == Tab::Compare && s.overlay == Some(Id("eval"))
}

/// `E`: show the eval view over the Compare tab (on the Prompts tab, the
/// Prompts component opened the selection first), or, on it, go back to
/// the pair.
pub(in crate::tui) fn toggle(s: &mut State) -> Vec<Effect> {
    if on_show(s) {
        s.overlay = None;
        return vec![Effect::Nav(Nav::Compare)];
    }
    s.overlay = Some(Id("eval"));
    s.tab = Tab::Compare;
    Vec::new()
}

/// The prompt on show (the editor's, edits included) and its twin, with
/// a note when the twin is not loaded.
fn prompts_on_show(s: &State) -> Result<(Vec<PromptConfig>, Vec<String>), NoPrompt> {
    let Some(e) = &s.editor else {
        return Err(NoPrompt::NoneOpen);
    };
    let (prompt, _) = e.config().map_err(|e| NoPrompt::Invalid { source: Box::new(e) })?;
    let mut notes = Vec::new();
    let twin = prompt.twin.clone().and_then(|t| {
        let found = s.prompts.by_id(&t).filter(|p| p.id != prompt.id).cloned();
        if found.is_none() {
            notes.push(rust_i18n::t!("tui.eval.twin_missing", twin = format!("{t:?}")).into_owned());
        }
        found
    });
    Ok((std::iter::once(prompt).chain(twin).collect(), notes))
}

/// The structured-output level the Run tab's setting asks for.
fn structured_level(p: Option<StructuredPath>) -> Option<Structured> {
    p.map(|p| match p {
        StructuredPath::Native | StructuredPath::NativeWrapped | StructuredPath::Grammar => Structured::Native,
        StructuredPath::Prompt => Structured::Prompt,
        StructuredPath::None => Structured::Off,
    })
}

/// The keys the eval view takes over: `r` runs the eval, `m` types its
/// limits, `Esc` stops it; `None` for every other action.
pub(in crate::tui) fn action(s: &mut State, a: Action) -> Option<Vec<Effect>> {
    match a {
        Action::Run => Some(start(s)),
        Action::LimitType => {
            type_limits(s);
            Some(Vec::new())
        }
        Action::Cancel if s.eval.run.live().is_some() => Some(cancel(s)),
        _ => None,
    }
}

/// `r` on the eval view: start the eval, or say why not.
pub(in crate::tui) fn start(s: &mut State) -> Vec<Effect> {
    if s.eval.run.live().is_some() {
        s.info(rust_i18n::t!(
            "tui.eval.already",
            key = s.keymap.key_for(Action::Cancel)
        ));
        return Vec::new();
    }
    if !s.local_guard() {
        return Vec::new();
    }
    let (prompts, notes) = match prompts_on_show(s) {
        Ok(x) => x,
        Err(e) => {
            s.error(e.to_string());
            return Vec::new();
        }
    };
    if let Some(p) = prompts.iter().find(|p| p.inputs.is_empty()) {
        s.error(rust_i18n::t!("tui.eval.no_inputs", prompt = format!("{:?}", p.id)));
        return Vec::new();
    }
    let id = s.next_id;
    s.next_id += 1;
    let job = EvalJob {
        id,
        prompts,
        limits: s.eval.limits.clone(),
        provider: s.provider.clone(),
        structured: structured_level(s.structured),
        tg_python: s.tg_python,
        sessions_dir: s.sessions_dir.clone(),
    };
    s.eval.top = 0;
    s.eval.run = EvalRun::Planning {
        id,
        prompts: job.prompts.iter().map(|p| p.id.clone()).collect(),
        notes,
    };
    s.info(rust_i18n::t!("tui.eval.starting"));
    vec![Effect::Eval(Box::new(job))]
}

/// `Esc` on the eval view: stop the eval in flight; what it recorded stays.
pub(in crate::tui) fn cancel(s: &mut State) -> Vec<Effect> {
    let Some(id) = s.eval.run.live() else {
        return Vec::new();
    };
    s.eval.run = match std::mem::take(&mut s.eval.run) {
        EvalRun::Running(mut p) => {
            p.ended_ms = Some(s.clock_ms);
            p.in_flight = 0;
            EvalRun::Ended(p, Ending::Cancelled)
        }
        _ => EvalRun::Idle,
    };
    s.info(rust_i18n::t!("tui.eval.cancelled"));
    vec![Effect::Cancel(id)]
}

/// `m` on the eval view: type the limits, starting from those in force.
pub(in crate::tui) fn type_limits(s: &mut State) {
    let text = s
        .eval
        .limits
        .iter()
        .map(|l| crate::eval::limit_label(*l))
        .collect::<Vec<_>>()
        .join(",");
    s.mode = Mode::EvalLimits(text);
}

/// A key while typing the limits: Enter keeps them when they parse.
pub(in crate::tui) fn limits_key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    let Mode::EvalLimits(typed) = &mut s.mode else {
        return Vec::new();
    };
    match k.code {
        KeyCode::Esc => s.mode = Mode::Normal,
        KeyCode::Enter => {
            let text = std::mem::take(typed);
            s.mode = Mode::Normal;
            match crate::eval::parse_limits(&text) {
                Ok(limits) => {
                    s.eval.limits = limits;
                    s.info(rust_i18n::t!("tui.eval.limits_set", limits = text.trim()));
                }
                Err(e) => s.error(rust_i18n::t!("tui.eval.limits_bad", error = e)),
            }
        }
        KeyCode::Backspace => {
            typed.pop();
        }
        KeyCode::Char(c) if (c.is_ascii_alphanumeric() || c == ',' || c == ' ') && typed.len() < 200 => {
            typed.push(c);
        }
        _ => {}
    }
    Vec::new()
}

/// News of eval `id`; news of an eval no longer in flight is dropped.
pub(in crate::tui) fn msg(s: &mut State, id: u64, msg: EvalMsg) -> Vec<Effect> {
    if s.eval.run.live() != Some(id) {
        return Vec::new();
    }
    match msg {
        EvalMsg::Planned(plan) => planned(s, *plan),
        EvalMsg::Finished(sum) => {
            if let EvalRun::Running(p) = &mut s.eval.run {
                p.add(*sum);
            }
        }
        EvalMsg::InFlight(n) => {
            if let EvalRun::Running(p) = &mut s.eval.run {
                p.in_flight = n;
            }
        }
        EvalMsg::Warn(w) => {
            if let EvalRun::Running(p) = &mut s.eval.run {
                p.warnings.push(w);
            }
        }
        EvalMsg::Done(end) => done(s, end),
        EvalMsg::Failed(e) => {
            let error = e.to_string();
            let prompts = match &s.eval.run {
                EvalRun::Planning { prompts, .. } => prompts.clone(),
                EvalRun::Running(p) => p.prompts.iter().map(|t| t.id.clone()).collect(),
                _ => Vec::new(),
            };
            s.error(rust_i18n::t!("tui.eval.failed", error = first_line(&error)));
            s.eval.run = EvalRun::Failed { prompts, error };
        }
    }
    Vec::new()
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// The plan arrived: the progress starts, with what the session held.
fn planned(s: &mut State, plan: EvalPlan) {
    let EvalRun::Planning { id, notes, .. } = std::mem::take(&mut s.eval.run) else {
        return;
    };
    let provider = match plan.model.as_str() {
        "" => s.provider.label().to_owned(),
        m => format!("{} {m}", s.provider.label()),
    };
    let mut p = Progress {
        id,
        provider,
        limits: s.eval.limits.clone(),
        session: plan.session,
        path: plan.path,
        total: plan.runs,
        skipped: plan.skipped.len(),
        ran: 0,
        failed: 0,
        in_flight: 0,
        started_ms: s.clock_ms,
        ended_ms: None,
        prompts: plan.prompts,
        per_prompt: plan.per_prompt,
        summaries: plan.skipped,
        rows: Vec::new(),
        twins: Vec::new(),
        warnings: notes.into_iter().chain(plan.warnings).collect(),
    };
    p.retable();
    let (pending, skipped) = (p.total.saturating_sub(p.skipped), p.skipped);
    s.eval.run = EvalRun::Running(Box::new(p));
    s.info(rust_i18n::t!(
        "tui.eval.under_way",
        pending = pending,
        skipped = skipped
    ));
}

/// Every pending run ran: the table stands, and the status says so.
fn done(s: &mut State, end: EvalEnd) {
    let EvalRun::Running(mut p) = std::mem::take(&mut s.eval.run) else {
        return;
    };
    p.ended_ms = Some(s.clock_ms);
    p.in_flight = 0;
    let ending = match end.problem {
        Some(why) if end.unrecorded > 0 => Ending::Unrecorded(end.unrecorded, why),
        _ => Ending::Complete,
    };
    match &ending {
        Ending::Unrecorded(n, why) => s.error(rust_i18n::t!("tui.eval.unrecorded", n = n, error = first_line(why))),
        _ if p.failed > 0 => s.error(rust_i18n::t!(
            "tui.eval.done_failed",
            failed = p.failed,
            runs = p.total,
            session = p.session
        )),
        _ => s.info(rust_i18n::t!(
            "tui.eval.done",
            runs = p.total,
            skipped = p.skipped,
            session = p.session
        )),
    }
    s.eval.run = EvalRun::Ended(p, ending);
}
