//! A recorded run as the workbench shows it: the prompt it was made with,
//! and a finished view of it (the Sessions tab opens one, the last
//! session's pin and runs come back as one).

use std::sync::Arc;

use super::{Origin, Phase, RunView, Source, schemas_for};
use crate::prompt::PromptConfig;
use crate::run::Spec;
use crate::session::RunRecord;
use crate::tui::State;

/// The prompt a recorded run was made with: its snapshot, else the loaded
/// prompt of that id, else a bare one of the recorded response type.
pub fn prompt_of_record(s: &State, rec: &RunRecord) -> PromptConfig {
    if let Ok(p) = rec.prompt_config() {
        return p;
    }
    if let Some(p) = s.prompts.by_id(&rec.prompt_id) {
        return p.clone();
    }
    PromptConfig {
        id: rec.prompt_id.clone(),
        response_type: rec.response_type,
        schema: rec.prompt.get("schema").filter(|v| v.is_object()).cloned(),
        ..PromptConfig::default()
    }
}

/// Run `ri` of session `si` as `session#N`.
pub(in crate::tui) fn reference(s: &State, si: usize, ri: usize) -> String {
    s.sessions.sessions[si].reference(ri)
}

/// A recorded run as a finished view (its recorded reference set).
pub(in crate::tui) fn view_of_record(s: &mut State, si: usize, ri: usize) -> RunView {
    let rec = s.sessions.sessions[si].runs[ri].clone();
    let prompt = prompt_of_record(s, &rec);
    let schemas = Arc::new(schemas_for(&prompt));
    let id = s.next_id;
    s.next_id += 1;
    let t = rec.transcript();
    let pieces: Vec<String> = t.pieces.iter().map(|p| p.text.clone()).collect();
    let mut v = RunView::from_text(
        id,
        &prompt,
        schemas,
        &rec.text,
        t.has_token_pieces().then_some(pieces.as_slice()),
        rec.finish,
        s.tg_python,
    );
    v.provider.clone_from(&rec.provider.name);
    v.max_tokens = rec.params.max_tokens;
    v.usage = rec.usage;
    v.elapsed_ms = rec.total_ms;
    v.structured_path = rec.structured_path;
    v.note = Some(rust_i18n::t!("tui.msg.recorded_note", run = reference(s, si, ri)).into_owned());
    v.recorded = Some(reference(s, si, ri));
    v.token_ids = crate::run::continuation::exact_ids(&rec);
    v.continuation_token.clone_from(&rec.continuation_token);
    // Run again (by each strategy, `S`) on the workbench's provider, from
    // the recorded prompt and variables.
    let mut spec = Spec::new(prompt.clone(), rec.variables.clone()).limit(rec.params.max_tokens);
    spec.tg_python = s.tg_python;
    v.origin = Some(Arc::new(Origin {
        provider: s.provider.clone(),
        source: Source::Prompt(Box::new(spec)),
    }));
    if let Some(e) = &rec.error {
        v.phase = Phase::Failed(e.to_string());
    }
    v
}
