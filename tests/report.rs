//! `cutline report`: the self-contained HTML page and the SVG chart, on the
//! shipped demo session (32 real Gemma 3 270M runs) and on small sessions
//! made from it; the page is rendered in a real headless Chromium.
//!
//! The Chromium test is skipped (with a message) only when `chromium` is
//! not installed and `CUTLINE_REQUIRE_CHROMIUM` is unset; `scripts/test.sh`
//! installs it and sets the variable.

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use assert_cmd::Command;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cutline() -> Command {
    let mut c = Command::cargo_bin("cutline").expect("binary");
    c.env_remove("CUTLINE_PROMPTS").env_remove("CUTLINE_SESSIONS");
    c.current_dir(root());
    c
}

/// `cutline report ARGS… -o FILE` from the repository root.
fn report_to(args: &[&str], file: &Path) -> std::process::Output {
    cutline()
        .arg("report")
        .args(args)
        .arg("-o")
        .arg(file)
        .output()
        .expect("run")
}

fn jsonl(out: &[u8]) -> Vec<Value> {
    std::str::from_utf8(out)
        .expect("utf-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

/// The demo session's lines: header, then runs 1..=32.
fn demo_lines() -> Vec<String> {
    std::fs::read_to_string(root().join("sessions/demo.jsonl"))
        .expect("demo session")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A session `id` in `dir/sessions` from demo run lines (renumbered).
fn session_from_demo(dir: &Path, id: &str, runs: &[usize], edit: impl Fn(&mut Value)) {
    let lines = demo_lines();
    let mut header: Value = serde_json::from_str(&lines[0]).expect("header");
    header["id"] = id.into();
    let mut out = vec![header.to_string()];
    for (k, &n) in runs.iter().enumerate() {
        let mut v: Value = serde_json::from_str(&lines[n]).expect("run");
        v["run_id"] = format!("{id}#{}", k + 1).into();
        edit(&mut v);
        out.push(v.to_string());
    }
    std::fs::create_dir_all(dir.join("sessions")).expect("mkdir");
    std::fs::write(dir.join(format!("sessions/{id}.jsonl")), out.join("\n") + "\n").expect("write");
}

/// Copy the extract-definitions twins and their gold set into `dir/prompts`.
fn definitions_prompts(dir: &Path) {
    std::fs::create_dir_all(dir.join("prompts/gold")).expect("mkdir");
    for f in [
        "extract-definitions.toml",
        "extract-definitions-jsonl.toml",
        "gold/extract-definitions.jsonl",
    ] {
        std::fs::copy(root().join("prompts").join(f), dir.join("prompts").join(f)).expect("copy");
    }
}

/// The page loads nothing: no script, frame or image element, no tag
/// attribute with a URL or `src`, every link an anchor on the page, and a
/// stylesheet with no `@import` or `url(…)`. (Escaped text never holds a raw
/// `<`, so only real tags are looked at; model text may say anything.)
fn assert_self_contained(html: &str) {
    for needle in ["<script", "<link", "<iframe", "<object", "<embed", "<img", "<base"] {
        assert!(!html.contains(needle), "the page contains {needle:?}");
    }
    for tag in html.split('<').skip(1).map(|t| t.split('>').next().unwrap_or("")) {
        for needle in ["src=", "http:", "https:", "url(", "srcset"] {
            assert!(!tag.contains(needle), "a tag with {needle:?}: <{tag}>");
        }
        if let Some(i) = tag.find("href=") {
            assert!(tag[i..].starts_with("href=\"#"), "a link off the page: <{tag}>");
        }
    }
    for css in html
        .split("<style>")
        .skip(1)
        .map(|s| s.split("</style>").next().unwrap_or(""))
    {
        for needle in ["@import", "url(", "http"] {
            assert!(!css.contains(needle), "the stylesheet contains {needle:?}");
        }
    }
}

#[test]
fn demo_report_is_written_and_said_where() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("r.html");
    let out = report_to(&["demo"], &file);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recs = jsonl(&out.stdout);
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert_eq!(recs[0]["_schema"], "cutline.report/1");
    let r = &recs[1];
    assert_eq!(r["type"], "report");
    assert_eq!(r["path"], file.display().to_string());
    assert_eq!(r["format"], "html");
    assert_eq!(r["session"], "demo");
    assert_eq!(r["runs"].as_array().expect("runs").len(), 32);
    let html = std::fs::read_to_string(&file).expect("written");
    assert_eq!(r["bytes"], html.len());
    // Every JSON run of the demo has its JSONL twin on the same input and
    // limit: 16 pairs, one sweep chart each; one limit, so no limit chart.
    assert_eq!(r["pairs"], 16);
    assert_eq!(r["charts"], 16);
    assert_eq!(r["notes"], Value::Array(Vec::new()));
    assert_self_contained(&html);
    // Nor does the demo's text name any URL (the provider's base URL and the
    // schema's `$schema` are left off the page).
    assert!(!html.contains("http:") && !html.contains("https:"));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 16);
    assert!(html.contains("@media (prefers-color-scheme: dark)"));
    assert!(html.contains("@media print"));
}

#[test]
fn output_contract_envelope_and_pretty() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("two.html");
    let out = report_to(&["demo#3#4", "--output", "json"], &file);
    assert!(out.status.success());
    let env: Value = serde_json::from_slice(&out.stdout).expect("one envelope");
    assert_eq!(env["ok"], true);
    assert_eq!(env["meta"]["schema"], "cutline.report/1");
    let d = &env["data"];
    assert_eq!(d["runs"], serde_json::json!(["demo#4", "demo#3"]));
    assert_eq!((d["pairs"].as_u64(), d["charts"].as_u64()), (Some(1), Some(1)));
    let out = report_to(&["demo#4", "--output", "pretty"], &file);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    // Run 4 picked alone: its twin (run 3, same input and limit) joins it.
    let bytes = std::fs::metadata(&file).expect("file").len();
    assert_eq!(
        text,
        format!(
            "wrote {} ({bytes} bytes): 2 runs, 1 JSON/JSONL twin pairs, 1 charts\n",
            file.display()
        )
    );
}

#[test]
fn svg_format_writes_one_chart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("c.svg");
    let out = report_to(&["demo#2", "--format", "svg"], &file);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(&file).expect("written");
    assert!(svg.starts_with(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\""
    ));
    assert_eq!(svg.matches("<polyline").count(), 3);
    assert!(svg.contains(
        "<title>agent-kg-extract (demo#2) and agent-kg-extract-jsonl (demo#1): items recovered vs max tokens</title>"
    ));
    assert!(svg.contains("prefers-color-scheme: dark"));
    for needle in ["https:", "src=", "href", "url(", "<script"] {
        assert!(!svg.contains(needle), "{needle}");
    }
    // Default: the last run (and its twin), named after it.
    let out = cutline()
        .args(["report", "demo", "--format", "svg", "--output", "json"])
        .current_dir(dir.path())
        .arg("--sessions")
        .arg(root().join("sessions"))
        .arg("--prompts")
        .arg(root().join("prompts"))
        .output()
        .expect("run");
    let env: Value = serde_json::from_slice(&out.stdout).expect("envelope");
    assert_eq!(env["data"]["path"], "demo-32.svg");
    assert_eq!(env["data"]["runs"], serde_json::json!(["demo#31", "demo#32"]));
    assert!(dir.path().join("demo-32.svg").is_file());
    // Two charts' worth of runs: a usage error, nothing written.
    let out = report_to(
        &["demo#1-4", "--format", "svg", "--output", "json"],
        &dir.path().join("no.svg"),
    );
    assert_eq!(out.status.code(), Some(2));
    let env: Value = serde_json::from_slice(&out.stdout).expect("envelope");
    assert_eq!(
        env["error"]["message"],
        "--format svg draws one chart, and the runs picked make 2; pick one run, e.g. demo#4"
    );
    assert!(!dir.path().join("no.svg").exists());
}

#[test]
fn bad_references_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("sessions")).expect("mkdir");
    std::fs::write(
        dir.path().join("sessions/empty.jsonl"),
        "{\"type\":\"session\",\"version\":1,\"id\":\"empty\",\"created_ms\":0}\n",
    )
    .expect("write");
    let run = |reference: &str| {
        let out = cutline()
            .current_dir(dir.path())
            .args(["report", reference, "--output", "json"])
            .output()
            .expect("run");
        let env: Value = serde_json::from_slice(&out.stdout).expect("envelope");
        (
            out.status.code(),
            env["error"]["message"].as_str().unwrap_or("").to_owned(),
        )
    };
    assert_eq!(
        run("empty"),
        (Some(4), "sessions/empty.jsonl: the session holds no runs".to_owned())
    );
    assert_eq!(
        run("nope"),
        (Some(4), "no session \"nope\" in sessions (known: empty)".to_owned())
    );
    let out = cutline()
        .args(["report", "demo#40", "--output", "json"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let env: Value = serde_json::from_slice(&out.stdout).expect("envelope");
    assert_eq!(
        env["error"]["message"],
        "sessions/demo.jsonl: run #40 does not exist (runs 1..32)"
    );
}

#[test]
fn model_text_is_escaped_and_problems_are_on_the_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    definitions_prompts(dir.path());
    session_from_demo(dir.path(), "hostile", &[3, 4], |v| {
        if v["response_type"] == "json" {
            let t = v["text"].as_str().expect("text").to_owned();
            v["text"] = format!("<script>alert('x')</script>\n{t}").into();
            v["system"] = "</pre><img src=x onerror=alert(1)> & \"quotes\"".into();
        } else {
            v["prompt_id"] = "<b>unknown</b>".into();
        }
    });
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("sessions/hostile.jsonl"))
        .expect("open");
    std::io::Write::write_all(&mut f, b"{\"type\":\"run\",\"run_id\":\"torn").expect("torn line");
    drop(f);
    let out = cutline()
        .current_dir(dir.path())
        .args(["report", "hostile", "-o", "h.html"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recs = jsonl(&out.stdout);
    assert_eq!(recs[1]["type"], "warning");
    assert!(recs[1]["message"].as_str().expect("msg").contains("torn last line"));
    let html = std::fs::read_to_string(dir.path().join("h.html")).expect("written");
    assert_self_contained(&html);
    assert!(!html.contains("<img"));
    assert!(!html.contains("<b>unknown"));
    assert!(html.contains("&lt;script&gt;alert('x')&lt;/script&gt;"));
    assert!(html.contains("&lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;"));
    assert!(html.contains("prompt &quot;&lt;b&gt;unknown&lt;/b&gt;&quot; (runs #1) is not in prompts: its twin, sample input names and gold set are unknown"));
    assert!(html.contains("sessions/hostile.jsonl:4: torn last line"));
}

#[test]
fn small_session_html_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    definitions_prompts(dir.path());
    session_from_demo(dir.path(), "small", &[3, 4], |_| {});
    let out = cutline()
        .current_dir(dir.path())
        .args(["report", "small", "-o", "s.html"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(dir.path().join("s.html")).expect("written");
    // The stylesheet is long and not what this snapshot is about.
    let body = &html[html.find("<body>").expect("body")..];
    let body = body.replace(env!("CARGO_PKG_VERSION"), "VERSION");
    insta::assert_snapshot!(body.replace("><", ">\n<"));
}

/// Chromium, when installed.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|p| p.join(name))
                    .find(|p| p.is_file())
            })
        })
}

fn headless(bin: &Path, profile: &Path, extra: &[&str], page: &Path) -> std::process::Output {
    Std::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs")
}

/// A PNG's width, height and how many pixels have each RGB colour.
fn pixels(path: &Path) -> (u32, u32, std::collections::HashMap<u32, usize>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("png")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("{}: colour type {other:?}", path.display()),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let mut colours = std::collections::HashMap::new();
    for px in buf[..info.buffer_size()].chunks_exact(step) {
        let rgb = (u32::from(px[0]) << 16) | (u32::from(px[1]) << 8) | u32::from(px[2]);
        *colours.entry(rgb).or_insert(0) += 1;
    }
    (info.width, info.height, colours)
}

#[allow(
    clippy::too_many_lines,
    reason = "one story, told in order: each step checks what the one before made"
)]
#[test]
fn demo_report_renders_in_headless_chromium() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CUTLINE_REQUIRE_CHROMIUM").is_none(),
            "CUTLINE_REQUIRE_CHROMIUM is set but chromium is not installed"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium; scripts/test.sh does)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let page = dir.join("r.html");
    let out = report_to(&["demo"], &page);
    assert!(out.status.success());
    let html = std::fs::read_to_string(&page).expect("written");
    assert_self_contained(&html);

    let dom = headless(&bin, &dir.join("profile-dom"), &["--dump-dom"], &page);
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    for text in [
        "cutline report: ",
        "extract-definitions",
        "extract-definitions-jsonl",
        "agent-kg-extract-jsonl",
        "extract-with-ontologies",
        "Summary by prompt and limit",
        "gemma-3-270m-q4_k_m",
        "prompts/gold/extract-definitions.jsonl",
    ] {
        assert!(dom.contains(text), "the rendered page lacks {text:?}");
    }
    // Every chart drew its three lines with points, and an end marker.
    assert_eq!(dom.matches("<svg").count(), 16);
    let mut lines = 0;
    for (i, _) in dom.match_indices("<polyline") {
        let tag = &dom[i..i + dom[i..].find('>').expect("tag end")];
        let points = tag
            .split("points=\"")
            .nth(1)
            .expect("points")
            .split('"')
            .next()
            .expect("value");
        assert!(points.split(' ').count() >= 2, "a line without points: {tag}");
        lines += 1;
    }
    assert_eq!(lines, 16 * 3);
    assert!(dom.matches("<circle").count() >= 16 * 3);

    for (name, extra) in [
        ("light.png", vec![]),
        (
            "dark.png",
            vec!["--force-dark-mode", "--blink-settings=preferredColorScheme=0"],
        ),
    ] {
        let shot = dir.join(name);
        let mut args = vec![
            "--window-size=1280,2000".to_owned(),
            format!("--screenshot={}", shot.display()),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = headless(&bin, &dir.join(format!("profile-{name}")), &refs, &page);
        assert!(
            shot.exists(),
            "no screenshot {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (width, height, colours) = pixels(&shot);
        assert_eq!((width, height), (1280, 2000), "{name}");
        // The page's own background is the commonest colour: the
        // stylesheet was applied, in the scheme asked for.
        let background = if name == "light.png" { 0xfb_fb_fa } else { 0x14_14_14 };
        let commonest = colours.iter().max_by_key(|(_, n)| **n).map(|(c, _)| *c);
        assert_eq!(commonest, Some(background), "{name}: background");
        // The charts drew each parser's series in its colour (the points
        // are solid circles, so their centres are exact).
        let series: [u32; 3] = if name == "light.png" {
            [0xc2_18_5b, 0xe0_8a_00, 0x00_79_6b]
        } else {
            [0xf0_62_92, 0xff_b7_4d, 0x4d_b6_ac]
        };
        for c in series {
            assert!(
                colours.get(&c).is_some_and(|&n| n >= 20),
                "{name}: the series colour #{c:06x} is (nearly) absent"
            );
        }
    }
    eprintln!("screenshots kept in {}", dir.display());
}

#[test]
fn eval_session_has_the_eval_table_and_a_chart_per_prompt() {
    // A real eval session, offline: the demo's recordings replayed at three
    // limits (`eval --provider replay`).
    let dir = tempfile::tempdir().expect("tempdir");
    definitions_prompts(dir.path());
    std::fs::create_dir_all(dir.path().join("sessions")).expect("mkdir");
    std::fs::copy(
        root().join("sessions/demo.jsonl"),
        dir.path().join("sessions/demo.jsonl"),
    )
    .expect("copy");
    let out = cutline()
        .current_dir(dir.path())
        .args(["eval", "--prompt", "extract-definitions", "--provider", "replay"])
        .args(["--max-tokens", "64,256,none", "--session", "ev", "--no-progress"])
        .output()
        .expect("eval");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summaries: Vec<Value> = jsonl(&out.stdout)
        .into_iter()
        .filter(|r| r["type"] == "summary")
        .collect();
    assert_eq!(summaries.len(), 6);
    let out = cutline()
        .current_dir(dir.path())
        .args(["report", "ev", "-o", "ev.html", "--output", "json"])
        .output()
        .expect("report");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env: Value = serde_json::from_slice(&out.stdout).expect("envelope");
    // 3 inputs × 3 limits, each JSON run beside its twin; one sweep chart per
    // pair and one items-against-limit chart for the prompt and its twin.
    assert_eq!(
        (env["data"]["pairs"].as_u64(), env["data"]["charts"].as_u64()),
        (Some(9), Some(10))
    );
    let html = std::fs::read_to_string(dir.path().join("ev.html")).expect("written");
    assert_self_contained(&html);
    assert!(html.contains(
        "<figcaption>extract-definitions and extract-definitions-jsonl: mean items kept at each max-token limit</figcaption>"
    ));
    // The page's table is eval's own, row for row.
    for s in &summaries {
        let limit = s["max_tokens"]
            .as_u64()
            .map_or_else(|| "none".to_owned(), |n| n.to_string());
        let row = format!(
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{limit}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            s["prompt"].as_str().expect("prompt"),
            s["response_type"].as_str().expect("type"),
            s["runs"],
            s["failed"],
            s["items_total"]
        );
        assert!(html.contains(&row), "no row {row}");
    }
}

#[test]
fn a_failed_run_and_a_snapshot_that_does_not_load_are_shown_not_fatal() {
    let dir = tempfile::tempdir().expect("tempdir");
    definitions_prompts(dir.path());
    session_from_demo(dir.path(), "broken", &[3, 4], |v| {
        if v["response_type"] == "json" {
            v["prompt"] = serde_json::json!({"prompt": "{{ text }}", "response-type": "bogus"});
        } else {
            v["text"] = "".into();
            v["pieces"] = Value::Array(Vec::new());
            v["finish"] = "error".into();
            v["error"] = serde_json::json!({"kind": "server", "message": "boom"});
        }
    });
    let out = cutline()
        .current_dir(dir.path())
        .args(["report", "broken", "-o", "b.html", "--output", "json"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let env: Value = serde_json::from_slice(&out.stdout).expect("envelope");
    assert_eq!(
        env["data"]["notes"],
        serde_json::json!([
            "broken#2: not analysed: session run broken#2.json:1: unknown response-type \"bogus\"; expected one of: text, json, jsonl"
        ])
    );
    let html = std::fs::read_to_string(dir.path().join("b.html")).expect("written");
    assert!(html.contains("<dt>error</dt><dd class=\"bad\">"));
    assert!(
        html.contains("<p class=\"verdict\">JSONL: 0 items kept; 0 invalid JSON, 0 schema-invalid, 0 truncated</p>")
    );
}

/// The report says what TrustGraph's service returns for each run, on the
/// Python `--tg-python` names: a JSONL line 990 deep is kept on 3.13 and
/// fails the whole response on 3.11, which the run's summary says first.
#[test]
fn the_report_gives_trustgraphs_verdict_on_the_chosen_python() {
    let dir = tempfile::tempdir().expect("tempdir");
    definitions_prompts(dir.path());
    // Valid against the schema (a rejected value this deep would fail on
    // 3.13 too, in the warning's pretty-print).
    let deep = format!(
        "{{\"entity\": \"deep\", \"definition\": \"nested\", \"x\": {}{}}}",
        "[".repeat(990),
        "]".repeat(990)
    );
    session_from_demo(dir.path(), "deep", &[3, 4], |v| {
        if v["response_type"] == "jsonl" {
            let t = v["text"].as_str().expect("text").to_owned();
            v["text"] = format!("{t}\n{deep}\n").into();
            v["prompt"]["schema"]["additionalProperties"] = true.into();
        }
    });
    let verdict = "TrustGraph: the service fails this whole response: RecursionError";
    for (py, fails) in [("3.13", false), ("3.11", true)] {
        let out = cutline()
            .current_dir(dir.path())
            .args(["report", "deep", "-o", "d.html", "--tg-python", py])
            .output()
            .expect("run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let html = std::fs::read_to_string(dir.path().join("d.html")).expect("written");
        assert_eq!(html.contains(verdict), fails, "{py}");
    }
}
