//! Array salvage: the complete elements of a cut or broken JSON array.
//!
//! The scanner walks the array structurally and hands each element's bytes to
//! `serde_json` once the element is complete; it stops at the first syntax
//! error or at the end of input. An element that was still being written when
//! the text ended is dropped, never completed: repair libraries that close the
//! brackets invent a phantom `{"a": null}` or `{}`, and salvage must not.
//!
//! Accepted shapes: a bare array; an array inside a code fence (closed or
//! not); and an object whose properties are arrays (`{"definitions": […],
//! "relationships": […]}`), whose elements are tagged with the property.
//! The scanner is resumable, so the streaming analyser feeds it a growing
//! buffer and the total work stays linear.

use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::scan::{Skip, ValueSkipper, is_ws};

/// One complete element recovered from the array.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// Byte range of the element in the text.
    pub span: Range<usize>,
    /// The property of the enclosing object the array belongs to, if any.
    pub property: Option<Arc<str>>,
    /// The parsed element.
    pub value: Value,
}

/// Why the scan stopped short of a closed array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The text ended inside the array: the output was cut.
    Eof,
    /// The text broke JSON syntax here.
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

#[derive(Debug, Clone)]
enum State {
    Seek,
    FenceLine,
    ObjectMember {
        first: bool,
    },
    Key {
        start: usize,
        skip: ValueSkipper,
    },
    Colon {
        key: Arc<str>,
    },
    MemberValue {
        key: Arc<str>,
    },
    SkipMember {
        skip: ValueSkipper,
    },
    AfterMember,
    ElementOrEnd {
        prop: Option<Arc<str>>,
        first: bool,
    },
    InElement {
        prop: Option<Arc<str>>,
        start: usize,
        skip: ValueSkipper,
    },
    AfterElement {
        prop: Option<Arc<str>>,
    },
    Closed,
    Stopped,
}

/// Resumable scanner over a growing buffer.
#[derive(Debug, Clone)]
pub struct ArrayScanner {
    pos: usize,
    state: State,
    in_object: bool,
    stop: Option<Stop>,
}

impl Default for ArrayScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl ArrayScanner {
    /// A scanner at the start of the text.
    pub fn new() -> Self {
        Self {
            pos: 0,
            state: State::Seek,
            in_object: false,
            stop: None,
        }
    }

    /// The stop, once the scanner has stopped on a syntax error.
    pub fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    /// True when the top-level array (or object) was closed.
    pub fn closed(&self) -> bool {
        matches!(self.state, State::Closed)
    }

    /// Scan further into `bytes` (the whole text so far; it only grows),
    /// pushing every element that completed onto `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Element>) {
        self.feed_with(bytes, &mut |el| out.push(el));
    }

    /// [`feed`](Self::feed), handing each completed element to `each`.
    pub fn feed_with(&mut self, bytes: &[u8], each: &mut dyn FnMut(Element)) {
        while let Some(next) = self.step(bytes, each) {
            self.state = next;
        }
    }

    /// The end of input: report why the array is incomplete, if it is.
    pub fn finish(&mut self, bytes: &[u8]) -> Option<Stop> {
        if let Some(stop) = &self.stop {
            return Some(stop.clone());
        }
        match &mut self.state {
            State::Closed => None,
            State::Seek | State::FenceLine => Some(Stop {
                offset: bytes.len(),
                reason: StopReason::NoArray,
                message: None,
            }),
            _ => Some(Stop {
                offset: bytes.len(),
                reason: StopReason::Eof,
                message: None,
            }),
        }
    }

    #[allow(clippy::unnecessary_wraps)] // keeps every arm of `step` uniform
    fn fail(&mut self, offset: usize, message: impl Into<String>) -> Option<State> {
        self.stop = Some(Stop {
            offset,
            reason: StopReason::Syntax,
            message: Some(message.into()),
        });
        Some(State::Stopped)
    }

    /// One transition; `None` when more input is needed or the scan is over.
    #[allow(clippy::too_many_lines)]
    fn step(&mut self, bytes: &[u8], out: &mut dyn FnMut(Element)) -> Option<State> {
        let state = std::mem::replace(&mut self.state, State::Stopped);
        let park = |s: &mut Self, st: State| {
            s.state = st;
            None
        };
        match state {
            State::Closed | State::Stopped => park(self, state),
            State::Seek => {
                let rest = &bytes[self.pos..];
                let Some(off) = rest.iter().position(|&b| matches!(b, b'`' | b'[' | b'{')) else {
                    self.pos = bytes.len();
                    return park(self, State::Seek);
                };
                let at = self.pos + off;
                match bytes[at] {
                    b'[' => {
                        self.pos = at + 1;
                        Some(State::ElementOrEnd {
                            prop: None,
                            first: true,
                        })
                    }
                    b'{' => {
                        self.pos = at + 1;
                        self.in_object = true;
                        Some(State::ObjectMember { first: true })
                    }
                    _ => {
                        if bytes.len() < at + 3 {
                            self.pos = at;
                            return park(self, State::Seek);
                        }
                        if &bytes[at..at + 3] == b"```" {
                            self.pos = at + 3;
                            Some(State::FenceLine)
                        } else {
                            self.pos = at + 1;
                            Some(State::Seek)
                        }
                    }
                }
            }
            // The fence's info string (`json`, `jsonl`, …) is skipped; the
            // array may start on the fence line itself (```` ```json [ ````).
            State::FenceLine => match bytes[self.pos..]
                .iter()
                .position(|&b| !(b.is_ascii_alphanumeric() || b"_-+.#".contains(&b)))
            {
                Some(off) => {
                    self.pos += off;
                    Some(State::Seek)
                }
                None => {
                    self.pos = bytes.len();
                    park(self, State::FenceLine)
                }
            },
            State::ObjectMember { first } => {
                let Some(b) = self.next_non_ws(bytes) else {
                    return park(self, State::ObjectMember { first });
                };
                match b {
                    b'}' if first => {
                        self.pos += 1;
                        Some(State::Closed)
                    }
                    b'"' => Some(State::Key {
                        start: self.pos,
                        skip: ValueSkipper::new(self.pos),
                    }),
                    _ => self.fail(self.pos, "expected a property name"),
                }
            }
            State::Key { start, mut skip } => match skip.advance(bytes) {
                Skip::NeedMore => park(self, State::Key { start, skip }),
                Skip::Syntax(at) => self.fail(at, "bad property name"),
                Skip::Done(end) => match serde_json::from_slice::<String>(&bytes[start..end]) {
                    Ok(key) => {
                        self.pos = end;
                        Some(State::Colon { key: key.into() })
                    }
                    Err(e) => self.fail(start, e.to_string()),
                },
            },
            State::Colon { key } => {
                let Some(b) = self.next_non_ws(bytes) else {
                    return park(self, State::Colon { key });
                };
                if b == b':' {
                    self.pos += 1;
                    Some(State::MemberValue { key })
                } else {
                    self.fail(self.pos, "expected ':'")
                }
            }
            State::MemberValue { key } => {
                let Some(b) = self.next_non_ws(bytes) else {
                    return park(self, State::MemberValue { key });
                };
                if b == b'[' {
                    self.pos += 1;
                    Some(State::ElementOrEnd {
                        prop: Some(key),
                        first: true,
                    })
                } else {
                    Some(State::SkipMember {
                        skip: ValueSkipper::new(self.pos),
                    })
                }
            }
            State::SkipMember { mut skip } => match skip.advance(bytes) {
                Skip::NeedMore => park(self, State::SkipMember { skip }),
                Skip::Syntax(at) => self.fail(at, "expected a value"),
                Skip::Done(end) => {
                    self.pos = end;
                    Some(State::AfterMember)
                }
            },
            State::AfterMember => {
                let Some(b) = self.next_non_ws(bytes) else {
                    return park(self, State::AfterMember);
                };
                self.pos += 1;
                match b {
                    b',' => Some(State::ObjectMember { first: false }),
                    b'}' => Some(State::Closed),
                    _ => self.fail(self.pos - 1, "expected ',' or '}'"),
                }
            }
            State::ElementOrEnd { prop, first } => {
                let Some(b) = self.next_non_ws(bytes) else {
                    return park(self, State::ElementOrEnd { prop, first });
                };
                if b == b']' && first {
                    self.pos += 1;
                    return Some(self.after_array());
                }
                Some(State::InElement {
                    prop,
                    start: self.pos,
                    skip: ValueSkipper::new(self.pos),
                })
            }
            State::InElement { prop, start, mut skip } => match skip.advance(bytes) {
                Skip::NeedMore => park(self, State::InElement { prop, start, skip }),
                Skip::Syntax(at) => self.fail(at, "expected a value"),
                Skip::Done(end) => match serde_json::from_slice::<Value>(&bytes[start..end]) {
                    Ok(value) => {
                        out(Element {
                            span: start..end,
                            property: prop.clone(),
                            value,
                        });
                        self.pos = end;
                        Some(State::AfterElement { prop })
                    }
                    Err(e) => {
                        let at = start + super::position::offset_of(&bytes[start..end], e.line(), e.column());
                        self.fail(at, e.to_string())
                    }
                },
            },
            State::AfterElement { prop } => {
                let Some(b) = self.next_non_ws(bytes) else {
                    return park(self, State::AfterElement { prop });
                };
                self.pos += 1;
                match b {
                    b',' => Some(State::ElementOrEnd { prop, first: false }),
                    b']' => Some(self.after_array()),
                    _ => self.fail(self.pos - 1, "expected ',' or ']' after an element"),
                }
            }
        }
    }

    fn after_array(&self) -> State {
        if self.in_object {
            State::AfterMember
        } else {
            State::Closed
        }
    }

    fn next_non_ws(&mut self, bytes: &[u8]) -> Option<u8> {
        while self.pos < bytes.len() && is_ws(bytes[self.pos]) {
            self.pos += 1;
        }
        bytes.get(self.pos).copied()
    }
}

/// Salvage the complete elements of `text` in one pass.
pub fn salvage(text: &[u8]) -> (Vec<Element>, Option<Stop>) {
    let mut scanner = ArrayScanner::new();
    let mut out = Vec::new();
    scanner.feed(text, &mut out);
    // A number or literal as the last element only ends at a delimiter; at
    // the end of the text it was cut, so it is not complete: nothing to add.
    let stop = scanner.finish(text);
    (out, stop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn values(text: &str) -> Vec<Value> {
        salvage(text.as_bytes()).0.into_iter().map(|e| e.value).collect()
    }

    #[test]
    fn cut_array_keeps_complete_elements_only() {
        let t = r#"[{"a": 1}, {"a": "x]}\"{"}, {"a": 3, "b": {"c"#;
        assert_eq!(values(t), vec![json!({"a": 1}), json!({"a": "x]}\"{"})]);
        let (_, stop) = salvage(t.as_bytes());
        assert_eq!(stop.unwrap().reason, StopReason::Eof);
    }

    #[test]
    fn unclosed_fence() {
        let t = "```json\n[\n{\"a\": 1},\n{\"a\": 2},\n{\"a\"";
        assert_eq!(values(t), vec![json!({"a": 1}), json!({"a": 2})]);
    }

    #[test]
    fn syntax_error_stops() {
        let t = r#"[{"a": 1}, {"a": 2} {"a": 3}]"#;
        assert_eq!(values(t), vec![json!({"a": 1}), json!({"a": 2})]);
        let (_, stop) = salvage(t.as_bytes());
        let stop = stop.unwrap();
        assert_eq!((stop.reason, stop.offset), (StopReason::Syntax, 20));
    }

    #[test]
    fn object_of_arrays() {
        let t = r#"{"definitions": [{"e": 1}, {"e": 2}], "relationships": [{"s": 1}, {"s""#;
        let (els, _) = salvage(t.as_bytes());
        let got: Vec<(String, Value)> = els
            .into_iter()
            .map(|e| (e.property.unwrap().to_string(), e.value))
            .collect();
        assert_eq!(
            got,
            vec![
                ("definitions".into(), json!({"e": 1})),
                ("definitions".into(), json!({"e": 2})),
                ("relationships".into(), json!({"s": 1}))
            ]
        );
    }

    #[test]
    fn resumable_equals_one_shot() {
        let t = r#"```json
[{"a": "x\"y", "n": [1, 2, {"z": "]"}]}, {"b": 12345678901234567890123}, 7, "s", {"c"#;
        let (expect, _) = salvage(t.as_bytes());
        for step in 1..7 {
            let mut sc = ArrayScanner::new();
            let mut out = Vec::new();
            let mut end = 0;
            while end < t.len() {
                end = (end + step).min(t.len());
                sc.feed(&t.as_bytes()[..end], &mut out);
            }
            assert_eq!(out, expect, "step {step}");
        }
    }
}
