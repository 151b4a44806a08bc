//! The resumable array scanner behind [`super::salvage`].

use std::sync::Arc;

use serde_json::Value;

use super::resync::{self, Found, Layout};
use super::{Broken, Element, Member, Stop, StopReason};
use crate::output::position::offset_of;
use crate::output::scan::{Skip, ValueSkipper, is_ws};

/// A syntax error inside an array, waiting for a place to resume.
#[derive(Debug, Clone)]
struct Break {
    /// Where the broken span starts.
    start: usize,
    /// Where syntax broke.
    at: usize,
    message: String,
}

/// An element parsed but not yet kept: it waits for the `,` or `]` after it.
#[derive(Debug, Clone)]
struct Pending {
    element: Element,
    /// Set when the element is a resynchronisation candidate.
    after: Option<Break>,
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
        first: bool,
    },
    InElement {
        start: usize,
        skip: Option<ValueSkipper>,
        after: Option<Break>,
    },
    AfterElement {
        pending: Option<Box<Pending>>,
    },
    Resync {
        from: usize,
        after: Break,
    },
    Closed,
    Stopped,
}

/// What the scan knows of the array it is in.
#[derive(Debug, Clone, Default)]
struct ArrayContext {
    /// The property of the enclosing object, for an object of arrays.
    prop: Option<Arc<str>>,
    /// How its elements are laid out (from the last element start seen).
    layout: Option<Layout>,
    /// The first byte of the elements kept (`{` or `[`; a string or scalar
    /// array is not resynchronised).
    opener: Option<u8>,
    /// The keys of the first object kept.
    keys: Option<Vec<String>>,
}

/// Resumable scanner over a growing buffer.
#[derive(Debug, Clone)]
pub struct ArrayScanner {
    pos: usize,
    state: State,
    in_object: bool,
    /// Where the top-level array or object opened.
    opened_at: Option<usize>,
    array: ArrayContext,
    /// No element is kept before this prefix length: the latest break the
    /// scan resumed after was only known there.
    floor: usize,
    broken: Vec<Broken>,
    stop: Option<Stop>,
    /// The top-level object's members so far, in order.
    members: Vec<Member>,
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
            opened_at: None,
            array: ArrayContext::default(),
            floor: 0,
            broken: Vec::new(),
            stop: None,
            members: Vec::new(),
        }
    }

    /// The bytes of the top-level array or object, from its opening to its
    /// closing bracket, once it closed.
    pub fn closed_value(&self) -> Option<std::ops::Range<usize>> {
        self.opened_at.filter(|_| self.closed()).map(|at| at..self.pos)
    }

    /// The members of the top-level object, in order (none for an array).
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The stop, once the scanner has stopped on a syntax error.
    pub fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    /// True when the top-level array (or object) was closed.
    pub fn closed(&self) -> bool {
        matches!(self.state, State::Closed)
    }

    /// The bytes of the top-level array, from `[` to `]`, once it closed
    /// (`None` for an object of arrays).
    pub fn closed_array(&self) -> Option<std::ops::Range<usize>> {
        self.closed_value().filter(|_| !self.in_object)
    }

    /// The spans skipped so far to resynchronise after broken elements.
    pub fn broken(&self) -> &[Broken] {
        &self.broken
    }

    /// Hand over the skipped spans (at the end of the scan).
    pub fn take_broken(&mut self) -> Vec<Broken> {
        std::mem::take(&mut self.broken)
    }

    /// Scan further into `bytes` (the whole text so far; it only grows),
    /// pushing every element that completed onto `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Element>) {
        self.feed_with(bytes, &mut |el| out.push(el));
    }

    /// [`feed`](Self::feed), handing each completed element to `each`.
    pub fn feed_with(&mut self, bytes: &[u8], each: &mut impl FnMut(Element)) {
        loop {
            let state = std::mem::replace(&mut self.state, State::Stopped);
            match self.step(state, bytes, each) {
                Ok(next) => self.state = next,
                Err(parked) => {
                    self.state = parked;
                    return;
                }
            }
        }
    }

    /// The end of input. An object, array or string still open there whose bytes
    /// JSON's grammar already rejects (an unbalanced quote hid its end from
    /// the structural skip) was broken, not cut: the scan resumes after it,
    /// handing what it keeps to `out`. Then say why the array is incomplete,
    /// if it is.
    pub fn finish(&mut self, bytes: &[u8], out: &mut impl FnMut(Element)) -> Option<Stop> {
        while let Some(next) = self.broken_at_end(bytes) {
            self.state = next;
            self.feed_with(bytes, out);
        }
        if let Some(stop) = &self.stop {
            return Some(stop.clone());
        }
        let unresolved = match &self.state {
            State::Closed => return None,
            State::Seek | State::FenceLine => {
                return Some(Stop {
                    offset: bytes.len(),
                    reason: StopReason::NoArray,
                    message: None,
                });
            }
            State::Resync { after, .. } | State::InElement { after: Some(after), .. } => Some(after),
            State::AfterElement { pending: Some(p) } => p.after.as_ref(),
            _ => None,
        };
        Some(match unresolved {
            // No element start was found after the break: it ends the scan.
            Some(b) => Stop {
                offset: b.at,
                reason: StopReason::Syntax,
                message: Some(b.message.clone()),
            },
            None => Stop {
                offset: bytes.len(),
                reason: StopReason::Eof,
                message: None,
            },
        })
    }

    /// The state after an element open at the end of input, when
    /// `serde_json` finds a syntax error in it (not the end of input).
    fn broken_at_end(&mut self, bytes: &[u8]) -> Option<State> {
        let State::InElement {
            start,
            skip: Some(_),
            after,
        } = &self.state
        else {
            return None;
        };
        let (start, after) = (*start, after.clone());
        if !matches!(bytes[start], b'{' | b'[' | b'"') {
            return None;
        }
        let (at, known, message) = syntax_break(&bytes[start..])?;
        Some(self.broke(start, start + at, start + known, message, after))
    }

    fn fail(&mut self, offset: usize, message: impl Into<String>) -> State {
        self.stop = Some(Stop {
            offset,
            reason: StopReason::Syntax,
            message: Some(message.into()),
        });
        State::Stopped
    }

    /// One transition: `Ok(next)` to go on, `Err(state)` to park in `state`
    /// until more input arrives (or for good, once closed or stopped).
    fn step(&mut self, state: State, bytes: &[u8], out: &mut impl FnMut(Element)) -> Result<State, State> {
        match state {
            State::Closed | State::Stopped => Err(state),
            State::Seek => self.seek(bytes),
            State::FenceLine => self.fence_line(bytes),
            State::ObjectMember { .. }
            | State::Key { .. }
            | State::Colon { .. }
            | State::MemberValue { .. }
            | State::SkipMember { .. }
            | State::AfterMember => self.member(state, bytes),
            State::ElementOrEnd { first } => self.element_or_end(first, bytes),
            State::InElement { start, skip, after } => self.in_element(start, skip, after, bytes, out),
            State::AfterElement { pending } => self.after_element(pending, bytes, out),
            State::Resync { from, after } => self.resync(from, after, bytes),
        }
    }

    fn seek(&mut self, bytes: &[u8]) -> Result<State, State> {
        let rest = &bytes[self.pos..];
        let Some(off) = rest.iter().position(|&b| matches!(b, b'`' | b'[' | b'{')) else {
            self.pos = bytes.len();
            return Err(State::Seek);
        };
        let at = self.pos + off;
        if matches!(bytes[at], b'[' | b'{') {
            self.opened_at = Some(at);
        }
        match bytes[at] {
            b'[' => {
                self.pos = at + 1;
                Ok(self.open_array(None))
            }
            b'{' => {
                self.pos = at + 1;
                self.in_object = true;
                Ok(State::ObjectMember { first: true })
            }
            _ if bytes.len() < at + 3 => {
                self.pos = at;
                Err(State::Seek)
            }
            _ if &bytes[at..at + 3] == b"```" => {
                self.pos = at + 3;
                Ok(State::FenceLine)
            }
            _ => {
                self.pos = at + 1;
                Ok(State::Seek)
            }
        }
    }

    /// The fence's info string (`json`, `jsonl`, …) is skipped; the array
    /// may start on the fence line itself (```` ```json [ ````).
    fn fence_line(&mut self, bytes: &[u8]) -> Result<State, State> {
        match bytes[self.pos..]
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b"_-+.#".contains(&b)))
        {
            Some(off) => {
                self.pos += off;
                Ok(State::Seek)
            }
            None => {
                self.pos = bytes.len();
                Err(State::FenceLine)
            }
        }
    }

    /// The members of a top-level object: arrays are scanned, the rest skipped.
    fn member(&mut self, state: State, bytes: &[u8]) -> Result<State, State> {
        match state {
            State::ObjectMember { first } => {
                let Some(b) = self.next_non_ws(bytes) else {
                    return Err(State::ObjectMember { first });
                };
                Ok(match b {
                    b'}' if first => {
                        self.pos += 1;
                        State::Closed
                    }
                    b'"' => State::Key {
                        start: self.pos,
                        skip: ValueSkipper::new(self.pos),
                    },
                    _ => self.fail(self.pos, "expected a property name"),
                })
            }
            State::Key { start, mut skip } => match skip.advance(bytes) {
                Skip::NeedMore => Err(State::Key { start, skip }),
                Skip::Syntax(at) => Ok(self.fail(at, "bad property name")),
                Skip::Done(end) => Ok(match serde_json::from_slice::<String>(&bytes[start..end]) {
                    Ok(key) => {
                        self.pos = end;
                        State::Colon { key: key.into() }
                    }
                    Err(e) => self.fail(start, e.to_string()),
                }),
            },
            State::Colon { key } => match self.next_non_ws(bytes) {
                None => Err(State::Colon { key }),
                Some(b':') => {
                    self.pos += 1;
                    Ok(State::MemberValue { key })
                }
                Some(_) => Ok(self.fail(self.pos, "expected ':'")),
            },
            State::MemberValue { key } => match self.next_non_ws(bytes) {
                None => Err(State::MemberValue { key }),
                Some(b'[') => {
                    self.pos += 1;
                    self.members.push(Member {
                        key: key.clone(),
                        array: true,
                    });
                    Ok(self.open_array(Some(key)))
                }
                Some(_) => {
                    self.members.push(Member { key, array: false });
                    Ok(State::SkipMember {
                        skip: ValueSkipper::new(self.pos),
                    })
                }
            },
            State::SkipMember { mut skip } => match skip.advance(bytes) {
                Skip::NeedMore => Err(State::SkipMember { skip }),
                Skip::Syntax(at) => Ok(self.fail(at, "expected a value")),
                Skip::Done(end) => {
                    self.pos = end;
                    Ok(State::AfterMember)
                }
            },
            State::AfterMember => {
                let Some(b) = self.next_non_ws(bytes) else {
                    return Err(State::AfterMember);
                };
                self.pos += 1;
                Ok(match b {
                    b',' => State::ObjectMember { first: false },
                    b'}' => State::Closed,
                    _ => self.fail(self.pos - 1, "expected ',' or '}'"),
                })
            }
            other => Ok(other),
        }
    }

    fn open_array(&mut self, prop: Option<Arc<str>>) -> State {
        self.array = ArrayContext {
            prop,
            ..ArrayContext::default()
        };
        State::ElementOrEnd { first: true }
    }

    fn element_or_end(&mut self, first: bool, bytes: &[u8]) -> Result<State, State> {
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
    fn in_element(
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
                        let message = crate::output::json::strip_position(&e.to_string());
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

    fn after_element(
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

    /// A syntax error at `at` in the element (or stray byte) from `start`,
    /// known once `known_at` bytes arrived. A failed candidate keeps the
    /// break it was resuming after; otherwise this is a new break.
    fn broke(&mut self, start: usize, at: usize, known_at: usize, message: String, after: Option<Break>) -> State {
        let after = after.unwrap_or(Break { start, at, message });
        // A stray byte may itself start the next element (a missing comma).
        let from = if start == at { start } else { start + 1 };
        self.resume(from, after, known_at)
    }

    /// Search on from `from`; the rejection that led here was known once
    /// `known_at` bytes arrived, so nothing found later is kept earlier.
    fn resume(&mut self, from: usize, after: Break, known_at: usize) -> State {
        self.floor = self.floor.max(known_at);
        State::Resync { from, after }
    }

    /// Look for the next element start after a break (see [`resync`]).
    fn resync(&mut self, from: usize, after: Break, bytes: &[u8]) -> Result<State, State> {
        let opener = self.array.opener.unwrap_or(b'{');
        let layout = self.array.layout.unwrap_or(Layout::Inline);
        if !matches!(opener, b'{' | b'[') {
            // An array of strings or scalars has no element start to find.
            self.stop = Some(Stop {
                offset: after.at,
                reason: StopReason::Syntax,
                message: Some(after.message),
            });
            return Err(State::Stopped);
        }
        match resync::next_start(bytes, from, layout, opener) {
            Found::NeedMore(from) => Err(State::Resync { from, after }),
            Found::At(start) => {
                self.pos = start;
                Ok(State::InElement {
                    start,
                    skip: None,
                    after: Some(after),
                })
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

/// Where JSON's grammar breaks in the value at the start of `bytes`, when
/// it breaks before the input ends: the offset `serde_json` names, the
/// length of the shortest prefix that already fails, and the parser's word.
/// Every prefix that holds the break gets the same answer (strings' UTF-8 is
/// not judged here, so no later byte can move it).
fn syntax_break(bytes: &[u8]) -> Option<(usize, usize, String)> {
    let fails = |b: &[u8]| {
        serde_json::from_slice::<serde::de::IgnoredAny>(b)
            .err()
            .filter(|e| !e.is_eof())
    };
    let e = fails(bytes)?;
    let at = offset_of(bytes, e.line(), e.column());
    // Some errors are placed a byte before the one that showed them (a
    // control character in a string).
    let known = (at + 1..bytes.len())
        .find(|&n| fails(&bytes[..n]).is_some())
        .unwrap_or(bytes.len());
    Some((at, known, crate::output::json::strip_position(&e.to_string())))
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
