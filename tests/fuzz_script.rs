//! `scripts/fuzz.sh --ci`, the libFuzzer pass CI runs, against stand-ins for
//! rustup and cargo (issue 24: it exited 0 without a nightly toolchain, so
//! CI could be green with no fuzzing, and a crash it found was never
//! replayed on a fresh clone). The script runs in a copy of the tree, so the
//! repository is never written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary tree holding a copy of the script, and a directory of
/// stand-in tools (first on `PATH`).
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::create_dir_all(dir.path().join("scripts")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("fuzz")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("bin")).expect("mkdir");
        std::fs::copy(root.join("scripts/fuzz.sh"), dir.path().join("scripts/fuzz.sh")).expect("copy");
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A stand-in command `name` running `body` (sh).
    fn tool(&self, name: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let p = self.path().join("bin").join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write tool");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    fn run(&self, extra_env: &[(&str, &str)]) -> Output {
        let path = format!("{}:/usr/bin:/bin", self.path().join("bin").display());
        let mut c = Command::new("bash");
        c.arg(self.path().join("scripts/fuzz.sh"))
            .args(["--ci", "1"])
            .current_dir(self.path())
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.path())
            .env("CUTLINE_FUZZ_TARGET_DIR", self.path().join("fuzz-target"));
        for (k, v) in extra_env {
            c.env(k, v);
        }
        c.output().expect("bash runs")
    }

    fn file(&self, rel: &str) -> PathBuf {
        self.path().join(rel)
    }
}

/// A rustup whose nightly is missing and cannot be installed.
const RUSTUP_NO_NIGHTLY: &str = r#"case "$1 $2" in
  "toolchain list") echo "stable-x86_64-unknown-linux-gnu (default)" ;;
  "toolchain install") echo "error: could not download nightly" >&2; exit 1 ;;
esac"#;

#[test]
fn the_ci_pass_fails_when_it_cannot_get_a_nightly_toolchain() {
    let t = Tree::new();
    t.tool("rustup", RUSTUP_NO_NIGHTLY);
    t.tool("cargo", "echo \"cargo must not run: $*\" >&2; exit 3");
    let out = t.run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("fuzz: could not install the nightly toolchain libFuzzer needs"),
        "{stderr}"
    );
    // Forbidding the install is a failure too, not a skip.
    let out = t.run(&[("CUTLINE_SKIP_FUZZ_INSTALL", "1")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("forbids installing it"));
    // So is no rustup at all.
    std::fs::remove_file(t.file("bin/rustup")).expect("rm");
    let out = t.run(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rustup is missing"));
    // Skipping on purpose is for a person, never for CI.
    let out = t.run(&[("CUTLINE_SKIP_FUZZ", "1"), ("CI", "true")]);
    assert_eq!(out.status.code(), Some(1));
}

/// A crash libFuzzer finds fails the pass and becomes a committed seed:
/// copied from the ignored `fuzz/artifacts/<target>/` into
/// `fuzz/regressions/<target>/`, which the seed replay reads, and named for
/// commit. The other targets still run.
#[test]
fn a_crash_fails_the_pass_and_becomes_a_committed_seed() {
    let t = Tree::new();
    // Nightly is there; installing is not needed.
    t.tool(
        "rustup",
        r#"[ "$1 $2" = "toolchain list" ] && echo "nightly-x86_64-unknown-linux-gnu""#,
    );
    // cargo-fuzz: `jsonl` crashes on an input, the others finish.
    t.tool(
        "cargo",
        r#"[ "$3" = "--version" ] && { echo "cargo-fuzz 0.13.2"; exit 0; }
for a in "$@"; do
  case "$a" in -artifact_prefix=*) prefix=${a#-artifact_prefix=} ;; esac
done
case "$*" in
  *" jsonl "*) printf '[{"a":\001' > "${prefix}crash-0123abcd"; echo "==1== ERROR: libFuzzer: deadly signal"; exit 77 ;;
  *) echo "Done 1000 runs in 1 second(s)" ;;
esac"#,
    );
    let out = t.run(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let kept: Vec<PathBuf> = std::fs::read_dir(t.file("fuzz/regressions/jsonl"))
        .expect("regressions/jsonl")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(&kept[0]).expect("seed"), b"[{\"a\":\x01");
    let name = kept[0].file_name().expect("name").to_string_lossy().into_owned();
    assert!(name.starts_with("crash-"), "{name}");
    assert!(
        stdout.contains(&format!("commit it (git add fuzz/regressions/jsonl/{name})")),
        "{stdout}"
    );
    for other in ["salvage", "stream", "config"] {
        assert!(stdout.contains(&format!("{other}: Done 1000 runs")), "{stdout}");
    }
    // A second pass finding the same crash keeps no second copy.
    t.run(&[]);
    assert_eq!(
        std::fs::read_dir(t.file("fuzz/regressions/jsonl"))
            .expect("dir")
            .count(),
        1
    );
}

/// The committed regressions are part of the seed replay.
#[test]
fn the_seed_replay_reads_the_committed_regressions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("fuzz/src/lib.rs")).expect("fuzz/src/lib.rs");
    assert!(lib.contains("files_under(&root().join(\"fuzz/regressions\").join(target), &mut files);"));
    let ignore = std::fs::read_to_string(root.join(".gitignore")).expect(".gitignore");
    assert!(
        !ignore
            .lines()
            .any(|l| l.trim().trim_end_matches('/') == "/fuzz/regressions")
    );
}
