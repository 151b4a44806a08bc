//! The Compare tab: the pin, the gold set, and the report on the pair on show.

use super::state::NoReport;
use crate::llm::FinishReason;
use crate::prompt::ResponseType;
use crate::tui::Effect;
use crate::tui::State;
use crate::tui::component::Nav;
use crate::tui::keymap::Action;
use crate::tui::runs::{RunView, Shown, limit_label, pair_of};

pub(in crate::tui) fn gold_loaded(
    s: &mut State,
    ids: &[String],
    result: Result<Option<(String, Vec<serde_json::Value>)>, crate::eval::inputs::InputsError>,
) -> Vec<Effect> {
    if ids != s.compare.gold_for {
        return Vec::new();
    }
    match result {
        Ok(g) => {
            s.compare.gold = g;
            s.compare.gold_error = None;
        }
        Err(e) => {
            s.compare.gold = None;
            s.compare.gold_error = Some(e);
        }
    }
    refresh_compare(s)
}

pub(in crate::tui) fn pin(s: &mut State) {
    let key = s.keymap.key_for(Action::GoTab(7));
    match &s.shown {
        Some(Shown::Single(r)) if !r.live() => {
            let text = rust_i18n::t!(
                "tui.msg.pinned",
                prompt = r.prompt_id,
                limit = limit_label(r.max_tokens),
                key = key
            );
            s.pinned = Some(r.clone());
            s.info(text);
        }
        Some(Shown::Single(_)) => s.info(rust_i18n::t!("tui.msg.pin_live")),
        Some(Shown::Twins { .. }) => s.info(rust_i18n::t!("tui.msg.pin_pair", key = key)),
        None => s.info(rust_i18n::t!("tui.msg.pin_nothing")),
    }
}

/// A finished run's analysis under its response type.
fn analysis_of(r: &RunView) -> Result<crate::run::Analysis, NoReport> {
    Ok(match r.response_type {
        ResponseType::Json => match &r.json {
            Some(j) => crate::run::Analysis::Json(Box::new(j.clone())),
            None => {
                return Err(NoReport::Unfinished {
                    prompt: r.prompt_id.clone(),
                });
            }
        },
        ResponseType::Jsonl => crate::run::Analysis::Jsonl(r.jsonl.clone()),
        ResponseType::Text => crate::run::Analysis::Text,
    })
}

fn side_of(r: &RunView) -> Result<crate::compare::Side, NoReport> {
    let analysis = analysis_of(r)?;
    Ok(crate::compare::side(
        &r.prompt_id,
        &analysis,
        r.finish == Some(FinishReason::Length),
    ))
}

/// Why each side of the pair missed the gold items it missed. A side the
/// limit cut is judged against the other side when that one ended on its
/// own (it shows what the model says past the cut).
fn losses(
    pair: [&RunView; 2],
    gold: &[serde_json::Value],
    keys: &crate::compare::Keys,
) -> Option<[crate::compare::loss::Loss; 2]> {
    use crate::compare::loss;
    let analyses = [analysis_of(pair[0]).ok()?, analysis_of(pair[1]).ok()?];
    let one = |i: usize| {
        let other = 1 - i;
        let reference = (pair[other].finish == Some(FinishReason::Stop)).then(|| analyses[other].items());
        let run = loss::Run {
            analysis: &analyses[i],
            text: &pair[i].text,
            cut: pair[i].finish == Some(FinishReason::Length),
        };
        loss::of(run, gold, keys, reference)
    };
    Some([one(0), one(1)])
}

/// Recompute the Compare tab's report for the pair on show (twins, or the
/// pinned run against the run on show); ask for its gold set when the pair
/// changed.
pub(in crate::tui) fn refresh_compare(s: &mut State) -> Vec<Effect> {
    let pair = pair_of(s.shown.as_ref(), s.pinned.as_deref());
    let c = &mut s.compare;
    let Some((json, jsonl)) = pair else {
        c.report = Some(Err(NoReport::NeedsPair {
            twins: s.keymap.key_for(Action::Twins),
            pin: s.keymap.key_for(Action::Pin),
        }));
        c.ids = None;
        return Vec::new();
    };
    if json.live() || jsonl.live() {
        c.report = Some(Err(NoReport::Running));
        return Vec::new();
    }
    let mut ids = vec![json.prompt_id.clone()];
    if jsonl.prompt_id != json.prompt_id {
        ids.push(jsonl.prompt_id.clone());
    }
    let mut out = Vec::new();
    if c.gold_for != ids {
        c.gold_for.clone_from(&ids);
        c.gold = None;
        c.gold_error = None;
        out.push(Effect::LoadGold(ids));
    }
    let label = |r: &RunView| {
        format!(
            "{} · {} @ {}",
            r.response_type,
            r.prompt_id,
            r.max_tokens.map_or_else(
                || rust_i18n::t!("tui.msg.no_limit").into_owned(),
                |n| rust_i18n::t!("tui.pane.n_tok", n = n).into_owned()
            )
        )
    };
    c.labels = [label(json), label(jsonl)];
    if c.ids != Some((json.id, jsonl.id)) {
        c.top = 0;
        out.push(Effect::Nav(Nav::PairChanged));
    }
    c.ids = Some((json.id, jsonl.id));
    c.report = Some(match (side_of(json), side_of(jsonl)) {
        (Ok(a), Ok(b)) => {
            // The JSONL side's schema as loaded, else the pair's as run
            // (a migration not yet written is not in the list).
            let line_schema = [&jsonl.prompt_id, &json.prompt_id]
                .into_iter()
                .find_map(|id| s.prompts.by_id(id))
                .and_then(|p| match p.response_type {
                    ResponseType::Jsonl => p.schema.clone(),
                    _ => p.schema.as_ref().and_then(crate::prompt::migrate::line_schema),
                })
                .or_else(|| c.line_schema.clone());
            let keys = crate::compare::Keys::of(line_schema.as_ref(), &[]);
            let gold = c.gold.as_ref().map(|(_, g)| g.as_slice());
            c.loss = gold.and_then(|g| losses([json, jsonl], g, &keys));
            Ok(Box::new(crate::compare::compare(a, b, &keys, gold)))
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    });
    out
}
