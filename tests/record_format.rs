//! The session format is the contract with every session on disk: the
//! typed record (enums for `type`, `response_type`, `structured_path`)
//! writes back exactly the bytes it read (issue 25, item 3).

use cutline::session::RunRecord;

#[test]
fn every_demo_run_reads_into_the_typed_record_and_writes_back_byte_for_byte() {
    let text = std::fs::read_to_string("sessions/demo.jsonl").expect("demo session");
    let mut runs = 0;
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("{\"type\":\"run\""))
    {
        let record: RunRecord = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        assert_eq!(serde_json::to_string(&record).unwrap(), line, "line {}", n + 1);
        runs += 1;
    }
    assert!(runs >= 4, "the demo session holds its runs ({runs})");
}

#[test]
fn a_record_word_outside_the_enums_is_an_error_naming_it_not_a_guess() {
    let text = std::fs::read_to_string("sessions/demo.jsonl").unwrap();
    let line = text.lines().find(|l| l.starts_with("{\"type\":\"run\"")).unwrap();
    let bad = line.replacen("\"response_type\":\"jsonl\"", "\"response_type\":\"xml\"", 1);
    let err = serde_json::from_str::<RunRecord>(&bad).unwrap_err().to_string();
    assert!(err.contains("unknown variant `xml`"), "{err}");
    // An old record without a structured path reads as `none`.
    let old = line.replacen(",\"structured_path\":\"none\"", "", 1);
    assert_ne!(old, line, "the demo run records its path");
    let r: RunRecord = serde_json::from_str(&old).unwrap();
    assert_eq!(r.structured_path, cutline::llm::structured::Path::None);
}
