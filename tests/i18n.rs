//! UI languages: every catalogue has every key English has, every message
//! is translated with the same placeholders, every key the code asks for
//! exists, machine output is never translated, and pretty output is.

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn keys(file: &str) -> BTreeSet<String> {
    fn walk(prefix: &str, t: &toml::Table, out: &mut BTreeSet<String>) {
        for (k, v) in t {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(t) => walk(&key, t, out),
                _ if key == "_version" => {}
                _ => {
                    out.insert(key);
                }
            }
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("locales").join(file);
    let table: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut out = BTreeSet::new();
    walk("", &table, &mut out);
    out
}

#[test]
fn every_catalogue_has_every_english_key() {
    let en = keys("en.toml");
    assert!(en.len() > 20, "{en:?}");
    for other in ["zh-CN.toml", "es.toml"] {
        let k = keys(other);
        let missing: Vec<&String> = en.difference(&k).collect();
        let extra: Vec<&String> = k.difference(&en).collect();
        assert!(missing.is_empty(), "{other} lacks {missing:?}");
        assert!(extra.is_empty(), "{other} has keys English lacks: {extra:?}");
    }
}

/// The messages of a catalogue by key.
fn messages(file: &str) -> std::collections::BTreeMap<String, String> {
    fn walk(prefix: &str, t: &toml::Table, out: &mut std::collections::BTreeMap<String, String>) {
        for (k, v) in t {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(t) => walk(&key, t, out),
                toml::Value::String(s) => {
                    out.insert(key, s.clone());
                }
                _ => {}
            }
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("locales").join(file);
    let table: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut out = std::collections::BTreeMap::new();
    walk("", &table, &mut out);
    out
}

/// The `%{name}` placeholders of a message.
fn placeholders(s: &str) -> BTreeSet<&str> {
    s.split("%{")
        .skip(1)
        .filter_map(|p| p.split_once('}'))
        .map(|(n, _)| n)
        .collect()
}

/// Every message is in every language (issue 35): each says what the
/// English one says with the same placeholders, and one reads the same as
/// English only when it is a name, a symbol or a word both languages share.
#[test]
fn every_message_is_in_every_language() {
    let en = messages("en.toml");
    let same_in = |file: &str| -> &[&str] {
        match file {
            "zh-CN.toml" => &[
                "pretty.f1",
                "tui.help.ctrl_c_key",
                "tui.pane.col_id",
                "tui.pane.jsonl_twin",
                "tui.pane.series_jsonl",
                "tui.tg.status",
            ],
            _ => &[
                "pretty.error",
                "pretty.f1",
                "pretty.p95",
                "pretty.prompt",
                "pretty.recall",
                "pretty.tokens",
                "pretty.total",
                "tui.help.ctrl_c_key",
                "tui.pane.col_id",
                "tui.pane.jsonl_twin",
                "tui.pane.n_tok",
                "tui.pane.prompt",
                "tui.pane.run_prompt",
                "tui.pane.series_jsonl",
                "tui.pane.total",
                "tui.tab.prompts",
                "tui.tg.status",
            ],
        }
    };
    for file in ["zh-CN.toml", "es.toml"] {
        let other = messages(file);
        for (key, english) in &en {
            let Some(theirs) = other.get(key) else {
                panic!("{file} lacks {key}");
            };
            assert_eq!(
                placeholders(theirs),
                placeholders(english),
                "{file} {key}: {theirs:?} has other placeholders than {english:?}"
            );
            assert!(
                theirs != english || same_in(file).contains(&key.as_str()),
                "{file} {key} is still English: {theirs:?}"
            );
        }
    }
}

/// Every `t!("key"` in the source names an English key; keys built at run
/// time (`t!(format!("pretty.{key}"))`) are listed where they are built.
#[test]
fn every_key_the_code_asks_for_exists() {
    let en = keys("en.toml");
    let mut asked = BTreeSet::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let parts: Vec<&str> = text.split("t!(").collect();
                for (before, part) in parts.iter().zip(&parts[1..]) {
                    // `format!(` and the like end in `t!(` too.
                    if before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                        continue;
                    }
                    if let Some(lit) = part.trim_start().strip_prefix('"') {
                        asked.insert((lit.split('"').next().unwrap().to_owned(), p.display().to_string()));
                    }
                }
            }
        }
    }
    assert!(!asked.is_empty());
    for (key, file) in &asked {
        assert!(en.contains(key), "{file} asks for {key:?}, which en.toml lacks");
    }
}

fn cutline(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("cutline")
        .unwrap()
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "C")
        .args(["--prompts", concat!(env!("CARGO_MANIFEST_DIR"), "/prompts")])
        .args(["--sessions", concat!(env!("CARGO_MANIFEST_DIR"), "/sessions")])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn machine_output_is_the_same_in_every_language() {
    let strip = |out: &std::process::Output| {
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["meta"]["duration_ms"] = Value::Null;
        serde_json::to_vec(&v).unwrap()
    };
    let en = cutline(&["prompts", "--output", "json"]);
    for lang in ["zh", "es"] {
        let other = cutline(&["--lang", lang, "prompts", "--output", "json"]);
        assert_eq!(strip(&other), strip(&en), "--lang {lang}");
    }
    let en = cutline(&["budget", "extract-topics-jsonl", "--provider", "replay"]);
    let zh = cutline(&["--lang", "zh", "budget", "extract-topics-jsonl", "--provider", "replay"]);
    assert_eq!(zh.stdout, en.stdout, "JSONL records are never translated");
}

/// `budget --output pretty` on the replayed recordings, with `lang` given
/// as `--lang` or as `LC_ALL`.
fn budget_pretty(flag: Option<&str>, lc_all: Option<&str>) -> (String, String) {
    let mut c = Command::cargo_bin("cutline").unwrap();
    c.env_remove("LC_MESSAGES").env("LANG", "C");
    match lc_all {
        Some(v) => c.env("LC_ALL", v),
        None => c.env_remove("LC_ALL"),
    };
    if let Some(l) = flag {
        c.args(["--lang", l]);
    }
    let out = c
        .args(["--prompts", concat!(env!("CARGO_MANIFEST_DIR"), "/prompts")])
        .args(["--sessions", concat!(env!("CARGO_MANIFEST_DIR"), "/sessions")])
        .args([
            "budget",
            "extract-topics-jsonl",
            "--provider",
            "replay",
            "--output",
            "pretty",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn pretty_output_is_translated_and_aligned() {
    let (text, stderr) = budget_pretty(Some("zh"), None);
    assert!(text.starts_with("输入"), "{text}");
    assert!(text.contains("推荐 max_tokens：179"), "{text}");
    // The warning prefix on stderr is translated too.
    assert!(stderr.starts_with("警告: "), "{stderr}");
    let (es, _) = budget_pretty(None, Some("es_ES.UTF-8"));
    assert!(es.contains("max_tokens recomendado: 179"), "{es}");
    let (en, stderr) = budget_pretty(None, None);
    assert!(en.contains("recommended max_tokens: 179"), "{en}");
    assert!(stderr.starts_with("warning: "), "{stderr}");
}

#[test]
fn an_unknown_language_is_a_usage_error() {
    let out = cutline(&["--lang", "tlh", "prompts"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such UI language; choose en, zh or es"));
}
