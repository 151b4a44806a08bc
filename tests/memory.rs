//! Memory in proportion (issue 14), measured as the child process's peak
//! RSS with GNU time: a behavioural bound on what a bad input may cost, not
//! a timing.

use std::path::Path;
use std::process::Command;

/// Peak RSS in KiB of `cutline ARGS`, and its stdout; `None` when GNU time
/// is missing (CUTLINE_REQUIRE_TIME makes that a failure, as in CI).
fn peak_kib(args: &[&str]) -> Option<(u64, String)> {
    if !Path::new("/usr/bin/time").exists() {
        assert!(
            std::env::var_os("CUTLINE_REQUIRE_TIME").is_none(),
            "CUTLINE_REQUIRE_TIME is set but /usr/bin/time is missing"
        );
        eprintln!("skipped: /usr/bin/time (GNU time) is not installed");
        return None;
    }
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(env!("CARGO_BIN_EXE_cutline"))
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let kib = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes): "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in: {err}"));
    Some((kib, String::from_utf8(out.stdout).unwrap()))
}

#[test]
fn five_megabytes_of_malformed_toml_cost_under_100_mb() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), "x\n".repeat(2_500_000)).unwrap();
    let Some((kib, stdout)) = peak_kib(&["prompts", "--dir", dir.path().to_str().unwrap(), "--output", "json"]) else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let msg = v["data"]["errors"][0]["message"].as_str().unwrap();
    assert!(
        msg.ends_with("bad.toml:1:2: TOML syntax error: key with no value, expected `=`"),
        "{msg}"
    );
    assert!(kib < 100 * 1024, "peak RSS {kib} KiB for 5 MB of malformed TOML");
}
