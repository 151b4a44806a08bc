//! The small types of the workbench's state that every component reads:
//! the tabs, the modes keys go to, the scroll of a pane, the status-line
//! message. The root [`State`] itself (what every tab shares, and one field
//! per component's state) is defined at the root, `tui`, and re-exported
//! here; only the reducer ([`super::update`]) changes it.

pub use super::State;

/// Which component, by name: the registry's key, and what a `component::Nav`, an
/// `work::Answer`, `Place::Under` or `State::overlay`
/// names. A name, not a closed enum, so a new component needs no variant
/// here.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(pub &'static str);

impl std::fmt::Debug for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// The tabs, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tab {
    /// The prompt list.
    Prompts,
    /// The editor.
    Edit,
    /// Response, JSON and JSONL panes.
    Run,
    /// The truncation sweep.
    Sweep,
    /// Recorded sessions.
    Sessions,
    /// Migration of a JSON-array prompt to JSONL: diff, flags, write.
    Migrate,
    /// Extraction-quality comparison of the pair on show.
    Compare,
}

impl Tab {
    /// Every tab, in order.
    pub const ALL: [Tab; 7] = [
        Tab::Prompts,
        Tab::Edit,
        Tab::Run,
        Tab::Sweep,
        Tab::Sessions,
        Tab::Migrate,
        Tab::Compare,
    ];

    /// Its title, in the UI language.
    pub fn title(self) -> String {
        let key = match self {
            Tab::Prompts => "tui.tab.prompts",
            Tab::Edit => "tui.tab.edit",
            Tab::Run => "tui.tab.run",
            Tab::Sweep => "tui.tab.sweep",
            Tab::Sessions => "tui.tab.sessions",
            Tab::Migrate => "tui.tab.migrate",
            Tab::Compare => "tui.tab.compare",
        };
        rust_i18n::t!(key).into_owned()
    }

    /// Its 0-based position.
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }
}

/// What keys go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Keys are actions (the keymap).
    Normal,
    /// Typing filters the prompt list.
    Filter,
    /// Typing edits the focused editor field.
    Insert,
    /// Typing a max-token limit: the digits so far.
    LimitInput(String),
    /// The provider picker is open: keys move and choose.
    Picker,
    /// Typing the model of the provider under the picker's cursor: the
    /// text so far.
    ModelInput(String),
    /// The key list is open over the tab; any key closes it.
    Help,
    /// Typing the eval view's limits (`m` there): the text so far.
    EvalLimits(String),
    /// Typing a search in the focused pane (`/` on the Run and Sweep
    /// tabs): the pane and the text so far.
    Search(OutPane, String),
    /// Keys go to this component (a question it asks, a popup of its
    /// own): its `Component::key` reads them, its state says what for.
    Own(Id),
}

/// A question asked in the status bar that the next key answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// Quit with unsaved edits: the quit key again quits.
    QuitUnsaved,
}

/// A text pane's scroll position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scroll {
    /// First visible row.
    pub top: usize,
    /// Keep the last row in view as rows arrive.
    pub follow: bool,
}

impl Scroll {
    /// Following the end.
    pub fn following() -> Self {
        Self { top: 0, follow: true }
    }

    /// The first visible row for `rows` rows in `height` rows of screen.
    pub fn top_for(self, rows: usize, height: usize) -> usize {
        let max = rows.saturating_sub(height);
        if self.follow { max } else { self.top.min(max) }
    }
}

/// The panes of the Run and Sweep tabs that scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutPane {
    /// The raw response (the JSON-side run's, for twins).
    Response,
    /// The JSONL twin's raw response.
    Response2,
    /// The JSON-array parse.
    Json,
    /// The JSONL parse.
    Jsonl,
}

impl OutPane {
    /// Its place in [`State::scrolls`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A message in the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// True for an error.
    pub error: bool,
    /// The text.
    pub text: String,
}

/// What the first screen without a local model says to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstScreen {
    /// Recorded runs exist: replay the twins, or install the model.
    Replay,
    /// Nothing recorded either: install the model.
    Install,
}
