//! `/` in the Run and Sweep tabs' panes: type a text, Enter finds it in the
//! focused pane (case-insensitive, in the rows as drawn), `n`/`N` go to the
//! next and previous hit (wrapping), `Esc` ends the search. Elsewhere `/`
//! filters the prompt list.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::Search;
use crate::tui::Effect;
use crate::tui::layout;
use crate::tui::runs::{row_text, rows};
use crate::tui::state::{Mode, OutPane, State, Tab};

/// Longest query typed.
const QUERY_MAX: usize = 200;

/// `/`: start typing a search when a pane of the Run or Sweep tab has the
/// focus and something is on show; false when `/` means something else here.
pub fn start(s: &mut State) -> bool {
    if !matches!(s.tab, Tab::Run | Tab::Sweep) || s.shown.is_none() {
        return false;
    }
    let pane = s.focus_in_tab();
    let last = s.search.as_ref().filter(|x| x.pane == pane).map(|x| x.query.clone());
    s.mode = Mode::Search(pane, last.unwrap_or_default());
    true
}

/// A key while typing the search.
pub fn key(s: &mut State, k: KeyEvent) -> Vec<Effect> {
    let Mode::Search(pane, query) = &mut s.mode else {
        return Vec::new();
    };
    let pane = *pane;
    match k.code {
        KeyCode::Esc => s.mode = Mode::Normal,
        KeyCode::Backspace => {
            query.pop();
        }
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) && query.chars().count() < QUERY_MAX => {
            query.push(c);
        }
        KeyCode::Enter => {
            let query = std::mem::take(query);
            s.mode = Mode::Normal;
            if query.is_empty() {
                s.search = None;
            } else {
                let from = current_top(s, pane);
                find(s, pane, query, from, true);
            }
        }
        _ => {}
    }
    Vec::new()
}

/// `n` / `N` while a search lasts: the next or previous hit. False when no
/// search is active here (the key keeps its usual meaning).
pub fn step(s: &mut State, forward: bool) -> bool {
    let Some(x) = s.search.clone() else {
        return false;
    };
    if !matches!(s.tab, Tab::Run | Tab::Sweep) {
        return false;
    }
    let from = match x.row {
        Some(r) if forward => r + 1,
        Some(r) => r,
        None => 0,
    };
    find(s, x.pane, x.query, from, forward);
    true
}

/// End the search (`Esc`); false when there was none.
pub fn end(s: &mut State) -> bool {
    s.search.take().is_some()
}

/// Rows of `pane` whose text holds `query`, ignoring case.
fn hits(s: &State, pane: OutPane, query: &str) -> Vec<usize> {
    let q = query.to_lowercase();
    (0..rows(s, pane))
        .filter(|&i| row_text(s, pane, i).is_some_and(|t| t.to_lowercase().contains(&q)))
        .collect()
}

/// Go to the first hit at or after `from` (forward) or before it
/// (backward), wrapping; say which hit it is.
fn find(s: &mut State, pane: OutPane, query: String, from: usize, forward: bool) {
    let all = hits(s, pane, &query);
    let pick = if forward {
        all.iter().position(|&r| r >= from).or((!all.is_empty()).then_some(0))
    } else {
        all.iter().rposition(|&r| r < from).or(all.len().checked_sub(1))
    };
    let Some(k) = pick else {
        s.error(rust_i18n::t!("tui.status.search_none", query = query).into_owned());
        s.search = Some(Search { pane, query, row: None });
        return;
    };
    let row = all[k];
    reveal(s, pane, row);
    s.info(
        rust_i18n::t!(
            "tui.status.search_hit",
            query = query,
            k = k + 1,
            n = all.len(),
            row = row + 1
        )
        .into_owned(),
    );
    s.search = Some(Search {
        pane,
        query,
        row: Some(row),
    });
}

/// The first row `pane` shows now.
fn current_top(s: &State, pane: OutPane) -> usize {
    let rows = rows(s, pane);
    let height = layout::inner_height(layout::pane_rect(s, pane));
    s.scroll(pane).top_for(rows, height)
}

/// Scroll `pane` so `row` is in view, a little below the top.
fn reveal(s: &mut State, pane: OutPane, row: usize) {
    let rows = rows(s, pane);
    let height = layout::inner_height(layout::pane_rect(s, pane));
    let top = current_top(s, pane);
    let sc = s.scroll_mut(pane);
    if row < top || row >= top + height {
        sc.top = row.saturating_sub(2).min(rows.saturating_sub(height));
    } else {
        sc.top = top;
    }
    sc.follow = false;
}
