//! Tabs reserved for features that are arriving later, saying so.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::super::state::Tab;
use super::super::theme::Theme;

/// Draw the placeholder of `tab`.
pub fn draw(f: &mut Frame<'_>, area: Rect, tab: Tab, theme: Theme) {
    let lines = match tab {
        Tab::Migrate => vec![
            Line::styled("Migrate — arriving later.", theme.accent()),
            Line::from(""),
            Line::from("Here a JSON-array prompt will be turned into its JSONL twin: the output"),
            Line::from("instructions, the per-line schema and the examples, side by side with the original."),
            Line::from(""),
            Line::styled(
                "Until then: write the twin by hand, set `twin = \"…\"` in the config, and press t.",
                theme.dim(),
            ),
        ],
        _ => vec![
            Line::styled("Compare — arriving later.", theme.accent()),
            Line::from(""),
            Line::from("Here the items of two runs (a prompt and its twin, or two limits) will be matched"),
            Line::from("against each other or a gold set, with overlap and what each one missed."),
            Line::from(""),
            Line::styled(
                "Until then: t runs a pair; s sweeps items against the limit.",
                theme.dim(),
            ),
        ],
    };
    super::draw_note(f, area, tab.title(), lines, theme);
}
