//! Stop sequences applied by cutline, for models that refuse `stop`
//! (OpenAI's reasoning models): the text ends before the first stop
//! sequence, as a server would end it. Text that could be the start of a
//! stop sequence is held back until the next delta decides it. Pure.

/// What one delta gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Text to pass on (possibly empty while a prefix is held back).
    Pass(String),
    /// A stop sequence was found: the text before it, and nothing after.
    Hit(String),
}

/// The filter over one stream.
#[derive(Debug, Clone, Default)]
pub struct StopFilter {
    stops: Vec<String>,
    held: String,
}

impl StopFilter {
    /// A filter for `stops` (empty strings are ignored).
    pub fn new(stops: &[String]) -> Self {
        Self {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
        }
    }

    /// Feed the next delta.
    pub fn push(&mut self, text: &str) -> Step {
        self.held.push_str(text);
        if let Some(at) = self.stops.iter().filter_map(|s| self.held.find(s.as_str())).min() {
            let mut out = std::mem::take(&mut self.held);
            out.truncate(at);
            return Step::Hit(out);
        }
        let keep = self.held_prefix();
        let out = self.held[..self.held.len() - keep].to_owned();
        self.held.drain(..self.held.len() - keep);
        Step::Pass(out)
    }

    /// The text still held back, at the end of the stream.
    pub fn flush(&mut self) -> String {
        std::mem::take(&mut self.held)
    }

    /// Length of the longest tail of the held text that begins a stop
    /// sequence (on a char boundary).
    fn held_prefix(&self) -> usize {
        let h = &self.held;
        (1..=h.len())
            .rev()
            .filter(|&k| h.is_char_boundary(h.len() - k))
            .find(|&k| {
                let tail = &h[h.len() - k..];
                self.stops.iter().any(|s| s.len() > k && s.starts_with(tail))
            })
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stops: &[&str], deltas: &[&str]) -> (String, bool) {
        let stops: Vec<String> = stops.iter().map(|s| (*s).to_owned()).collect();
        let mut f = StopFilter::new(&stops);
        let mut out = String::new();
        for d in deltas {
            match f.push(d) {
                Step::Pass(t) => out.push_str(&t),
                Step::Hit(t) => {
                    out.push_str(&t);
                    return (out, true);
                }
            }
        }
        out.push_str(&f.flush());
        (out, false)
    }

    #[test]
    fn cuts_before_the_first_stop_even_across_deltas() {
        assert_eq!(run(&["\n\n"], &["a\n", "\nb"]), ("a".into(), true));
        assert_eq!(run(&["END"], &["x E", "N", "D y"]), ("x ".into(), true));
        assert_eq!(run(&["END", "x"], &["ab", "x END"]), ("ab".into(), true));
        assert_eq!(run(&["END"], &["E", "NO"]), ("ENO".into(), false));
        assert_eq!(
            run(&["END"], &["abE"]),
            ("abE".into(), false),
            "a held prefix is flushed at the end"
        );
        assert_eq!(run(&["é!"], &["aé", "é!"]), ("aé".into(), true));
    }

    #[test]
    fn passes_everything_without_a_match_and_holds_only_prefixes() {
        let mut f = StopFilter::new(&["\n###".to_owned()]);
        assert_eq!(f.push("line 1\n"), Step::Pass("line 1".into()));
        assert_eq!(f.push("#"), Step::Pass(String::new()));
        assert_eq!(f.push("x"), Step::Pass("\n#x".into()));
    }
}
