//! Rendering with minijinja, as TrustGraph renders with ibis.
//!
//! One environment shape for loading (syntax check) and rendering, so a
//! template that loads also parses the same way when it renders:
//! - Python method compatibility (`d.items()`, `s.upper()`), because
//!   TrustGraph's templates are written against Python dicts and strings;
//! - ibis's undefined: an undefined name or attribute is empty and false
//!   (shipped templates rely on `{% if field.description %}`), and every
//!   undefined name a render touched is listed, so a typo stays visible;
//!   [`Undefined::Strict`] makes it an error instead;
//! - values printed as Python's `str()` prints them (`True`, `None`,
//!   `['a', 'b']`), as ibis does;
//! - a fuel limit, so a hostile or runaway template stops with an error;
//! - no autoescape (prompts are not HTML) and the trailing newline kept, so
//!   the text sent is the text written.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use minijinja::value::{Enumerator, Object, ObjectExt};
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};
use serde_json::{Map, Value};

use super::{ConfigError, PromptConfig};

/// Fuel for one render: roughly the number of template instructions (or
/// 64-byte units of data) a render may spend before it is stopped. Far above
/// any real prompt; low enough that a runaway loop stops within seconds.
pub const FUEL: u64 = 5_000_000;

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rendered {
    /// Rendered system text (empty when the prompt has none).
    pub system: String,
    /// Rendered prompt text.
    pub prompt: String,
    /// Every undefined name or attribute the render touched (rendered empty
    /// or false, as ibis does), as a path from the variables
    /// (`classes.person.comment`), in first-touch order.
    pub undefined: Vec<String>,
}

/// What an undefined name does in a render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Undefined {
    /// TrustGraph's (ibis's): empty when printed, false in `if`, empty when
    /// looped over, its attributes undefined too; listed in
    /// [`Rendered::undefined`].
    #[default]
    Ibis,
    /// An error naming the variable (`--strict-vars`).
    Strict,
}

/// Which template of a prompt, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The prompt template.
    Prompt,
    /// The system template.
    System,
}

impl Part {
    fn words(self) -> &'static str {
        match self {
            Self::Prompt => "template",
            Self::System => "system template",
        }
    }
}

/// The environment every template is compiled and rendered in.
pub(crate) fn environment<'s>() -> Environment<'s> {
    environment_for(Undefined::Strict)
}

fn environment_for<'s>(undefined: Undefined) -> Environment<'s> {
    let mut env = Environment::new();
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.set_undefined_behavior(match undefined {
        Undefined::Ibis => UndefinedBehavior::Chainable,
        Undefined::Strict => UndefinedBehavior::Strict,
    });
    env.set_formatter(|out, _state, value| {
        if !value.is_undefined() {
            let mut text = String::new();
            super::pyfmt::py_str(&mut text, value);
            out.write_str(&text)?;
        }
        Ok(())
    });
    env.set_fuel(Some(FUEL));
    super::ibis_filters::register(&mut env);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    // Debug info makes an undefined-value error name the expression.
    env.set_debug(true);
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env
}

/// A template syntax error: what is wrong and the template-relative line and
/// byte range, when minijinja knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// minijinja's description, without its own location suffix.
    pub detail: String,
    /// 1-based line in the template.
    pub line: Option<usize>,
    /// Byte range in the template.
    pub range: Option<std::ops::Range<usize>>,
}

/// Compile `source` to check its syntax (loading does this so a broken
/// template is reported with its file position, not at the first render).
pub(crate) fn syntax_check(source: &str) -> Result<(), SyntaxError> {
    let translated = super::ibis::to_jinja(source).map_err(|e| SyntaxError {
        detail: format!(
            "ibis refuses it, so TrustGraph's reload stops at this template (it and every template after it fail): {}",
            e.message
        ),
        line: Some(e.line),
        range: e.range,
    })?;
    let env = environment();
    match env.template_from_str(&translated) {
        Ok(_) => Ok(()),
        Err(e) => Err(SyntaxError {
            detail: e.detail().map_or_else(|| e.kind().to_string(), str::to_owned),
            line: e.line(),
            range: e.range(),
        }),
    }
}

/// Render `cfg` with TrustGraph's semantics (see [`Undefined::Ibis`]):
/// globals < prompt terms < `vars`.
pub fn render(
    cfg: &PromptConfig,
    globals: &Map<String, Value>,
    vars: &Map<String, Value>,
) -> Result<Rendered, ConfigError> {
    render_with(cfg, globals, vars, Undefined::Ibis)
}

/// Render `cfg`: globals < prompt terms < `vars`.
///
/// Both the system and the prompt template are rendered with the same
/// variables (as TrustGraph does); an empty system stays empty.
pub fn render_with(
    cfg: &PromptConfig,
    globals: &Map<String, Value>,
    vars: &Map<String, Value>,
    undefined: Undefined,
) -> Result<Rendered, ConfigError> {
    let mut ctx = globals.clone();
    ctx.extend(cfg.variables.iter().map(|(k, v)| (k.clone(), v.clone())));
    ctx.extend(vars.iter().map(|(k, v)| (k.clone(), v.clone())));
    let env = environment_for(undefined);
    let log = Log::default();
    let value = to_jinja_map(&ctx, "", &log);
    let system = if cfg.system.is_empty() {
        String::new()
    } else {
        render_one(&env, cfg, Part::System, &ctx, &value)?
    };
    let prompt = render_one(&env, cfg, Part::Prompt, &ctx, &value)?;
    let globals: HashSet<String> = env.globals().map(|(k, _)| k.to_owned()).collect();
    let touched = log.0.lock().map(|l| l.clone()).unwrap_or_default();
    let mut undefined = Vec::new();
    for name in touched {
        if !globals.contains(&name) && !undefined.contains(&name) {
            undefined.push(name);
        }
    }
    Ok(Rendered {
        system,
        prompt,
        undefined,
    })
}

/// The variables of the named sample input (default: the first).
pub fn input_vars(cfg: &PromptConfig, name: Option<&str>) -> Result<Map<String, Value>, ConfigError> {
    let Some(name) = name else {
        return Ok(cfg.inputs.first().map(|i| i.vars.clone()).unwrap_or_default());
    };
    if let Some(input) = cfg.inputs.iter().find(|i| i.name == name) {
        return Ok(input.vars.clone());
    }
    let cause = if cfg.inputs.is_empty() {
        format!("prompt {:?} has no sample inputs (asked for {name:?})", cfg.id)
    } else {
        let names: Vec<&str> = cfg.inputs.iter().map(|i| i.name.as_str()).collect();
        format!(
            "prompt {:?} has no sample input named {name:?}; available: {}",
            cfg.id,
            names.join(", ")
        )
    };
    Err(ConfigError::new(file_of(cfg), cause))
}

/// The label errors about `cfg` carry: its file, or its id when it has none.
fn file_of(cfg: &PromptConfig) -> String {
    if cfg.origin.file.is_empty() {
        format!("<prompt {}>", cfg.id)
    } else {
        cfg.origin.file.clone()
    }
}

fn render_one(
    env: &Environment<'_>,
    cfg: &PromptConfig,
    part: Part,
    ctx: &Map<String, Value>,
    value: &minijinja::Value,
) -> Result<String, ConfigError> {
    let (source, first_line) = match part {
        Part::Prompt => (cfg.template.as_str(), cfg.origin.template_line),
        Part::System => (cfg.system.as_str(), cfg.origin.system_line),
    };
    let translated = match super::ibis::to_jinja(source) {
        Ok(t) => t,
        Err(e) => {
            return Err(ConfigError::new(
                file_of(cfg),
                format!(
                    "prompt {:?}: ibis refuses the {} (line {}): {}",
                    cfg.id,
                    part.words(),
                    e.line,
                    e.message
                ),
            ));
        }
    };
    let err = match env.template_from_str(&translated) {
        Ok(tmpl) => match tmpl.render(value) {
            Ok(text) => return Ok(text),
            Err(e) => {
                let what = describe(&e, &translated, ctx, &tmpl);
                (what, e.line())
            }
        },
        Err(e) => (
            format!(
                "template syntax error: {}",
                e.detail().map_or_else(|| e.kind().to_string(), str::to_owned)
            ),
            e.line(),
        ),
    };
    let (what, line) = err;
    let mut cause = format!("prompt {:?}: {what}", cfg.id);
    if let Some(n) = line {
        let _ = write!(cause, " in {} line {n}", part.words());
    }
    Err(match (first_line, line) {
        (Some(first), Some(n)) => ConfigError::at(file_of(cfg), first + n - 1, None, cause),
        _ => ConfigError::new(file_of(cfg), cause),
    })
}

/// Say what went wrong in a render, naming the undefined variable when that
/// is the trouble (minijinja's error does not always name it).
fn describe(
    e: &minijinja::Error,
    source: &str,
    ctx: &Map<String, Value>,
    tmpl: &minijinja::Template<'_, '_>,
) -> String {
    match e.kind() {
        ErrorKind::UndefinedError => {
            let name = e
                .detail()
                .and_then(backticked)
                .or_else(|| undefined_name(e, source, ctx, tmpl));
            match name {
                Some(n) => format!("undefined variable `{n}`"),
                None => "undefined value".to_owned(),
            }
        }
        ErrorKind::OutOfFuel => {
            format!("template ran out of fuel (more than {FUEL} steps; a runaway loop?)")
        }
        kind => match e.detail() {
            Some(d) => format!("{kind}: {d}"),
            None => kind.to_string(),
        },
    }
}

/// The first `…`-quoted expression in minijinja's detail (`` `text` is undefined ``).
fn backticked(detail: &str) -> Option<String> {
    let start = detail.find('`')? + 1;
    let len = detail[start..].find('`')?;
    let name = &detail[start..start + len];
    (!name.is_empty()).then(|| name.to_owned())
}

/// Name the undefined variable by static analysis: the template's undeclared
/// names that neither the context nor the environment provides, preferring
/// the one inside the failing expression, else the first in the source.
fn undefined_name(
    e: &minijinja::Error,
    source: &str,
    ctx: &Map<String, Value>,
    tmpl: &minijinja::Template<'_, '_>,
) -> Option<String> {
    let env = environment();
    let globals: HashSet<String> = env.globals().map(|(k, _)| k.to_owned()).collect();
    let missing: Vec<String> = tmpl
        .undeclared_variables(false)
        .into_iter()
        .filter(|n| !ctx.contains_key(n) && !globals.contains(n))
        .collect();
    if let Some(snippet) = e.range().and_then(|r| source.get(r))
        && let Some(n) = missing.iter().find(|n| contains_ident(snippet, n))
    {
        return Some(n.clone());
    }
    missing
        .into_iter()
        .filter_map(|n| first_ident(source, &n).map(|at| (at, n)))
        .min()
        .map(|(_, n)| n)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Byte offset of the first whole-word occurrence of `name` in `text`.
fn first_ident(text: &str, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.match_indices(name).map(|(i, _)| i).find(|&i| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + name.len()).copied();
        !before.is_some_and(is_ident_byte) && !after.is_some_and(is_ident_byte)
    })
}

fn contains_ident(text: &str, name: &str) -> bool {
    first_ident(text, name).is_some()
}

/// A JSON object as a minijinja map that keeps the object's key order (so
/// `d.items()` iterates as Python's dicts do).
///
/// A lookup of a key it does not have is logged with its path: that is
/// how a render lists the undefined names it touched.
#[derive(Debug)]
struct OrderedMap {
    keys: Vec<minijinja::Value>,
    values: Vec<minijinja::Value>,
    index: HashMap<String, usize>,
    /// Path of this map from the variables (`""` for the variables).
    path: String,
    log: Log,
}

/// The undefined paths a render looked up, shared by every map of it.
#[derive(Debug, Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, path: String) {
        if let Ok(mut l) = self.0.lock() {
            l.push(path);
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

impl Object for OrderedMap {
    fn get_value(self: &Arc<Self>, key: &minijinja::Value) -> Option<minijinja::Value> {
        let name = key.as_str()?;
        match self.index.get(name) {
            Some(&i) => self.values.get(i).cloned(),
            None => {
                self.log.push(join(&self.path, name));
                None
            }
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.mapped_enumerator(|this| Box::new(this.keys.iter().cloned()))
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.keys.len())
    }
}

fn to_jinja_map(map: &Map<String, Value>, path: &str, log: &Log) -> minijinja::Value {
    let mut keys = Vec::with_capacity(map.len());
    let mut values = Vec::with_capacity(map.len());
    let mut index = HashMap::with_capacity(map.len());
    for (k, v) in map {
        index.insert(k.clone(), keys.len());
        keys.push(minijinja::Value::from(k.as_str()));
        values.push(to_jinja(v, &join(path, k), log));
    }
    minijinja::Value::from_object(OrderedMap {
        keys,
        values,
        index,
        path: path.to_owned(),
        log: log.clone(),
    })
}

/// serde_json (with arbitrary precision, so not via serde) to minijinja.
fn to_jinja(v: &Value, path: &str, log: &Log) -> minijinja::Value {
    match v {
        Value::Null => minijinja::Value::from(()),
        Value::Bool(b) => minijinja::Value::from(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                minijinja::Value::from(i)
            } else if let Some(u) = n.as_u64() {
                minijinja::Value::from(u)
            } else if let Ok(i) = n.to_string().parse::<i128>() {
                minijinja::Value::from(i)
            } else {
                minijinja::Value::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => minijinja::Value::from(s.as_str()),
        Value::Array(a) => minijinja::Value::from(
            a.iter()
                .enumerate()
                .map(|(i, v)| to_jinja(v, &format!("{path}[{i}]"), log))
                .collect::<Vec<_>>(),
        ),
        Value::Object(m) => to_jinja_map(m, path, log),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg(template: &str) -> PromptConfig {
        PromptConfig {
            id: "t".into(),
            template: template.into(),
            origin: super::super::Origin {
                file: "t.toml".into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn items_in_key_order() {
        let c = cfg("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}");
        let r = render(&c, &Map::new(), &obj(json!({"d": {"z": 1, "a": 2.5, "m": "x"}}))).unwrap();
        assert_eq!(r.prompt, "z=1;a=2.5;m=x;");
    }

    #[test]
    fn precedence_globals_terms_vars() {
        let mut c = cfg("{{ a }} {{ b }} {{ c }}\n");
        c.variables = obj(json!({"b": "term", "c": "term"}));
        let g = obj(json!({"a": "global", "b": "global", "c": "global"}));
        let r = render(&c, &g, &obj(json!({"c": "var"}))).unwrap();
        assert_eq!(r.prompt, "global term var\n");
    }

    #[test]
    fn undefined_names_variable_and_line() {
        let mut c = cfg("line one\n{{ text }}");
        c.origin.template_line = Some(10);
        let r = render(&c, &Map::new(), &Map::new()).unwrap();
        assert_eq!(
            (r.prompt.as_str(), r.undefined.as_slice()),
            ("line one\n", ["text".to_owned()].as_slice())
        );
        let e = render_with(&c, &Map::new(), &Map::new(), Undefined::Strict).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.toml:11: prompt \"t\": undefined variable `text` in template line 2"
        );
    }

    #[test]
    fn undefined_attribute_is_named() {
        let c = cfg("{{ doc.title }}");
        let e = render_with(&c, &Map::new(), &obj(json!({"doc": {}})), Undefined::Strict).unwrap_err();
        assert!(e.message.contains("undefined variable `doc.title`"), "{e}");
    }

    #[test]
    fn system_rendered_too() {
        let mut c = cfg("p");
        c.system = "You speak {{ lang }}.".into();
        let r = render(&c, &Map::new(), &obj(json!({"lang": "Welsh"}))).unwrap();
        assert_eq!(r.system, "You speak Welsh.");
        let e = render_with(&c, &Map::new(), &Map::new(), Undefined::Strict).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.toml: prompt \"t\": undefined variable `lang` in system template line 1"
        );
    }

    #[test]
    fn fuel_stops_runaway_loops() {
        let c = cfg("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}");
        let e = render(&c, &Map::new(), &Map::new()).unwrap_err();
        assert!(e.message.contains("ran out of fuel"), "{e}");
    }

    #[test]
    fn no_autoescape_and_trailing_newline_kept() {
        let c = cfg("<b>{{ t }}</b>\n");
        let r = render(&c, &Map::new(), &obj(json!({"t": "a & \"b\""}))).unwrap();
        assert_eq!(r.prompt, "<b>a & \"b\"</b>\n");
    }

    #[test]
    fn input_vars_default_and_unknown() {
        let mut c = cfg("x");
        assert_eq!(input_vars(&c, None).unwrap(), Map::new());
        c.inputs = vec![
            super::super::SampleInput {
                name: "one".into(),
                vars: obj(json!({"text": "1"})),
            },
            super::super::SampleInput {
                name: "two".into(),
                vars: obj(json!({"text": "2"})),
            },
        ];
        assert_eq!(input_vars(&c, None).unwrap()["text"], "1");
        assert_eq!(input_vars(&c, Some("two")).unwrap()["text"], "2");
        assert_eq!(
            input_vars(&c, Some("three")).unwrap_err().to_string(),
            "t.toml: prompt \"t\" has no sample input named \"three\"; available: one, two"
        );
    }

    #[test]
    fn big_numbers_render() {
        let c = cfg("{{ n }} {{ f }}");
        let v: Map<String, Value> = serde_json::from_str(r#"{"n": 123456789012345678901, "f": 1.5}"#).unwrap();
        assert_eq!(render(&c, &Map::new(), &v).unwrap().prompt, "123456789012345678901 1.5");
    }
}
