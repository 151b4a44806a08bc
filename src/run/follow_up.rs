//! The text a continuation goes on from: an answer's complete lines, and
//! the follow-up turn that quotes them to a model that cannot be prefilled.
//! Pure; the plan (`plan.rs`) and the continuation loop
//! (`continuation.rs`) both use it.

/// The answer's complete lines: up to and including its last newline.
pub fn complete_lines(text: &str) -> &str {
    text.rfind('\n').map_or("", |i| &text[..=i])
}

/// The follow-up prompt: the original, the last kept lines, the request.
pub fn follow_up(prompt: &str, kept: &str) -> String {
    let lines: Vec<&str> = kept.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = &lines[lines.len().saturating_sub(20)..];
    format!(
        "{prompt}\n\nYour answer so far was cut off. Its last complete lines were:\n{}\n\nContinue the answer \
         after the last of those lines, in the same format, one JSON object per line. Do not repeat any line \
         you already wrote.\n",
        last.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_lines_and_the_follow_up() {
        assert_eq!(complete_lines("{\"a\":1}\n{\"a\":2}\n{\"a\""), "{\"a\":1}\n{\"a\":2}\n");
        assert_eq!(complete_lines("{\"a\""), "");
        let f = follow_up("List terms.", "{\"a\":1}\n\n{\"a\":2}\n");
        assert!(f.starts_with("List terms.\n\nYour answer so far was cut off."), "{f}");
        assert!(f.contains("\n{\"a\":1}\n{\"a\":2}\n\nContinue"), "{f}");
    }
}
