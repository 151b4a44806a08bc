//! The API key holder, beside the HTTP client that sends it: the one
//! value that must never be printed, logged or written.

use crate::llm::LlmError;

/// An API key read from the environment. Its `Debug` names the variable and
/// never shows the value; it is not `Serialize`, so it cannot reach a session.
#[derive(Clone)]
pub struct ApiKey {
    env: String,
    value: String,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("env", &self.env)
            .field("value", &"<redacted>")
            .finish()
    }
}

impl ApiKey {
    /// A key held in the environment variable named `env`.
    pub fn new(env: &str, value: String) -> Self {
        Self {
            env: env.to_owned(),
            value,
        }
    }

    /// The name of the environment variable the key came from.
    pub fn env(&self) -> &str {
        &self.env
    }

    /// The key itself, for the request only: the providers' header, and
    /// `tg`'s header and the gateway URL it was scrubbed out of.
    pub(crate) fn expose(&self) -> &str {
        &self.value
    }

    /// Whether the key is empty (an unset token is sent as none at all).
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// `text` with the key in every form a server can echo it (verbatim,
    /// JSON-escaped, URL-encoded, base64, or cut short: see
    /// [`super::redact`]), and any masked echo of a key (`sk-ab****wxyz`, as
    /// OpenAI's 401 shows it), replaced by `<redacted>`.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = crate::llm::redact::scrub(text, std::slice::from_ref(&self.value));
        if out.contains("***") {
            out = out
                .split_inclusive(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                .map(|tok| {
                    let end = tok.len()
                        - tok
                            .chars()
                            .last()
                            .filter(|c| c.is_whitespace() || *c == '"' || *c == '\'')
                            .map_or(0, char::len_utf8);
                    let (word, sep) = tok.split_at(end);
                    if word.contains("***") && word.len() > 6 {
                        format!("<redacted>{sep}")
                    } else {
                        tok.to_owned()
                    }
                })
                .collect();
        }
        out
    }

    /// A streaming redactor for this key (model output that echoes it).
    pub fn redactor(&self) -> crate::llm::redact::Redactor {
        crate::llm::redact::Redactor::new(std::slice::from_ref(&self.value))
    }

    /// `e` with its message scrubbed, and without its cause when the
    /// cause's text shows the key (a cause cannot be scrubbed, only
    /// dropped).
    pub fn scrub_error(&self, mut e: LlmError) -> LlmError {
        e.message = self.scrub(&e.message);
        if e.source.as_deref().is_some_and(|c| self.shows_in(c)) {
            e.source = None;
        }
        e
    }

    /// Whether `e`'s text, or that of an error under it, shows the key.
    pub fn shows_in(&self, e: &(dyn std::error::Error + 'static)) -> bool {
        let text = crate::llm::chain_text(e);
        self.scrub(&text) != text
    }
}
