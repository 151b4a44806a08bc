//! A malformed TOML file's first error, found without holding the whole
//! document: `toml` lexes every token and builds the recovered document
//! before it says anything (a 5 MB file of junk lines cost ~300 MB), so a
//! large file is first read in pieces that end on top-level statement
//! boundaries (found with `toml_parser`'s streaming lexer). Only when a
//! piece fails is the file parsed up to that piece's end, which gives
//! exactly the error a whole-file parse gives, since nothing after a
//! statement boundary can change what comes before it.

use toml::Spanned;
use toml::de::DeTable;
use toml_parser::lexer::TokenKind;

/// Files up to this size are parsed whole at once.
const WHOLE: usize = 1 << 20;
/// The size of the pieces a larger file is checked in.
const PIECE: usize = 256 << 10;

/// Parse `text` as `DeTable::parse` does, in memory bounded by the piece
/// size when it is malformed early.
pub fn parse(text: &str) -> Result<Spanned<DeTable<'_>>, toml::de::Error> {
    if text.len() > WHOLE {
        let mut start = 0;
        for end in boundaries(text) {
            if DeTable::parse(&text[start..end]).is_err() {
                // The same first error, with offsets into the whole text.
                return DeTable::parse(&text[..end]);
            }
            start = end;
        }
    }
    DeTable::parse(text)
}

/// Ends of pieces of at least [`PIECE`] bytes, each after a newline outside
/// any bracket (a top-level statement's end), the last at the text's end;
/// lazily, so an early error is found without lexing the rest.
fn boundaries(text: &str) -> impl Iterator<Item = usize> + '_ {
    let mut lexer = toml_parser::Source::new(text).lex();
    let (mut depth, mut from, mut done) = (0usize, 0usize, false);
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        for tok in lexer.by_ref() {
            match tok.kind() {
                TokenKind::LeftSquareBracket | TokenKind::LeftCurlyBracket => depth += 1,
                TokenKind::RightSquareBracket | TokenKind::RightCurlyBracket => depth = depth.saturating_sub(1),
                TokenKind::Newline if depth == 0 && tok.span().end() - from >= PIECE => {
                    from = tok.span().end();
                    return Some(from);
                }
                _ => {}
            }
        }
        done = true;
        (from < text.len()).then_some(text.len())
    })
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn a_large_file_fails_with_the_whole_file_error() {
        let mut junk = String::from("id = \"a\"\n");
        junk.push_str(&"x\n".repeat(800_000));
        let e = parse(&junk).unwrap_err();
        let whole = DeTable::parse(&junk).unwrap_err();
        assert_eq!((e.message(), e.span()), (whole.message(), whole.span()));
        // An error far into a large file, after a multi-line string and array.
        let mut late = String::from("a = '''\n[not a table]\n'''\nb = [\n1,\n2]\n");
        for i in 0..60_000 {
            let _ = writeln!(late, "k{i} = \"some value\"");
        }
        late.push_str("bad bad\n");
        let e = parse(&late).unwrap_err();
        let whole = DeTable::parse(&late).unwrap_err();
        assert_eq!((e.message(), e.span()), (whole.message(), whole.span()));
        assert!(parse(&late[..late.len() - 8]).is_ok());
    }

    #[test]
    fn pieces_end_on_statement_boundaries() {
        let text = format!("a = [\n{}]\nb = 1\n", "1,\n".repeat(200_000));
        let ends: Vec<usize> = boundaries(&text).collect();
        let after_array = text.find("]\nb").unwrap() + 2;
        assert_eq!(ends, vec![after_array, text.len()], "never inside the array");
    }
}
