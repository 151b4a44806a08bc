//! House rules the compiler does not hold, held here (issue 36): an error
//! is a type, not a `String`, except where the contract is a string: the
//! functions clap calls to parse an argument (clap prints the string as
//! the usage error) and `FromStr` impls. This test reads `src/` as text and
//! fails on a `Result<_, String>` anywhere else, so a new one has to be
//! typed, or named below with the argument it parses.

use std::path::{Path, PathBuf};

/// Where `Result<_, String>` is allowed: the file and the function whose
/// signature holds it, each an argument parser (or its one helper).
const STRING_ERRORS_ALLOWED: &[(&str, &str, &str)] = &[
    ("src/cli/budget.rs", "parse_target", "clap value_parser of --target"),
    (
        "src/cli/eval/batch.rs",
        "duration_arg",
        "clap value_parser of --poll and --wait",
    ),
    (
        "src/cli/eval/batch.rs",
        "window_arg",
        "clap value_parser of --batch-window",
    ),
    (
        "src/cli/eval/mod.rs",
        "strategies_arg",
        "clap value_parser of --strategy",
    ),
    (
        "src/cli/migrate.rs",
        "parse_limit",
        "clap value_parser of migrate --max-tokens",
    ),
    (
        "src/cli/report.rs",
        "parse_runs",
        "the run list after # in report's SESSION argument",
    ),
    ("src/cli/params.rs", "parse_effort", "clap value_parser of --effort"),
    ("src/cli/params.rs", "parse_header", "clap value_parser of --header"),
    (
        "src/cli/params.rs",
        "parse_temperature",
        "clap value_parser of --temperature",
    ),
    ("src/cli/params.rs", "parse_top_p", "clap value_parser of --top-p"),
    ("src/cli/tg/mod.rs", "timeout_arg", "clap value_parser of --timeout"),
    (
        "src/eval/batch/time.rs",
        "parse",
        "the duration words behind duration_arg and timeout_arg",
    ),
    ("src/eval/strategy.rs", "parse_list", "the list behind strategies_arg"),
    (
        "src/output/tg.rs",
        "from_str",
        "FromStr of TgPython (clap's --tg-python)",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `source` without `//` comments (doc comments included), its lines
/// joined by spaces, so a signature rustfmt broke over lines reads as one.
fn code_only(source: &str) -> String {
    source
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error type of the `Result<…>` whose arguments start at `at` (just
/// past its `<`): the last of two or more arguments, trimmed; empty for a
/// one-argument alias such as `io::Result<T>`.
fn error_type(code: &str, at: usize) -> String {
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut from = at;
    for (i, c) in code[at..].char_indices() {
        match c {
            '>' if code[..at + i].ends_with('-') => {}
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' if depth > 0 => depth -= 1,
            ',' if depth == 0 => {
                args.push(code[from..at + i].trim());
                from = at + i + 1;
            }
            '>' => {
                args.push(code[from..at + i].trim());
                break;
            }
            _ => {}
        }
    }
    args.retain(|a| !a.is_empty());
    match args.as_slice() {
        [_, .., last] => (*last).to_owned(),
        _ => String::new(),
    }
}

/// The function whose signature holds position `at`: the nearest `fn name`
/// before it with no body opened in between; `None` for a field, a type,
/// a closure or a `let` in a body.
fn signature_of(code: &str, at: usize) -> Option<String> {
    let before = &code[..at];
    let start = before.rfind("fn ")?;
    if before[start..].contains(['{', ';']) {
        return None;
    }
    let name: String = before[start + 3..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    Some(name)
}

/// Every `Result<_, String>` in `code`, as the function holding it (or
/// `None`).
fn string_errors(code: &str) -> Vec<Option<String>> {
    code.match_indices("Result<")
        .filter(|(i, _)| !code[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .filter(|(i, m)| error_type(code, i + m.len()) == "String")
        .map(|(i, _)| signature_of(code, i))
        .collect()
}

#[test]
fn result_with_a_string_error_only_in_argument_parsers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for holder in string_errors(&code) {
            match holder {
                Some(name) if STRING_ERRORS_ALLOWED.iter().any(|(p, n, _)| *p == rel && *n == name) => {
                    found.push((rel.clone(), name));
                }
                Some(name) => bad.push(format!("{rel}: fn {name}")),
                None => bad.push(format!("{rel}: outside a function signature")),
            }
        }
    }
    assert!(
        bad.is_empty(),
        "Result<_, String> outside the argument parsers (give it a thiserror type, or list the parser): {bad:#?}"
    );
    let stale: Vec<_> = STRING_ERRORS_ALLOWED
        .iter()
        .filter(|(p, n, _)| !found.iter().any(|(fp, fname)| fp == p && fname == n))
        .collect();
    assert!(stale.is_empty(), "listed but no longer there (drop them): {stale:?}");
}

#[test]
fn the_check_sees_signatures_fields_and_closures() {
    let code = code_only(
        "fn ok_arg(s: &str) -> Result<u32, String> { todo!() }\n\
         // fn commented() -> Result<u32, String>\n\
         fn typed() -> Result<Vec<u8>, MyError> { todo!() }\n\
         fn nested() -> Result<HashMap<String, u8>, E> { todo!() }\n\
         fn broken(\n    s: &str,\n) -> Result<\n    u32,\n    String,\n> { todo!() }\n\
         struct S { r: Option<Result<Box<u8>, String>> }\n\
         fn body() { let f = |x: u8| -> Result<u8, String> { Ok(x) }; }\n\
         fn io() -> std::io::Result<String> { todo!() }\n\
         fn f() -> Result<Box<dyn Fn() -> u8>, String> { todo!() }\n",
    );
    assert_eq!(
        string_errors(&code),
        vec![
            Some("ok_arg".into()),
            Some("broken".into()),
            None,
            None,
            Some("f".into())
        ]
    );
}
