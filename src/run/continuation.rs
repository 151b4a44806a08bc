//! Continuing a JSONL answer the limit cut: keep its complete lines and ask
//! for the rest, call after call, until the model ends on its own, a call
//! adds nothing new, a loop starts, or the calls run out.
//!
//! Where the provider has its own way to resume (Gemini's
//! `continuationToken` after `CONTINUATION`), the same request goes again
//! with the token. Where the wire and the model take a prefill
//! (llama-server and the local model, older Claude, a replay), the next
//! call starts from the exact text kept so far, so a greedy model goes on as
//! if it had never been cut. Elsewhere (and when a model refuses the
//! prefill, which it is then known to do) the next call is a follow-up: the
//! prompt with the last kept lines quoted and a request to continue after
//! them without repeating. Items are stitched and deduplicated by the
//! schema's key fields, as `compare` matches them.

use serde::Serialize;
use serde_json::Value;

pub use super::follow_up::{complete_lines, follow_up};
use super::{Analysis, Outcome, Plan, Spec, StartError};
use crate::compare::Keys;
use crate::llm::registry::Target;
use crate::llm::{Event, FinishReason, Transcript};
use crate::prompt::ResponseType;
use crate::session::{Continues, Recorder, RunRecord};

/// How one continuation call was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// The first call: the prompt as it is.
    First,
    /// The kept text prefilled as the start of the answer.
    Prefill,
    /// A follow-up quoting the last kept lines.
    FollowUp,
    /// The same request with the provider's continuation token.
    Native,
    /// The prompt again from scratch with twice the previous limit
    /// (`run::retry`).
    Doubled,
}

/// One call of a continued run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Call {
    /// How it was asked.
    pub how: How,
    /// Its max-token limit.
    pub max_tokens: Option<u32>,
    /// Its run id in the session (empty when not recorded).
    pub run_id: String,
    /// New items it added.
    pub items_added: usize,
    /// Items it repeated, dropped.
    pub duplicates_dropped: usize,
    /// Input tokens billed, when reported.
    pub prompt_tokens: Option<u32>,
    /// Output tokens billed, when reported.
    pub completion_tokens: Option<u32>,
    /// Why it ended.
    pub finish_reason: FinishReason,
    /// Milliseconds it took.
    pub total_ms: u64,
}

impl Call {
    /// The call `o` was, asked `how`, adding `items_added` new items and
    /// repeating `duplicates_dropped`.
    pub fn of(how: How, o: &Outcome, items_added: usize, duplicates_dropped: usize) -> Self {
        Self {
            how,
            max_tokens: o.record.params.max_tokens,
            run_id: o.record.run_id.clone(),
            items_added,
            duplicates_dropped,
            prompt_tokens: o.record.usage.prompt_tokens,
            completion_tokens: o.record.usage.completion_tokens,
            finish_reason: o.record.finish,
            total_ms: o.record.total_ms,
        }
    }

    /// Input plus output tokens, as billed; `None` when the provider did
    /// not report both.
    pub fn billed(&self) -> Option<u64> {
        Some(u64::from(self.prompt_tokens?) + u64::from(self.completion_tokens?))
    }
}

/// Why the continuation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// The model ended its answer (`stop`).
    Finished,
    /// A call added no new item.
    NothingNew,
    /// A call ran into a loop (`run::loop_of`).
    Loop,
    /// The allowed calls ran out while still cut.
    OutOfCalls,
    /// A call failed.
    Failed,
    /// Not a JSONL answer: nothing to continue line by line.
    NotJsonl,
}

/// A continued run.
#[derive(Debug, Clone, PartialEq)]
pub struct Continued {
    /// Every call, the first included.
    pub calls: Vec<Call>,
    /// The stitched items, deduplicated, in order.
    pub items: Vec<Value>,
    /// The stitched answer: every call's complete lines, then the last
    /// call's whole text.
    pub text: String,
    /// Why it stopped.
    pub ended: Ended,
    /// Every call after the first, as recorded (with its run id when a
    /// recorder was given; a caller without one records them itself).
    pub records: Vec<RunRecord>,
}

/// The distinct items of a stitched answer, in order, by the schema's keys.
fn distinct(spec: &Spec, keys: &Keys, text: &str) -> Vec<Value> {
    let p = &spec.prompt;
    let schema = super::analysis_schema(crate::llm::structured::Path::None, p.schema.as_ref());
    let a = Analysis::of(p.response_type, schema.as_ref(), text, spec.tg_python);
    let mut seen = std::collections::HashSet::new();
    a.items().iter().filter(|i| seen.insert(keys.key(i))).cloned().collect()
}

/// Set `plan` up to go on from `kept` (the answer so far): with the
/// provider's continuation `token` when it left one, else by prefill where
/// the wire and the model take it (by the model's own token `ids` when
/// known), else by a follow-up turn quoting its complete lines. The one
/// place a continuation is set up, for `run --continue`, eval's `continue`
/// strategy and the workbench's `c`.
pub fn set_up(plan: &mut Plan, target: &Target, kept: &str, ids: Option<Vec<u32>>, token: Option<&str>) {
    match token {
        Some(t) => plan.resume(t),
        None if target.prefills() => plan.prefill(kept, ids.unwrap_or_default()),
        None => plan.follow_up(complete_lines(kept)),
    }
    plan.refit(target.profile(), target.provider.prefills());
}

/// How a call set up by [`set_up`] was finally asked (a refusal can turn a
/// prefill into a follow-up mid-run), and the answer so far it goes on
/// from: all of `kept`, or only its complete lines after a follow-up.
pub fn asked<'k>(plan: &Plan, kept: &'k str) -> (How, &'k str) {
    match plan.continues {
        Some(Continues::Prefill) => (How::Prefill, kept),
        Some(Continues::Native) => (How::Native, kept),
        Some(Continues::FollowUp) | None => (How::FollowUp, complete_lines(kept)),
    }
}

/// Continue `first` (a run of `spec` on `target`) for up to `more` calls.
/// A JSONL answer the limit cut is continued, and any answer the provider
/// left incomplete with a continuation token; anything else comes back as
/// its one call.
///
/// With prefill or a token the answer so far is kept whole, the cut line
/// included, so the model finishes that line first; with a follow-up only
/// its complete lines are kept. Either way the items are those of the
/// stitched answer.
pub async fn run(
    target: &Target,
    spec: &Spec,
    first: &Outcome,
    more: u32,
    mut recorder: Option<&mut Recorder>,
) -> Result<Continued, StartError> {
    let keys = Keys::of(spec.prompt.schema.as_ref(), &[]);
    let mut stitched = first.record.text.clone();
    let mut items = distinct(spec, &keys, &stitched);
    let dup = first.analysis.items().len().saturating_sub(items.len());
    let mut calls = vec![Call::of(How::First, first, items.len(), dup)];
    let continuable = spec.prompt.response_type == ResponseType::Jsonl;
    let mut ended = end_of(first, continuable);
    let mut records = Vec::new();
    // The kept answer as the model's own token ids, while every call
    // reported them: the exact prefill.
    let mut ids = exact_ids(&first.record);
    let mut token = first.record.continuation_token.clone();
    while ended.is_none() && calls.len() <= usize::try_from(more).unwrap_or(usize::MAX) {
        let mut plan = super::plan(spec, target)?;
        set_up(&mut plan, target, &stitched, ids.clone(), token.as_deref());
        let started = crate::session::now_ms();
        let t: Transcript = super::stream(target, &mut plan, &mut |_: &Event, _: &Transcript| {}).await;
        let o = super::finish(
            target.provider.info(),
            spec,
            &plan,
            started,
            &t,
            recorder.as_deref_mut(),
        );
        let (how, kept) = asked(&plan, &stitched);
        stitched = format!("{kept}{}", o.record.text);
        ids = ids_after(ids, how, &o.record);
        token.clone_from(&o.record.continuation_token);
        let now = distinct(spec, &keys, &stitched);
        let added = now.len().saturating_sub(items.len());
        // With prefill the cut line's rest counts with the new lines.
        let produced = distinct(spec, &keys, complete_lines(&o.record.text)).len();
        calls.push(Call::of(how, &o, added, produced.saturating_sub(added)));
        items = now;
        records.push(o.record.clone());
        let completed_a_line = o.record.text.contains('\n');
        ended = if added == 0
            && (completed_a_line || o.record.text.is_empty())
            && o.record.finish == FinishReason::Length
        {
            Some(Ended::NothingNew)
        } else {
            end_of(&o, continuable)
        };
    }
    Ok(Continued {
        calls,
        items,
        text: stitched,
        ended: ended.unwrap_or(Ended::OutOfCalls),
        records,
    })
}

/// The ids of the tokens behind `r.text`: one per piece, less the trailing
/// tokens the server held back for a possible stop sequence and never sent
/// (a cut drops their text); `None` when the server gave no ids or they do
/// not add up to the text.
pub fn exact_ids(r: &RunRecord) -> Option<Vec<u32>> {
    if r.token_ids.len() != r.pieces.len() {
        return None;
    }
    let kept = r.pieces.len() - r.pieces.iter().rev().take_while(|p| p.text.is_empty()).count();
    let text: String = r.pieces[..kept].iter().map(|p| p.text.as_str()).collect();
    (text == r.text).then(|| r.token_ids[..kept].to_vec())
}

/// The model's own token ids behind the answer stitched after a call set
/// up by [`set_up`] and asked `how` (see [`asked`]): those of the answer it
/// went on from (`kept`) followed by the call's own after a prefill; none
/// after a follow-up or a native resume (the call did not go on from those
/// tokens), nor when either side has none. The one rule for [`run`] and
/// the workbench's `c`.
pub fn ids_after(kept: Option<Vec<u32>>, how: How, call: &RunRecord) -> Option<Vec<u32>> {
    let mut ids = kept.filter(|_| how == How::Prefill)?;
    ids.extend(exact_ids(call)?);
    Some(ids)
}

/// Whether an answer that ended `finish` goes on by the provider's own
/// continuation `token` (Gemini's after `CONTINUATION`, or a checkpoint
/// before a broken stream), whatever its type. The one rule for [`run`]
/// and the workbench's `c`.
pub fn resumable(finish: FinishReason, token: Option<&str>) -> bool {
    token.is_some() && matches!(finish, FinishReason::Incomplete | FinishReason::Error)
}

/// Whether a call ends the continuation, and why. An answer the provider
/// can resume by its token goes on whatever its type.
pub(super) fn end_of(o: &Outcome, continuable: bool) -> Option<Ended> {
    match o.record.finish {
        // A broken stream with a checkpoint token resumes from it too.
        f if resumable(f, o.record.continuation_token.as_deref()) => None,
        FinishReason::Length | FinishReason::Incomplete if !continuable => Some(Ended::NotJsonl),
        FinishReason::Length if super::loop_of(&o.record).is_some() => Some(Ended::Loop),
        FinishReason::Length | FinishReason::Incomplete => None,
        // An end cutline cannot read is not taken for a finished answer.
        FinishReason::Error | FinishReason::Unknown => Some(Ended::Failed),
        _ => Some(Ended::Finished),
    }
}
