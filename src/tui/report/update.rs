//! `x`: the shareable HTML report of the runs on show (the page `cutline
//! report` writes), for people who are not at the terminal. A report is of
//! recorded runs, so it needs the runs on show to be recordings; the runner
//! writes it beside the sessions and the status says where.

use crate::tui::Effect;
use crate::tui::State;

/// `x`: ask the runner for the report of the runs on show.
pub(in crate::tui) fn write(s: &mut State) -> Vec<Effect> {
    let Some(shown) = &s.shown else {
        s.info(rust_i18n::t!("tui.status.report_nothing").into_owned());
        return Vec::new();
    };
    if shown.live() {
        s.info(rust_i18n::t!("tui.status.report_live").into_owned());
        return Vec::new();
    }
    let refs: Vec<Option<(String, usize)>> = shown
        .runs()
        .iter()
        .map(|r| r.recorded.as_deref().and_then(split))
        .collect();
    let Some(refs) = refs.into_iter().collect::<Option<Vec<_>>>() else {
        s.info(rust_i18n::t!("tui.status.report_unrecorded").into_owned());
        return Vec::new();
    };
    let session = refs[0].0.clone();
    if refs.iter().any(|(id, _)| *id != session) {
        s.info(rust_i18n::t!("tui.status.report_two_sessions").into_owned());
        return Vec::new();
    }
    let runs: Vec<usize> = refs.into_iter().map(|(_, n)| n).collect();
    s.info(rust_i18n::t!("tui.status.report_writing").into_owned());
    vec![Effect::WriteReport {
        session,
        runs,
        py: s.tg_python,
    }]
}

/// `session#N` as its parts.
fn split(reference: &str) -> Option<(String, usize)> {
    let (id, n) = reference.rsplit_once('#')?;
    Some((id.to_owned(), n.parse().ok()?))
}

/// The runner's answer.
pub(in crate::tui) fn written(s: &mut State, r: Result<String, super::ReportError>) -> Vec<Effect> {
    match r {
        Ok(what) => s.info(what),
        Err(why) => s.error(rust_i18n::t!("tui.status.report_failed", why = why).into_owned()),
    }
    Vec::new()
}
