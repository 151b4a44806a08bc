//! Runaway loops on the shipped demo recordings (real Gemma 3 270M runs at
//! 768 tokens): the runs the limit cut while they repeated themselves are
//! flagged, the runs that stopped on their own are not; and `data.loop` is
//! in `run`, `replay` and `parse` output.

use cutline::llm::FinishReason;
use cutline::output::loops;

#[test]
fn demo_runs_cut_while_looping_are_flagged_and_finished_runs_are_not() {
    let s = cutline::session::load(std::path::Path::new("sessions/demo.jsonl")).expect("demo session");
    let (mut cut, mut stopped) = (0, 0);
    for r in &s.runs {
        let l = cutline::run::loop_of(r);
        match r.finish {
            FinishReason::Length => {
                cut += 1;
                let l = l.unwrap_or_else(|| panic!("run {} was cut by the limit while looping", r.run_id));
                assert!(l.repeats >= loops::MIN_REPEATS && l.wasted_tokens.is_some(), "{l:?}");
            }
            _ => {
                stopped += 1;
                assert!(l.is_none(), "run {} stopped on its own but is flagged: {l:?}", r.run_id);
            }
        }
    }
    assert_eq!((cut, stopped), (15, 17));
    // One exactly: demo#13, extract-definitions repeating one element.
    let r13 = s.runs.iter().find(|r| r.run_id == "demo#13").expect("run 13");
    let l = cutline::run::loop_of(r13).expect("loop");
    assert_eq!((l.start_token, l.period_tokens, l.repeats), (Some(255), Some(32), 16));
    assert_eq!(l.wasted_tokens, Some(768 - 255 - 32));
    assert!(r13.text[l.start_byte..].starts_with(&l.unit));
    // A run that repeated a line eleven times and then stopped is not a
    // runaway loop (demo#30); the text alone shows the repetition.
    let r30 = s.runs.iter().find(|r| r.run_id == "demo#30").expect("run 30");
    assert!(cutline::run::loop_of(r30).is_none());
    assert!(loops::detect(&r30.text, None).is_some_and(|l| l.repeats == 11));
}

#[test]
fn replay_output_carries_the_loop_or_null() {
    let out = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .args(["--sessions", "sessions", "replay", "demo#13", "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["data"]["loop"]["repeats"], 16);
    assert_eq!(v["data"]["loop"]["period_tokens"], 32);
    let out = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .args(["--sessions", "sessions", "replay", "demo#4", "--output", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["data"]["loop"].is_null(), "{}", v["data"]["loop"]);
}

/// `parse` has no finish reason: a loop is reported when the text itself
/// was cut (a JSON value that ends early, a cut last JSONL line), in every
/// output path (the JSON envelope, the streamed JSONL `summary`).
#[test]
fn parse_output_carries_the_loop_of_a_cut_text_or_null() {
    let s = cutline::session::load(std::path::Path::new("sessions/demo.jsonl")).expect("demo session");
    let text_of = |id: &str| s.runs.iter().find(|r| r.run_id == id).expect("run").text.clone();
    let dir = tempfile::tempdir().unwrap();
    let parse = |name: &str, text: &str, as_: &str, format: &str| -> Vec<serde_json::Value> {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        let out = assert_cmd::Command::cargo_bin("cutline")
            .unwrap()
            .arg("parse")
            .arg(&f)
            .args(["--as", as_, "--output", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // demo#13: a JSON array repeating one element until the limit.
    let v = parse("13.json", &text_of("demo#13"), "json", "json");
    let l = &v[0]["data"]["loop"];
    assert_eq!(l["repeats"], 16, "{l}");
    assert!(
        text_of("demo#13")[usize::try_from(l["start_byte"].as_u64().unwrap()).unwrap()..]
            .starts_with(l["unit"].as_str().unwrap())
    );
    // demo#25: a JSONL answer looping until the limit, streamed.
    let recs = parse("25.jsonl", &text_of("demo#25"), "jsonl", "jsonl");
    let summary = recs.iter().find(|r| r["type"] == "summary").unwrap();
    assert!(summary["loop"]["repeats"].as_u64().unwrap() >= 3, "{summary}");
    let env = parse("25b.jsonl", &text_of("demo#25"), "jsonl", "json");
    assert_eq!(env[0]["data"]["loop"], summary["loop"]);
    // demo#30 repeated a line and stopped on its own: complete, no loop.
    let env = parse("30.jsonl", &text_of("demo#30"), "jsonl", "json");
    assert!(env[0]["data"]["loop"].is_null(), "{}", env[0]["data"]["loop"]);
}

/// Issue 35, item 7: the report counts a looping answer's repeats once,
/// says how many answers looped, and opens with one sentence of what each
/// format kept at each limit (the demo session: 6 twin pairs at 768).
#[test]
fn the_report_counts_a_loop_once_and_opens_with_what_each_format_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo.html");
    let status = assert_cmd::Command::cargo_bin("cutline")
        .unwrap()
        .args(["report", "demo", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(
        page.contains(
            "<p class=\"headline\">At 768 tokens (6 twin pairs), JSONL kept 78 items, salvage 64 and strict JSON 15. \
             15 answers looped until the limit cut; each loop's repeats count once.</p>"
        ),
        "{}",
        &page[..page.len().min(3000)]
    );
    // Every looping run counts each repeated item once; the rest as they came.
    let s = cutline::session::load(std::path::Path::new("sessions/demo.jsonl")).unwrap();
    let (cfgs, _, _) = cutline::store::load_dir(std::path::Path::new("prompts"));
    let mut dropped = Vec::new();
    for r in &s.runs {
        let cfg = cfgs.iter().find(|c| c.id == r.prompt_id).unwrap();
        let a = cutline::run::Analysis::of(
            cfg.response_type,
            cfg.schema.as_ref(),
            &r.text,
            cutline::output::tg::TgPython::default(),
        );
        let sum = cutline::eval::summarise("k".into(), "i", r, &a, None, false);
        let raw = match &a {
            cutline::run::Analysis::Json(j) => {
                assert_eq!(
                    sum.salvaged + sum.repeats_dropped,
                    j.elements.iter().filter(|e| e.valid).count()
                );
                note_dropped(sum.repeats_dropped, &mut dropped, &r.run_id);
                continue;
            }
            other => other.items().len(),
        };
        assert_eq!(sum.items + sum.repeats_dropped, raw, "{}", r.run_id);
        note_dropped(sum.repeats_dropped, &mut dropped, &r.run_id);
        assert!(sum.repeats_dropped == 0 || sum.loop_repeats.is_some(), "{}", r.run_id);
    }
    let dropped: Vec<(&str, usize)> = dropped.iter().map(|(id, n)| (id.as_str(), *n)).collect();
    assert_eq!(
        dropped,
        [
            ("demo#2", 13),
            ("demo#10", 38),
            ("demo#12", 33),
            ("demo#14", 17),
            ("demo#17", 25),
            ("demo#18", 21),
            ("demo#21", 17),
            ("demo#24", 25),
            ("demo#25", 25),
            ("demo#28", 37),
            ("demo#31", 12)
        ]
    );
}

/// Keep `(id, n)` when a run dropped `n` repeated items.
fn note_dropped(n: usize, out: &mut Vec<(String, usize)>, id: &str) {
    if n > 0 {
        out.push((id.to_owned(), n));
    }
}
