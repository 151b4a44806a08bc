//! Key bindings: every action the workbench has, its default keys, and a
//! `[keys]` table in the config file to rebind them:
//!
//! ```toml
//! [keys]
//! run = "x"                 # replaces r
//! quit = ["q", "ctrl-q"]
//! sweep = "F5"
//! ```
//!
//! Key names: a character (`r`, `?`, `+`), or `enter`, `esc`, `tab`,
//! `backtab`, `backspace`, `space`, `up`, `down`, `left`, `right`, `home`,
//! `end`, `pageup`, `pagedown`, `delete`, `f1`…`f12`, with `ctrl-`, `alt-`
//! and `shift-` prefixes.

mod key;

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub use key::Key;

/// Something a key does in normal mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Leave the workbench.
    Quit,
    /// Show or hide the key list.
    Help,
    /// Next tab.
    NextTab,
    /// Previous tab.
    PrevTab,
    /// Go to tab N (1-based).
    GoTab(u8),
    /// Move up one row.
    Up,
    /// Move down one row.
    Down,
    /// Move up a page.
    PageUp,
    /// Move down a page.
    PageDown,
    /// Go to the first row.
    Top,
    /// Go to the last row.
    Bottom,
    /// Left: previous field, or the sweep cursor one token back.
    Left,
    /// Right: next field, or the sweep cursor one token on.
    Right,
    /// Sweep cursor ten tokens back.
    BigLeft,
    /// Sweep cursor ten tokens on.
    BigRight,
    /// Open the selection (a prompt in the editor, a recorded run).
    Open,
    /// Edit the focused field (typing goes into it until Esc).
    Edit,
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrev,
    /// Filter the list by typing.
    Filter,
    /// Run the current prompt (or replay the opened recording).
    Run,
    /// Run the prompt and its JSONL/JSON twin on the same input and limit.
    Twins,
    /// Cancel the running run, or dismiss a message.
    Cancel,
    /// The truncation sweep of the last run.
    Sweep,
    /// Lower the max-token limit by a step.
    LimitDown,
    /// Raise the max-token limit by a step.
    LimitUp,
    /// Type a max-token limit.
    LimitType,
    /// No max-token limit.
    LimitNone,
    /// Open the provider picker (replay, local, configured providers).
    Provider,
    /// Migrate the selected JSON-array prompt to JSONL (Migrate tab).
    Migrate,
    /// Write the migrated prompt next to its source (again to overwrite).
    MigrateWrite,
    /// Pin the run on show as compare side A (the next run is B).
    Pin,
    /// Cycle structured output (off / native / prompt).
    Structured,
    /// Save the prompt to its file.
    Save,
    /// Show or hide the rendered prompt beside the editor.
    Rendered,
    /// The editor's next sample input.
    NextInput,
    /// Reload prompts and sessions from disk.
    Reload,
    /// Copy the focused response (or its kept items) to the clipboard.
    Copy,
    /// Continue the JSONL answer on show that the limit cut.
    Continue,
    /// Open the field being edited in `$VISUAL`/`$EDITOR`.
    ExternalEdit,
    /// Write the shareable HTML report of the runs on show.
    Report,
    /// Run each strategy on the pair on show (Compare tab).
    Costs,
    /// Show the eval view (the prompt and its twin over its sample inputs
    /// at several limits), or go back to the pair.
    Eval,
    /// A component's own action, by its config name
    /// (`Component::keys`): a component added later brings its keys.
    Own(&'static str),
}

/// A component's own key: its action's config name (`[keys]` rebinds it),
/// its default keys, and the i18n key of its line in the help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnKey {
    /// The action's config name.
    pub name: &'static str,
    /// Its default keys (key names, as in `[keys]`).
    pub keys: &'static [&'static str],
    /// The i18n key of what it does, for the help.
    pub help: &'static str,
}

impl Action {
    /// Every rebindable action with its config name and a description.
    pub const ALL: &'static [(Action, &'static str, &'static str)] = &[
        (Action::Quit, "quit", "quit"),
        (Action::Help, "help", "this help"),
        (Action::NextTab, "next_tab", "next tab"),
        (Action::PrevTab, "prev_tab", "previous tab"),
        (Action::GoTab(1), "tab_prompts", "tab: prompts"),
        (Action::GoTab(2), "tab_edit", "tab: edit"),
        (Action::GoTab(3), "tab_run", "tab: run (response, JSON, JSONL)"),
        (Action::GoTab(4), "tab_sweep", "tab: sweep"),
        (Action::GoTab(5), "tab_sessions", "tab: sessions"),
        (Action::GoTab(6), "tab_migrate", "tab: migrate (JSON array → JSONL)"),
        (Action::GoTab(7), "tab_compare", "tab: compare the pair's items"),
        (Action::Up, "up", "up / scroll up"),
        (Action::Down, "down", "down / scroll down"),
        (Action::PageUp, "page_up", "page up"),
        (Action::PageDown, "page_down", "page down"),
        (Action::Top, "top", "first row"),
        (Action::Bottom, "bottom", "last row (and follow the stream)"),
        (Action::Left, "left", "previous field / sweep cut −1 token"),
        (Action::Right, "right", "next field / sweep cut +1 token"),
        (Action::BigLeft, "big_left", "sweep cut −10 tokens"),
        (Action::BigRight, "big_right", "sweep cut +10 tokens"),
        (Action::Open, "open", "open prompt in editor / recorded run"),
        (Action::Edit, "edit", "edit the field (Esc stops)"),
        (Action::FocusNext, "focus_next", "focus next pane"),
        (Action::FocusPrev, "focus_prev", "focus previous pane"),
        (Action::Filter, "filter", "filter the list"),
        (Action::Run, "run", "run (or replay the opened recording)"),
        (Action::Twins, "twins", "run the prompt and its twin as a pair"),
        (Action::Cancel, "cancel", "cancel the run / dismiss"),
        (Action::Sweep, "sweep", "sweep: items vs max tokens"),
        (Action::LimitDown, "limit_down", "max tokens − step"),
        (Action::LimitUp, "limit_up", "max tokens + step"),
        (Action::LimitType, "limit_type", "type a max-token limit"),
        (Action::LimitNone, "limit_none", "no max-token limit"),
        (Action::Provider, "provider", "choose provider and model"),
        (Action::Migrate, "migrate", "migrate the prompt to JSONL (diff)"),
        (Action::MigrateWrite, "migrate_write", "write the migrated prompt"),
        (Action::Pin, "pin", "pin the run as compare side A"),
        (Action::Structured, "structured", "structured output off/native/prompt"),
        (Action::Save, "save", "save the prompt"),
        (Action::Rendered, "rendered", "show the rendered prompt"),
        (Action::NextInput, "next_input", "next sample input (runs use it)"),
        (Action::Reload, "reload", "reload prompts and sessions"),
        (Action::Copy, "copy", "copy the response or kept items"),
        (Action::Continue, "continue", "continue a cut JSONL answer, or Gemini's"),
        (
            Action::ExternalEdit,
            "external_edit",
            "edit the field in $VISUAL/$EDITOR",
        ),
        (Action::Report, "report", "write the HTML report of the runs on show"),
        (Action::Costs, "costs", "compare: cost of every item, by strategy"),
        (Action::Eval, "eval", "eval the prompt and twin at many limits"),
    ];

    /// The config name of an action.
    pub fn name(self) -> &'static str {
        if let Action::Own(name) = self {
            return name;
        }
        Self::ALL.iter().find(|(a, _, _)| *a == self).map_or("?", |(_, n, _)| n)
    }

    /// What the action does, for the help.
    pub fn describe(self) -> &'static str {
        Self::ALL.iter().find(|(a, _, _)| *a == self).map_or("", |(_, _, d)| d)
    }

    /// The action with config name `name`.
    pub fn by_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, n, _)| *n == name).map(|(a, _, _)| *a)
    }
}

/// Keys → actions for normal mode. Ctrl-C always quits, whatever the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    bindings: Vec<(Key, Action)>,
    /// The components' own keys bound here (`with_own`).
    own: Vec<OwnKey>,
}

impl Default for Keymap {
    fn default() -> Self {
        Self::defaults()
    }
}

impl Keymap {
    /// The default bindings.
    pub fn defaults() -> Self {
        use KeyCode as K;
        let p = Key::plain;
        let c = Key::ch;
        let shift = |code| Key {
            code,
            mods: KeyModifiers::SHIFT,
        };
        let mut b = vec![
            (c('q'), Action::Quit),
            (c('?'), Action::Help),
            (p(K::F(1)), Action::Help),
            (p(K::Tab), Action::NextTab),
            (p(K::BackTab), Action::PrevTab),
            (shift(K::BackTab), Action::PrevTab),
            (p(K::Up), Action::Up),
            (c('k'), Action::Up),
            (p(K::Down), Action::Down),
            (c('j'), Action::Down),
            (p(K::PageUp), Action::PageUp),
            (p(K::PageDown), Action::PageDown),
            (p(K::Home), Action::Top),
            (c('g'), Action::Top),
            (p(K::End), Action::Bottom),
            (c('G'), Action::Bottom),
            (p(K::Left), Action::Left),
            (c('h'), Action::Left),
            (p(K::Right), Action::Right),
            (c('l'), Action::Right),
            (shift(K::Left), Action::BigLeft),
            (c('<'), Action::BigLeft),
            (shift(K::Right), Action::BigRight),
            (c('>'), Action::BigRight),
            (p(K::Enter), Action::Open),
            (c('e'), Action::Edit),
            (c('i'), Action::Edit),
            (c(']'), Action::FocusNext),
            (c('['), Action::FocusPrev),
            (c('/'), Action::Filter),
            (c('r'), Action::Run),
            (c('t'), Action::Twins),
            (p(K::Esc), Action::Cancel),
            (c('s'), Action::Sweep),
            (c('-'), Action::LimitDown),
            (c('+'), Action::LimitUp),
            (c('='), Action::LimitUp),
            (c('m'), Action::LimitType),
            (c('0'), Action::LimitNone),
            (c('p'), Action::Provider),
            (c('o'), Action::Structured),
            (Key::ctrl('s'), Action::Save),
            (c('v'), Action::Rendered),
            (c('n'), Action::NextInput),
            (c('R'), Action::Reload),
            (c('M'), Action::Migrate),
            (c('W'), Action::MigrateWrite),
            (c('P'), Action::Pin),
            (c('y'), Action::Copy),
            (c('c'), Action::Continue),
            (Key::ctrl('o'), Action::ExternalEdit),
            (c('x'), Action::Report),
            (c('S'), Action::Costs),
            (c('E'), Action::Eval),
        ];
        // A number key per tab, in the tab bar's order.
        for n in (1..=super::state::Tab::ALL.len()).filter_map(|n| u8::try_from(n).ok()) {
            b.push((c(char::from(b'0' + n)), Action::GoTab(n)));
        }
        Self {
            bindings: b,
            own: Vec::new(),
        }
    }

    /// These bindings plus the components' own keys, each at its default
    /// keys (a default key never takes one already bound).
    #[must_use]
    pub fn with_own(mut self, own: &[OwnKey]) -> Self {
        for k in own {
            for key in k.keys.iter().filter_map(|n| Key::parse(n)) {
                if !self.bindings.iter().any(|(b, _)| *b == key) {
                    self.bindings.push((key, Action::Own(k.name)));
                }
            }
            self.own.push(*k);
        }
        self
    }

    /// The components' own keys bound here, in the order they came.
    pub fn own(&self) -> &[OwnKey] {
        &self.own
    }

    /// The action bound to a key event, if any.
    pub fn action(&self, ev: &KeyEvent) -> Option<Action> {
        let k = Key::of(ev);
        self.bindings.iter().find(|(b, _)| *b == k).map(|(_, a)| *a)
    }

    /// The keys bound to `action`, as labels.
    pub fn keys_for(&self, action: Action) -> Vec<String> {
        self.bindings
            .iter()
            .filter(|(_, a)| *a == action)
            .map(|(k, _)| k.label())
            .fold(Vec::new(), |mut v, l| {
                if !v.contains(&l) {
                    v.push(l);
                }
                v
            })
    }

    /// The first key bound to `action` (for hints), or `-`.
    pub fn key_for(&self, action: Action) -> String {
        self.keys_for(action).into_iter().next().unwrap_or_else(|| "-".into())
    }

    /// Bind `keys` to `action`, replacing its old keys; a key taken by
    /// another action moves to this one.
    pub fn bind(&mut self, action: Action, keys: &[Key]) {
        self.bindings.retain(|(k, a)| *a != action && !keys.contains(k));
        self.bindings.extend(keys.iter().map(|k| (*k, action)));
    }

    /// Apply a `[keys]` table: `action = "key"` or `action = ["key", …]`.
    /// Returns a warning per entry it could not use.
    pub fn apply_table(&mut self, table: &toml::Table) -> Vec<String> {
        let mut warnings = Vec::new();
        for (name, value) in table {
            let own = self.own.iter().find(|k| k.name == name).map(|k| Action::Own(k.name));
            let Some(action) = Action::by_name(name).or(own) else {
                warnings.push(format!("[keys] {name}: no such action"));
                continue;
            };
            let names: Vec<&str> = match value {
                toml::Value::String(s) => vec![s.as_str()],
                toml::Value::Array(a) => a.iter().filter_map(toml::Value::as_str).collect(),
                _ => {
                    warnings.push(format!("[keys] {name}: expected a key name or a list of them"));
                    continue;
                }
            };
            let mut keys = Vec::new();
            for n in names {
                match Key::parse(n) {
                    Some(k) => keys.push(k),
                    None => warnings.push(format!("[keys] {name}: unknown key {n:?}")),
                }
            }
            if !keys.is_empty() {
                self.bind(action, &keys);
            }
        }
        warnings
    }

    /// The defaults with the `[keys]` tables of the config files applied,
    /// plus warnings. The files are those the providers are configured in:
    /// `$CUTLINE_CONFIG` alone when set, else `cutline/config.toml` in the
    /// user's config directory, then `./cutline.toml` (later files win).
    /// Missing files are fine.
    pub fn load() -> (Self, Vec<String>) {
        Self::load_with(&[])
    }

    /// [`Keymap::load`] with the components' own keys bound first, so the
    /// config files can rebind them too.
    pub fn load_with(own: &[OwnKey]) -> (Self, Vec<String>) {
        let mut map = Self::defaults().with_own(own);
        let mut warnings = Vec::new();
        for path in config_paths() {
            if !path.is_file() {
                continue;
            }
            let read = crate::limits::read(&path).and_then(|b| {
                String::from_utf8(b).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            });
            match read {
                Ok(text) => match text.parse::<toml::Table>() {
                    Ok(t) => {
                        if let Some(keys) = t.get("keys").and_then(toml::Value::as_table) {
                            warnings.extend(
                                map.apply_table(keys)
                                    .into_iter()
                                    .map(|w| format!("{}: {w}", path.display())),
                            );
                        }
                    }
                    Err(e) => warnings.push(format!("{}: {e}", path.display())),
                },
                Err(e) => warnings.push(format!("{}: {e}", path.display())),
            }
        }
        (map, warnings)
    }
}

/// The config files, in the order they apply.
pub fn config_paths() -> Vec<PathBuf> {
    match std::env::var_os("CUTLINE_CONFIG").filter(|v| !v.is_empty()) {
        Some(p) => vec![PathBuf::from(p)],
        None => crate::llm::config::default_paths(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_label() {
        assert_eq!(Key::parse("ctrl-s"), Some(Key::ctrl('s')));
        assert_eq!(Key::parse("Ctrl-S"), Some(Key::ctrl('s')));
        assert_eq!(Key::parse("F5"), Some(Key::plain(KeyCode::F(5))));
        assert_eq!(Key::parse("?"), Some(Key::ch('?')));
        assert_eq!(Key::parse("-"), Some(Key::ch('-')));
        assert_eq!(Key::parse("ctrl-"), None);
        assert_eq!(
            Key::parse("ctrl--"),
            Some(Key {
                code: KeyCode::Char('-'),
                mods: KeyModifiers::CONTROL
            })
        );
        assert_eq!(Key::parse("nonsense"), None);
        assert_eq!(Key::ctrl('s').label(), "Ctrl-S");
        assert_eq!(Key::plain(KeyCode::Left).label(), "←");
    }

    #[test]
    fn rebind_moves_the_key() {
        let mut m = Keymap::defaults();
        let t: toml::Table = "run = \"x\"\nsweep = [\"r\", \"F5\"]\nbogus = \"y\"".parse().unwrap();
        let w = m.apply_table(&t);
        assert_eq!(w.len(), 1);
        let ev = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        assert_eq!(m.action(&ev('x')), Some(Action::Run));
        assert_eq!(m.action(&ev('r')), Some(Action::Sweep));
        assert_eq!(m.action(&ev('s')), None);
        assert_eq!(m.keys_for(Action::Sweep), vec!["r", "F5"]);
    }

    #[test]
    fn shifted_characters_match() {
        let m = Keymap::defaults();
        let ev = KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT);
        assert_eq!(m.action(&ev), Some(Action::Help));
        let ev = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(m.action(&ev), Some(Action::Bottom));
    }
}
