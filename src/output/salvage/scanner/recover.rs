//! After a syntax error: the broken span is remembered, and the scan
//! resumes at the next element start of the same array ([`resync`]), never
//! keeping anything before the break was known.

use super::{ArrayScanner, Break, State};
use crate::output::position::offset_of;
use crate::output::salvage::resync::{self, Found, Layout};
use crate::output::salvage::{Stop, StopReason};

impl ArrayScanner {
    /// The state after an element open at the end of input, when
    /// `serde_json` finds a syntax error in it (not the end of input).
    pub(super) fn broken_at_end(&mut self, bytes: &[u8]) -> Option<State> {
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

    /// A syntax error at `at` in the element (or stray byte) from `start`,
    /// known once `known_at` bytes arrived. A failed candidate keeps the
    /// break it was resuming after; otherwise this is a new break.
    pub(super) fn broke(
        &mut self,
        start: usize,
        at: usize,
        known_at: usize,
        message: String,
        after: Option<Break>,
    ) -> State {
        let after = after.unwrap_or(Break { start, at, message });
        // A stray byte may itself start the next element (a missing comma).
        let from = if start == at { start } else { start + 1 };
        self.resume(from, after, known_at)
    }

    /// Search on from `from`; the rejection that led here was known once
    /// `known_at` bytes arrived, so nothing found later is kept earlier.
    pub(super) fn resume(&mut self, from: usize, after: Break, known_at: usize) -> State {
        self.floor = self.floor.max(known_at);
        State::Resync { from, after }
    }

    /// Look for the next element start after a break (see [`resync`]).
    pub(super) fn resync(&mut self, from: usize, after: Break, bytes: &[u8]) -> Result<State, State> {
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
}

/// Where JSON's grammar breaks in the value at the start of `bytes`, when
/// it breaks before the input ends: the offset `serde_json` names, the
/// length of the shortest prefix that already fails, and the parser's word.
/// Every prefix that holds the break gets the same answer (strings' UTF-8 is
/// not judged here, so no later byte can move it).
pub(super) fn syntax_break(bytes: &[u8]) -> Option<(usize, usize, String)> {
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
    Some((at, known, crate::output::position::strip_position(&e.to_string())))
}
