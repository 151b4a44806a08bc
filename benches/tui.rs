//! Frame render time of the workbench's Run tab for a 50,000-line response
//! against a 100-line one. Panes draw only their visible rows, so the two
//! should cost about the same per frame. Also the Compare tab of a
//! 50,000-item pair (its report is computed by the reducer, not per frame).

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use cutline::llm::FinishReason;
use cutline::prompt::{PromptConfig, ResponseType};
use cutline::tui::keymap::Keymap;
use cutline::tui::run::Shown;
use cutline::tui::run::{RunView, schemas_for};
use cutline::tui::state::{OutPane, State, Tab};
use cutline::tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

fn prompt() -> PromptConfig {
    PromptConfig {
        id: "extract-definitions-jsonl".into(),
        response_type: ResponseType::Jsonl,
        schema: Some(
            json!({"type": "object", "properties": {"entity": {"type": "string"}, "definition": {"type": "string"}}, "required": ["entity", "definition"]}),
        ),
        ..PromptConfig::default()
    }
}

fn state(lines: usize) -> State {
    let p = prompt();
    let text: String = (0..lines)
        .map(|i| {
            if i % 7 == 3 {
                format!("{{\"entity\": \"光合作用 {i}\"}}\n")
            } else {
                format!("{{\"entity\": \"term {i}\", \"definition\": \"what term {i} means, at some length\"}}\n")
            }
        })
        .collect();
    let pieces: Vec<String> = text.split_inclusive(' ').map(str::to_owned).collect();
    let run = RunView::from_text(
        1,
        &p,
        Arc::new(schemas_for(&p)),
        &text,
        Some(&pieces),
        FinishReason::Stop,
        cutline::output::tg::TgPython::default(),
    );
    let mut s = State::new(
        PathBuf::from("prompts"),
        PathBuf::from("sessions"),
        Keymap::defaults(),
        Theme::default(),
    );
    s.size = (160, 50);
    s.shown = Some(Shown::Single(Box::new(run)));
    s.tab = Tab::Run;
    s.focus = OutPane::Jsonl;
    s
}

fn frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame");
    for lines in [100usize, 50_000] {
        let mut s = state(lines);
        let mut term = Terminal::new(TestBackend::new(160, 50)).unwrap();
        g.bench_function(format!("run_tab_{lines}_lines_at_end"), |b| {
            b.iter(|| {
                term.draw(|f| cutline::tui::draw(f, black_box(&s))).unwrap();
            });
        });
        // Scrolled to the middle: still only the visible rows are built.
        for pane in [OutPane::Response, OutPane::Jsonl] {
            let sc = s.scroll_mut(pane);
            sc.follow = false;
            sc.top = lines / 2;
        }
        g.bench_function(format!("run_tab_{lines}_lines_middle"), |b| {
            b.iter(|| {
                term.draw(|f| cutline::tui::draw(f, black_box(&s))).unwrap();
            });
        });
    }
    // The Compare tab of a 50,000-item pair: the report is computed once by
    // the reducer; a frame draws the summary (keys listed are capped).
    let mut s = state(50_000);
    if let Some(Shown::Single(r)) = s.shown.take() {
        let mut b = r.clone();
        b.id = 2;
        s.shown = Some(Shown::Twins { json: r, jsonl: b });
    }
    let _ = cutline::tui::update(
        &mut s,
        cutline::tui::Event::Key(ratatui::crossterm::event::KeyEvent::from(
            ratatui::crossterm::event::KeyCode::Char('7'),
        )),
    );
    let mut term = Terminal::new(TestBackend::new(160, 50)).unwrap();
    g.bench_function("compare_tab_50000_items", |b| {
        b.iter(|| {
            term.draw(|f| cutline::tui::draw(f, black_box(&s))).unwrap();
        });
    });
    g.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
