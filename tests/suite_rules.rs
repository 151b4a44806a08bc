//! Rules the suite keeps about itself (issue 24, "the proof itself"): a
//! test that returns early passes without checking anything, so an early
//! `return` in a test is allowed only where it names the missing
//! dependency it skips for (a `skipped:` line just before it, or a
//! `// skip: <dependency>` note on it), and every dependency a test may
//! skip for has a `CUTLINE_REQUIRE_*` flag that CI sets.

use std::path::Path;

/// One early return in a test function: file, line, text.
#[derive(Debug)]
struct Early {
    file: String,
    line: usize,
    text: String,
}

/// The early `return`s (with no value: a test returns `()`) in the test
/// functions of `source`, each with the line before it.
fn early_returns(file: &str, source: &str) -> Vec<(Early, String)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let mut pending_test = false;
    // Brace depth, and the depth at which the current test's body began.
    let mut depth: i64 = 0;
    let mut body: Option<i64> = None;
    for (i, line) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[test]") || trimmed.starts_with("#[tokio::test") {
            pending_test = true;
        }
        if pending_test && trimmed.contains("fn ") && body.is_none() {
            body = Some(depth);
            pending_test = false;
        }
        if body.is_some() && is_bare_return(code) {
            let before = if i > 0 { lines[i - 1].to_owned() } else { String::new() };
            found.push((
                Early {
                    file: file.to_owned(),
                    line: i + 1,
                    text: line.trim().to_owned(),
                },
                before,
            ));
        }
        depth += i64::try_from(code.matches('{').count()).unwrap_or(0);
        depth -= i64::try_from(code.matches('}').count()).unwrap_or(0);
        if body.is_some_and(|d| depth <= d) && code.contains('}') {
            body = None;
        }
    }
    found
}

/// `return;` or `return }`: a return of `()` from the test itself (a
/// return with a value belongs to a closure or helper inside it).
fn is_bare_return(code: &str) -> bool {
    code.match_indices("return").any(|(at, _)| {
        let before_ok = at == 0 || !code.as_bytes()[at - 1].is_ascii_alphanumeric();
        let rest = code[at + "return".len()..].trim_start();
        before_ok && (rest.starts_with(';') || rest.starts_with('}'))
    })
}

#[test]
fn an_early_return_in_a_test_names_the_dependency_it_skips_for() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut bad = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("tests dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("name").to_string_lossy().into_owned();
        // This file's own examples are strings, not tests.
        if path.extension().is_none_or(|e| e != "rs") || name == "suite_rules.rs" {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("read");
        for (early, before) in early_returns(&name, &source) {
            seen += 1;
            let named = early.text.contains("// skip: ") || before.contains("eprintln!(\"skipped: ");
            if !named {
                bad.push(early);
            }
        }
    }
    assert!(seen > 0, "the scan found no early return at all: it is broken");
    assert!(
        bad.is_empty(),
        "early returns that name no missing dependency (a test that returns early checks nothing):\n{}",
        bad.iter()
            .map(|e| format!("  {}:{}: {}", e.file, e.line, e.text))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The scan itself: a bare return in a test is found, one in a helper or
/// with a value is not.
#[test]
fn the_scan_finds_bare_returns_in_tests_only() {
    let source = "fn helper() {\n    return;\n}\n#[test]\nfn t() {\n    let f = |x: u8| { return x; };\n    if f(1) == 1 {\n        return;\n    }\n}\n";
    let found = early_returns("x.rs", source);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0.line, 8);
}

/// Every dependency a test may skip for has a `CUTLINE_REQUIRE_*` flag, and
/// the test command sets each one, so CI never passes by skipping.
#[test]
fn ci_requires_every_dependency_a_test_may_skip_for() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(root.join("scripts/test.sh")).expect("scripts/test.sh");
    let mut flags = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(root.join("tests")).expect("tests dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("read");
        for (at, _) in source.match_indices("var_os(\"CUTLINE_REQUIRE_") {
            let rest = &source[at + "var_os(\"".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                .unwrap_or(rest.len());
            flags.insert(rest[..end].to_owned());
        }
    }
    assert!(flags.contains("CUTLINE_REQUIRE_TMUX"), "{flags:?}");
    for flag in &flags {
        assert!(
            script.contains(&format!("export {flag}=1")),
            "scripts/test.sh does not set {flag}"
        );
    }
}
