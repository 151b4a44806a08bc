//! The workbench: a terminal UI to browse and edit prompts, run them under a
//! max-token limit, and see side by side what a JSON-array parse and a JSONL
//! parse recover — line by line, with schema errors — plus the sweep of items
//! recovered against the limit.
//!
//! Shape (as in ratatui's component template, gitui, helix's command
//! registry): one [`Event`] enum in, a pure reducer [`update`] that changes
//! [`State`] and returns [`Effect`]s, an effects runner
//! ([`runner::Runner`]) owning the tokio tasks, and views drawing from
//! state. Each tab, view, popup or key's job is a
//! [`component::Component`] in its own folder, listed once in
//! [`registry::COMPONENTS`]; components never import each other and ask
//! for one another with a [`component::Nav`] the root routes. This file
//! is the root: the state every component reads and writes and the events
//! and effects, which the components use as their parent's items; the
//! shell modules (`update`, `view`, `status`, `runner`, `terminal`) ask the
//! registry, and the shared modules (`runs`, `choice`, `state`, `work`,
//! `layout`, `panes`, `keymap`, `theme`, `text`) hold what several
//! components read.

#![warn(missing_docs)]

use std::path::PathBuf;

// The shell and what components share: the component trait and its
// registry, the runs on show, the provider choice, the small state types,
// the reducer's dispatch and keys, the runner's dispatch, the terminal,
// the frame, layout, theme, keymap and text.
pub mod choice;
pub mod component;
pub mod event;
pub mod keymap;
pub mod layout;
pub mod panes;
pub mod paste;
pub mod registry;
pub mod runner;
pub mod runs;
pub mod state;
pub mod status;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod update;
pub mod view;
pub mod work;

/// Declares each component's folder as a module and lists its
/// `Component` in [`COMPONENTS`]: one line per component.
macro_rules! components {
    ($($module:ident :: $component:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every component, in the order the root asks them (a view over a
        /// tab before the tab). A new one is its folder and its line in the
        /// `components!` list below.
        pub const COMPONENTS: &[&dyn component::Component] = &[$(&$module::$component),*];
    };
}

// The components, one folder each (state, update, view, effects, and its
// `Component` in `mod.rs`): the registration.
components! {
    prompts::Prompts,
    editor::Edit,
    run::Run,
    sweep::SweepTab,
    sessions::Sessions,
    migrate::Migrate,
    eval::Eval,
    compare::Compare,
    costs::CostsTable,
    providers::Providers,
    help::Help,
    search::SearchPanes,
    report::Report,
    remember::Remember,
    trustgraph::TrustGraph,
}

pub use choice::ProviderChoice;
pub use keymap::{Action, Keymap};
pub use state::Tab;
pub use terminal::{main, restore_terminal};
pub use update::update;
pub use view::draw;

/// How the workbench starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TuiOptions {
    /// The prompts directory, as the TrustGraph workspace it is read as.
    pub workspace: crate::store::Workspace,
    /// The Python whose limits TrustGraph's verdict follows (`--tg-python`).
    pub tg_python: crate::output::tg::TgPython,
    /// Directory of recorded sessions (replays come from here; local runs
    /// are recorded here).
    pub sessions_dir: PathBuf,
    /// Provider: `local`, `replay`, a provider configured in cutline.toml,
    /// or `None` for local when installed, else replay.
    pub provider: Option<String>,
}

/// A fresh state for `opts`: keymap from the config file, theme from
/// `NO_COLOR`, provider chosen. `local_installed` says whether the local
/// model is installed.
pub fn initial_state(opts: &TuiOptions, keymap: Keymap, theme: theme::Theme, local_installed: bool) -> State {
    let mut s = State::new(opts.workspace.dir.clone(), opts.sessions_dir.clone(), keymap, theme);
    s.local_installed = Some(local_installed);
    s.tg_python = opts.tg_python;
    s.provider = match opts.provider.as_deref() {
        Some("local") => ProviderChoice::Local,
        Some("replay") => ProviderChoice::Replay,
        // A configured provider: checked against cutline.toml once the
        // runner has read it (ProvidersLoaded).
        Some(other) => ProviderChoice::Configured {
            name: other.to_owned(),
            model: None,
        },
        None if local_installed => ProviderChoice::Local,
        None => ProviderChoice::Replay,
    };
    if s.provider == ProviderChoice::Local && !local_installed {
        s.error(rust_i18n::t!(
            "tui.msg.local_missing",
            hint = crate::llm::local::SETUP_HINT
        ));
    } else if s.provider == ProviderChoice::Local {
        // A small model on a CPU can loop until its context is full (minutes):
        // the first runs are cut where the cut is worth seeing.
        s.max_tokens = Some(LOCAL_FIRST_LIMIT);
        s.info(rust_i18n::t!("tui.msg.local_first_limit", n = LOCAL_FIRST_LIMIT));
    }
    s
}

/// The max-token limit the workbench opens at on the local model (on
/// replay and hosted providers it opens with none).
pub const LOCAL_FIRST_LIMIT: u32 = 256;

// The root's own: the state every component reads and writes, and what
// flows in and out of the reducer.
use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use serde_json::Value;

use crate::llm::structured::Path as StructuredPath;
use crate::prompt::PromptConfig;
use crate::session::Session;
use costs::CostJob;
use eval::{EvalJob, EvalMsg};
use migrate::WriteOutcome;
use providers::{ProviderEntry, ProviderPicker, SaveModel};
use remember::Remembered;
use runs::{Phase, RunJob, RunMsg, RunView, Shown, Target, pair_of};
use search::Search;
use state::{Confirm, FirstScreen, Message, Mode, OutPane, Scroll};
use sweep::{Sweep, SweepData, SweepJob};
use theme::Theme;

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
    pub prompts: prompts::PromptList,
    /// The prompt open for editing.
    pub editor: Option<editor::Editor>,
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
    pub sessions: sessions::SessionsView,
    /// The status-bar message.
    pub message: Option<Message>,
    /// The first screen's one-line guide, until the first key or click.
    pub first_screen: Option<FirstScreen>,
    /// The provider picker (open in [`Mode::Picker`]).
    pub picker: ProviderPicker,
    /// The Migrate tab.
    pub migrate: Option<migrate::MigrateView>,
    /// The Compare tab.
    pub compare: compare::CompareView,
    /// The eval view (`E`).
    pub eval: eval::EvalView,
    /// The strategy table under the Compare report (`S`).
    pub costs: costs::Costs,
    /// The view open over its tab's body (the eval view over Compare),
    /// kept while the person visits other tabs.
    pub overlay: Option<component::Id>,
    /// The state of components without a field here (see
    /// [`component::Parts`]).
    pub parts: component::Parts,
    /// A finished run pinned as compare side A (the run on show is B).
    pub pinned: Option<Box<RunView>>,
    /// What the last session kept and is not restored yet: the pin until
    /// the sessions load, the tab's context until what it needs loads (or
    /// the person moves).
    pub restore: remember::Remembered,
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
            prompts: prompts::PromptList::default(),
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
            sessions: sessions::SessionsView::default(),
            message: None,
            first_screen: None,
            picker: ProviderPicker::default(),
            migrate: None,
            compare: compare::CompareView::default(),
            eval: eval::EvalView::default(),
            costs: costs::Costs::default(),
            overlay: None,
            parts: component::Parts::default(),
            pinned: None,
            restore: remember::Remembered::default(),
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

    /// Show `shown` in place of what is on show: its sweep is to compute,
    /// every pane follows its end.
    pub fn show(&mut self, shown: Shown) {
        self.shown = Some(shown);
        self.sweep = Sweep::Idle;
        self.scrolls = [Scroll::following(); 4];
    }

    /// Cancel the runs on show still live; the runner's cancels.
    pub fn cancel_live(&mut self) -> Vec<Effect> {
        let Some(shown) = &mut self.shown else {
            return Vec::new();
        };
        let ids: Vec<u64> = shown.runs().iter().filter(|r| r.live()).map(|r| r.id).collect();
        for id in &ids {
            if let Some(r) = shown.find_mut(*id) {
                r.phase = Phase::Cancelled;
            }
        }
        ids.into_iter().map(Effect::Cancel).collect()
    }

    /// Whether a run may start on the provider chosen: not on the local
    /// model while it is not installed (the status says how to install).
    pub fn local_guard(&mut self) -> bool {
        if self.provider == ProviderChoice::Local && self.local_installed == Some(false) {
            self.error(rust_i18n::t!(
                "tui.msg.local_missing",
                hint = crate::llm::local::SETUP_HINT
            ));
            return false;
        }
        true
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

/// Everything the reducer reacts to.
#[derive(Debug)]
pub enum Event {
    /// A key was pressed.
    Key(KeyEvent),
    /// The mouse scrolled or clicked.
    Mouse(MouseEvent),
    /// Text pasted (bracketed paste): inserted in one step.
    Paste(String),
    /// What the last session kept.
    Remembered(Remembered),
    /// The report was written (what the status says), or why not.
    ReportWritten(Result<String, report::ReportError>),
    /// A model was saved to this file, or why not.
    ModelSaved(Result<String, providers::SaveModelError>),
    /// The external editor closed: the field's new text, or why not.
    EditedExternally {
        /// The field it was opened for.
        field: editor::Field,
        /// The text saved in the editor, or why there is none.
        result: Result<String, editor::external::ExternalError>,
    },
    /// The terminal was resized to (columns, rows).
    Resize(u16, u16),
    /// Time passed: milliseconds since the workbench started.
    Tick(u64),
    /// The prompts directory was (re)loaded.
    PromptsLoaded {
        /// Prompts that loaded.
        prompts: Vec<PromptConfig>,
        /// Files that did not (each names file, line, column, cause).
        errors: Vec<String>,
        /// Warnings while loading.
        warnings: Vec<String>,
    },
    /// The sessions directory was (re)loaded.
    SessionsLoaded(Vec<Session>),
    /// News of a run.
    Run {
        /// Which run.
        id: u64,
        /// What happened.
        msg: RunMsg,
    },
    /// A save finished: the file written, or why not.
    Saved(Result<String, crate::prompt::ConfigError>),
    /// A sweep was computed.
    SweepReady(Box<SweepData>),
    /// Whether the local model is installed (checked at start).
    LocalInstalled(bool),
    /// The providers configured in cutline.toml, or why the config did not
    /// load (its file, line and column).
    ProvidersLoaded(Result<Vec<ProviderEntry>, crate::llm::config::ProvidersFileError>),
    /// A gold set for the compared pair: the file and its items, `None`
    /// when neither prompt has one, or why it did not load.
    GoldLoaded {
        /// The prompt ids it was looked up for (the pair on show).
        ids: Vec<String>,
        /// `(file, items)`, none, or where the gold set is malformed.
        result: Result<Option<(String, Vec<Value>)>, crate::eval::inputs::InputsError>,
    },
    /// A component's job answered ([`work::Job`]): routed to the component
    /// it is for, which reads its own message type.
    Answer(work::Answer),
    /// News of an eval (the eval view's `r`).
    Eval {
        /// Which eval.
        id: u64,
        /// What happened.
        msg: EvalMsg,
    },
    /// The migrated prompt was written (or not).
    MigrateWritten(WriteOutcome),
    /// SIGTERM, SIGINT or SIGHUP: leave now.
    Terminate,
}

/// Work for the effects runner.
#[derive(Debug)]
pub enum Effect {
    /// Load the prompts directory.
    LoadPrompts,
    /// Load the sessions directory.
    LoadSessions,
    /// Start a run.
    Start(Box<RunJob>),
    /// Cancel a run.
    Cancel(u64),
    /// Save a prompt to its file (atomically).
    Save(Box<PromptConfig>),
    /// Compute a sweep.
    Sweep(Box<SweepJob>),
    /// Read the configured providers (cutline.toml) and which keys are set.
    LoadProviders,
    /// Look for a gold set `gold/<id>.jsonl` under the prompts directory,
    /// trying `ids` in order.
    LoadGold(Vec<String>),
    /// Run each strategy on the pair on show (`S` in the Compare tab).
    Costs(Box<CostJob>),
    /// Run an eval of the prompt on show and its twin (the eval view's
    /// `r`); [`Effect::Cancel`] with its id stops it.
    Eval(Box<EvalJob>),
    /// Write a migrated prompt to `origin.file` atomically; unless
    /// `overwrite`, an existing file is left alone and reported.
    WriteMigrated {
        /// The migrated prompt, its origin set to the new file.
        config: Box<PromptConfig>,
        /// The author confirmed replacing an existing file.
        overwrite: bool,
    },
    /// Put text on the terminal's clipboard (OSC 52: works over SSH and
    /// through tmux with `set-clipboard on`).
    Copy(String),
    /// Write the HTML report of runs of one session beside the sessions
    /// ([`Event::ReportWritten`]).
    WriteReport {
        /// The session's id.
        session: String,
        /// The runs' numbers (`session#N`).
        runs: Vec<usize>,
        /// The Python whose limits the report's verdicts follow.
        py: crate::output::tg::TgPython,
    },
    /// Read what the last session kept ([`Event::Remembered`]).
    LoadRemembered,
    /// Keep this for the next session (written before the workbench exits).
    Remember(Remembered),
    /// Write a model typed in the picker into the provider's config file
    /// (atomically, every other byte kept); the answer is
    /// [`Event::ModelSaved`].
    SaveModel(SaveModel),
    /// Hand a field to `$VISUAL`/`$EDITOR` with the workbench suspended;
    /// the result comes back as [`Event::EditedExternally`].
    EditExternally {
        /// The field.
        field: editor::Field,
        /// Its text now.
        text: String,
        /// File name suffix, so the editor picks its syntax (`.json`).
        suffix: &'static str,
    },
    /// A component asks for another (open this in Compare, sweep what is
    /// on show): routed by the reducer before the effects leave it, so the
    /// runner never gets one.
    Nav(component::Nav),
    /// A component's own work ([`work::Job`]); its answer comes back as
    /// [`Event::Answer`] to the component `to`.
    Job {
        /// The component that asks.
        to: component::Id,
        /// The work.
        job: Box<dyn work::Job>,
    },
    /// Leave the workbench.
    Quit,
}
