//! The floors of the house, checked (issue 25): a module may use modules on
//! its own floor or below, never above, and the pure floor does no IO.
//! ARCHITECTURE.md draws the same floors; this test is what keeps the
//! picture true. It reads `src/` as text: every `crate::x` path and every
//! `super::` chain that climbs to the crate root, outside comments.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The floors, lowest first. A top-level module not listed fails the test,
/// so a new module has to be placed.
const FLOORS: &[(&str, &[&str])] = &[
    ("base", &["limits", "term", "i18n"]),
    ("core (pure)", &["output", "prompt", "compare"]),
    ("providers", &["llm"]),
    ("runs", &["run", "session", "store", "logging", "tg"]),
    ("eval", &["eval"]),
    ("report", &["report"]),
    ("workbench", &["tui"]),
    ("command line", &["cli"]),
];

/// Files of the pure floors allowed to touch the outside world, each with
/// why. Everything else under `output/`, `prompt/` and `compare/` is pure.
const IO_ALLOWED: &[(&str, &str)] = &[];

/// Paths whose use means IO or async in a pure module.
const IO_PATHS: &[&str] = &[
    "std::fs",
    "std::net",
    "std::process",
    "std::io::stdin",
    "std::io::stdout",
    "tokio",
    "reqwest",
    "std::env::var",
    "crate::limits",
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, mods)| mods.contains(&module))
}

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

/// The module path of a file under `src/` (`src/llm/http/read.rs` →
/// `["llm", "http", "read"]`; `mod.rs` names its folder).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_owned());
    }
    parts
}

/// `source` without comments (line, block and doc) and string contents, so
/// a path named in prose or in a message is not counted as a use.
fn code_only(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' && (i == 0 || (b[i - 1] != b'\'' && b[i - 1] != b'#')) {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let ch = source[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The top-level modules `code` (of the file at module path `me`) uses.
fn uses(me: &[String], code: &str) -> BTreeSet<String> {
    paths_used(me, code, 1)
        .into_iter()
        .filter_map(|p| p.into_iter().next())
        .filter(|m| m != "self" && m != me.first().map_or("", String::as_str))
        .collect()
}

/// The absolute module paths `code` (of the file at module path `me`)
/// names, each cut to `depth` segments: `crate::a::b::…` and `super::`
/// chains resolved against `me`, a grouped import (`crate::{a::X, b}`)
/// naming each of its paths.
fn paths_used(me: &[String], code: &str, depth: usize) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for rest in rooted(code, "crate::") {
        for mut p in tree_paths(rest) {
            p.truncate(depth);
            found.insert(p);
        }
    }
    for (at, _) in code.match_indices("super::") {
        let before = code[..at].chars().next_back().unwrap_or(' ');
        if before.is_alphanumeric() || before == '_' || before == ':' || inside_use_group(code, at) {
            continue;
        }
        let mut rest = &code[at..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        if ups > me.len() {
            continue;
        }
        for tail in tree_paths(rest) {
            if let Some(mut p) = climb(me[..me.len() - ups].to_vec(), tail) {
                p.truncate(depth);
                found.insert(p);
            }
        }
    }
    found
}

/// `base` extended by `tail`, each `super` in the tail (as in
/// `super::{super::x}`) one module up; `None` past the crate root.
fn climb(mut base: Vec<String>, tail: Vec<String>) -> Option<Vec<String>> {
    for seg in tail {
        if seg == "super" {
            base.pop()?;
        } else {
            base.push(seg);
        }
    }
    Some(base)
}

/// Whether the `super::` at `at` is an item of a `use` statement's group
/// (`use super::{super::x}`): the group's own path resolves it, so it is
/// not read again as a path of its own.
fn inside_use_group(code: &str, at: usize) -> bool {
    let before = code[..at].trim_end();
    let statement = &before[before.rfind(';').map_or(0, |i| i + 1)..];
    (before.ends_with('{') || before.ends_with(','))
        && statement.contains('{')
        && statement
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == "use")
}

/// Each place `root` (such as `crate::` or `std::`) begins a path in
/// `code`, not as the tail of a longer name, with the text after it.
fn rooted<'a>(code: &'a str, root: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    code.match_indices(root).filter_map(move |(at, _)| {
        let before = code[..at].chars().next_back().unwrap_or(' ');
        (!(before.is_alphanumeric() || before == '_' || before == '$')).then(|| &code[at + root.len()..])
    })
}

/// The paths a use tree's text begins with: `a::b::X` gives `[a, b, X]`,
/// `a::{b::X, c}` gives `[a, b, X]` and `[a, c]`, groups nested at any
/// depth and spread over lines.
fn tree_paths(text: &str) -> Vec<Vec<String>> {
    let text = text.trim_start();
    let id: String = text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    if id.is_empty() {
        return match text.strip_prefix('{') {
            Some(inner) => group_items(inner).into_iter().flat_map(tree_paths).collect(),
            None => vec![Vec::new()],
        };
    }
    match text[id.len()..].trim_start().strip_prefix("::") {
        Some(rest) => tree_paths(rest)
            .into_iter()
            .map(|tail| std::iter::once(id.clone()).chain(tail).collect())
            .collect(),
        None => vec![vec![id]],
    }
}

/// The items of a `{…}` group whose text after the `{` is `inner`: split
/// at the commas outside nested groups, up to the group's `}`.
fn group_items(inner: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut from) = (0usize, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&inner[from..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[from..]);
    items
}

/// Every `std::` path `code` names, grouped imports spelled out
/// (`std::{fs, io}` gives `std::fs` and `std::io`).
fn std_paths(code: &str) -> BTreeSet<String> {
    rooted(code, "std::")
        .flat_map(tree_paths)
        .map(|p| {
            std::iter::once("std".to_owned())
                .chain(p)
                .collect::<Vec<_>>()
                .join("::")
        })
        .collect()
}

/// Every module of `src/` (the crate root is `[]`; `main.rs`, a crate of
/// its own, is left out) with its file's code, comments and strings out.
fn modules() -> std::collections::BTreeMap<Vec<String>, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "main.rs"))
        .map(|p| {
            let me = module_path(p.strip_prefix(&src).unwrap());
            (me, code_only(&std::fs::read_to_string(&p).unwrap()))
        })
        .collect()
}

/// The items a module's own file re-exports from its children
/// (`pub use child::{A, b::C};` gives `A` and `C`, each with its child).
fn reexports(code: &str, children: &BTreeSet<String>) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    for (at, _) in code.match_indices("use ") {
        let head = code[..at].trim_end();
        let line = &head[head.rfind(['\n', ';', '}']).map_or(0, |i| i + 1)..];
        if !line.trim_start().starts_with("pub") {
            continue;
        }
        for p in tree_paths(&code[at + 4..]) {
            if let (Some(first), Some(last)) = (p.first(), p.last())
                && p.len() > 1
                && children.contains(first)
            {
                out.insert(last.clone(), first.clone());
            }
        }
    }
    out
}

/// The circles at module `m`, each sorted, in order. The nodes are `m`'s
/// children, each with everything under it (its own `mod.rs` included).
/// An edge is a use of one child by another: a path into it
/// (`crate::m::b::…`, `super::b::…`), or an item `m` re-exports from it
/// (`crate::m::X` where `m` says `pub use b::X`), so a parent's re-export
/// hides no circle. `m`'s own file is no node: a parent declaring,
/// re-exporting and calling its children while they use its own items is
/// the normal shape of a module. A circle is a set of children each
/// reaching the others: two features that import each other
/// (`tui::compare` ⇄ `tui::eval`), directly or around a ring.
fn circles_at(m: &[String], all: &std::collections::BTreeMap<Vec<String>, String>) -> Vec<Vec<String>> {
    let depth = m.len();
    let children: BTreeSet<String> = all
        .keys()
        .filter(|k| k.len() > depth && k[..depth] == *m)
        .map(|k| k[depth].clone())
        .collect();
    let own = all.get(m).map(String::as_str).unwrap_or_default();
    let reexported = reexports(own, &children);
    let mut edges: std::collections::BTreeMap<String, BTreeSet<String>> = std::collections::BTreeMap::new();
    for (me, code) in all.iter().filter(|(k, _)| k.len() > depth && k[..depth] == *m) {
        let from = &me[depth];
        for p in paths_used(me, code, depth + 2) {
            let Some(seg) = p.get(depth).filter(|_| p[..depth] == *m) else {
                continue;
            };
            let to = if children.contains(seg) {
                seg
            } else if let Some(c) = reexported.get(seg) {
                c
            } else {
                continue;
            };
            if to != from {
                edges.entry(from.clone()).or_default().insert(to.clone());
            }
        }
    }
    strongly_connected(&edges)
}

/// The sets of more than one node of `edges` in which each node reaches
/// every other, each sorted, in order.
fn strongly_connected(edges: &std::collections::BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(n) = todo.pop() {
            for m in edges.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in edges.keys() {
        let r = reach(n);
        if !r.contains(n) || out.iter().any(|c| c.contains(n)) {
            continue;
        }
        let c: Vec<String> = r.iter().filter(|m| reach(m).contains(n)).cloned().collect();
        out.push(c);
    }
    out
}

/// The circles at every module of `src/` that has children, by module
/// (`tui::run`; the crate root is `crate`).
fn all_circles() -> std::collections::BTreeMap<String, Vec<Vec<String>>> {
    let all = modules();
    let parents: BTreeSet<Vec<String>> = all
        .keys()
        .filter(|k| !k.is_empty())
        .map(|k| k[..k.len() - 1].to_vec())
        .collect();
    parents
        .into_iter()
        .map(|m| {
            let name = if m.is_empty() { "crate".to_owned() } else { m.join("::") };
            (name, circles_at(&m, &all))
        })
        .filter(|(_, c)| !c.is_empty())
        .collect()
}

#[derive(Debug)]
struct Breach {
    file: String,
    rule: String,
}

fn breaches() -> Vec<Breach> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        let me = module_path(rel);
        let file = format!("src/{}", rel.display());
        let Some(top) = me.first() else { continue };
        if matches!(top.as_str(), "lib" | "main") || me.is_empty() {
            continue;
        }
        let Some(mine) = floor_of(top) else {
            out.push(Breach {
                file,
                rule: format!("module `{top}` is on no floor: add it to FLOORS and ARCHITECTURE.md"),
            });
            continue;
        };
        let code = code_only(&std::fs::read_to_string(&path).unwrap());
        for used in uses(&me, &code) {
            if let Some(theirs) = floor_of(&used)
                && theirs > mine
            {
                out.push(Breach {
                    file: file.clone(),
                    rule: format!(
                        "`{top}` ({}) uses `{used}` ({}), a floor above",
                        FLOORS[mine].0, FLOORS[theirs].0
                    ),
                });
            }
        }
        if FLOORS[1].1.contains(&top.as_str()) && !IO_ALLOWED.iter().any(|(f, _)| *f == file) {
            let std_used = std_paths(&code);
            for io in IO_PATHS {
                let spelled_out = std_used.iter().any(|p| p == io || p.starts_with(&format!("{io}::")));
                if code.contains(io) || spelled_out {
                    out.push(Breach {
                        file: file.clone(),
                        rule: format!("the pure floor uses `{io}`"),
                    });
                }
            }
        }
    }
    out
}

#[test]
fn no_module_uses_a_floor_above_its_own_and_the_core_does_no_io() {
    let found = breaches();
    assert!(
        found.is_empty(),
        "{}",
        found
            .iter()
            .map(|b| format!("{}: {}", b.file, b.rule))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_check_sees_crate_and_super_paths_but_not_comments_or_strings() {
    let me = vec!["compare".to_owned(), "loss".to_owned()];
    let code = code_only(
        "use crate::run::Analysis; // crate::tui\n/* crate::cli */ let s = \"crate::report\";\nuse super::super::eval::X;\nuse super::Key;",
    );
    assert_eq!(
        uses(&me, &code),
        ["eval", "run"].into_iter().map(String::from).collect::<BTreeSet<_>>()
    );
    assert_eq!(module_path(Path::new("llm/http/mod.rs")), ["llm", "http"]);
}

/// A grouped import names every path in it: an upward one inside braces,
/// nested or spread over lines, is seen, and so is `std::{fs, …}` in the
/// pure floor.
#[test]
fn the_check_sees_paths_inside_grouped_imports() {
    let me = vec!["tui".to_owned(), "view".to_owned()];
    let code = code_only(
        "use crate::{\n    llm::{self, Event},\n    cli::out::say,\n};\nuse super::super::{report::X, eval::Y};\nfn f() { super::g(a, super::h()) }",
    );
    assert_eq!(
        uses(&me, &code),
        ["cli", "eval", "llm", "report"]
            .into_iter()
            .map(String::from)
            .collect::<BTreeSet<_>>()
    );
    let io = std_paths(&code_only(
        "use std::{collections::BTreeMap, fs::{self, File}, io::Write};",
    ));
    assert!(io.contains("std::fs::File"), "{io:?}");
    assert!(
        io.contains("std::io::Write") && io.contains("std::collections::BTreeMap"),
        "{io:?}"
    );
}

/// A `super` inside a group climbs from where the group stands:
/// `super::{super::eval::X}` in `tui::view::pane` is `tui::eval`, and from
/// `tui` it is `eval`, a floor of its own.
#[test]
fn a_super_inside_a_group_climbs_from_the_group() {
    let code = code_only("use super::{super::eval::X, Y};");
    let deep = ["tui", "view", "pane"].map(String::from).to_vec();
    assert_eq!(
        paths_used(&deep, &code, 3),
        [vec!["tui", "eval", "X"], vec!["tui", "view", "Y"]]
            .into_iter()
            .map(|p| p.into_iter().map(String::from).collect())
            .collect::<BTreeSet<Vec<String>>>()
    );
    let top = ["tui", "view"].map(String::from).to_vec();
    assert_eq!(uses(&top, &code), BTreeSet::from(["eval".to_owned()]));
    // An expression's `super::` in a block is still read.
    let me = ["compare", "loss"].map(String::from).to_vec();
    let call = code_only("fn f() { super::super::run::go(x, super::super::tui::y()) }");
    assert_eq!(uses(&me, &call), BTreeSet::from(["run".to_owned(), "tui".to_owned()]));
}

/// Circles at any module (see [`circles_at`] for what counts): none,
/// except the ones listed here, each with why it is still there. A new
/// circle fails; breaking a listed one fails too, until the list says so.
#[test]
fn no_new_import_circles_at_any_module() {
    let known: &[(&str, &[&[&str]])] = &[];
    let expected: std::collections::BTreeMap<String, Vec<Vec<String>>> = known
        .iter()
        .map(|(m, cs)| {
            let cs = cs.iter().map(|c| c.iter().map(|s| (*s).to_owned()).collect()).collect();
            ((*m).to_owned(), cs)
        })
        .collect();
    let found = all_circles();
    assert!(found == expected, "circles found:\n{found:#?}");
}

/// What counts as a circle: two features importing each other do, also
/// through an item their parent re-exports; a parent re-exporting and
/// calling its child while the child uses the parent's items does not.
#[test]
fn the_circle_check_sees_features_and_reexports_but_not_parents() {
    let m = |p: &str| p.split("::").map(String::from).collect::<Vec<_>>();
    let tree = |files: &[(&str, &str)]| -> std::collections::BTreeMap<Vec<String>, String> {
        files.iter().map(|(p, c)| (m(p), code_only(c))).collect()
    };
    let features = tree(&[
        ("tui", "pub mod compare; pub mod eval;"),
        ("tui::compare", "use crate::tui::eval::EvalView;"),
        ("tui::eval", "fn f() { super::compare::refresh(); }"),
    ]);
    assert_eq!(
        circles_at(&m("tui"), &features),
        vec![vec!["compare".to_owned(), "eval".to_owned()]]
    );
    // A child naming an item its parent re-exports from a sibling uses
    // that sibling.
    let through = tree(&[
        ("tui", "pub use event::Event;\npub(crate) use state::{Mode, State};"),
        ("tui::event", "use crate::tui::State;"),
        ("tui::state", "use crate::tui::Event;"),
    ]);
    assert_eq!(
        circles_at(&m("tui"), &through),
        vec![vec!["event".to_owned(), "state".to_owned()]]
    );
    let parent = tree(&[
        (
            "tui::eval",
            "mod update;\npub use update::toggle;\npub struct Job;\nfn go() { update::toggle() }",
        ),
        (
            "tui::eval::update",
            "use super::Job;\nuse crate::tui::eval::Job as J;\npub fn toggle() {}",
        ),
    ]);
    assert!(circles_at(&m("tui::eval"), &parent).is_empty());
}

/// The workbench's components' folders, as the `components!` list in
/// `tui/mod.rs` registers them (`<folder>::<Component>,`).
fn registered_folders() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui/mod.rs");
    let code = code_only(&std::fs::read_to_string(path).unwrap());
    let list = code
        .split("components! {")
        .nth(1)
        .and_then(|l| l.split('}').next())
        .unwrap_or_default();
    list.split(',')
        .filter_map(|item| item.trim().split("::").next())
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Features do not import each other (issue 36): no registered
/// component's folder names another's, directly or through an item `tui`
/// re-exports. Moving between them is a `Nav` the root routes; what they
/// share lives in the shell (`runs`, `choice`, `state`, …).
#[test]
fn no_workbench_component_imports_another() {
    let folders = registered_folders();
    assert!(folders.len() >= 12, "{folders:?}");
    let all = modules();
    let tui = ["tui".to_owned()];
    let own = all.get(tui.as_slice()).cloned().unwrap_or_default();
    let children: BTreeSet<String> = all
        .keys()
        .filter(|k| k.len() > 1 && k[0] == "tui")
        .map(|k| k[1].clone())
        .collect();
    let reexported = reexports(&own, &children);
    let mut found = Vec::new();
    for (me, code) in all
        .iter()
        .filter(|(k, _)| k.len() > 1 && k[0] == "tui" && folders.contains(&k[1]))
    {
        for p in paths_used(me, code, 3) {
            let Some(seg) = p.get(1).filter(|_| p[0] == "tui") else {
                continue;
            };
            let to = reexported.get(seg).unwrap_or(seg);
            if to != &me[1] && folders.contains(to) {
                found.push(format!("{} uses tui::{to} ({})", me.join("::"), p.join("::")));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
