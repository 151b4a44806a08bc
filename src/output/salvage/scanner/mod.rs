//! The resumable array scanner behind [`super::salvage`].
//!
//! A state machine over a growing buffer: this file holds its states, its
//! public face and the step that dispatches; `outer` finds the top-level
//! array (bare, fenced, or the arrays of an object), `elements` parses and
//! keeps the elements in order, and `recover` resumes after a syntax error.

mod elements;
mod outer;
mod recover;

use std::sync::Arc;

use super::resync::Layout;
use super::{Broken, Element, Member, Stop, StopReason};
use crate::output::scan::{ValueSkipper, is_ws};

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

    /// Stop the scan on a syntax error at `offset`.
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
            State::ObjectMember { .. } | State::Key { .. } | State::Colon { .. } => self.member(state, bytes),
            State::MemberValue { .. } | State::SkipMember { .. } | State::AfterMember => {
                self.member_value(state, bytes)
            }
            State::ElementOrEnd { first } => self.element_or_end(first, bytes),
            State::InElement { start, skip, after } => self.in_element(start, skip, after, bytes, out),
            State::AfterElement { pending } => self.after_element(pending, bytes, out),
            State::Resync { from, after } => self.resync(from, after, bytes),
        }
    }

    /// Enter an array, of the object's member `prop` when there is one.
    fn open_array(&mut self, prop: Option<Arc<str>>) -> State {
        self.array = ArrayContext {
            prop,
            ..ArrayContext::default()
        };
        State::ElementOrEnd { first: true }
    }

    /// Where an array's `]` leads: the next member of an object, or the end.
    fn after_array(&self) -> State {
        if self.in_object {
            State::AfterMember
        } else {
            State::Closed
        }
    }

    /// The next byte that is not whitespace, `pos` moved onto it.
    fn next_non_ws(&mut self, bytes: &[u8]) -> Option<u8> {
        while self.pos < bytes.len() && is_ws(bytes[self.pos]) {
            self.pos += 1;
        }
        bytes.get(self.pos).copied()
    }
}
