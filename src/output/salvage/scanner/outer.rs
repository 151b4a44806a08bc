//! Finding the top-level value: a bare array, one inside a code fence
//! (closed or not), or an object whose array members are scanned and whose
//! other members are skipped.

use super::{ArrayScanner, State};
use crate::output::salvage::Member;
use crate::output::scan::{Skip, ValueSkipper};

impl ArrayScanner {
    /// Look for the top-level `[` or `{`, or a code fence opening.
    pub(super) fn seek(&mut self, bytes: &[u8]) -> Result<State, State> {
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
    pub(super) fn fence_line(&mut self, bytes: &[u8]) -> Result<State, State> {
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

    /// The members of a top-level object up to a value: the key and its `:`.
    pub(super) fn member(&mut self, state: State, bytes: &[u8]) -> Result<State, State> {
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
            other => Ok(other),
        }
    }

    /// A member's value: an array is scanned, anything else skipped; then
    /// the `,` or `}` after it.
    pub(super) fn member_value(&mut self, state: State, bytes: &[u8]) -> Result<State, State> {
        match state {
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
}
