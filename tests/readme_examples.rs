//! Every ```console example of README.md and of the documents under docs/
//! runs here, and its output must be what the binary prints (issue 35,
//! item 4). trycmd runs each document's commands in order, in one working
//! directory: a copy of what the examples read (the bundled prompts, the
//! tracked recordings in `sessions/`, the response fixtures), made afresh in
//! cargo's test temp directory, so the examples that write (a migration, an
//! eval's session, a report) write there and never into the checkout. No
//! example needs a key, a model or the network: they run on the bundled
//! prompts and `--provider replay`. Examples that need a model are ```sh
//! blocks, which trycmd does not run.

use std::path::Path;

/// README.md and every document under docs/ that has a ```console block.
fn documents(repo: &Path) -> Vec<String> {
    let mut docs = vec!["README.md".to_owned()];
    let mut more: Vec<String> = std::fs::read_dir(repo.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| Path::new(n).extension().is_some_and(|e| e == "md"))
        .filter(|n| {
            std::fs::read_to_string(repo.join("docs").join(n))
                .unwrap()
                .lines()
                .any(|l| l.starts_with("```console"))
        })
        .map(|n| format!("docs/{n}"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// What the examples read, copied into each document's working directory.
const INPUTS: [&str; 3] = ["prompts", "sessions", "tests/fixtures/output"];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn readme_console_examples() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme_examples");
    if root.exists() {
        std::fs::remove_dir_all(&root).unwrap();
    }
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("cutline", Path::new(env!("CARGO_BIN_EXE_cutline")))
        // Nothing of the user's machine reaches the examples: no config, no
        // learned capabilities, no local model, English, no colour.
        .env("HOME", root.join("home").display().to_string())
        .env("XDG_CONFIG_HOME", root.join("home/.config").display().to_string())
        .env("XDG_CACHE_HOME", root.join("home/.cache").display().to_string())
        .env("CUTLINE_CONFIG", "")
        .env("CUTLINE_PROMPTS", "prompts")
        .env("CUTLINE_LEARNED_FILE", "")
        .env("LC_ALL", "C")
        .env("LANG", "C")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100");
    for doc in documents(repo) {
        let name = Path::new(&doc).file_stem().unwrap().to_str().unwrap();
        let dir = root.join(Path::new(&doc).parent().unwrap());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(repo.join(&doc), dir.join(format!("{name}.md"))).unwrap();
        // trycmd runs a `NAME.md` in `NAME.in/` when there is one.
        let work = dir.join(format!("{name}.in"));
        for input in INPUTS {
            copy_dir(&repo.join(input), &work.join(input));
        }
        cases.case(dir.join(format!("{name}.md")));
    }
}
