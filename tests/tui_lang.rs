//! The workbench's panes in another language (issue 13): every pane a run
//! shows speaks Chinese or Spanish, and CJK text keeps the frames aligned.
//! One test per process, as the language is process-wide.

mod tui_support;

use cutline::i18n::Lang;
use cutline::llm::FinishReason;
use cutline::tui::state::{OutPane, Tab};
use ratatui::crossterm::event::KeyCode;
use tui_support::*;
use unicode_width::UnicodeWidthStr;

/// Every row of a screen takes the full width, whatever its script.
fn aligned(screen: &str, w: usize) {
    for row in screen.lines() {
        // TestBackend quotes each row and notes the cells a wide
        // character hides after it.
        let inner = match row.find("\" Hidden by multi-width") {
            Some(end) => &row[1..end],
            None => row.trim_start_matches('"').trim_end_matches('"'),
        };
        assert_eq!(inner.width(), w, "misaligned row: {row}");
    }
}

#[test]
fn panes_speak_chinese_then_spanish() {
    Lang::parse("zh").unwrap().apply();
    let mut s = state();
    show(
        &mut s,
        finished(1, &jsonl_prompt(), JSONL_WITH_ERRORS, FinishReason::Length),
    );
    s.tab = Tab::Run;
    let out = screen(&s, 120, 30);
    if std::env::var_os("SHOW").is_some() {
        eprintln!("{out}");
    }
    aligned(&out, 120);
    for want in [
        "按 JSON 数组解析",
        "按 JSONL 解析",
        "严格 JSON：无效",
        "保留 2 个",
        "回答 · extract-definitions-jsonl",
        "被截断",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    for english in ["JSON-array parse", "JSONL parse", "strict JSON", " kept", "Response ·"] {
        assert!(!out.contains(english), "{english:?} left in English:\n{out}");
    }
    // Search, status and the sweep's notes.
    s.focus = OutPane::Response;
    send(&mut s, "/光合".chars().map(ch).chain([key(KeyCode::Enter)]));
    let out = screen(&s, 120, 30);
    assert!(out.contains("/光合：第 1 个匹配，共 1 个"), "{out}");
    send(&mut s, [ch('4')]);
    let out = screen(&s, 120, 30);
    aligned(&out, 120);
    assert!(out.contains("扫描"), "{out}");
    // The prompt list and the compare tab.
    send(&mut s, [ch('1')]);
    let out = screen(&s, 120, 30);
    aligned(&out, 120);
    assert!(out.contains("Enter 编辑 · r 运行"), "{out}");
    send(&mut s, [ch('7')]);
    let out = screen(&s, 120, 30);
    assert!(out.contains("对比需要一对运行"), "{out}");

    Lang::parse("es").unwrap().apply();
    send(&mut s, [ch('3')]);
    let out = screen(&s, 120, 30);
    aligned(&out, 120);
    for want in [
        "análisis como array JSON",
        "análisis como JSONL",
        "JSON estricto: no válido",
        "Respuesta ·",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    Lang::parse("en").unwrap().apply();
}
