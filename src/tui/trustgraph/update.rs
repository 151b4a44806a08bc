//! The reducer's part: which prompt `T` pushes, the question, the answers.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use rust_i18n::t;

use super::error::NoTarget;
use super::jobs::{Check, Done, Push, Refusal, TgMsg};
use super::state::{Stage, TgState};
use super::ID;
use crate::tui::Effect;
use crate::tui::state::{Mode, State, Tab};

/// `T`: check the push of the prompt on show against the live workspace.
pub fn start(s: &mut State) -> Vec<Effect> {
    let st = s.parts.get_mut::<TgState>();
    if let Stage::Checking(id) | Stage::Pushing(id) = &st.stage {
        let text = t!("tui.tg.busy", id = id).into_owned();
        s.info(text);
        return Vec::new();
    }
    let Some(pulled) = st.pulled.clone() else {
        let dir = s.prompts_dir.display().to_string();
        s.error(t!("tui.tg.not_pulled", dir = dir));
        return Vec::new();
    };
    let check = match target(s) {
        Ok(c) => c,
        Err(why) => {
            s.error(why.to_string());
            return Vec::new();
        }
    };
    s.info(t!("tui.tg.checking", id = check.id, host = pulled.host()));
    s.parts.get_mut::<TgState>().stage = Stage::Checking(check.id.clone());
    vec![Effect::Job {
        to: ID,
        job: Box::new(check),
    }]
}

/// The prompt on show: the migration on the Migrate tab (under the id of
/// the prompt it migrates: TrustGraph's flows call prompts by id), else the
/// editor's prompt away from the Prompts tab, else the selection.
fn target(s: &State) -> Result<Check, NoTarget> {
    if s.tab == Tab::Migrate
        && let Some(m) = &s.migrate
    {
        let Ok(mig) = &m.result else {
            return Err(NoTarget::MigrateNothing);
        };
        if mig.config.schema.is_none() && m.source.schema.is_some() {
            return Err(NoTarget::MigrateUnconverted);
        }
        let mut config = mig.config.clone();
        config.id.clone_from(&m.source.id);
        config.origin.clone_from(&m.source.origin);
        return Ok(Check {
            id: m.source.id.clone(),
            migration: Some(Box::new(config)),
            unsaved: false,
        });
    }
    let unsaved = |id: &str| s.editor.as_ref().is_some_and(|e| e.dirty && e.base.id == id);
    let id = match &s.editor {
        Some(e) if s.tab != Tab::Prompts => e.base.id.clone(),
        _ => match s.prompts.selected_prompt() {
            Some(p) => p.id.clone(),
            None => return Err(NoTarget::NoPrompt),
        },
    };
    Ok(Check {
        unsaved: unsaved(&id),
        id,
        migration: None,
    })
}

/// A job's answer.
pub fn answer(s: &mut State, msg: TgMsg) -> Vec<Effect> {
    match msg {
        TgMsg::Loaded(Ok(p)) => s.parts.get_mut::<TgState>().pulled = p,
        TgMsg::Loaded(Err(e)) => s.error(e.to_string()),
        TgMsg::Checked(Ok(ready)) => {
            s.parts.get_mut::<TgState>().stage = Stage::Ask(ready);
            s.mode = Mode::Own(ID);
        }
        TgMsg::Checked(Err(r)) | TgMsg::Pushed(Err(r)) => refused(s, r),
        TgMsg::Pushed(Ok(done)) => return pushed(s, &done),
    }
    Vec::new()
}

fn refused(s: &mut State, r: Refusal) {
    let lines = r.why.lines();
    let first = lines.first().cloned().unwrap_or_default();
    s.parts.get_mut::<TgState>().stage = Stage::Refused { id: r.id, lines };
    s.mode = Mode::Own(ID);
    s.error(first);
}

fn pushed(s: &mut State, d: &Done) -> Vec<Effect> {
    let st = s.parts.get_mut::<TgState>();
    st.stage = Stage::Idle;
    if let Some(p) = &mut st.pulled {
        p.version = d.versions.1;
    }
    let text = t!(
        "tui.tg.pushed",
        keys = d.keys.join(", "),
        push = d.push,
        from = d.versions.0,
        to = d.versions.1
    )
    .into_owned();
    if d.others {
        s.error(t!("tui.tg.others", from = d.versions.0, to = d.versions.1));
    }
    s.info(text);
    if d.wrote_file {
        vec![Effect::LoadPrompts]
    } else {
        Vec::new()
    }
}

/// A key while the question or the refusal is on show.
pub fn key(s: &mut State, k: &KeyEvent) -> Vec<Effect> {
    let st = s.parts.get_mut::<TgState>();
    match std::mem::take(&mut st.stage) {
        Stage::Ask(mut ready) => match k.code {
            KeyCode::Char('y') | KeyCode::Enter => {
                st.stage = Stage::Pushing(ready.id.clone());
                s.mode = Mode::Normal;
                s.info(t!("tui.tg.pushing", id = ready.id));
                vec![Effect::Job {
                    to: ID,
                    job: Box::new(Push(ready)),
                }]
            }
            KeyCode::Up
            | KeyCode::Down
            | KeyCode::Char('k' | 'j')
            | KeyCode::PageUp
            | KeyCode::PageDown
            | KeyCode::Home
            | KeyCode::End => {
                let last = super::view::ask_lines(&ready, st.pulled.as_ref(), s.theme)
                    .len()
                    .saturating_sub(1);
                let page = usize::from(s.size.1.saturating_sub(6)).max(1);
                ready.top = match k.code {
                    KeyCode::Up | KeyCode::Char('k') => ready.top.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => ready.top + 1,
                    KeyCode::PageUp => ready.top.saturating_sub(page),
                    KeyCode::PageDown => ready.top + page,
                    KeyCode::Home => 0,
                    _ => last,
                }
                .min(last);
                s.parts.get_mut::<TgState>().stage = Stage::Ask(ready);
                Vec::new()
            }
            _ => {
                s.mode = Mode::Normal;
                s.info(t!("tui.tg.cancelled", id = ready.id));
                Vec::new()
            }
        },
        // The refusal stays in the status line; any key closes it.
        _ => {
            s.mode = Mode::Normal;
            Vec::new()
        }
    }
}
