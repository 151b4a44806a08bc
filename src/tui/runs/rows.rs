//! The scrolling panes of the Run and Sweep tabs (responses, the JSON and
//! the JSONL parse) as rows: how many, what each says, and what each parse
//! pane shows in the current tab (the run, or its cut at the sweep cursor).

use super::json::{self, JsonData};
use super::jsonl::{self, JsonlData};
use crate::tui::state::{OutPane, State, Tab};
use crate::tui::text;

/// Rows of a scrolling pane in the current tab: the one count the reducer
/// scrolls and searches over and the panes draw.
pub fn rows(s: &State, pane: OutPane) -> usize {
    match pane {
        OutPane::Response => s.shown.as_ref().map_or(0, |x| x.json_side().line_count()),
        OutPane::Response2 => s.shown.as_ref().map_or(0, |x| x.jsonl_side().line_count()),
        OutPane::Json => json_source(s).map_or(0, |d| json::rows(&d)),
        OutPane::Jsonl => jsonl_source(s).map_or(0, |d| jsonl::rows(&d)),
    }
}

/// The text of row `i` of a scrolling pane, as drawn but unclipped (what
/// `/` searches).
pub fn row_text(s: &State, pane: OutPane, i: usize) -> Option<String> {
    match pane {
        OutPane::Response | OutPane::Response2 => {
            let shown = s.shown.as_ref()?;
            let r = if pane == OutPane::Response {
                shown.json_side()
            } else {
                shown.jsonl_side()
            };
            (i < r.line_count()).then(|| text::line_at(&r.text, &r.line_starts, i).to_owned())
        }
        OutPane::Json => json::row_text(&json_source(s)?, i),
        OutPane::Jsonl => jsonl::row_text(&jsonl_source(s)?, i),
    }
}

/// What the JSON pane shows in the current tab: the run, or its cut at the
/// sweep cursor.
pub fn json_source(s: &State) -> Option<JsonData<'_>> {
    if s.tab == Tab::Sweep {
        let c = s.sweep.ready()?.json_cut.as_ref()?;
        return Some(JsonData {
            elements: &c.json.elements,
            analysis: Some(&c.json),
            live: false,
            text: None,
        });
    }
    let r = s.shown.as_ref()?.json_side();
    Some(JsonData {
        elements: &r.elements,
        analysis: r.json.as_ref(),
        live: r.live(),
        text: Some(&r.text),
    })
}

/// What the JSONL pane shows in the current tab.
pub fn jsonl_source(s: &State) -> Option<JsonlData<'_>> {
    if s.tab == Tab::Sweep {
        let c = s.sweep.ready()?.jsonl_cut.as_ref()?;
        return Some(JsonlData {
            analysis: &c.jsonl,
            live: false,
            ignored: None,
        });
    }
    let r = s.shown.as_ref()?.jsonl_side();
    Some(JsonlData {
        analysis: &r.jsonl,
        live: r.live(),
        ignored: r.ignored.as_deref(),
    })
}

/// Scroll `pane` by `by` rows; scrolling to the end follows new rows.
pub fn scroll_pane(s: &mut State, pane: OutPane, by: isize) {
    let rows = rows(s, pane);
    let height = crate::tui::layout::inner_height(crate::tui::layout::pane_rect(s, pane));
    let max = rows.saturating_sub(height);
    let sc = s.scroll_mut(pane);
    let cur = sc.top_for(rows, height);
    let next = if by < 0 {
        cur.saturating_sub(by.unsigned_abs())
    } else {
        cur.saturating_add(by.unsigned_abs()).min(max)
    };
    sc.top = next;
    sc.follow = next >= max && by > 0;
}

/// The Run tab's panes in focus order (the twin's response too for twins).
pub fn pane_order(s: &State) -> &'static [OutPane] {
    if s.shown.as_ref().is_some_and(super::Shown::twins) {
        &[OutPane::Response, OutPane::Response2, OutPane::Json, OutPane::Jsonl]
    } else {
        &[OutPane::Response, OutPane::Json, OutPane::Jsonl]
    }
}
