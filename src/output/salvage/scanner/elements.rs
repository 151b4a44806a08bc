//! The elements of the array in order: each parsed once whole, kept once
//! nothing after it can change the verdict, with a fast path for objects
//! and arrays that follow one another whole.

use serde_json::Value;

use super::recover::syntax_break;
use super::{ArrayScanner, Break, Pending, State};
use crate::output::position::offset_of;
use crate::output::salvage::resync::{self, Layout};
use crate::output::salvage::{Broken, Element};
use crate::output::scan::{Skip, ValueSkipper};

impl ArrayScanner {
    /// An element starts here, or (first thing in the array) the `]` ends it.
    pub(super) fn element_or_end(&mut self, first: bool, bytes: &[u8]) -> Result<State, State> {
        let Some(b) = self.next_non_ws(bytes) else {
            return Err(State::ElementOrEnd { first });
        };
        if b == b']' && first {
            self.pos += 1;
            return Ok(self.after_array());
        }
        self.array.layout = Some(layout_at(bytes, self.pos));
        Ok(State::InElement {
            start: self.pos,
            skip: None,
            after: None,
        })
    }

    /// Parse the element at `start`: at once when it is whole in the
    /// buffer, else by skipping to its end as bytes arrive, then parsing.
    /// Either way the outcome depends only on the bytes up to its end, so a
    /// streamed scan decides as a one-shot scan does.
    pub(super) fn in_element(
        &mut self,
        start: usize,
        skip: Option<ValueSkipper>,
        after: Option<Break>,
        bytes: &[u8],
        out: &mut impl FnMut(Element),
    ) -> Result<State, State> {
        let self_delimited = matches!(bytes[start], b'{' | b'[' | b'"');
        if skip.is_none()
            && self_delimited
            && let Some((value, end)) = parse_whole(bytes, start)
        {
            return Ok(self.parsed(start, end, value, after, bytes, out));
        }
        let mut skip = skip.unwrap_or_else(|| ValueSkipper::new(start));
        match skip.advance(bytes) {
            Skip::NeedMore => Err(State::InElement {
                start,
                skip: Some(skip),
                after,
            }),
            Skip::Syntax(at) => Ok(self.broke(start, at, at + 1, "expected a value".into(), after)),
            Skip::Done(end) => Ok(match serde_json::from_slice::<Value>(&bytes[start..end]) {
                Ok(value) => self.parsed(start, end, value, after, bytes, out),
                Err(e) => match syntax_break(&bytes[start..end]).filter(|_| self_delimited) {
                    // A prefix that holds the break already resumes after it
                    // (`finish`), whether or not the skip found this end.
                    Some((at, known, message)) => self.broke(start, start + at, start + known, message, after),
                    // Not its grammar (a string's UTF-8, a scalar): known at its end.
                    None => {
                        let at = start + offset_of(&bytes[start..end], e.line(), e.column());
                        let message = crate::output::position::strip_position(&e.to_string());
                        self.broke(start, at, end, message, after)
                    }
                },
            }),
        }
    }

    /// An element parsed: an object, array, number or literal in order is
    /// kept at once; a string (which may be a key whose `{` was dropped) or
    /// a resynchronisation candidate waits for the `,` or `]` after it.
    fn parsed(
        &mut self,
        start: usize,
        end: usize,
        value: Value,
        after: Option<Break>,
        bytes: &[u8],
        out: &mut impl FnMut(Element),
    ) -> State {
        self.pos = end;
        let after = match after {
            Some(b) if !resync::looks_like_sibling(&value, self.array.keys.as_deref()) => {
                return self.resume(start + 1, b, end);
            }
            other => other,
        };
        let element = Element {
            span: start..end,
            property: self.array.prop.clone(),
            value,
            known_at: end,
        };
        let pending = Pending { element, after };
        if pending.after.is_none() && is_container(&pending.element.value) {
            self.keep(pending, end, out);
            return self.in_order(bytes, out);
        }
        if pending.after.is_none() && !matches!(pending.element.value, Value::String(_)) {
            // A number or literal ended at the delimiter after it (a space
            // will do), which the prefix must hold.
            self.keep(pending, end + 1, out);
            return State::AfterElement { pending: None };
        }
        State::AfterElement {
            pending: Some(Box::new(pending)),
        }
    }

    /// The common case without a state per step: after an object or array
    /// kept in order, while a `,` and another whole one follow, keep them.
    /// Anything else hands back the state the machine would be in there.
    ///
    /// The layout is taken once, from the last element start, when the loop
    /// hands back: only a break reads it, and a break is handled outside.
    fn in_order(&mut self, bytes: &[u8], out: &mut impl FnMut(Element)) -> State {
        let mut last = None;
        let state = loop {
            if self.next_non_ws(bytes) != Some(b',') {
                break State::AfterElement { pending: None };
            }
            self.pos += 1;
            let start = match self.next_non_ws(bytes) {
                Some(b'{' | b'[') => self.pos,
                _ => break State::ElementOrEnd { first: false },
            };
            last = Some(start);
            let Some((value, end)) = parse_whole(bytes, start) else {
                // Cut or broken: the skipper takes it from here.
                break State::InElement {
                    start,
                    skip: Some(ValueSkipper::new(start)),
                    after: None,
                };
            };
            self.pos = end;
            // Kept as `keep` keeps an element with no break before it.
            if self.array.keys.is_none() {
                self.remember(&value);
            }
            out(Element {
                span: start..end,
                property: self.array.prop.clone(),
                value,
                known_at: end.max(self.floor),
            });
        };
        if let Some(start) = last {
            self.array.layout = Some(layout_at(bytes, start));
        }
        state
    }

    /// After an element: a `,` or `]` keeps what waited for it; anything
    /// else is a break.
    pub(super) fn after_element(
        &mut self,
        pending: Option<Box<Pending>>,
        bytes: &[u8],
        out: &mut impl FnMut(Element),
    ) -> Result<State, State> {
        let Some(b) = self.next_non_ws(bytes) else {
            return Err(State::AfterElement { pending });
        };
        let at = self.pos;
        if matches!(b, b',' | b']') {
            self.pos += 1;
            if let Some(p) = pending {
                self.keep(*p, self.pos, out);
            }
            return Ok(if b == b',' {
                State::ElementOrEnd { first: false }
            } else {
                self.after_array()
            });
        }
        let message = "expected ',' or ']' after an element".to_owned();
        Ok(match pending.map(|p| (p.element.span.start, p.after)) {
            // A candidate not followed by a delimiter: look further.
            Some((start, Some(b))) => self.resume(start + 1, b, at + 1),
            // A string or scalar not followed by one was not an element
            // (a key whose `{` was dropped, say).
            Some((start, None)) => self.broke(start, at, at + 1, message, None),
            // A stray byte after a kept element (a missing comma).
            None => self.broke(at, at, at + 1, message, None),
        })
    }

    /// Keep an element, known whole once `known_at` bytes arrived.
    fn keep(&mut self, p: Pending, known_at: usize, out: &mut impl FnMut(Element)) {
        let mut element = p.element;
        if let Some(b) = p.after {
            self.broken.push(Broken {
                span: b.start..element.span.start,
                at: b.at,
                message: b.message,
            });
        }
        element.known_at = known_at.max(self.floor);
        self.remember(&element.value);
        out(element);
    }

    /// Learn the array's element shape from the first element kept.
    fn remember(&mut self, value: &Value) {
        let opener = match value {
            Value::Object(_) => b'{',
            Value::Array(_) => b'[',
            Value::String(_) => b'"',
            _ => b'0',
        };
        self.array.opener.get_or_insert(opener);
        if let (None, Value::Object(m)) = (&self.array.keys, value) {
            self.array.keys = Some(m.keys().cloned().collect());
        }
    }
}

/// The layout an element starting at `at` shows.
fn layout_at(bytes: &[u8], at: usize) -> Layout {
    resync::line_indent(bytes, at).map_or(Layout::Inline, Layout::Lines)
}

/// Whether an element closes itself (an object or array), so it is whole
/// at its closing bracket.
fn is_container(v: &Value) -> bool {
    matches!(v, Value::Object(_) | Value::Array(_))
}

/// Parse one value starting at `start` if the buffer holds all of it:
/// the value and where it ends.
fn parse_whole(bytes: &[u8], start: usize) -> Option<(Value, usize)> {
    let mut values = serde_json::Deserializer::from_slice(&bytes[start..]).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => Some((value, start + values.byte_offset())),
        _ => None,
    }
}
