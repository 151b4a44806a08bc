//! Durations as people write them on the command line: `90s`, `20m`,
//! `24h`, `1h30m`, `500ms`, or `0`. Pure.

use std::time::Duration;

/// The longest duration taken: a year (a batch's window is a day; a
/// longer wait or poll is a typo, and past it arithmetic on instants
/// overflows).
pub const MAX: Duration = Duration::from_secs(366 * 86_400);

/// Parse a duration of at most [`MAX`]; the error names what is wrong.
pub fn parse(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let bad = || format!("{s:?} is not a duration like 90s, 20m, 24h or 1h30m");
    let mut total = Duration::ZERO;
    let mut rest = s;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let part = match &rest[..unit] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            "d" => Duration::from_secs(n.saturating_mul(86_400)),
            _ => return Err(bad()),
        };
        total = total.saturating_add(part);
        rest = &rest[unit..];
    }
    if total > MAX {
        return Err(format!(
            "{s:?} is longer than a year, the longest cutline waits or polls"
        ));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("20m"), Ok(Duration::from_secs(1200)));
        assert_eq!(parse("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        for bad in ["", "10", "m", "5x", "1.5h", "-3s"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
