//! `S` in the Compare tab: run each strategy on the pair on show and fold
//! the strategy runs into the table.

use super::{CostJob, Costs, SideOf};
use crate::tui::Effect;
use crate::tui::State;
use crate::tui::keymap::Action;
use crate::tui::runs::RunView;

/// Start the strategies on the pair on show, or say why not.
pub(in crate::tui) fn start(s: &mut State) -> Vec<Effect> {
    let key = s.keymap.key_for(Action::Costs);
    let Some((a, b)) = s.pair_on_show() else {
        s.info(rust_i18n::t!(
            "tui.msg.costs_needs_pair",
            key = key,
            twins = s.keymap.key_for(Action::Twins),
            pin = s.keymap.key_for(Action::Pin)
        ));
        return Vec::new();
    };
    if a.live() || b.live() {
        s.info(rust_i18n::t!("tui.msg.costs_live", key = key));
        return Vec::new();
    }
    let (Some(oa), Some(ob)) = (a.origin.clone(), b.origin.clone()) else {
        s.info(rust_i18n::t!("tui.msg.costs_no_origin", key = key));
        return Vec::new();
    };
    let ids = (a.id, b.id);
    let job = CostJob {
        ids,
        sides: [(oa, a.max_tokens), (ob, b.max_tokens)],
        gold: s.compare.gold.clone(),
        sessions_dir: s.sessions_dir.clone(),
    };
    s.costs = Costs::Running(ids);
    s.info(rust_i18n::t!("tui.msg.costs_running"));
    vec![Effect::Costs(Box::new(job))]
}

/// The strategy runs arrived: the table, if the pair is still on show.
pub(in crate::tui) fn done(
    s: &mut State,
    ids: (u64, u64),
    result: Result<Vec<crate::eval::strategy::StrategyRun>, super::CostsError>,
) -> Vec<Effect> {
    if s.costs != Costs::Running(ids) {
        return Vec::new();
    }
    let table = s.pair_on_show().map(|(a, b)| match &result {
        Ok(runs) => Some(super::table([side(a), side(b)], runs)),
        Err(_) => None,
    });
    s.costs = match (table, result) {
        (Some(Some((rows, headline))), _) => {
            s.info(rust_i18n::t!("tui.msg.costs_done"));
            Costs::Ready { ids, rows, headline }
        }
        (Some(None), Err(e)) => {
            let error = e.to_string();
            s.error(rust_i18n::t!("tui.msg.costs_failed", error = error));
            Costs::Failed { ids, error }
        }
        (None | Some(None), _) => Costs::Idle,
    };
    Vec::new()
}

fn side(r: &RunView) -> SideOf<'_> {
    SideOf {
        prompt: &r.prompt_id,
        response_type: r.response_type,
        limit: r.max_tokens,
    }
}
