//! Where everything goes. The same functions place the panes when drawing
//! and find the pane under the mouse in the reducer, so they always agree.

use ratatui::layout::{Constraint, Direction, Layout, Rect};

use super::state::{OutPane, State, Tab};

/// The three bands of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    /// The tab bar (one row).
    pub tabs: Rect,
    /// The active tab.
    pub body: Rect,
    /// The status bar (two rows).
    pub status: Rect,
}

/// Split the whole terminal.
pub fn screen(area: Rect) -> Screen {
    let [tabs, body, status] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0), Constraint::Length(2)]).areas(area);
    Screen { tabs, body, status }
}

/// The panes of the Run tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAreas {
    /// The raw response (the JSON run's, for twins).
    pub response: Rect,
    /// The JSONL twin's raw response.
    pub response2: Option<Rect>,
    /// The JSON-array parse.
    pub json: Rect,
    /// The JSONL parse.
    pub jsonl: Rect,
}

/// Split the Run tab: responses on top, the two parses side by side below.
pub fn run_areas(body: Rect, twins: bool) -> RunAreas {
    let [top, bottom] = Layout::vertical([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(body);
    let [json, jsonl] = halves(bottom);
    if twins {
        let [a, b] = halves(top);
        RunAreas {
            response: a,
            response2: Some(b),
            json,
            jsonl,
        }
    } else {
        RunAreas {
            response: top,
            response2: None,
            json,
            jsonl,
        }
    }
}

/// The panes of the Sweep tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepAreas {
    /// The chart.
    pub chart: Rect,
    /// One line: the cut and the counts under the cursor.
    pub summary: Rect,
    /// The JSON-array parse at the cut.
    pub json: Rect,
    /// The JSONL parse at the cut.
    pub jsonl: Rect,
}

/// Split the Sweep tab.
pub fn sweep_areas(body: Rect) -> SweepAreas {
    let [chart, summary, bottom] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Length(1), Constraint::Min(3)]).areas(body);
    let [json, jsonl] = halves(bottom);
    SweepAreas {
        chart,
        summary,
        json,
        jsonl,
    }
}

/// Left and right halves.
pub fn halves(r: Rect) -> [Rect; 2] {
    Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(50), Constraint::Percentage(50)])
        .areas(r)
}

/// Rows inside a bordered pane of `r`.
pub fn inner_height(r: Rect) -> usize {
    usize::from(r.height.saturating_sub(2))
}

/// The whole terminal as a rect.
pub fn full(state: &State) -> Rect {
    Rect::new(0, 0, state.size.0, state.size.1)
}

/// The scrolling pane at a screen cell, if any, and its rect.
pub fn pane_at(state: &State, col: u16, row: u16) -> Option<(OutPane, Rect)> {
    let body = screen(full(state)).body;
    let hit = |r: Rect| r.contains(ratatui::layout::Position { x: col, y: row });
    match state.tab {
        Tab::Run => {
            let twins = matches!(&state.shown, Some(x) if x.twins());
            let a = run_areas(body, twins);
            let mut panes = vec![
                (OutPane::Response, a.response),
                (OutPane::Json, a.json),
                (OutPane::Jsonl, a.jsonl),
            ];
            if let Some(r2) = a.response2 {
                panes.push((OutPane::Response2, r2));
            }
            panes.into_iter().find(|(_, r)| hit(*r))
        }
        Tab::Sweep => {
            let a = sweep_areas(body);
            [(OutPane::Json, a.json), (OutPane::Jsonl, a.jsonl)]
                .into_iter()
                .find(|(_, r)| hit(*r))
        }
        _ => None,
    }
}

/// The rect of a scrolling pane in the current tab.
pub fn pane_rect(state: &State, pane: OutPane) -> Rect {
    pane_rect_in(state, screen(full(state)).body, pane)
}

/// Where `pane` is drawn within `body`, the screen's body.
pub fn pane_rect_in(state: &State, body: Rect, pane: OutPane) -> Rect {
    if state.tab == Tab::Sweep {
        let a = sweep_areas(body);
        return if pane == OutPane::Jsonl { a.jsonl } else { a.json };
    }
    let twins = matches!(&state.shown, Some(x) if x.twins());
    let a = run_areas(body, twins);
    match pane {
        OutPane::Response => a.response,
        OutPane::Response2 => a.response2.unwrap_or(a.response),
        OutPane::Json => a.json,
        OutPane::Jsonl => a.jsonl,
    }
}

/// Title cells of the tab bar: (tab, first column, width).
pub fn tab_spans() -> Vec<(Tab, u16, u16)> {
    let mut x = 0u16;
    Tab::ALL
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let label = tab_label(i, *t);
            let w = super::text::u16_of(super::text::width(&label));
            let span = (*t, x, w);
            x = x.saturating_add(w + 1);
            span
        })
        .collect()
}

/// The label of tab `i`.
pub fn tab_label(i: usize, t: Tab) -> String {
    format!(" {} {} ", i + 1, t.title())
}

/// The tab under column `col` of the tab bar.
pub fn tab_at(col: u16) -> Option<Tab> {
    tab_spans()
        .into_iter()
        .find(|(_, x, w)| col >= *x && col < x + w)
        .map(|(t, _, _)| t)
}
