//! TrustGraph's released prompt manager as the differential tests run it:
//! the venv `scripts/setup-tg-reference.sh` makes, the Python runtime to
//! judge for, and `scripts/reference_tg_service.py` fed a batch of cases.

#![allow(dead_code, reason = "shared by several test binaries; each uses a part")]

use cutline::output::tg::{self, TgPython};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `$XDG_CACHE_HOME`, else `~/.cache`.
pub fn cache() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
}

/// The reference venv's Python for `py`, when it exists.
pub fn venv_python(py: TgPython) -> Option<PathBuf> {
    let p = cache()?.join(format!(
        "cutline/tg/{}-py{}/venv/bin/python",
        tg::TRUSTGRAPH_VERSION,
        py.as_str()
    ));
    p.exists().then_some(p)
}

/// `CUTLINE_TG_PYTHON`, else 3.13 (TrustGraph's containers) when its venv
/// exists, else 3.11 when that one does (the setup falls back to it on a
/// machine without 3.13; cutline's expectations follow the runtime).
pub fn runtime() -> TgPython {
    let fallback = venv_python(TgPython::Py313).is_none() && venv_python(TgPython::Py311).is_some();
    match std::env::var("CUTLINE_TG_PYTHON").as_deref() {
        Ok("3.11") => TgPython::Py311,
        Err(_) if fallback => TgPython::Py311,
        _ => TgPython::Py313,
    }
}

/// TrustGraph's verdicts on `cases` (see `reference_tg_service.py`).
pub fn reference(python: &Path, cases: &[Value]) -> Vec<Value> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(python)
        .arg("scripts/reference_tg_service.py")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the reference");
    let input = Value::Array(cases.to_vec()).to_string();
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("reference");
    writer.join().expect("writer").expect("write stdin");
    assert!(
        out.status.success(),
        "reference_tg_service.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut de = serde_json::Deserializer::from_slice(&out.stdout);
    de.disable_recursion_limit();
    serde::Deserialize::deserialize(&mut de).expect("reference output is JSON")
}

/// The verdict TrustGraph's `invoke` gave a `json` answer: `kept`, `parse`
/// (`RuntimeError("JSON parse fail")`), `schema` (its other
/// `RuntimeError`), or the exception that escaped.
pub fn tg_word(reference: &Value) -> &str {
    match reference["raised"]["type"].as_str() {
        None => "kept",
        Some("RuntimeError")
            if reference["raised"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("JSON parse")) =>
        {
            "parse"
        }
        Some("RuntimeError") => "schema",
        Some(other) => other,
    }
}
