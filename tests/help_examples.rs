//! What a Rust CLI user expects besides `--help`: shell completions and a
//! man page generated from the clap definitions, and an example in every
//! subcommand's `--help`. Every example that needs nothing but the fresh
//! clone (no model, no key, no deployment, no file of the reader's) is run
//! here, in a copy of the bundled prompts and the demo session, and must
//! succeed, so an example cannot drift from the binary.

use std::path::Path;
use std::process::Command;

fn cutline(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(assert_cmd::cargo::cargo_bin("cutline"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("CUTLINE_PROMPTS")
        .env_remove("CUTLINE_SESSIONS")
        .output()
        .expect("run cutline");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// What an example needs that a fresh clone does not have.
const NEEDS_MORE: &[&str] = &[
    "--provider local",
    "setup local",
    "probe my-",
    "cutline tg ",
    "tg/default",
    "answer.txt",
    "schema.json",
    "--forget",
    "batches my-",
];

#[test]
fn every_subcommand_shows_examples_and_the_offline_ones_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    copy_dir(&root.join("prompts"), &dir.path().join("prompts"));
    copy_dir(&root.join("sessions"), &dir.path().join("sessions"));
    let mut ran = 0;
    for name in cutline::cli::COMMAND_NAMES {
        let (code, help, _) = cutline(dir.path(), &[name, "--help"]);
        assert_eq!(code, 0, "{name} --help");
        let examples = help
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("`cutline {name} --help` shows no example:\n{help}"));
        for line in examples.lines().map(str::trim).filter(|l| l.starts_with("cutline ")) {
            if NEEDS_MORE.iter().any(|n| line.contains(n)) {
                continue;
            }
            let args: Vec<String> = line
                .split_whitespace()
                .skip(1)
                .map(|w| w.trim_matches('\'').to_owned())
                .collect();
            // `--var text='A delta is a landform.'` splits on spaces: join it back.
            let mut joined: Vec<String> = Vec::new();
            for a in args {
                match joined.last_mut() {
                    Some(last) if last.starts_with("text=") && !last.ends_with('.') => {
                        last.push(' ');
                        last.push_str(&a);
                    }
                    _ => joined.push(a),
                }
            }
            let refs: Vec<&str> = joined.iter().map(String::as_str).collect();
            let (code, out, err) = cutline(dir.path(), &refs);
            assert_eq!(code, 0, "`{line}` failed:\n{out}\n{err}");
            ran += 1;
        }
    }
    assert!(ran >= 14, "only {ran} examples ran");
}

#[test]
fn completions_and_the_man_page_come_from_the_clap_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let (code, bash, _) = cutline(dir.path(), &["--completions", "bash"]);
    assert_eq!(code, 0);
    assert!(
        bash.contains("_cutline()") && bash.contains("cutline__subcmd__tg__subcmd__push"),
        "{}",
        &bash[..200.min(bash.len())]
    );
    let (code, zsh, _) = cutline(dir.path(), &["--completions", "zsh"]);
    assert_eq!(code, 0);
    assert!(zsh.starts_with("#compdef cutline"));
    let (code, fish, _) = cutline(dir.path(), &["--completions", "fish"]);
    assert_eq!(code, 0);
    assert!(fish.contains("complete -c cutline"));
    let (code, man, _) = cutline(dir.path(), &["--man"]);
    assert_eq!(code, 0);
    assert!(
        man.starts_with(".ie \\n(.g .ds Aq") || man.contains(".TH cutline"),
        "{}",
        &man[..200.min(man.len())]
    );
    assert!(
        man.contains("cutline\\-tg") || man.contains("tg"),
        "the man page lists the subcommands"
    );
    let (code, _, err) = cutline(dir.path(), &["--completions", "tcsh"]);
    assert_eq!(code, 2, "{err}");
}
