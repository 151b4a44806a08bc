//! Migration of a JSON-array prompt to JSONL (one object per line). Pure: a
//! `PromptConfig` in, the migrated config plus what the author must look at
//! out.
//!
//! - Schema: an array schema becomes its `items` schema; an object whose
//!   properties are arrays of objects becomes a `oneOf` of per-line objects
//!   told apart by a `type` const named from the property (singular). `$defs`
//!   move to the new root; local `$ref`s are re-pointed. Anything else is
//!   reported as [`Unconvertible`], never guessed.
//! - Template: JSON examples in array form are re-serialised one element per
//!   line (only when they parse and every element matches the schema, so no
//!   example is ever invented); output-format phrases ("a JSON array", "array
//!   of objects", …) are rewritten; every place that cannot be rewritten with
//!   confidence is a [`Flag`] with its template line.

mod schema;
mod template;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Origin, PromptConfig, ResponseType};
use crate::output::schema::CompiledSchema;
pub use schema::line_schema;
use schema::migrate_schema;
use template::{Ctx, rewrite_template};

/// A place in a template the author should check by hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// Which text: `prompt`, `system` or `description`.
    pub part: &'static str,
    /// 1-based line in the source template; 0 when the flag is about the
    /// schema as a whole (`part` = `schema`).
    pub line: usize,
    /// What could not be rewritten, and why.
    pub message: String,
}

/// A part of the schema that has no per-line form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unconvertible {
    /// JSON pointer into the source schema.
    pub pointer: String,
    /// What could not be converted.
    pub message: String,
}

/// The result of a migration.
#[derive(Debug, Clone)]
pub struct Migration {
    /// The migrated prompt (response type `jsonl`, `twin` = the source id).
    /// Its schema is `None` when the source schema could not be converted.
    pub config: PromptConfig,
    /// Template places to check by hand.
    pub flags: Vec<Flag>,
    /// Schema parts that were not converted.
    pub unconvertible: Vec<Unconvertible>,
}

/// How one line of the migrated output looks.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    /// Each line is one element of the old array, of this kind.
    Items(Item),
    /// Each line is one element of one of the old arrays, tagged with
    /// `type`: (property, tag) in schema order.
    Union(Vec<(String, String)>),
}

/// What one element of the old array is, as its schema says: the wording
/// names it ("one JSON string per line"), and anything but an object is
/// flagged, since a line without keys gives a consumer nothing to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Object,
    String,
    Number,
    Boolean,
    /// No single type (a list of types, `anyOf`, none given with no
    /// `properties`): any JSON value.
    Value,
}

impl Item {
    /// The kind of the `items` schema.
    fn of(items: &Map<String, Value>) -> Self {
        match items.get("type").and_then(Value::as_str) {
            Some("object") => Self::Object,
            Some("string") => Self::String,
            Some("number" | "integer") => Self::Number,
            Some("boolean") => Self::Boolean,
            None if items.contains_key("properties") => Self::Object,
            _ => Self::Value,
        }
    }

    /// The noun the wording uses for one line.
    fn noun(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::String => "string",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Value => "value",
        }
    }
}

/// The flag a migration whose lines are not objects carries.
fn not_objects(item: Item) -> Flag {
    let noun = item.noun();
    Flag {
        part: "schema",
        line: 0,
        message: format!(
            "the items are not objects: each line will be one JSON {noun} (a string is quoted, \"like this\"), \
             which TrustGraph's jsonl keeps as it is; the wording now says \"one JSON {noun} per line\" — check \
             that the prompt's examples and its consumer expect bare {noun}s, not objects"
        ),
    }
}

/// Singular of a property name: `-ies` → `-y`, `-sses` → `-ss`, `-s` → ``.
pub fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = word.strip_suffix("sses") {
        format!("{stem}ss")
    } else if let Some(stem) = word.strip_suffix('s') {
        stem.to_owned()
    } else {
        word.to_owned()
    }
}

/// A prompt that is not migrated: only `json` prompts are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("prompt `{id}` has response type `{response_type}`; only `json` prompts are migrated")]
pub struct NotJson {
    /// The prompt.
    pub id: String,
    /// Its response type.
    pub response_type: ResponseType,
}

/// The id a migration of `src_id` takes when none is given: the first of
/// `<id>-jsonl`, `<id>-jsonl-2`, … that `taken` says no prompt has.
/// `<id>-jsonl` is what a hand-written twin is called (the bundled ones
/// are): a default that named it would replace the twin on every write.
pub fn free_id(src_id: &str, taken: impl Fn(&str) -> bool) -> String {
    let first = format!("{src_id}-jsonl");
    if !taken(&first) {
        return first;
    }
    let mut n: u64 = 2;
    loop {
        let id = format!("{first}-{n}");
        if !taken(&id) {
            return id;
        }
        n += 1;
    }
}

/// Migrate a `json` prompt to `jsonl`. `id` overrides the new id (default:
/// the source id with `-jsonl`; [`free_id`] picks one no prompt has). Errors when the prompt is not a `json` prompt.
pub fn migrate(src: &PromptConfig, id: Option<&str>) -> Result<Migration, NotJson> {
    if src.response_type != ResponseType::Json {
        return Err(NotJson {
            id: src.id.clone(),
            response_type: src.response_type,
        });
    }
    let mut unconvertible = Vec::new();
    let (schema, shape) = match &src.schema {
        None => (None, Some(Shape::Items(Item::Object))),
        Some(s) => match migrate_schema(s, &mut unconvertible) {
            Some((schema, shape)) => (Some(schema), Some(shape)),
            None => (None, None),
        },
    };
    let compiled = match schema.as_ref().map(CompiledSchema::compile).transpose() {
        Ok(c) => c,
        Err(e) => {
            unconvertible.push(Unconvertible {
                pointer: String::new(),
                message: e.to_string(),
            });
            return Ok(Migration {
                config: migrated_config(src, id, None, src.template.clone(), src.system.clone()),
                flags: Vec::new(),
                unconvertible,
            });
        }
    };
    let ctx = Ctx {
        shape: shape.as_ref(),
        schema: compiled.as_ref(),
    };
    let mut flags = Vec::new();
    let template = rewrite_template(&src.template, &ctx, "prompt", &mut flags);
    let system = rewrite_template(&src.system, &ctx, "system", &mut flags);
    let description = rewrite_template(&src.description, &ctx, "description", &mut flags);
    if let Some(Shape::Items(item)) = shape.as_ref().filter(|s| **s != Shape::Items(Item::Object)) {
        flags.push(not_objects(*item));
    }
    flags.sort_by_key(|f| (f.part != "prompt", f.part != "system", f.line));
    let mut config = migrated_config(src, id, schema, template, system);
    config.description = description;
    Ok(Migration {
        config,
        flags,
        unconvertible,
    })
}

fn migrated_config(
    src: &PromptConfig,
    id: Option<&str>,
    schema: Option<Value>,
    template: String,
    system: String,
) -> PromptConfig {
    PromptConfig {
        id: id.map_or_else(|| format!("{}-jsonl", src.id), str::to_owned),
        description: src.description.clone(),
        system,
        template,
        response_type: ResponseType::Jsonl,
        schema,
        object_schema: None,
        stop: src.stop.clone(),
        params: src.params,
        variables: src.variables.clone(),
        inputs: src.inputs.clone(),
        twin: Some(src.id.clone()),
        // A new prompt: it has no file until the caller writes it, so a
        // save can never overwrite the source.
        origin: Origin::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singulars() {
        assert_eq!(singular("definitions"), "definition");
        assert_eq!(singular("relationships"), "relationship");
        assert_eq!(singular("entities"), "entity");
        assert_eq!(singular("attributes"), "attribute");
        assert_eq!(singular("classes"), "class");
        assert_eq!(singular("addresses"), "address");
        assert_eq!(singular("data"), "data");
    }

    #[test]
    fn phrases_absorb_what_the_replacement_already_says() {
        let mut flags = Vec::new();
        let mut flag = |at: usize, m: String| flags.push((at, m));
        let text = "Answer with a JSON array of row objects, one row per line. A json list, one item per line.";
        assert_eq!(
            template::rewrite_prose(text, 0, text.len(), "object", &mut flag),
            "Answer with JSONL: one JSON object per line, one row per line. JSONL: one JSON object per line."
        );
        assert!(flags.is_empty());
    }

    #[test]
    fn boundary_chars() {
        assert_eq!(template::line_of("a\nb\nc", 4), 3);
        assert_eq!(template::balanced_end(br#"x["]",{}]y"#, 1), Some(9));
        assert_eq!(template::tag_end(b"a{{ x }}b", 1), Some(8));
    }
}
