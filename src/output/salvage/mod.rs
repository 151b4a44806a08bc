//! Array salvage: the complete elements of a cut or broken JSON array.
//!
//! The scanner walks the array structurally and parses each element with
//! `serde_json` once it is complete. An element that was still being written
//! when the text ended is dropped, never completed: repair libraries that
//! close the brackets invent a phantom `{"a": null}` or `{}`, and salvage must
//! not.
//!
//! A broken element (a dropped `{`, a missing comma, a key without its
//! colon) does not end the scan: the scanner resynchronises at the next
//! element start of the same array ([`resync`]), keeps every complete element
//! after it, and reports the skipped bytes as a [`Broken`] span. A
//! resynchronised element is kept only once the `,` or `]` after it arrived,
//! so what it keeps is whole elements of the text, never pieces of one.
//!
//! Accepted shapes: a bare array; an array inside a code fence (closed or
//! not); and an object whose properties are arrays (`{"definitions": […],
//! "relationships": […]}`), whose elements are tagged with the property.
//! The scanner is resumable, so the streaming analyser feeds it a growing
//! buffer and the total work stays linear.

mod resync;
mod scanner;

use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

pub use scanner::ArrayScanner;

/// One complete element recovered from the array.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// Byte range of the element in the text.
    pub span: Range<usize>,
    /// The property of the enclosing object the array belongs to, if any.
    pub property: Option<Arc<str>>,
    /// The parsed element.
    pub value: Value,
    /// The shortest prefix of the text (in bytes) whose salvage keeps this
    /// element: its end for an object or array; past the delimiter that
    /// ends a number or literal; past the `,` or `]` after a string (which
    /// could still be a key) and after an element found by resynchronising;
    /// never before the break it resumed after was seen. The sweep counts
    /// items with it.
    pub known_at: usize,
}

/// A member of a top-level object, as the scan met it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its key.
    pub key: Arc<str>,
    /// Whether its value is an array (whose elements the scan keeps); any
    /// other value is skipped.
    pub array: bool,
}

/// Why the scan stopped short of a closed array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The text ended inside the array: the output was cut.
    Eof,
    /// The text broke JSON syntax here, and no later element start was found.
    Syntax,
    /// No array (or object of arrays) was found at all.
    NoArray,
}

/// Where and why the scan stopped, when it did not reach the closing bracket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// Byte offset where scanning stopped.
    pub offset: usize,
    /// Cut or broken.
    pub reason: StopReason,
    /// The parser's word for a syntax error, if any.
    pub message: Option<String>,
}

/// Bytes skipped between a break and the element the scan resumed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// From the start of the broken element (or the stray byte) to the
    /// start of the next element kept.
    pub span: Range<usize>,
    /// Where JSON syntax broke.
    pub at: usize,
    /// The parser's word for it.
    pub message: String,
}

/// Everything salvage found in one text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Salvaged {
    /// The complete elements, in order.
    pub elements: Vec<Element>,
    /// The spans skipped to resynchronise after a broken element.
    pub broken: Vec<Broken>,
    /// Why the array is incomplete, when it is.
    pub stop: Option<Stop>,
}

/// Salvage the complete elements of `text` in one pass.
pub fn salvage(text: &[u8]) -> Salvaged {
    let mut scanner = ArrayScanner::new();
    let mut elements: Vec<Element> = Vec::new();
    let mut keep = |e: Element| {
        if elements.is_empty() {
            elements.reserve(expected_count(text.len(), &e.span));
        }
        elements.push(e);
    };
    scanner.feed_with(text, &mut keep);
    let stop = scanner.finish(text, &mut keep);
    Salvaged {
        elements,
        broken: scanner.take_broken(),
        stop,
    }
}

/// How many elements `len` bytes hold if the rest are as long as the first
/// (plus a separator), at most one per 64 bytes. Reserving it once spares
/// the vector's regrowth copies, a measured share of salvage's time over a
/// plain parse; the cap keeps a tiny first element from reserving more
/// than about the input's size.
fn expected_count(len: usize, first: &Range<usize>) -> usize {
    let rest = len.saturating_sub(first.start);
    (rest / (first.len() + 2).max(64)).max(1)
}

#[cfg(test)]
mod tests;
