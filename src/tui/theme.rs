//! Styles, with `NO_COLOR` honoured: without colour every distinction is
//! made with bold, reverse, underline and dim, or with the glyphs themselves.

use ratatui::style::{Color, Modifier, Style};

/// The workbench's styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// False when `NO_COLOR` is set (to anything but the empty string).
    pub color: bool,
}

impl Default for Theme {
    fn default() -> Self {
        Self { color: true }
    }
}

impl Theme {
    /// Colour unless `NO_COLOR` is set and not empty (<https://no-color.org>).
    pub fn from_env() -> Self {
        Self {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn fg(self, c: Color, fallback: Modifier) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new().add_modifier(fallback)
        }
    }

    /// A good outcome (✓).
    pub fn ok(self) -> Style {
        self.fg(Color::Green, Modifier::empty())
    }

    /// A failed outcome (✗).
    pub fn bad(self) -> Style {
        self.fg(Color::Red, Modifier::BOLD)
    }

    /// Something to notice (salvaged, truncated).
    pub fn warn(self) -> Style {
        self.fg(Color::Yellow, Modifier::ITALIC)
    }

    /// Secondary text.
    pub fn dim(self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    /// Headings and the focused pane's border.
    pub fn accent(self) -> Style {
        self.fg(Color::Cyan, Modifier::BOLD).add_modifier(Modifier::BOLD)
    }

    /// The selected row.
    pub fn selected(self) -> Style {
        if self.color {
            Style::new().bg(Color::Blue).fg(Color::White)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// Series colours of the sweep chart: strict JSON, salvage, JSONL.
    pub fn series(self, i: usize) -> Style {
        if !self.color {
            return Style::new();
        }
        Style::new().fg(match i {
            0 => Color::Red,
            1 => Color::Yellow,
            2 => Color::Green,
            _ => Color::Magenta,
        })
    }
}
