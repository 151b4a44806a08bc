//! What the Run tab holds: the run(s) on show and what `r` runs next.

use super::RunView;

/// The run(s) on show.
#[derive(Debug)]
pub enum Shown {
    /// One run; both panes read its text.
    Single(Box<RunView>),
    /// A JSON-array prompt and its JSONL twin on the same input and limit.
    Twins {
        /// The JSON-array run.
        json: Box<RunView>,
        /// The JSONL run.
        jsonl: Box<RunView>,
    },
}

impl Shown {
    /// The run the JSON pane reads.
    pub fn json_side(&self) -> &RunView {
        match self {
            Self::Single(r) => r,
            Self::Twins { json, .. } => json,
        }
    }

    /// The run the JSONL pane reads.
    pub fn jsonl_side(&self) -> &RunView {
        match self {
            Self::Single(r) => r,
            Self::Twins { jsonl, .. } => jsonl,
        }
    }

    /// True for a pair.
    pub fn twins(&self) -> bool {
        matches!(self, Self::Twins { .. })
    }

    /// Every run (one or two).
    pub fn runs(&self) -> Vec<&RunView> {
        match self {
            Self::Single(r) => vec![r],
            Self::Twins { json, jsonl } => vec![json, jsonl],
        }
    }

    /// The run with id `id`.
    pub fn find_mut(&mut self, id: u64) -> Option<&mut RunView> {
        match self {
            Self::Single(r) => (r.id == id).then_some(&mut **r),
            Self::Twins { json, jsonl } => {
                if json.id == id {
                    Some(&mut **json)
                } else if jsonl.id == id {
                    Some(&mut **jsonl)
                } else {
                    None
                }
            }
        }
    }

    /// True while any run may still change.
    pub fn live(&self) -> bool {
        self.runs().iter().any(|r| r.live())
    }
}

/// What `r` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Nothing chosen yet.
    None,
    /// The prompt in the editor.
    Prompt,
    /// A recorded run: (session index, run index).
    Recording(usize, usize),
}

/// The pair of `shown` and `pinned` (see `State::pair_on_show`), from the
/// fields, so a reducer can hold it while it changes other fields.
pub fn pair_of<'a>(shown: Option<&'a Shown>, pinned: Option<&'a RunView>) -> Option<(&'a RunView, &'a RunView)> {
    match shown {
        Some(Shown::Twins { json, jsonl }) => Some((json, jsonl)),
        Some(Shown::Single(r)) => pinned.filter(|p| p.id != r.id).map(|p| (p, &**r)),
        None => None,
    }
}
