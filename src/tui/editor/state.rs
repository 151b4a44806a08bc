//! The prompt open for editing. Its four fields are `ratatui_textarea`
//! text areas held here, in state: a text area is the editing buffer
//! (lines, cursor, undo history, wrap), which the reducer changes key by
//! key; only how it is drawn (styles, the gutter) is the view's. Every
//! other view type stays out of state.

use ratatui::style::Style;
use ratatui_textarea::TextArea;
use serde_json::{Map, Value};

use crate::prompt::{PromptConfig, Rendered};
use crate::tui::theme::Theme;

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

    /// Its title, in the UI language.
    pub fn title(self) -> String {
        let key = match self {
            Field::Template => "tui.field.template",
            Field::System => "tui.field.system",
            Field::Schema => "tui.field.schema",
            Field::Input => "tui.field.input",
        };
        rust_i18n::t!(key).into_owned()
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

/// Why the edited fields make no prompt: the first field error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The schema field is not JSON.
    #[error("schema line {}: {}", .0.line, .0.message)]
    Schema(FieldError),
    /// The sample input field is not JSON.
    #[error("input line {}: {}", .0.line, .0.message)]
    Input(FieldError),
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
    pub rendered: Result<Rendered, crate::prompt::ConfigError>,
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
            // Set by `revalidate` below.
            rendered: Ok(Rendered::default()),
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
    pub fn config(&self) -> Result<(PromptConfig, Map<String, Value>), EditError> {
        let mut p = self.base.clone();
        p.template = self.text(Field::Template);
        p.system = self.text(Field::System);
        p.schema = self.schema().map_err(EditError::Schema)?;
        let vars = self.vars().map_err(EditError::Input)?;
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
                    line: e.line.or_else(|| line_in_message(&e.message)).unwrap_or(1),
                    column: e.column,
                    message: e.message.clone(),
                });
            }
        }
        self.rendered = crate::prompt::render(&p, &globals, &vars);
        self.errors = errors;
    }
}

/// `line N` in an error message (minijinja says where in its text).
fn line_in_message(m: &str) -> Option<usize> {
    let at = m.rfind("line ")?;
    let digits: String = m[at + 5..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| *n > 0)
}
