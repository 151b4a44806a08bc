//! Runaway loops: a model that repeats the same item, line or run of
//! tokens until the limit cuts it. Greedy decoding repeats exactly, so a
//! loop is a periodic tail of the text: the smallest period `p` such that
//! the last `n` bytes satisfy `text[i] == text[i - p]`, repeated at least
//! [`MIN_REPEATS`] times and spanning at least [`MIN_BYTES`]. The
//! Z-function of the reversed text gives every period's reach in one
//! linear pass. Pure.

use serde::Serialize;

/// Fewest whole repeats that make a loop.
pub const MIN_REPEATS: usize = 3;

/// Fewest bytes a loop spans (shorter repeats, like `\n\n\n`, are layout).
pub const MIN_BYTES: usize = 48;

/// Longest period considered, in bytes (a repeated item longer than this
/// is not a loop a limit would chase).
pub const MAX_PERIOD: usize = 4096;

/// Longest tail examined, in bytes: bounds the work on a huge text.
pub const MAX_TAIL: usize = 1 << 20;

/// A loop at the end of a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loop {
    /// Byte where the first repeat begins.
    pub start_byte: usize,
    /// The period in bytes.
    pub period_bytes: usize,
    /// Whole repeats (the last, cut one not counted).
    pub repeats: usize,
    /// Bytes from the start of the second repeat to the end: what the loop
    /// added after saying it once.
    pub wasted_bytes: usize,
    /// Token where the loop begins, when token boundaries are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_token: Option<usize>,
    /// Tokens in one repeat, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_tokens: Option<usize>,
    /// Tokens after the first repeat, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wasted_tokens: Option<usize>,
    /// The repeated text (its first 200 characters).
    pub unit: String,
}

/// The loop at the end of `text`, if any; `boundaries` (byte offsets of
/// token ends, from 0, as `output::tokens` gives them) add token figures.
pub fn detect(text: &str, boundaries: Option<&[usize]>) -> Option<Loop> {
    let bytes = text.as_bytes();
    let tail_start = bytes.len().saturating_sub(MAX_TAIL);
    let tail = &bytes[tail_start..];
    let n = tail.len();
    if n < MIN_BYTES {
        return None;
    }
    let z = reversed_z(tail, MAX_PERIOD);
    // (covered, period): the longest periodic tail, smallest period on ties.
    let mut best: Option<(usize, usize)> = None;
    for (p, &zp) in z.iter().enumerate().skip(1) {
        let covered = zp + p;
        if covered / p < MIN_REPEATS || covered < MIN_BYTES {
            continue;
        }
        if best.is_none_or(|(c, _)| covered > c) {
            best = Some((covered, p));
        }
    }
    let (covered, period) = best?;
    let mut start = tail_start + n - covered;
    // A repeat of lines begins at a line start: the periodic tail can reach
    // back into the end of the line before the loop ("},\n").
    let at_line_start = |i: usize| i == 0 || bytes[i - 1] == b'\n';
    if !at_line_start(start)
        && let Some(nl) = bytes[start..start + period].iter().position(|&b| b == b'\n')
    {
        start += nl + 1;
    }
    // Begin on a character boundary (a period can split a character).
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let end = text.len();
    let repeats = (end - start) / period;
    if repeats < MIN_REPEATS {
        return None;
    }
    let tokens_at = |byte: usize| boundaries.map(|b| b.partition_point(|&x| x <= byte).saturating_sub(1));
    let start_token = tokens_at(start);
    let second = (start + period).min(end);
    let period_tokens = tokens_at(second).zip(start_token).map(|(a, b)| a - b);
    let total_tokens = boundaries.map(|b| b.len().saturating_sub(1));
    let wasted_tokens = total_tokens.zip(tokens_at(second)).map(|(t, s)| t - s);
    let mut unit_end = second;
    while !text.is_char_boundary(unit_end) {
        unit_end -= 1;
    }
    Some(Loop {
        start_byte: start,
        period_bytes: period,
        repeats,
        wasted_bytes: end - second,
        start_token,
        period_tokens,
        wasted_tokens,
        unit: text[start..unit_end].chars().take(200).collect(),
    })
}

/// `z[i]` for `i` in `0..=k` (`k` capped at `tail.len() - 1`) of the
/// reversed `tail`: how many bytes, counted back from the end, satisfy
/// `tail[j] == tail[j - i]`. The Z-algorithm's box makes the work at most
/// the longest reach plus `k` comparisons; the tail is read backwards in
/// place.
fn reversed_z(tail: &[u8], k: usize) -> Vec<usize> {
    let len = tail.len();
    if len == 0 {
        return Vec::new();
    }
    let at = |j: usize| tail[len - 1 - j];
    let k = k.min(len - 1);
    let mut z = vec![0; k + 1];
    z[0] = len;
    let (mut left, mut right) = (0, 0);
    for i in 1..=k {
        let mut zi = if i < right { (right - i).min(z[i - left]) } else { 0 };
        while i + zi < len && at(zi) == at(i + zi) {
            zi += 1;
        }
        z[i] = zi;
        if i + zi > right {
            left = i;
            right = i + zi;
        }
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_element_cut_by_the_limit_is_a_loop() {
        let head = "[\n  {\"entity\": \"photosynthesis\", \"definition\": \"the process\"},\n";
        let unit = "  {\"entity\": \"sugar\", \"definition\": \"made by plants\"},\n";
        let text = format!("{head}{}  {{\"entity\": \"su", unit.repeat(5));
        let l = detect(&text, None).expect("a loop");
        assert_eq!(l.start_byte, head.len());
        assert_eq!(l.period_bytes, unit.len());
        assert_eq!(l.repeats, 5);
        assert_eq!(l.unit, unit);
        assert_eq!(l.wasted_bytes, text.len() - head.len() - unit.len());
    }

    #[test]
    fn distinct_lines_are_not_a_loop() {
        use std::fmt::Write as _;
        let mut text = String::new();
        for i in 0..30 {
            let _ = writeln!(
                text,
                "{{\"entity\": \"term {i}\", \"definition\": \"meaning number {i}\"}}"
            );
        }
        assert_eq!(detect(&text, None), None);
        assert_eq!(detect("short\nshort\nshort\n", None), None, "under MIN_BYTES");
    }

    #[test]
    fn token_figures_from_boundaries() {
        let unit = "abcdefghijklmnop";
        let text = format!("start:{}", unit.repeat(6));
        // One token per 4 bytes after "start:" (6 bytes, one token).
        let mut b = vec![0, 6];
        let mut at = 6;
        while at < text.len() {
            at += 4;
            b.push(at.min(text.len()));
        }
        let l = detect(&text, Some(&b)).expect("loop");
        assert_eq!((l.start_byte, l.period_bytes, l.repeats), (6, 16, 6));
        assert_eq!(l.start_token, Some(1));
        assert_eq!(l.period_tokens, Some(4));
        assert_eq!(l.wasted_tokens, Some(20));
        assert_eq!(l.wasted_bytes, 80);
        assert_eq!(l.unit, unit);
    }

    /// The whole Z-function, by definition (quadratic; for checking).
    fn z_naive(text: &[u8]) -> Vec<usize> {
        (0..text.len())
            .map(|i| text[i..].iter().zip(text).take_while(|(a, b)| a == b).count())
            .collect()
    }

    #[test]
    fn the_bounded_reversed_z_is_the_z_function_of_the_reversed_tail() {
        let mut rng = fastrand::Rng::with_seed(37);
        for _ in 0..400 {
            let len = rng.usize(0..300);
            let alphabet = rng.u8(1..4);
            let text: Vec<u8> = (0..len).map(|_| b'a' + rng.u8(0..alphabet)).collect();
            let reversed: Vec<u8> = text.iter().rev().copied().collect();
            let full = z_naive(&reversed);
            let k = rng.usize(0..320);
            let want: Vec<usize> = full.iter().copied().take(k.min(len.saturating_sub(1)) + 1).collect();
            assert_eq!(reversed_z(&text, k), if len == 0 { Vec::new() } else { want });
        }
    }

    #[test]
    fn a_pathological_text_is_linear_and_sane() {
        let text = "a".repeat(300_000);
        let l = detect(&text, None).expect("loop");
        assert_eq!(l.period_bytes, 1);
        assert_eq!(l.start_byte, 0);
        let cjk = "味噌は調味料である。".repeat(20);
        let l = detect(&cjk, None).expect("loop");
        assert!(cjk.is_char_boundary(l.start_byte));
    }
}
