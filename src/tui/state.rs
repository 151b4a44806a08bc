//! The workbench's state: everything drawn comes from here, and only the
//! reducer ([`super::update`]) changes it. This root holds what every tab
//! shares (tab, mode, focus, scrolls, message, limit, provider) and one
//! field per feature state; the features' types live in their folders.

use std::path::PathBuf;

use super::keymap::Keymap;
use super::providers::{ProviderChoice, ProviderPicker};
use super::run::{RunView, Shown, Target};
use super::search::Search;
use super::sweep::Sweep;
use super::theme::Theme;
use crate::llm::structured::Path as StructuredPath;

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

/// Everything the workbench shows.
#[derive(Debug)]
pub struct State {
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// Styles.
    pub theme: Theme,
    /// Key bindings.
    pub keymap: Keymap,
    /// The tab on show.
    pub tab: Tab,
    /// Where keys go.
    pub mode: Mode,
    /// The search found last, while it lasts (`n`/`N`, `Esc` ends it).
    pub search: Option<Search>,
    /// A question the next key answers (any other key drops it).
    pub confirm: Option<Confirm>,
    /// Milliseconds since start.
    pub clock_ms: u64,
    /// Directory of prompts (for messages).
    pub prompts_dir: PathBuf,
    /// Directory of sessions.
    pub sessions_dir: PathBuf,
    /// The prompt list.
    pub prompts: super::prompts::PromptList,
    /// The prompt open for editing.
    pub editor: Option<super::editor::Editor>,
    /// What `r` runs.
    pub target: Target,
    /// The provider.
    pub provider: ProviderChoice,
    /// Whether the local model is installed (`None`: not checked yet).
    pub local_installed: Option<bool>,
    /// Structured output: off, or the path to ask for.
    pub structured: Option<StructuredPath>,
    /// Max-token limit (`None`: no limit).
    pub max_tokens: Option<u32>,
    /// The Python TrustGraph's service runs on (`--tg-python`): its limits
    /// decide which responses the verdict fails whole.
    pub tg_python: crate::output::tg::TgPython,
    /// Step of `-` / `+`.
    pub limit_step: u32,
    /// The run(s) on show.
    pub shown: Option<Shown>,
    /// The focused output pane.
    pub focus: OutPane,
    /// Each scrolling pane's position, indexed by [`OutPane::index`].
    pub scrolls: [Scroll; 4],
    /// The sweep of the runs on show.
    pub sweep: Sweep,
    /// The sessions tab.
    pub sessions: super::sessions::SessionsView,
    /// The status-bar message.
    pub message: Option<Message>,
    /// The first screen's one-line guide, until the first key or click.
    pub first_screen: Option<FirstScreen>,
    /// The provider picker (open in [`Mode::Picker`]).
    pub picker: ProviderPicker,
    /// The Migrate tab.
    pub migrate: Option<super::migrate::MigrateView>,
    /// The Compare tab.
    pub compare: super::compare::CompareView,
    /// The eval view (`E`).
    pub eval: super::eval::EvalView,
    /// The strategy table under the Compare report (`S`).
    pub costs: super::costs::Costs,
    /// The view open over its tab's body (the eval view over Compare),
    /// kept while the person visits other tabs.
    pub overlay: Option<super::component::Id>,
    /// A finished run pinned as compare side A (the run on show is B).
    pub pinned: Option<Box<RunView>>,
    /// What the last session kept and is not restored yet: the pin until
    /// the sessions load, the tab's context until what it needs loads (or
    /// the person moves).
    pub restore: super::remember::Remembered,
    /// Next run id.
    pub next_id: u64,
    /// Set once quitting.
    pub quit: bool,
}

impl State {
    /// A fresh workbench.
    pub fn new(prompts_dir: PathBuf, sessions_dir: PathBuf, keymap: Keymap, theme: Theme) -> Self {
        Self {
            size: (80, 24),
            theme,
            keymap,
            tab: Tab::Prompts,
            mode: Mode::Normal,
            search: None,
            confirm: None,
            clock_ms: 0,
            prompts_dir,
            sessions_dir,
            prompts: super::prompts::PromptList::default(),
            editor: None,
            target: Target::None,
            provider: ProviderChoice::Replay,
            local_installed: None,
            structured: None,
            max_tokens: None,
            tg_python: crate::output::tg::TgPython::default(),
            limit_step: 16,
            shown: None,
            focus: OutPane::Json,
            scrolls: [Scroll::following(); 4],
            sweep: Sweep::Idle,
            sessions: super::sessions::SessionsView::default(),
            message: None,
            first_screen: None,
            picker: ProviderPicker::default(),
            migrate: None,
            compare: super::compare::CompareView::default(),
            eval: super::eval::EvalView::default(),
            costs: super::costs::Costs::default(),
            overlay: None,
            pinned: None,
            restore: super::remember::Remembered::default(),
            next_id: 1,
            quit: false,
        }
    }

    /// Set an informational message.
    pub fn info(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            error: false,
            text: text.into(),
        });
    }

    /// Set an error message.
    pub fn error(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            error: true,
            text: text.into(),
        });
    }

    /// A pane's scroll.
    pub fn scroll(&self, pane: OutPane) -> Scroll {
        self.scrolls[pane.index()]
    }

    /// A pane's scroll, to change.
    pub fn scroll_mut(&mut self, pane: OutPane) -> &mut Scroll {
        &mut self.scrolls[pane.index()]
    }

    /// Label of the structured-output setting.
    pub fn structured_label(&self) -> &'static str {
        match self.structured {
            None => "off",
            Some(StructuredPath::Native | StructuredPath::NativeWrapped | StructuredPath::Grammar) => "native",
            Some(StructuredPath::Prompt) => "prompt",
            Some(StructuredPath::None) => "none",
        }
    }

    /// The pair the Compare tab and the strategy table work on: the twins
    /// on show, or the pinned run (side A) and the run on show (side B).
    pub fn pair_on_show(&self) -> Option<(&RunView, &RunView)> {
        pair_of(self.shown.as_ref(), self.pinned.as_deref())
    }

    /// The focused pane, within the panes the current tab has.
    pub fn focus_in_tab(&self) -> OutPane {
        let twins = self.shown.as_ref().is_some_and(Shown::twins);
        match (self.tab, self.focus) {
            (Tab::Sweep, OutPane::Response | OutPane::Response2) => OutPane::Json,
            (_, OutPane::Response2) if !twins => OutPane::Response,
            (_, f) => f,
        }
    }
}

/// The pair of `shown` and `pinned` (see [`State::pair_on_show`]), from the
/// fields, so a reducer can hold it while it changes other fields.
pub fn pair_of<'a>(shown: Option<&'a Shown>, pinned: Option<&'a RunView>) -> Option<(&'a RunView, &'a RunView)> {
    match shown {
        Some(Shown::Twins { json, jsonl }) => Some((json, jsonl)),
        Some(Shown::Single(r)) => pinned.filter(|p| p.id != r.id).map(|p| (p, &**r)),
        None => None,
    }
}
