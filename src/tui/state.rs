//! The workbench's state: everything drawn comes from here, and only the
//! reducer ([`super::update`]) changes it.

use std::path::PathBuf;

use ratatui::style::Style;
use ratatui_textarea::TextArea;
use serde_json::{Map, Value};

use crate::llm::structured::Path as StructuredPath;
use crate::output::sweep::SweepPoint;
use crate::prompt::{PromptConfig, Rendered};
use crate::session::Session;

use crate::compare::Report;
use crate::prompt::migrate::Migration;

use super::event::{ProviderChoice, ProviderEntry};
use super::keymap::Keymap;
use super::run_view::{Cut, RunView};
use super::theme::Theme;

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
    /// Typing a search in the focused pane (`/` on the Run and Sweep
    /// tabs): the pane and the text so far.
    Search(OutPane, String),
}

/// The sweep of the runs on show.
#[derive(Debug, Default)]
pub enum Sweep {
    /// None asked for (or the runs on show changed).
    #[default]
    Idle,
    /// Being computed by the runner.
    Pending,
    /// Computed.
    Ready(Box<SweepView>),
}

impl Sweep {
    /// The computed sweep, if there is one.
    pub fn ready(&self) -> Option<&SweepView> {
        match self {
            Self::Ready(v) => Some(v),
            Self::Idle | Self::Pending => None,
        }
    }

    /// The computed sweep, to move its cursor.
    pub fn ready_mut(&mut self) -> Option<&mut SweepView> {
        match self {
            Self::Ready(v) => Some(v),
            Self::Idle | Self::Pending => None,
        }
    }
}

/// A question asked in the status bar that the next key answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirm {
    /// Quit with unsaved edits: the quit key again quits.
    QuitUnsaved,
}

/// A search found in a pane: `n`/`N` move between its hits, `Esc` ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// The pane searched.
    pub pane: OutPane,
    /// What was searched for (matched case-insensitively).
    pub query: String,
    /// The row of the current hit.
    pub row: usize,
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

/// The prompt list.
#[derive(Debug, Default)]
pub struct PromptList {
    /// Loaded prompts, in directory order.
    pub prompts: Vec<PromptConfig>,
    /// Files that did not load.
    pub errors: Vec<String>,
    /// The filter typed after `/` (case-insensitive substring of id,
    /// type, description).
    pub filter: String,
    /// Selected row among the filtered prompts.
    pub selected: usize,
    /// True once the directory was read.
    pub loaded: bool,
}

impl PromptList {
    /// Indexes of the prompts the filter lets through.
    pub fn filtered(&self) -> Vec<usize> {
        let f = self.filter.to_lowercase();
        self.prompts
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                f.is_empty()
                    || p.id.to_lowercase().contains(&f)
                    || p.response_type.as_str().contains(&f)
                    || p.description.to_lowercase().contains(&f)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The selected prompt.
    pub fn selected_prompt(&self) -> Option<&PromptConfig> {
        self.filtered().get(self.selected).map(|&i| &self.prompts[i])
    }

    /// A prompt by id.
    pub fn by_id(&self, id: &str) -> Option<&PromptConfig> {
        self.prompts.iter().find(|p| p.id == id)
    }
}

/// The editor's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The prompt template.
    Template,
    /// The system template.
    System,
    /// The JSON Schema.
    Schema,
    /// The sample input.
    Input,
}

impl Field {
    /// Every field, in order.
    pub const ALL: [Field; 4] = [Field::Template, Field::System, Field::Schema, Field::Input];

    /// Its title.
    pub fn title(self) -> &'static str {
        match self {
            Field::Template => "Template",
            Field::System => "System",
            Field::Schema => "Schema",
            Field::Input => "Input",
        }
    }

    /// Its position.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// An error at a line of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// 1-based line in the field.
    pub line: usize,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// One prompt open for editing.
#[derive(Debug)]
pub struct Editor {
    /// The prompt as loaded (or last saved).
    pub base: PromptConfig,
    /// One text area per field.
    pub areas: [TextArea<'static>; 4],
    /// The focused field.
    pub field: Field,
    /// Show the rendered prompt beside the field.
    pub show_rendered: bool,
    /// The input field holds the raw `text` variable (else a JSON object
    /// of every variable).
    pub input_as_text: bool,
    /// Name of the sample input being edited.
    pub input_name: Option<String>,
    /// Each field's error, if any.
    pub errors: [Option<FieldError>; 4],
    /// The rendered prompt, or why it does not render.
    pub rendered: Result<Rendered, String>,
    /// Edited since loaded or saved.
    pub dirty: bool,
}

fn area(text: &str, theme: Theme) -> TextArea<'static> {
    let mut t = TextArea::new(text.split('\n').map(str::to_owned).collect());
    // Long lines wrap (at words, else between characters, by display
    // width) instead of running off the right edge.
    t.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    t.set_cursor_line_style(Style::new());
    t.set_line_number_style(theme.dim());
    t
}

/// How the input field shows `vars`: the raw `text` when that is the only
/// variable, else a JSON object.
fn input_text(vars: &Map<String, Value>) -> (bool, String) {
    let as_text = vars.is_empty() || (vars.len() == 1 && vars.get("text").is_some_and(Value::is_string));
    let text = if as_text {
        vars.get("text").and_then(Value::as_str).unwrap_or_default().to_owned()
    } else {
        serde_json::to_string_pretty(&Value::Object(vars.clone())).unwrap_or_default()
    };
    (as_text, text)
}

fn area_text(t: &TextArea<'_>) -> String {
    t.lines().join("\n")
}

impl Editor {
    /// Open `p` for editing.
    pub fn new(p: &PromptConfig, theme: Theme) -> Self {
        let schema = p
            .schema
            .as_ref()
            .map(|s| serde_json::to_string_pretty(s).unwrap_or_default())
            .unwrap_or_default();
        let input = p.inputs.first();
        let (input_as_text, input_text) = input_text(&input.map(|i| i.vars.clone()).unwrap_or_default());
        let mut e = Self {
            base: p.clone(),
            areas: [
                area(&p.template, theme),
                area(&p.system, theme),
                area(&schema, theme),
                area(&input_text, theme),
            ],
            field: Field::Template,
            show_rendered: false,
            input_as_text,
            input_name: input.map(|i| i.name.clone()),
            errors: [None, None, None, None],
            rendered: Err(String::new()),
            dirty: false,
        };
        e.revalidate();
        e
    }

    /// Replace a field's text (the external editor's result), keeping the
    /// cursor on the same line where it still exists. True when it changed.
    pub fn replace(&mut self, field: Field, text: &str, theme: Theme) -> bool {
        let i = field.index();
        if area_text(&self.areas[i]) == text {
            return false;
        }
        let row = self.areas[i].cursor().0;
        self.areas[i] = area(text, theme);
        let last = self.areas[i].lines().len().saturating_sub(1);
        self.areas[i].move_cursor(ratatui_textarea::CursorMove::Jump(
            u16::try_from(row.min(last)).unwrap_or(u16::MAX),
            0,
        ));
        self.dirty = true;
        self.revalidate();
        true
    }

    /// The focused text area.
    pub fn area_mut(&mut self) -> &mut TextArea<'static> {
        &mut self.areas[self.field.index()]
    }

    fn base_input(&self) -> Option<&crate::prompt::SampleInput> {
        let name = self.input_name.as_ref()?;
        self.base.inputs.iter().find(|i| &i.name == name)
    }

    /// Switch the input field to the next sample input of the prompt
    /// (edits to the current one are kept in memory and saved with Ctrl-S).
    /// Returns the name of the input now shown.
    pub fn next_input(&mut self, theme: Theme) -> Option<String> {
        let n = self.base.inputs.len();
        if n == 0 {
            return None;
        }
        let cur = self
            .input_name
            .as_ref()
            .and_then(|name| self.base.inputs.iter().position(|i| &i.name == name));
        if let (Some(c), Ok(vars)) = (cur, self.vars())
            && self.base.inputs[c].vars != vars
        {
            self.base.inputs[c].vars = vars;
            self.dirty = true;
        }
        let next = cur.map_or(0, |c| (c + 1) % n);
        let (as_text, text) = input_text(&self.base.inputs[next].vars);
        self.input_as_text = as_text;
        self.input_name = Some(self.base.inputs[next].name.clone());
        self.areas[Field::Input.index()] = area(&text, theme);
        self.revalidate();
        self.input_name.clone()
    }

    /// A field's text.
    pub fn text(&self, f: Field) -> String {
        area_text(&self.areas[f.index()])
    }

    fn schema(&self) -> Result<Option<Value>, FieldError> {
        let text = self.text(Field::Schema);
        if text.trim().is_empty() {
            return Ok(None);
        }
        serde_json::from_str::<Value>(&text).map(Some).map_err(|e| FieldError {
            line: e.line().max(1),
            column: Some(e.column()),
            message: crate::output::json::strip_position(&e.to_string()),
        })
    }

    fn vars(&self) -> Result<Map<String, Value>, FieldError> {
        let text = self.text(Field::Input);
        if self.input_as_text {
            let mut vars = self.base_input().map(|i| i.vars.clone()).unwrap_or_default();
            vars.insert("text".into(), Value::String(text));
            return Ok(vars);
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(FieldError {
                line: 1,
                column: None,
                message: "the input must be a JSON object of variables".into(),
            }),
            Err(e) => Err(FieldError {
                line: e.line().max(1),
                column: Some(e.column()),
                message: crate::output::json::strip_position(&e.to_string()),
            }),
        }
    }

    /// The prompt with the edits, and the sample input's variables; or the
    /// first field error.
    pub fn config(&self) -> Result<(PromptConfig, Map<String, Value>), String> {
        let mut p = self.base.clone();
        p.template = self.text(Field::Template);
        p.system = self.text(Field::System);
        p.schema = self
            .schema()
            .map_err(|e| format!("schema line {}: {}", e.line, e.message))?;
        let vars = self
            .vars()
            .map_err(|e| format!("input line {}: {}", e.line, e.message))?;
        if let (Some(name), true) = (&self.input_name, self.dirty)
            && let Some(i) = p.inputs.iter_mut().find(|i| &i.name == name)
        {
            i.vars.clone_from(&vars);
        }
        Ok((p, vars))
    }

    /// Recheck every field: JSON syntax and schema compilation, template
    /// and system rendering (each error at its line), and the rendered text.
    pub fn revalidate(&mut self) {
        let mut errors: [Option<FieldError>; 4] = [None, None, None, None];
        let schema = match self.schema() {
            Ok(s) => s,
            Err(e) => {
                errors[Field::Schema.index()] = Some(e);
                None
            }
        };
        let vars = match self.vars() {
            Ok(v) => v,
            Err(e) => {
                errors[Field::Input.index()] = Some(e);
                Map::new()
            }
        };
        let mut p = self.base.clone();
        p.template = self.text(Field::Template);
        p.system = self.text(Field::System);
        p.schema.clone_from(&schema);
        if errors[Field::Schema.index()].is_none()
            && let Err(e) = super::run_view::schemas_for(&p)
        {
            let text = self.text(Field::Schema);
            errors[Field::Schema.index()] = Some(FieldError {
                line: pointer_line(&text, &e),
                column: None,
                message: e,
            });
        }
        let globals = Map::new();
        for (field, isolate) in [(Field::Template, true), (Field::System, false)] {
            let mut q = p.clone();
            if isolate {
                q.system = String::new();
            } else {
                q.template = String::new();
            }
            if let Err(e) = crate::prompt::render(&q, &globals, &vars) {
                errors[field.index()] = Some(FieldError {
                    line: e.line.or_else(|| line_in_message(&e.cause)).unwrap_or(1),
                    column: e.column,
                    message: e.cause.clone(),
                });
            }
        }
        self.rendered = crate::prompt::render(&p, &globals, &vars).map_err(|e| e.to_string());
        self.errors = errors;
    }
}

/// `line N` in an error message (minijinja says where in its text).
fn line_in_message(m: &str) -> Option<usize> {
    let at = m.rfind("line ")?;
    let digits: String = m[at + 5..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// The line of a schema text that a compile error's pointer names (its last
/// segment as a key), else 1.
fn pointer_line(text: &str, error: &str) -> usize {
    let pointer = error
        .split(" at ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .unwrap_or("");
    let Some(last) = pointer.rsplit('/').find(|s| !s.is_empty()) else {
        return 1;
    };
    let needle = format!("\"{last}\"");
    text.lines().position(|l| l.contains(&needle)).map_or(1, |i| i + 1)
}

/// The run(s) on show.
#[derive(Debug)]
pub enum Shown {
    /// One run; both panes read its text.
    Single(Box<RunView>),
    /// A JSON-array prompt and its JSONL twin on the same input and limit.
    Twins {
        /// The JSON-array run.
        json: Box<RunView>,
        /// The JSONL run.
        jsonl: Box<RunView>,
    },
}

impl Shown {
    /// The run the JSON pane reads.
    pub fn json_side(&self) -> &RunView {
        match self {
            Self::Single(r) => r,
            Self::Twins { json, .. } => json,
        }
    }

    /// The run the JSONL pane reads.
    pub fn jsonl_side(&self) -> &RunView {
        match self {
            Self::Single(r) => r,
            Self::Twins { jsonl, .. } => jsonl,
        }
    }

    /// True for a pair.
    pub fn twins(&self) -> bool {
        matches!(self, Self::Twins { .. })
    }

    /// Every run (one or two).
    pub fn runs(&self) -> Vec<&RunView> {
        match self {
            Self::Single(r) => vec![r],
            Self::Twins { json, jsonl } => vec![json, jsonl],
        }
    }

    /// The run with id `id`.
    pub fn find_mut(&mut self, id: u64) -> Option<&mut RunView> {
        match self {
            Self::Single(r) => (r.id == id).then_some(&mut **r),
            Self::Twins { json, jsonl } => {
                if json.id == id {
                    Some(&mut **json)
                } else if jsonl.id == id {
                    Some(&mut **jsonl)
                } else {
                    None
                }
            }
        }
    }

    /// True while any run may still change.
    pub fn live(&self) -> bool {
        self.runs().iter().any(|r| r.live())
    }
}

/// The sweep of the runs on show.
#[derive(Debug)]
pub struct SweepView {
    /// The computed points and boundaries.
    pub data: super::event::SweepData,
    /// The cut under the cursor, in tokens.
    pub cursor: usize,
    /// The JSON side cut at the cursor.
    pub json_cut: Option<Cut>,
    /// The JSONL side cut at the cursor.
    pub jsonl_cut: Option<Cut>,
}

impl SweepView {
    /// The largest token count of either side.
    pub fn max_tokens(&self) -> usize {
        self.data
            .json_bounds
            .len()
            .max(self.data.jsonl_bounds.len())
            .saturating_sub(1)
    }

    /// (strict, salvage, jsonl) items at `k` tokens.
    pub fn at(&self, k: usize) -> (usize, usize, usize) {
        let pick = |pts: &[SweepPoint]| pts.get(k.min(pts.len().saturating_sub(1))).copied();
        let j = pick(&self.data.json_points);
        let l = pick(&self.data.jsonl_points);
        (
            j.map_or(0, |p| p.json_items),
            j.map_or(0, |p| p.salvaged_items),
            l.map_or(0, |p| p.jsonl_items),
        )
    }

    /// The recommended limits (`cutline budget` at [`BUDGET_TARGET`]) of
    /// the answers on show: (strict JSON, JSONL), each when its answer has
    /// items to keep.
    pub fn budgets(&self) -> (Option<usize>, Option<usize>) {
        let of = |pts: &[SweepPoint], jsonl: bool| {
            let last = pts.last()?;
            let items = if jsonl { last.jsonl_items } else { last.json_items };
            (items > 0).then(|| crate::eval::budget::of_input("", pts, jsonl, BUDGET_TARGET, None).limit)
        };
        (of(&self.data.json_points, false), of(&self.data.jsonl_points, true))
    }
}

/// The share of an answer's items the Sweep tab's budget marker keeps.
pub const BUDGET_TARGET: f64 = 0.95;

/// What `r` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Nothing chosen yet.
    None,
    /// The prompt in the editor.
    Prompt,
    /// A recorded run: (session index, run index).
    Recording(usize, usize),
}

/// The sessions tab.
#[derive(Debug, Default)]
pub struct SessionsView {
    /// Loaded sessions, by file name.
    pub sessions: Vec<Session>,
    /// Selected row (session headers and their runs, flattened).
    pub selected: usize,
    /// True once the directory was read.
    pub loaded: bool,
}

impl SessionsView {
    /// The rows: (session, run) with `None` for a session's header row.
    pub fn rows(&self) -> Vec<(usize, Option<usize>)> {
        let mut out = Vec::new();
        for (i, s) in self.sessions.iter().enumerate() {
            out.push((i, None));
            out.extend((0..s.runs.len()).map(|r| (i, Some(r))));
        }
        out
    }

    /// The selected row.
    pub fn selected_row(&self) -> Option<(usize, Option<usize>)> {
        self.rows().get(self.selected).copied()
    }
}

/// The provider picker: `replay`, `local`, then every configured provider.
#[derive(Debug, Default)]
pub struct ProviderPicker {
    /// Configured providers (cutline.toml), with whether their key is set.
    pub entries: Vec<ProviderEntry>,
    /// Why the config did not load (`file:line:col: cause`), if it did not.
    pub error: Option<String>,
    /// True once the config was read.
    pub loaded: bool,
    /// Row under the cursor (0 replay, 1 local, 2.. configured).
    pub selected: usize,
    /// Models typed per configured provider name (override the config's).
    pub models: Vec<(String, String)>,
    /// A save asked for and not yet confirmed (`w` again writes it).
    pub save: Option<crate::tui::event::SaveModel>,
}

impl ProviderPicker {
    /// Rows: replay, local, then the configured providers.
    pub fn len(&self) -> usize {
        2 + self.entries.len()
    }

    /// Never empty (replay and local are always there).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The model in force for a configured provider: typed, else configured.
    pub fn model_of(&self, e: &ProviderEntry) -> Option<String> {
        self.models
            .iter()
            .find(|(n, _)| *n == e.config.name)
            .map(|(_, m)| m.clone())
            .or_else(|| e.config.model.clone())
    }

    /// The choice a row stands for.
    pub fn choice(&self, row: usize) -> Option<ProviderChoice> {
        Some(match self.row(row)? {
            PickerRow::Replay => ProviderChoice::Replay,
            PickerRow::Local => ProviderChoice::Local,
            PickerRow::Configured(e) => ProviderChoice::Configured {
                name: e.config.name.clone(),
                model: self.model_of(e),
            },
        })
    }

    /// What row `i` is.
    pub fn row(&self, i: usize) -> Option<PickerRow<'_>> {
        match i {
            0 => Some(PickerRow::Replay),
            1 => Some(PickerRow::Local),
            n => self.entries.get(n - 2).map(PickerRow::Configured),
        }
    }

    /// The row under the cursor.
    pub fn selected_row(&self) -> Option<PickerRow<'_>> {
        self.row(self.selected)
    }
}

/// A row of the provider picker.
#[derive(Debug, Clone, Copy)]
pub enum PickerRow<'a> {
    /// Recorded runs.
    Replay,
    /// The local model.
    Local,
    /// A provider from cutline.toml.
    Configured(&'a ProviderEntry),
}

/// The Migrate tab: a JSON-array prompt's JSONL migration (the pane draws
/// its rows from it).
#[derive(Debug)]
pub struct MigrateView {
    /// The prompt migrated.
    pub source: PromptConfig,
    /// The migration, or why there is none (not a JSON prompt).
    pub result: Result<Migration, String>,
    /// First visible row.
    pub top: usize,
    /// The file the migrated prompt goes to.
    pub target: String,
    /// Set when the target exists: the write key again overwrites it.
    pub confirm_overwrite: bool,
    /// The file it was written to, once written.
    pub written: Option<String>,
}

/// The Compare tab: the last pair's report and the gold set found for it.
#[derive(Debug, Default)]
pub struct CompareView {
    /// The report of the pair on show, or why there is none yet.
    pub report: Option<Result<Box<Report>, String>>,
    /// Labels of sides A and B (response type · prompt id).
    pub labels: [String; 2],
    /// Run ids the report is of.
    pub ids: Option<(u64, u64)>,
    /// Prompt ids the gold set was looked up for.
    pub gold_for: Vec<String>,
    /// The gold set: file and items.
    pub gold: Option<(String, Vec<Value>)>,
    /// Why the gold set did not load.
    pub gold_error: Option<String>,
    /// The per-line schema of the pair (the JSONL side's), for item keys.
    pub line_schema: Option<Value>,
    /// With a gold set: why each side missed the gold items it missed
    /// (computed with the report, not per frame).
    pub loss: Option<[crate::compare::loss::Loss; 2]>,
    /// What getting every item costs, strategy by strategy (`S`).
    pub costs: super::costs::Costs,
    /// First visible row.
    pub top: usize,
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
    pub prompts: PromptList,
    /// The prompt open for editing.
    pub editor: Option<Editor>,
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
    pub sessions: SessionsView,
    /// The status-bar message.
    pub message: Option<Message>,
    /// The first screen's one-line guide, until the first key or click.
    pub first_screen: Option<FirstScreen>,
    /// The provider picker (open in [`Mode::Picker`]).
    pub picker: ProviderPicker,
    /// The Migrate tab.
    pub migrate: Option<MigrateView>,
    /// The Compare tab.
    pub compare: CompareView,
    /// A finished run pinned as compare side A (the run on show is B).
    pub pinned: Option<Box<RunView>>,
    /// A pin remembered from the last session (`session#N`), restored once
    /// the sessions it refers to have loaded.
    pub pin_to_restore: Option<String>,
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
            prompts: PromptList::default(),
            editor: None,
            target: Target::None,
            provider: ProviderChoice::Replay,
            local_installed: None,
            structured: None,
            max_tokens: None,
            limit_step: 16,
            shown: None,
            focus: OutPane::Json,
            scrolls: [Scroll::following(); 4],
            sweep: Sweep::Idle,
            sessions: SessionsView::default(),
            message: None,
            first_screen: None,
            picker: ProviderPicker::default(),
            migrate: None,
            compare: CompareView::default(),
            pinned: None,
            pin_to_restore: None,
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
}
