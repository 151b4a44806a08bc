//! Retry with a doubled limit: the loop users write around a JSON-array
//! prompt (seed 003) — when the answer is cut by the limit, throw it away
//! and ask again from scratch with twice the limit, up to `retries` times.
//! It is here to be measured against continuation: every retry pays the
//! prompt and the whole answer again.

use super::continuation::{Call, Ended, How};
use super::{Outcome, Spec, StartError};
use crate::llm::FinishReason;
use crate::llm::registry::Target;
use crate::session::{Recorder, RunRecord};

/// A run retried with doubled limits.
#[derive(Debug, Clone)]
pub struct Retried {
    /// Every call, the first included.
    pub calls: Vec<Call>,
    /// The last call's outcome: its items are what this strategy recovers.
    pub last: Outcome,
    /// Why it stopped: `finished` when the model ended on its own,
    /// `out_of_calls` when still cut after the last retry, `failed` on a
    /// provider error.
    pub ended: Ended,
    /// Every call after the first, as recorded (with its run id when a
    /// recorder was given).
    pub records: Vec<RunRecord>,
}

/// The next limit: twice `n`, saturating; a run without a limit is never
/// retried, so `None` stays `None`.
pub fn doubled(n: Option<u32>) -> Option<u32> {
    n.map(|n| n.saturating_mul(2))
}

/// Retry `first` (a run of `spec` on `target`) with doubled limits while it
/// ends `length`, at most `retries` more calls.
pub async fn run(
    target: &Target,
    spec: &Spec,
    first: &Outcome,
    retries: u32,
    mut recorder: Option<&mut Recorder>,
) -> Result<Retried, StartError> {
    let kept = |o: &Outcome| o.analysis.items().len();
    let mut calls = vec![Call::of(How::First, first, kept(first), 0)];
    let mut last = first.clone();
    let mut records = Vec::new();
    while last.record.finish == FinishReason::Length
        && last.record.params.max_tokens.is_some()
        && calls.len() <= usize::try_from(retries).unwrap_or(usize::MAX)
    {
        let next = spec.clone().limit(doubled(last.record.params.max_tokens));
        let o = super::execute(target, &next, recorder.as_deref_mut(), |_, _| {}).await?;
        calls.push(Call::of(How::Doubled, &o, kept(&o).saturating_sub(kept(&last)), 0));
        records.push(o.record.clone());
        last = o;
    }
    let ended = match last.record.finish {
        FinishReason::Length => Ended::OutOfCalls,
        FinishReason::Error | FinishReason::Unknown => Ended::Failed,
        _ => Ended::Finished,
    };
    Ok(Retried {
        calls,
        last,
        ended,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_double_and_saturate() {
        assert_eq!(doubled(Some(64)), Some(128));
        assert_eq!(doubled(Some(u32::MAX)), Some(u32::MAX));
        assert_eq!(doubled(None), None);
    }
}
