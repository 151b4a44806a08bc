//! The report page. maud escapes every interpolated value unless it is
//! wrapped in `PreEscaped`, which only the stylesheet and the charts (built
//! by `svg.rs` with the same escaping) are; so prompt text, model output,
//! ids and error messages can never become markup.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::{Line, Pair, Report, RunPanel, Section, svg};
use crate::compare::Score;
use crate::eval::{Row, limit_label};
use crate::llm::structured::Path as StructuredPath;
use crate::prompt::ResponseType;

/// The page's stylesheet (the chart rules are appended).
const PAGE_CSS: &str = include_str!("page.css");

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{:.0}%", x * 100.0))
}

fn opt<T: ToString>(x: Option<T>) -> String {
    x.map_or_else(|| "-".into(), |v| v.to_string())
}

fn limit(l: Option<u32>) -> String {
    l.map_or_else(|| "no limit".into(), |n| format!("{n} tokens"))
}

fn anchor(s: &Section) -> String {
    match s {
        Section::Pair(p) => format!("run-{}", p.json.number),
        Section::Single(r) => format!("run-{}", r.number),
    }
}

/// Items at the last cut: (strict, salvage, JSONL).
fn finals(s: &Section) -> (usize, Option<usize>, Option<usize>) {
    match s {
        Section::Pair(p) => (p.json.kept(), p.json.salvaged(), Some(p.jsonl.kept())),
        Section::Single(r) => match r.record.response_type {
            ResponseType::Jsonl => (0, None, Some(r.kept())),
            ResponseType::Json | ResponseType::Text => (r.kept(), r.salvaged(), None),
        },
    }
}

fn f1s(s: &Section) -> Option<[Score; 2]> {
    match s {
        Section::Pair(p) => p.compare.total.gold.clone(),
        Section::Single(_) => None,
    }
}

/// The whole page.
pub fn page(r: &Report) -> String {
    let pairs = r.sections.iter().filter(|s| matches!(s, Section::Pair(_))).count();
    let runs: usize = r
        .sections
        .iter()
        .map(|s| if matches!(s, Section::Pair(_)) { 2 } else { 1 })
        .sum();
    let models: Vec<String> = {
        let mut m: Vec<String> = r
            .sections
            .iter()
            .flat_map(|s| match s {
                Section::Pair(p) => vec![&p.json, &p.jsonl],
                Section::Single(x) => vec![&**x],
            })
            .map(|x| format!("{} / {}", x.record.provider.name, x.record.provider.model))
            .collect();
        m.sort();
        m.dedup();
        m
    };
    let doc = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { "cutline report: " (r.session_id) }
                style { (PreEscaped(PAGE_CSS)) (PreEscaped(svg::STYLE)) }
            }
            body {
                header {
                    h1 { "cutline report: " span.id { (r.session_id) } }
                    p.meta {
                        (r.source) " · " (runs) " runs shown (" (r.selected) " picked) · "
                        (pairs) " JSON/JSONL twin pairs · " (models.join(", "))
                    }
                    @if let Some(h) = r.headline() {
                        p.headline { (h) }
                    }
                    p.lede {
                        "What each parser keeps when the model's answer is cut: strict JSON (a consumer that parses the \
                         whole array), salvage (the complete elements of a cut array) and JSONL (one item per line)."
                    }
                }
                @if !r.notes.is_empty() {
                    section.notes {
                        h2 { "Notes" }
                        ul { @for n in &r.notes { li { (n) } } }
                    }
                }
                @if r.sections.is_empty() {
                    p.empty { "Nothing to show: the session holds no runs." }
                } @else {
                    (glance(r))
                }
                @if !r.table.is_empty() {
                    section #summary {
                        h2 { "Summary by prompt and limit" }
                        (summary_table(&r.table))
                    }
                }
                @if !r.limit_charts.is_empty() {
                    section #limits {
                        h2 { "Items against the max-token limit" }
                        @for c in &r.limit_charts {
                            figure { (svg::chart(c, false)) figcaption { (c.title) } }
                        }
                    }
                }
                @for s in &r.sections {
                    (section(s, &r.session_id))
                }
                footer { "Written by cutline " (env!("CARGO_PKG_VERSION")) " from " (r.source) "." }
            }
        }
    };
    doc.into_string()
}

fn glance(r: &Report) -> Markup {
    html! {
        section #glance {
            h2 { "At a glance" }
            table {
                thead { tr {
                    th { "run" } th { "prompt" } th { "input" } th { "limit" } th { "finish" }
                    th.num { "strict JSON" } th.num { "salvage" } th.num { "JSONL" } th.num { "F1 JSON" } th.num { "F1 JSONL" }
                } }
                tbody {
                    @for s in &r.sections {
                        @let (strict, salvage, jsonl) = finals(s);
                        @let (first, second) = match s {
                            Section::Pair(p) => (&p.json, Some(&p.jsonl)),
                            Section::Single(x) => (&**x, None),
                        };
                        @let f1 = f1s(s);
                        tr {
                            td { a href={"#" (anchor(s))} { "#" (first.number) @if let Some(b) = second { " + #" (b.number) } } }
                            td { (first.record.prompt_id) @if let Some(b) = second { br; (b.record.prompt_id) } }
                            td { (first.input.as_deref().unwrap_or("-")) }
                            td { (limit_label(first.record.params.max_tokens)) }
                            td { (first.record.finish.as_str()) @if let Some(b) = second { " / " (b.record.finish.as_str()) } }
                            td.num { @if first.record.response_type == ResponseType::Json { (strict) } @else { "-" } }
                            td.num { (opt(salvage)) }
                            td.num { (opt(jsonl)) }
                            td.num { (f1.as_ref().map_or_else(|| "-".into(), |g| pct(g[0].f1))) }
                            td.num { (f1.as_ref().map_or_else(|| "-".into(), |g| pct(g[1].f1))) }
                        }
                    }
                }
            }
        }
    }
}

fn summary_table(rows: &[Row]) -> Markup {
    html! {
        table {
            thead { tr {
                th { "prompt" } th { "type" } th.num { "limit" } th.num { "runs" } th.num { "failed" }
                th.num { "items" } th.num { "mean" } th.num { "salvage" } th.num { "valid" } th.num { "parse ok" }
                th.num { "cut" } th.num { "loops" } th.num { "precision" } th.num { "recall" } th.num { "F1" }
            } }
            tbody {
                @for r in rows {
                    @let g = r.gold.as_ref();
                    tr {
                        td { (r.prompt) } td { (r.response_type) } td.num { (limit_label(r.max_tokens)) }
                        td.num { (r.runs) } td.num { (r.failed) } td.num { (r.items_total) }
                        td.num { (r.items_mean.map_or_else(|| "-".into(), |m| format!("{m:.1}"))) }
                        td.num { @if r.response_type == ResponseType::Json { (r.salvaged_total) } @else { "-" } }
                        td.num { (pct(r.valid_rate)) } td.num { (pct(r.parse_ok_rate)) } td.num { (r.truncated) }
                        td.num { (r.loops) }
                        td.num { (pct(g.and_then(|g| g.precision))) }
                        td.num { (pct(g.and_then(|g| g.recall))) }
                        td.num { (pct(g.and_then(|g| g.f1))) }
                    }
                }
            }
        }
    }
}

fn section(s: &Section, session: &str) -> Markup {
    let chart = s.chart(session);
    let (strict, salvage, jsonl) = finals(s);
    html! {
        article.run id=(anchor(s)) {
            @match s {
                Section::Pair(p) => {
                    h2 { (p.json.record.prompt_id) " and its JSONL twin " (p.jsonl.record.prompt_id) }
                    p.meta { "input " (p.json.input.as_deref().unwrap_or("-")) " · " (limit(p.json.record.params.max_tokens)) }
                }
                Section::Single(r) => {
                    h2 { (r.record.prompt_id) }
                    p.meta { "input " (r.input.as_deref().unwrap_or("-")) " · " (limit(r.record.params.max_tokens)) " · no twin run in this session" }
                }
            }
            figure {
                (svg::chart(&chart, false))
                figcaption {
                    "Items recovered at every token cut "
                    @if matches!(s, Section::Pair(p) if p.json.estimated || p.jsonl.estimated) || matches!(s, Section::Single(r) if r.estimated) {
                        "(cuts from the o200k tokenizer)"
                    } @else { "(cuts at the recorded tokens)" }
                    ". At the end: strict JSON " (strict) ", salvage " (opt(salvage)) ", JSONL " (opt(jsonl)) "."
                }
            }
            @match s {
                Section::Pair(p) => {
                    (compare_table(p))
                    div.twins {
                        (run_card(&p.json, session))
                        (run_card(&p.jsonl, session))
                    }
                }
                Section::Single(r) => { div.single { (run_card(r, session)) } }
            }
        }
    }
}

fn compare_table(p: &Pair) -> Markup {
    let c = &p.compare;
    html! {
        h3 { "Item by item" }
        p.meta {
            "JSON kept " (c.a.kept) ", valid " (pct(c.a.valid_rate)) ", lost to truncation " (c.a.lost_to_truncation)
            " · JSONL kept " (c.b.kept) ", valid " (pct(c.b.valid_rate)) ", lost to truncation " (c.b.lost_to_truncation)
            @if let Some(g) = &p.gold_file { " · gold set " (g) } @else { " · no gold set for this input" }
        }
        table.compare {
            thead { tr {
                th { "item type" } th.num { "in both" } th.num { "only JSON" } th.num { "only JSONL" }
                th.num { "valid JSON" } th.num { "valid JSONL" }
                @if c.total.gold.is_some() {
                    th.num { "P / R / F1 JSON" } th.num { "P / R / F1 JSONL" }
                }
            } }
            tbody {
                @for t in &c.types {
                    tr {
                        td { (t.ty) } td.num { (t.both) } td.num { (t.only_a) } td.num { (t.only_b) }
                        td.num { (pct(t.a_valid_rate)) } td.num { (pct(t.b_valid_rate)) }
                        @if c.total.gold.is_some() {
                            td.num { (prf(t.gold.as_ref().map(|g| &g[0]))) }
                            td.num { (prf(t.gold.as_ref().map(|g| &g[1]))) }
                        }
                    }
                }
                tr.total {
                    td { "total" } td.num { (c.total.both) } td.num { (c.total.only_a) } td.num { (c.total.only_b) }
                    td.num { (pct(c.a.valid_rate)) } td.num { (pct(c.b.valid_rate)) }
                    @if let Some(g) = &c.total.gold {
                        td.num { (prf(Some(&g[0]))) } td.num { (prf(Some(&g[1]))) }
                    }
                }
            }
        }
        @let only: Vec<(&str, &Vec<String>)> = c.types.iter().flat_map(|t| [("only JSON", &t.only_a_keys), ("only JSONL", &t.only_b_keys)]).filter(|(_, k)| !k.is_empty()).collect();
        @if !only.is_empty() {
            details.keys {
                summary { "Items only one side kept" }
                @for (side, keys) in only {
                    p { strong { (side) ": " } (keys.join("; ")) }
                }
            }
        }
    }
}

fn prf(s: Option<&Score>) -> String {
    s.map_or_else(
        || "-".into(),
        |s| format!("{} / {} / {}", pct(s.precision), pct(s.recall), pct(s.f1)),
    )
}

fn run_card(r: &RunPanel, session: &str) -> Markup {
    let rec = &r.record;
    html! {
        div.card {
            h3 { (r.label(session)) " · " (rec.prompt_id) " · " span.tag { (rec.response_type) } }
            dl {
                dt { "provider" } dd { (rec.provider.name) " (" (rec.provider.kind) ")" }
                dt { "model" } dd { (rec.provider.model) }
                dt { "limit" } dd { (limit(rec.params.max_tokens)) }
                dt { "finish" } dd.finish { (rec.finish.as_str()) @if let Some(raw) = &rec.raw_reason { " (" (raw) ")" } }
                dt { "usage" } dd {
                    (opt(rec.usage.prompt_tokens)) " prompt · " (opt(rec.usage.completion_tokens)) " completion tokens"
                    @if let Some(n) = rec.usage.reasoning_tokens {
                        " (" (n) @if rec.usage.reasoning_estimated { " estimated" } " reasoning)"
                    }
                    @if let Some(n) = rec.usage.cached_tokens {
                        " · " (n) " cached"
                    }
                }
                @if let Some(note) = crate::run::budget_note(rec).filter(|n| n.contains("spent on reasoning")) {
                    dt { "budget" } dd.bad { (note) }
                }
                @for a in &rec.adjustments {
                    dt { "adjusted" } dd { (a.describe()) }
                }
                dt { "time" } dd { (rec.total_ms) " ms" @if let Some(ft) = rec.first_token_ms { " (first token " (ft) " ms)" } }
                @if rec.structured_path != StructuredPath::None {
                    dt { "structured" } dd { (rec.structured_path.as_str()) }
                }
                @if let Some(e) = &rec.error { dt { "error" } dd.bad { (e.to_string()) } }
            }
            p.verdict { (r.summary) }
            details.prompt {
                summary { "Prompt sent (" (rec.system.chars().count() + rec.rendered.chars().count()) " characters)" }
                @if !rec.system.is_empty() { h4 { "system" } pre { (rec.system) } }
                h4 { "user" }
                pre { (rec.rendered) }
            }
            (lines_table(&r.lines))
        }
    }
}

fn lines_table(lines: &[Line]) -> Markup {
    html! {
        table.lines {
            tbody {
                @for l in lines {
                    @let cls = match l.marks.iter().map(|m| m.good).collect::<Vec<_>>() {
                        m if m.contains(&Some(false)) => "bad",
                        m if m.contains(&Some(true)) => "ok",
                        _ => "plain",
                    };
                    tr class=(cls) {
                        td.n { (l.n) }
                        td.m { @for m in &l.marks {
                            span class=(match m.good { Some(true) => "ok", Some(false) => "bad", None => "plain" }) {
                                (match m.good { Some(true) => "✓ ", Some(false) => "✗ ", None => "· " }) (m.text)
                            }
                        } }
                        td.t { code { (l.text) } }
                    }
                }
            }
        }
    }
}
