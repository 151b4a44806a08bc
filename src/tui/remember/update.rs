//! Keeping and restoring the last session's tab with its context. A pin is
//! a recorded run (`session#N`), restored once the sessions have loaded and
//! dropped when that run is gone, whatever the person does meanwhile. The
//! tab is put back at once, but only while the person has not moved yet;
//! what it showed follows once the prompts or sessions it needs are loaded,
//! and when that is gone the workbench opens on Prompts instead, saying so.

use super::Remembered;
use crate::tui::Effect;
use crate::tui::component::Nav;
use crate::tui::runs::{RunView, Shown, view_of_record};
use crate::tui::state::{State, Tab};

/// What to keep, as the workbench quits: the tab, what it showed, the pin.
pub(in crate::tui) fn on_quit(s: &State) -> Effect {
    let pin = s.pinned.as_ref().and_then(|p| p.recorded.clone());
    let shown = match s.tab {
        Tab::Run | Tab::Sweep | Tab::Compare => recorded_on_show(s, pin.as_deref()),
        _ => Vec::new(),
    };
    let prompt = match s.tab {
        Tab::Edit => s.editor.as_ref().map(|e| e.base.id.clone()),
        Tab::Migrate => s.migrate.as_ref().map(|m| m.source.id.clone()),
        // Runs no session holds (a replay's): the prompt they ran, so the
        // next start opens it and `r` runs it again.
        Tab::Run | Tab::Sweep | Tab::Compare => s
            .shown
            .as_ref()
            .filter(|x| x.runs().iter().any(|r| r.recorded.is_none()))
            .and_then(|x| x.runs().first().map(|r| r.prompt_id.clone())),
        _ => None,
    };
    Effect::Remember(Remembered {
        tab: Some(s.tab),
        pin,
        prompt,
        shown,
    })
}

/// The runs on show as `session#N`, when every one is recorded and they
/// are not just the pinned run.
fn recorded_on_show(s: &State, pin: Option<&str>) -> Vec<String> {
    let Some(shown) = &s.shown else {
        return Vec::new();
    };
    let refs: Option<Vec<String>> = shown.runs().iter().map(|r| r.recorded.clone()).collect();
    match refs {
        Some(r) if !(r.len() == 1 && pin == Some(r[0].as_str())) => r,
        _ => Vec::new(),
    }
}

/// The last session's tab, context and pin arrived.
pub(in crate::tui) fn loaded(s: &mut State, r: Remembered) -> Vec<Effect> {
    // Only while the person has not moved yet.
    let tab = r.tab.filter(|_| s.tab == Tab::Prompts);
    if let Some(tab) = tab {
        s.tab = tab;
    }
    s.restore = Remembered { tab, ..r };
    resume(s)
}

/// Restore what can be now: the pin and the tab's context once the
/// prompts and sessions they name are loaded (called when either loads).
pub(in crate::tui) fn resume(s: &mut State) -> Vec<Effect> {
    let mut out = restore_pin(s);
    out.extend(restore_context(s));
    out
}

/// Pin the remembered run once the sessions are there.
fn restore_pin(s: &mut State) -> Vec<Effect> {
    if !s.sessions.loaded {
        return Vec::new();
    }
    let Some(want) = s.restore.pin.take() else {
        return Vec::new();
    };
    match recording(s, &want) {
        Some(v) => {
            s.pinned = Some(Box::new(v));
            s.info(rust_i18n::t!("tui.status.pin_restored", run = want).into_owned());
        }
        None => s.info(rust_i18n::t!("tui.status.pin_gone", run = want).into_owned()),
    }
    Vec::new()
}

/// The recorded run `session#N` as a finished view, if it is still there.
fn recording(s: &mut State, reference: &str) -> Option<RunView> {
    let (si, ri) = s.sessions.sessions.iter().enumerate().find_map(|(si, x)| {
        (0..x.runs.len())
            .find(|&ri| x.reference(ri) == reference)
            .map(|ri| (si, ri))
    })?;
    Some(view_of_record(s, si, ri))
}

/// Put back what the remembered tab showed, once what it needs has
/// loaded; when it is gone, open on Prompts and say so.
fn restore_context(s: &mut State) -> Vec<Effect> {
    let Some(tab) = s.restore.tab else {
        return Vec::new();
    };
    let ready = match tab {
        Tab::Edit | Tab::Migrate => s.prompts.loaded,
        Tab::Run | Tab::Sweep | Tab::Compare => {
            s.sessions.loaded && s.restore.pin.is_none() && (!s.restore.shown.is_empty() || s.prompts.loaded)
        }
        // A tab that shows no context of its own comes back as it is.
        _ => true,
    };
    if !ready {
        return Vec::new();
    }
    let r = std::mem::take(&mut s.restore);
    s.restore.pin = r.pin;
    if s.tab != tab {
        return Vec::new();
    }
    match tab {
        Tab::Edit | Tab::Migrate => reopen_prompt(s, tab, r.prompt.as_deref()),
        Tab::Run | Tab::Sweep | Tab::Compare if r.shown.is_empty() && s.pinned.is_none() => {
            reopen_unrecorded(s, r.prompt.as_deref())
        }
        Tab::Run | Tab::Sweep | Tab::Compare => reshow(s, tab, &r.shown),
        _ => Vec::new(),
    }
}

/// Edit or Migrate: the prompt it showed, selected, open in the editor
/// (Edit) or migrated again (Migrate).
fn reopen_prompt(s: &mut State, tab: Tab, id: Option<&str>) -> Vec<Effect> {
    let found = id.and_then(|id| s.prompts.prompts.iter().position(|p| p.id == id));
    let (Some(id), Some(i)) = (id, found) else {
        return gone(s, id.unwrap_or_default());
    };
    s.prompts.filter.clear();
    s.prompts.selected = s.prompts.filtered().iter().position(|&k| k == i).unwrap_or(0);
    let p = Box::new(s.prompts.prompts[i].clone());
    let open = if tab == Tab::Edit {
        Nav::OpenPrompt(p)
    } else {
        Nav::Migrate(Some(p))
    };
    let said = rust_i18n::t!("tui.status.context_restored", what = id).into_owned();
    vec![Effect::Nav(open), Effect::Nav(Nav::Say(said))]
}

/// Run, Sweep or Compare showed runs no session holds (a replay's), or
/// nothing: the tab opens empty, with the prompt they ran open as what
/// `r` runs when it is still there.
fn reopen_unrecorded(s: &mut State, id: Option<&str>) -> Vec<Effect> {
    let Some(p) = id.and_then(|id| s.prompts.prompts.iter().find(|p| p.id == id)) else {
        return Vec::new();
    };
    let said = rust_i18n::t!("tui.status.context_rerun", what = p.id).into_owned();
    vec![
        Effect::Nav(Nav::OpenPrompt(Box::new(p.clone()))),
        Effect::Nav(Nav::Say(said)),
    ]
}

/// Run, Sweep or Compare: the recorded runs on show again (for Run and
/// Sweep, the pinned run when it was the one on show); Compare with only
/// its pin keeps the pin's own message.
fn reshow(s: &mut State, tab: Tab, refs: &[String]) -> Vec<Effect> {
    let pin_only = refs.is_empty() && s.pinned.is_some();
    if pin_only && tab == Tab::Compare {
        return Vec::new();
    }
    let refs: Vec<String> = if pin_only {
        s.pinned.iter().filter_map(|p| p.recorded.clone()).collect()
    } else {
        refs.to_vec()
    };
    let views: Option<Vec<RunView>> = refs.iter().map(|r| recording(s, r)).collect();
    let shown = match views.map(Vec::into_iter).as_mut().map(|v| (v.next(), v.next())) {
        Some((Some(one), None)) => Shown::Single(Box::new(one)),
        Some((Some(json), Some(jsonl))) => Shown::Twins {
            json: Box::new(json),
            jsonl: Box::new(jsonl),
        },
        _ => return gone(s, &refs.join(" + ")),
    };
    s.show(shown);
    s.info(rust_i18n::t!("tui.status.context_restored", what = refs.join(" + ")).into_owned());
    match tab {
        Tab::Compare => vec![Effect::Nav(Nav::Compare)],
        Tab::Sweep => vec![Effect::Nav(Nav::Sweep)],
        _ => Vec::new(),
    }
}

/// What the tab showed is gone: open on Prompts, and say what is missing.
fn gone(s: &mut State, what: &str) -> Vec<Effect> {
    s.tab = Tab::Prompts;
    let what = if what.is_empty() { "?" } else { what };
    s.info(rust_i18n::t!("tui.status.context_gone", what = what).into_owned());
    Vec::new()
}
