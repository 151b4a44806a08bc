//! Loading prompt configs from bytes, and writing cutline TOML back.
//!
//! Bad input is the normal case for a config loader, so every refusal names
//! the file, line and column: invalid UTF-8, a byte-order mark, unresolved
//! merge-conflict markers (checked before parsing, since they make any parser
//! say something confusing), TOML syntax, unknown keys and values, JSON inside
//! the TOML, schemas that do not compile and templates that do not parse.
//!
//! The steps, one file each: `check` (the bytes, before any parser),
//! `keys` (the top-level keys of a TOML prompt), `doc` (positions and typed
//! values in the file), and `shared` (what the TrustGraph loader words the
//! same way).

pub(crate) mod check;
mod doc;
mod keys;

use std::path::Path;

pub use super::loaders::OBJECT_SCHEMA_WARNING;
pub use check::BOM_CAUSE;
pub(crate) use check::{check_bytes, check_text};
pub use keys::TOML_KEYS;
use keys::load_toml_checked;

use super::{ConfigError, PromptConfig, Warning};

/// Load every prompt in a file's bytes (a bundle holds many).
///
/// The format comes from `label`'s extension: `.toml` is cutline's own
/// format, `.json` a TrustGraph single prompt (it has `prompt`) or config
/// bundle (it has `template-index` or `template.<id>` keys).
pub fn load_bytes(label: &str, bytes: &[u8]) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    load_bytes_for(label, bytes, super::tg_load::TgLoader::default())
}

/// [`load_bytes`], reading a TrustGraph bundle as the given TrustGraph's
/// loader does (every `template.<id>`, or only the indexed ids).
pub fn load_bytes_for(
    label: &str,
    bytes: &[u8],
    loader: super::tg_load::TgLoader,
) -> Result<(Vec<PromptConfig>, Vec<Warning>), ConfigError> {
    let text = check_bytes(label, bytes)?;
    match extension(label).as_deref() {
        Some("toml") => load_toml_checked(label, text).map(|(p, w)| (vec![p], w)),
        Some("json") => super::tg_load::load_json_for(label, text, loader),
        Some(ext) => Err(ConfigError::new(
            label,
            format!("unsupported file type `.{ext}`; expected .toml (cutline) or .json (TrustGraph)"),
        )),
        None => Err(ConfigError::new(
            label,
            "no file extension; expected .toml (cutline) or .json (TrustGraph)",
        )),
    }
}

/// Load one cutline TOML prompt.
pub fn load_toml(label: &str, text: &str) -> Result<(PromptConfig, Vec<Warning>), ConfigError> {
    check_text(label, text)?;
    load_toml_checked(label, text)
}

/// Lower-cased extension of `label`.
fn extension(label: &str) -> Option<String> {
    Path::new(label)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::ResponseType;
    use serde_json::{Value, json};

    fn err(label: &str, text: &str) -> String {
        load_bytes(label, text.as_bytes()).unwrap_err().to_string()
    }

    const MINIMAL: &str = "prompt = \"Hi {{ text }}\"\n";

    #[test]
    fn minimal_toml_defaults() {
        let (ps, w) = load_bytes("dir/extract.toml", MINIMAL.as_bytes()).unwrap();
        assert!(w.is_empty());
        let p = &ps[0];
        assert_eq!(p.id, "extract");
        assert_eq!(p.response_type, ResponseType::Text);
        assert_eq!(p.template, "Hi {{ text }}");
        assert_eq!(p.origin.file, "dir/extract.toml");
        assert_eq!(p.origin.template_line, Some(1));
    }

    #[test]
    fn invalid_utf8_position() {
        let e = load_bytes("a.toml", b"prompt = \"x\"\nid = \"\xff\"\n").unwrap_err();
        assert_eq!(e.to_string(), "a.toml:2:7: invalid UTF-8");
    }

    #[test]
    fn bom_rejected() {
        assert_eq!(
            err("a.toml", "\u{feff}prompt = \"x\"\n"),
            format!("a.toml:1:1: {BOM_CAUSE}")
        );
    }

    #[test]
    fn conflict_markers() {
        let text = "prompt = \"\"\"\nhello\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> 82edf2d (x)\n\"\"\"\n";
        assert_eq!(
            err("a.toml", text),
            "a.toml:3:1: unresolved git merge conflict marker `<<<<<<<`; resolve the conflict first"
        );
        let text = "a\n=======\nb\n>>>>>>> theirs\n";
        assert_eq!(
            err("a.json", text),
            "a.json:2:1: unresolved git merge conflict marker `=======`; resolve the conflict first"
        );
        // A lone underline is Markdown, not a conflict.
        let ok = "prompt = \"\"\"\nTitle\n=======\n{{ text }}\"\"\"\n";
        assert!(load_bytes("a.toml", ok.as_bytes()).is_ok());
    }

    #[test]
    fn unknown_extension() {
        assert_eq!(
            err("a.yaml", "x"),
            "a.yaml: unsupported file type `.yaml`; expected .toml (cutline) or .json (TrustGraph)"
        );
    }

    #[test]
    fn toml_syntax_error_position() {
        assert_eq!(
            err("a.toml", "prompt = \"x\"\nstop = [\"a\",\n"),
            "a.toml:2:13: TOML syntax error: unclosed array, expected `]`"
        );
    }

    #[test]
    fn unknown_key_named_with_guess() {
        let e = err("a.toml", "prompt = \"x\"\nresponse_type = \"json\"\n");
        assert!(
            e.starts_with("a.toml:2:1: unknown key `response_type`; expected one of: id, description,"),
            "{e}"
        );
        assert!(e.ends_with("(did you mean `response-type`?)"), "{e}");
    }

    #[test]
    fn unknown_response_type() {
        assert_eq!(
            err("a.toml", "prompt = \"x\"\nresponse-type = \"xml\"\n"),
            "a.toml:2:17: unknown response-type \"xml\"; expected one of: text, json, jsonl"
        );
    }

    #[test]
    fn missing_prompt() {
        assert_eq!(
            err("a.toml", "id = \"x\"\n"),
            "a.toml: missing required key `prompt` (the prompt template)"
        );
    }

    #[test]
    fn wrong_types() {
        assert_eq!(
            err("a.toml", "prompt = 3\n"),
            "a.toml:1:10: `prompt` must be a string, not integer"
        );
        assert_eq!(
            err("a.toml", "prompt = \"x\"\nstop = [\"a\", 1]\n"),
            "a.toml:2:14: `stop` must be an array of strings; found integer"
        );
    }

    #[test]
    fn schema_json_error_maps_to_file() {
        let text = "prompt = \"x\"\nschema = '''\n{\n  \"type\": \"object\",\n  \"required\": [\"a\",]\n}\n'''\n";
        assert_eq!(
            err("a.toml", text),
            "a.toml:5:20: `schema` is not valid JSON: trailing comma"
        );
    }

    #[test]
    fn schema_compile_error_at_key() {
        let text = "prompt = \"x\"\n\nschema = '{\"properties\": {\"a\": {\"type\": \"strin\"}}}'\n";
        let e = err("a.toml", text);
        assert!(
            e.starts_with("a.toml:3:1: schema does not compile at /properties/a/type: "),
            "{e}"
        );
    }

    #[test]
    fn remote_ref_rejected() {
        let text = "prompt = \"x\"\nschema = '{\"$ref\": \"https://example.com/s.json\"}'\n";
        let e = err("a.toml", text);
        assert!(e.starts_with("a.toml:2:1: schema does not compile at "), "{e}");
    }

    #[test]
    fn schema_as_table() {
        let text = "prompt = \"x\"\nresponse-type = \"jsonl\"\n[schema]\ntype = \"object\"\nrequired = [\"a\"]\n";
        let (ps, _) = load_bytes("a.toml", text.as_bytes()).unwrap();
        assert_eq!(ps[0].schema, Some(json!({"type": "object", "required": ["a"]})));
    }

    #[test]
    fn object_schema_alias_warns() {
        let text = "prompt = \"x\"\nresponse-type = \"jsonl\"\nobject-schema = '{\"type\": \"object\"}'\n";
        let (ps, w) = load_bytes("a.toml", text.as_bytes()).unwrap();
        assert_eq!(ps[0].schema, None);
        assert_eq!(ps[0].object_schema, Some(json!({"type": "object"})));
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].to_string(), format!("a.toml:3: {OBJECT_SCHEMA_WARNING}"));
        let both = format!("{text}schema = '{{}}'\n");
        let (ps, _) = load_bytes("a.toml", both.as_bytes()).unwrap();
        assert_eq!(
            (ps[0].schema.clone(), ps[0].object_schema.clone()),
            (Some(json!({})), Some(json!({"type": "object"})))
        );
        let bad = text.replace("\"object\"", "\"objekt\"");
        let (ps, w) = load_bytes("a.toml", bad.as_bytes()).unwrap();
        assert_eq!(ps[0].object_schema, None);
        assert!(
            w[1].to_string()
                .starts_with("a.toml:3: `object-schema` (schema does not compile at /type: "),
            "{w:?}"
        );
    }

    #[test]
    fn template_syntax_error_line() {
        let text = "id = \"t\"\nprompt = \"\"\"\nline one\nline two {% endfor %}\nline three\n\"\"\"\n";
        assert_eq!(
            err("a.toml", text),
            "a.toml:4:10: template syntax error: ibis refuses it, so TrustGraph's reload stops at this template (it and every template after it fail): \
             Unexpected 'endfor' tag. (template line 2)"
        );
        // Escapes break the line mapping: the key's line, and the template line.
        let text = "id = \"t\"\nprompt = \"one\\ntwo {% endfor %}\"\n";
        assert_eq!(
            err("a.toml", text),
            "a.toml:2: template syntax error: ibis refuses it, so TrustGraph's reload stops at this template (it and every template after it fail): \
             Unexpected 'endfor' tag. (template line 2)"
        );
    }

    #[test]
    fn inputs_and_variables() {
        let text = "prompt = \"{{ lang }} {{ text }}\"\n[variables]\nlang = \"English\"\nn = 0x10\nf = 1_000.5\n\n[[input]]\nname = \"a\"\ntext = \"one\"\n\n[[input]]\nname = \"b\"\ntext = \"two\"\n";
        let (ps, _) = load_bytes("a.toml", text.as_bytes()).unwrap();
        let p = &ps[0];
        assert_eq!(
            Value::Object(p.variables.clone()),
            json!({"lang": "English", "n": 16, "f": 1000.5})
        );
        assert_eq!(p.inputs.len(), 2);
        assert_eq!(p.inputs[1].name, "b");
        assert_eq!(p.inputs[1].vars["text"], "two");
        let dup = "prompt = \"x\"\n[[input]]\nname = \"a\"\n[[input]]\nname = \"a\"\n";
        assert_eq!(err("a.toml", dup), "a.toml:5:8: duplicate input name \"a\"");
        let unnamed = "prompt = \"x\"\n[[input]]\ntext = \"a\"\n";
        let e = err("a.toml", unnamed);
        assert!(e.ends_with(": [[input]] needs a `name`"), "{e}");
    }

    #[test]
    fn float_nan_rejected() {
        let e = err("a.toml", "prompt = \"x\"\n[variables]\nx = nan\n");
        assert_eq!(e, "a.toml:3:5: `variables.x`: nan cannot be represented in JSON");
    }
}
