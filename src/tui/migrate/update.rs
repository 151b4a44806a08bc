//! The Migrate tab: migrating the selection, writing it (asking before an overwrite), running the pair.

use super::{MigrateView, WriteOutcome};
use crate::prompt::PromptConfig;
use crate::tui::Effect;
use crate::tui::component::Nav;
use crate::tui::keymap::Action;
use crate::tui::state::{State, Tab};

/// The prompt the Migrate tab acts on: the selection on the prompt list, or
/// (from other tabs) the prompt open in the editor with its edits.
pub(in crate::tui) fn migrate_source(s: &State) -> Option<PromptConfig> {
    if s.tab != Tab::Prompts
        && let Some(e) = &s.editor
        && let Ok((p, _)) = e.config()
    {
        return Some(p);
    }
    s.prompts.selected_prompt().cloned()
}

/// The file a migration is written to: `<new id>.toml` next to the source.
pub fn migrate_target(src: &PromptConfig, new_id: &str) -> String {
    let dir = std::path::Path::new(&src.origin.file)
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    dir.join(format!("{new_id}.toml")).display().to_string()
}

pub(in crate::tui) fn migrate_selected(s: &mut State) {
    let src = migrate_source(s);
    migrate_selected_from(s, src);
}

pub(in crate::tui) fn migrate_selected_from(s: &mut State, src: Option<PromptConfig>) {
    let Some(src) = src else {
        s.migrate = None;
        s.info(rust_i18n::t!("tui.msg.migrate_none_selected"));
        return;
    };
    // The first id no loaded prompt has (`<id>-jsonl`, `<id>-jsonl-2`, …),
    // as `cutline migrate` picks it: never the bundled twin's file.
    let id = crate::prompt::migrate::free_id(&src.id, |id| s.prompts.prompts.iter().any(|p| p.id == id));
    let mut result = crate::prompt::migrate::migrate(&src, Some(&id));
    let target = match &mut result {
        Ok(m) => {
            let t = migrate_target(&src, &m.config.id);
            m.config.origin = crate::prompt::Origin {
                file: t.clone(),
                ..crate::prompt::Origin::default()
            };
            t
        }
        Err(_) => String::new(),
    };
    match &result {
        Ok(m) => s.info(rust_i18n::t!(
            "tui.msg.migration",
            prompt = src.id,
            flags = m.flags.len(),
            unconvertible = m.unconvertible.len()
        )),
        Err(e) => s.error(e.to_string()),
    }
    let rows = super::rows::rows(&src, &result);
    s.migrate = Some(MigrateView {
        source: src,
        result,
        rows,
        top: 0,
        target,
        confirm_overwrite: false,
        written: None,
    });
}

pub(in crate::tui) fn migrate_write(s: &mut State) -> Vec<Effect> {
    if s.tab != Tab::Migrate || s.migrate.is_none() {
        migrate_selected(s);
        s.tab = Tab::Migrate;
    }
    let Some(m) = &s.migrate else { return Vec::new() };
    let Ok(mig) = &m.result else {
        s.error(rust_i18n::t!("tui.msg.migrate_nothing"));
        return Vec::new();
    };
    if mig.config.schema.is_none() && m.source.schema.is_some() {
        s.error(rust_i18n::t!("tui.msg.migrate_unconverted"));
        return Vec::new();
    }
    let overwrite = m.confirm_overwrite;
    let config = Box::new(mig.config.clone());
    let text = rust_i18n::t!("tui.msg.writing", file = m.target).into_owned();
    s.info(text);
    vec![Effect::WriteMigrated { config, overwrite }]
}

pub(in crate::tui) fn migrate_written(s: &mut State, w: WriteOutcome) -> Vec<Effect> {
    let key = s.keymap.key_for(Action::MigrateWrite);
    let Some(m) = &mut s.migrate else { return Vec::new() };
    match w {
        WriteOutcome::Written(file) => {
            m.confirm_overwrite = false;
            m.written = Some(file.clone());
            s.info(rust_i18n::t!("tui.msg.migrate_wrote", file = file));
            vec![Effect::LoadPrompts]
        }
        WriteOutcome::Exists(file) => {
            m.confirm_overwrite = true;
            s.error(rust_i18n::t!("tui.msg.migrate_exists", file = file, key = key));
            Vec::new()
        }
        WriteOutcome::Failed(e) => {
            m.confirm_overwrite = false;
            s.error(rust_i18n::t!("tui.msg.not_written", error = e));
            Vec::new()
        }
    }
}

pub(in crate::tui) fn migrate_twins(s: &mut State) -> Vec<Effect> {
    let Some(m) = &s.migrate else {
        s.info(rust_i18n::t!("tui.msg.migrate_no_view"));
        return Vec::new();
    };
    let Ok(mig) = &m.result else {
        s.error(rust_i18n::t!("tui.msg.migrate_no_run"));
        return Vec::new();
    };
    let src = m.source.clone();
    let migrated = mig.config.clone();
    let vars = match &s.editor {
        Some(e) if e.base.id == src.id => e.config().map(|(_, v)| v).unwrap_or_default(),
        _ => src.inputs.first().map(|i| i.vars.clone()).unwrap_or_default(),
    };
    vec![Effect::Nav(Nav::RunPair {
        array: Box::new(src),
        lines: Box::new(migrated),
        vars,
    })]
}
