//! The sweep: asking for it when a run ends, taking the result, moving its cursor.

use super::{Sweep, SweepData, SweepInput, SweepJob, SweepView};
use crate::llm::FinishReason;
use crate::tui::Effect;
use crate::tui::keymap::Action;
use crate::tui::runs::{self as run, RunView};
use crate::tui::state::{OutPane, Scroll, State, Tab};

fn sweep_input(r: &RunView) -> SweepInput {
    SweepInput {
        id: r.id,
        text: r.text.clone(),
        boundaries: r.token_pieces.then(|| r.boundaries.clone()),
        schemas: r.schemas.clone(),
    }
}

pub(in crate::tui) fn sweep_effect(s: &mut State) -> Option<Effect> {
    let shown = s.shown.as_ref()?;
    if shown.live() {
        return None;
    }
    let job = SweepJob {
        json: sweep_input(shown.json_side()),
        jsonl: sweep_input(shown.jsonl_side()),
    };
    s.sweep = Sweep::Pending;
    Some(Effect::Sweep(Box::new(job)))
}

pub(in crate::tui) fn sweep(s: &mut State) -> Vec<Effect> {
    s.tab = Tab::Sweep;
    match &s.shown {
        None => {
            s.info(rust_i18n::t!("tui.msg.sweep_run_first"));
            Vec::new()
        }
        Some(x) if x.live() => {
            s.info(rust_i18n::t!("tui.msg.sweep_after_run"));
            Vec::new()
        }
        Some(x) => {
            if x.runs().iter().any(|r| r.finish == Some(FinishReason::Length)) {
                s.info(rust_i18n::t!(
                    "tui.msg.sweep_cut",
                    none = s.keymap.key_for(Action::LimitNone),
                    run = s.keymap.key_for(Action::Run),
                    sweep = s.keymap.key_for(Action::Sweep)
                ));
            }
            sweep_effect(s).into_iter().collect()
        }
    }
}

pub(in crate::tui) fn sweep_ready(s: &mut State, data: SweepData) {
    if matches!(s.sweep, Sweep::Pending) {
        s.sweep = Sweep::Idle;
    }
    let Some(shown) = &s.shown else { return };
    if shown.json_side().id != data.json_id || shown.jsonl_side().id != data.jsonl_id {
        return;
    }
    let limit = shown
        .json_side()
        .max_tokens
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut view = SweepView {
        data,
        cursor: 0,
        json_cut: None,
        jsonl_cut: None,
    };
    let cursor = limit.unwrap_or(usize::MAX).min(view.max_tokens());
    view.cursor = cursor;
    s.sweep = Sweep::Ready(Box::new(view));
    set_cursor(s, cursor);
}

/// Move the sweep cursor to `k` tokens and re-analyse both sides there.
pub fn set_cursor(s: &mut State, k: usize) {
    let (Some(sw), Some(shown)) = (s.sweep.ready_mut(), &s.shown) else {
        return;
    };
    let k = k.min(sw.max_tokens());
    sw.cursor = k;
    let at = |bounds: &[usize]| bounds.get(k.min(bounds.len().saturating_sub(1))).copied().unwrap_or(0);
    let a = shown.json_side();
    let b = shown.jsonl_side();
    let ca = run::cut(&a.text, at(&sw.data.json_bounds), k, &a.schemas);
    let cb = if a.id == b.id {
        ca.clone()
    } else {
        run::cut(&b.text, at(&sw.data.jsonl_bounds), k, &b.schemas)
    };
    sw.json_cut = Some(ca);
    sw.jsonl_cut = Some(cb);
    *s.scroll_mut(OutPane::Json) = Scroll::following();
    *s.scroll_mut(OutPane::Jsonl) = Scroll::following();
}
