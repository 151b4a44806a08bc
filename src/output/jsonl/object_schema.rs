//! What the prompt's `object-schema` would reject: TrustGraph ignores it, so
//! cutline reports it beside the verdict, never in it.

use super::{JsonlAnalysis, LineStatus};

/// The lines of a JSONL analysis that `object-schema` (`ignored`) would
/// reject, with why: what TrustGraph keeps unvalidated.
pub fn object_schema_rejects(
    analysis: &JsonlAnalysis,
    ignored: &crate::output::schema::CompiledSchema,
) -> Vec<(usize, Vec<crate::output::schema::Violation>)> {
    analysis
        .lines
        .iter()
        .filter_map(|o| match o.status {
            LineStatus::Ok { item } => Some((o.line, ignored.validate(&analysis.items[item]).err()?)),
            _ => None,
        })
        .collect()
}

/// The warning naming the lines `object-schema` would reject.
pub fn object_schema_warning(rejects: &[(usize, Vec<crate::output::schema::Violation>)]) -> String {
    let lines: Vec<String> = rejects.iter().map(|(l, _)| l.to_string()).collect();
    let which = if lines.is_empty() {
        "no line".to_owned()
    } else {
        format!("line(s) {}", lines.join(", "))
    };
    format!(
        "`object-schema` would reject {which}; TrustGraph ignores `object-schema` (it reads only `schema`), so \
         every parsed line is kept, here as there"
    )
}
