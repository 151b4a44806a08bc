//! Reliability round 4 (issue 32): nothing lost, nothing paid for twice.
//! The rules behind each case, on the library's own writers and readers.

use std::path::{Path, PathBuf};

use cutline::eval::batch::{Answers, Manifest};
use cutline::llm::Transcript;
use cutline::llm::batch::Window;

/// A temp dir with an outside file holding `text` and a link to it at
/// `name`; returns the dir, the link and the outside file.
fn linked(name: &str, text: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, text).unwrap();
    let link = dir.path().join(name);
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    (dir, link, outside)
}

fn refusal(link: &Path, to: &Path) -> String {
    format!(
        "{}: a symbolic link to {to}: cutline writes only regular files, never through a link nor over one \
         (edit {to} itself, or replace the link with a file)",
        link.display(),
        to = to.display()
    )
}

fn still_linked(link: &Path, outside: &Path, text: &str) {
    assert!(std::fs::symlink_metadata(link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(outside).unwrap(), text);
}

/// Case 1: an answers file that is a link to an outside file whose last
/// line has no newline (so reads as "torn") is refused before it is read:
/// the outside file keeps its last line and gets no answer appended.
#[test]
fn a_linked_answers_file_is_refused_and_the_file_it_points_to_is_untouched() {
    let text = "precious line one\nprecious last line without newline";
    let (_dir, link, outside) = linked("s.answers.jsonl", text);
    let e = Answers::open(&link).unwrap_err();
    assert_eq!(e.to_string(), refusal(&link, &outside));
    still_linked(&link, &outside, text);
    // A link put there after the file was opened is refused at the append.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.answers.jsonl");
    let mut answers = Answers::open(&path).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let e = answers.keep("k", Transcript::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        refusal(&path, &outside).split_once(": ").unwrap().1,
        "the io error says why; the caller names the file"
    );
    still_linked(&path, &outside, text);
}

/// Case 1's rule on every other writer: the manifest, a replaced file
/// (prompts, reports, `--batch-file`, the workbench's memory), a session
/// opened to append.
#[test]
fn no_writer_writes_through_or_over_a_link() {
    let text = "{\"not\": \"yours\"}\n";
    let (_d1, link, outside) = linked("s.batches.json", text);
    let e = Manifest::new("s", "p", "m", "api", Window::Day)
        .save(&link)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: cannot write the batch manifest: {}",
            link.display(),
            refusal(&link, &outside).split_once(": ").unwrap().1
        )
    );
    still_linked(&link, &outside, text);

    let (_d2, link, outside) = linked("report.html", text);
    let e = cutline::store::write_atomic(&link, b"<html>").unwrap_err();
    assert_eq!(e.to_string(), refusal(&link, &outside).split_once(": ").unwrap().1);
    still_linked(&link, &outside, text);
    assert_eq!(std::fs::read_dir(_d2.path()).unwrap().count(), 2, "no temp file left");

    let (_d3, link, outside) = linked("s.jsonl", text);
    let e = cutline::session::Recorder::open(&link).unwrap_err();
    assert_eq!(e.to_string(), refusal(&link, &outside).split_once(": ").unwrap().1);
    still_linked(&link, &outside, text);
}

/// Case 9: a manifest edited so that two requests' run keys are swapped
/// would record each answer under the other run. Each custom id is a hash
/// of its run key, so the mismatch is caught when the manifest loads, and
/// nothing is recorded from it.
#[test]
fn a_manifest_whose_run_keys_were_swapped_is_refused() {
    use cutline::eval::batch::{Entry, EntryState};
    use cutline::llm::batch::custom_id;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.batches.json");
    let mut m = Manifest::new("s", "p", "m", "api", Window::Day);
    m.batches.push(Entry {
        local: "b1".into(),
        round: 0,
        state: EntryState::Submitted,
        created_ms: 1,
        tag: String::new(),
        batch: Some(cutline::llm::batch::Submitted::whole("batch_1")),
        requests: vec![(custom_id("k1"), "k1".into()), (custom_id("k2"), "k2".into())],
        status: None,
    });
    m.save(&path).unwrap();
    assert!(Manifest::load(&path).unwrap().is_some(), "as written, it loads");
    m.batches[0].requests = vec![(custom_id("k1"), "k2".into()), (custom_id("k2"), "k1".into())];
    m.save(&path).unwrap();
    let e = Manifest::load(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: batch b1: custom id {} is not the one of run key \"k2\" (the manifest was edited): nothing is \
             recorded from it; put the manifest back as cutline wrote it",
            path.display(),
            custom_id("k1")
        )
    );
}
