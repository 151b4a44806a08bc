//! Token boundaries: where a max-token limit can cut a response.
//!
//! A recorded run carries the server's own token pieces; otherwise cutline
//! tokenises with tiktoken's encodings (vocabularies are embedded in the crate,
//! so nothing is fetched).

use serde::Serialize;

/// A tokenizer cutline can count with when a run has no recorded pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Tokenizer {
    /// GPT-4o and later.
    #[default]
    #[value(name = "o200k_base")]
    O200kBase,
    /// GPT-4 and GPT-3.5.
    #[value(name = "cl100k_base")]
    Cl100kBase,
}

/// Byte offsets of every token boundary in `text`, from 0 to `text.len()`:
/// entry `k` is where a limit of `k` tokens cuts the text.
pub fn boundaries(text: &str, tokenizer: Tokenizer) -> Vec<usize> {
    let bpe = match tokenizer {
        Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    };
    let tokens = bpe.encode_ordinary(text);
    let mut out = Vec::with_capacity(tokens.len() + 1);
    out.push(0);
    let mut at = 0;
    for t in tokens {
        at += bpe.decode_bytes(&[t]).map_or(0, |b| b.len());
        out.push(at.min(text.len()));
    }
    if at != text.len() {
        // Should not happen; never report a cut past the end.
        out.push(text.len());
    }
    out
}

/// [`boundaries`] as `u32` offsets, computed in place over the token ids
/// (a long response's cuts in a third of the memory: no `usize` copy is
/// made beside the ids); `None` for a text of 4 GiB or more.
pub fn boundaries_u32(text: &str, tokenizer: Tokenizer) -> Option<Vec<u32>> {
    let len = u32::try_from(text.len()).ok()?;
    let bpe = match tokenizer {
        Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    };
    let mut cuts = bpe.encode_ordinary(text);
    let mut at: u32 = 0;
    for t in &mut cuts {
        let n = bpe.decode_bytes(&[*t]).map_or(0, |b| b.len());
        at = at.saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
        *t = at.min(len);
    }
    cuts.insert(0, 0);
    if at != len {
        // Should not happen; never report a cut past the end.
        cuts.push(len);
    }
    Some(cuts)
}

/// Boundaries from recorded token pieces (their byte lengths, in order).
pub fn boundaries_from_pieces<S: AsRef<[u8]>>(pieces: &[S]) -> Vec<usize> {
    let mut out = Vec::with_capacity(pieces.len() + 1);
    out.push(0);
    let mut at = 0;
    for p in pieces {
        at += p.as_ref().len();
        out.push(at);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_cover_text() {
        let t = "{\"entity\": \"光合作用\", \"definition\": \"x\"}\n";
        let b = boundaries(t, Tokenizer::O200kBase);
        assert_eq!(b[0], 0);
        assert_eq!(*b.last().unwrap(), t.len());
        assert!(b.windows(2).all(|w| w[0] <= w[1]));
        assert!(b.len() > 5);
        let narrow = boundaries_u32(t, Tokenizer::O200kBase).unwrap();
        assert_eq!(narrow.iter().map(|&c| c as usize).collect::<Vec<_>>(), b);
    }
}
