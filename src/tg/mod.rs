//! A running TrustGraph deployment: its prompts pulled into a local
//! directory, compared with what is live, pushed back only after the checks
//! TrustGraph's own loader applies, and undone from a local journal (the
//! config API keeps no history of its own).
//!
//! - `client.rs`: the config REST API (`POST {url}api/v1/config`), every
//!   call bounded in time and size, every error scrubbed of the token;
//! - `local.rs`: the pulled directory — the prompts in
//!   `tg-export-workspace-config`'s shape and `.trustgraph/pull.json`, what
//!   was pulled from where and at which version (the base of every diff);
//! - `journal.rs`: `.trustgraph/journal.jsonl`, the values each push
//!   replaced, appended before the push writes;
//! - `diff.rs` (pure): local against live against the pull, per key, the
//!   template word by word and the schema by path;
//! - `push.rs`: which keys a push writes, the refusals (a reload that
//!   would half-load the workspace, a system that would silently become
//!   "Be helpful.", a version that moved since the pull), the write, the
//!   read-back and the undo.

use std::time::Duration;

use crate::llm::http::key::ApiKey;

pub mod client;
pub mod diff;
pub mod journal;
pub mod local;
pub mod push;

pub use client::{ConfigClient, Snapshot};

pub use crate::prompt::tg_reload::PROMPT_TYPE;

/// Where a deployment is and who asks: TrustGraph's CLI conventions
/// (`TRUSTGRAPH_URL`, `TRUSTGRAPH_TOKEN`, `TRUSTGRAPH_WORKSPACE`).
#[derive(Debug, Clone)]
pub struct Deployment {
    /// The URL asked, the token in it where the gateway wants it there.
    url: reqwest::Url,
    /// The URL as written and shown ([`shown_url`]).
    shown: String,
    /// The workspace whose config is read and written.
    pub workspace: String,
    token: Option<ApiKey>,
    /// Longest a single call may take (connect, send, answer).
    pub timeout: Duration,
}

impl Deployment {
    /// A deployment at `url` (the gateway's base URL, as TrustGraph's CLI
    /// takes it); a URL that is not http(s), or carries a user name or
    /// password, is refused (a credential goes in the token, never in a URL
    /// that cutline keeps on disk). A URL as [`shown_url`] wrote it gets
    /// the token back in place of `<redacted>`.
    pub fn new(url: &str, workspace: &str, token: Option<ApiKey>, timeout: Duration) -> Result<Self, TgError> {
        let token = token.filter(|t| !t.is_empty());
        let bad = |reason: &str| TgError::Url {
            url: shown_url(url, token.as_ref()),
            reason: reason.to_owned(),
        };
        let given = match &token {
            Some(t) => url
                .trim()
                .replace(REDACTED, t.expose())
                .replace(REDACTED_IN_URL, t.expose()),
            None if url.contains(REDACTED) || url.contains(REDACTED_IN_URL) => {
                return Err(bad(
                    "the token was scrubbed out of it when it was stored (give it with --token or TRUSTGRAPH_TOKEN)",
                ));
            }
            None => url.trim().to_owned(),
        };
        let mut parsed = reqwest::Url::parse(&given).map_err(|e| bad(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("the scheme must be http or https"));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(bad(
                "a user name or password in the URL (give the token with --token or TRUSTGRAPH_TOKEN)",
            ));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(bad("a query or fragment (give the gateway's base URL)"));
        }
        if !parsed.path().ends_with('/') {
            let path = format!("{}/", parsed.path());
            parsed.set_path(&path);
        }
        if workspace.trim().is_empty() {
            return Err(bad("the workspace is empty"));
        }
        Ok(Self {
            shown: shown_url(parsed.as_str(), token.as_ref()),
            url: parsed,
            workspace: workspace.to_owned(),
            token,
            timeout,
        })
    }

    /// The base URL as written to `pull.json` and the journal and shown:
    /// [`shown_url`], so a token in its path is never part of it.
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// `{base}api/v1/{path}`.
    pub fn endpoint(&self, path: &str) -> Result<reqwest::Url, TgError> {
        self.url.join(&format!("api/v1/{path}")).map_err(|e| TgError::Url {
            url: self.shown.clone(),
            reason: e.to_string(),
        })
    }

    /// The token, for the request header only.
    pub(crate) fn token(&self) -> Option<&ApiKey> {
        self.token.as_ref()
    }

    /// `text` with the token in every form a server can echo it replaced.
    pub fn scrub(&self, text: &str) -> String {
        scrub(self.token.as_ref(), text)
    }
}

/// What the token is replaced by.
const REDACTED: &str = crate::llm::redact::REDACTED;
/// The same once a URL parser has escaped it in a path.
const REDACTED_IN_URL: &str = "%3Credacted%3E";

/// `text` with `token` in every form a server can echo it replaced
/// ([`ApiKey::scrub`]): what every error naming the endpoint says.
fn scrub(token: Option<&ApiKey>, text: &str) -> String {
    token.map_or_else(|| text.to_owned(), |t| t.scrub(text))
}

/// A deployment URL as cutline writes it (`pull.json`, the journal) and
/// shows it (errors, the workbench's status line): the token scrubbed
/// wherever it appears, as every error naming the endpoint has it, and a
/// user name, password, query or fragment, which cutline cannot tell from
/// a credential, replaced whole. [`Deployment::new`] puts the token back.
pub fn shown_url(url: &str, token: Option<&ApiKey>) -> String {
    let Ok(mut u) = reqwest::Url::parse(url.trim()) else {
        return scrub(token, url);
    };
    let userinfo = !u.username().is_empty() || u.password().is_some();
    let (query, fragment) = (u.query().is_some(), u.fragment().is_some());
    // Fails only for a URL with no host, which has no user info either.
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    // A URL shown before shows the same (the parser escapes the `<>`).
    let mut out = u.to_string().replace(REDACTED_IN_URL, REDACTED);
    if let Some(at) = out.find("://").filter(|_| userinfo) {
        out.insert_str(at + 3, &format!("{REDACTED}@"));
    }
    if query {
        out.push('?');
        out.push_str(REDACTED);
    }
    if fragment {
        out.push('#');
        out.push_str(REDACTED);
    }
    scrub(token, &out)
}

/// A deployment that could not be asked, or refused.
#[derive(Debug, thiserror::Error)]
pub enum TgError {
    /// The URL or workspace given is unusable.
    #[error("TrustGraph URL {url:?}: {reason}")]
    Url {
        /// As given, as [`shown_url`] shows it.
        url: String,
        /// Why it is refused.
        reason: String,
    },
    /// Nothing answered (refused connection, DNS, TLS).
    #[error("TrustGraph gateway {url} cannot be reached: {message}")]
    Unreachable {
        /// The endpoint asked.
        url: String,
        /// The transport's message and those under it, scrubbed of the
        /// token.
        message: String,
        /// reqwest's own error, kept when its text (and that of the errors
        /// under it) does not show the token; `message` already says it.
        #[source]
        source: Option<reqwest::Error>,
    },
    /// The gateway accepted the connection and did not answer in time.
    #[error("TrustGraph gateway {url} did not answer within {secs} s ({what}); nothing more was sent")]
    TimedOut {
        /// The endpoint asked.
        url: String,
        /// What was waited for.
        what: &'static str,
        /// The bound.
        secs: u64,
    },
    /// 401 / 403: the token is missing, wrong, or may not do this.
    #[error(
        "TrustGraph gateway {url} refused the credentials (HTTP {status}): {message} — give the token with --token \
         or TRUSTGRAPH_TOKEN"
    )]
    Unauthorized {
        /// The endpoint asked.
        url: String,
        /// 401 or 403.
        status: u16,
        /// The gateway's `error`, scrubbed.
        message: String,
    },
    /// Any other HTTP status.
    #[error("TrustGraph gateway {url} answered HTTP {status}: {message}")]
    Status {
        /// The endpoint asked.
        url: String,
        /// The status.
        status: u16,
        /// The gateway's `error`, scrubbed.
        message: String,
    },
    /// HTTP 200 carrying an `error` (the service behind the gateway failed).
    #[error("TrustGraph's {service} service failed: {message}")]
    Service {
        /// `config`, `prompt`.
        service: &'static str,
        /// `type: message`, scrubbed.
        message: String,
    },
    /// An answer that is not what the API answers (not JSON, a field missing).
    #[error("TrustGraph gateway {url}: unexpected answer: {what}")]
    Protocol {
        /// The endpoint asked.
        url: String,
        /// What was wrong with it.
        what: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalised_and_credentials_in_them_refused() {
        let d = Deployment::new("http://127.0.0.1:8888", "default", None, Duration::from_secs(1)).unwrap();
        assert_eq!(d.url(), "http://127.0.0.1:8888/");
        assert_eq!(
            d.endpoint("config").unwrap().as_str(),
            "http://127.0.0.1:8888/api/v1/config"
        );
        let d = Deployment::new("https://tg.example/base", "w", None, Duration::from_secs(1)).unwrap();
        assert_eq!(
            d.endpoint("flow/default/service/prompt").unwrap().as_str(),
            "https://tg.example/base/api/v1/flow/default/service/prompt"
        );
        for bad in ["ftp://x/", "http://user:pw@host/", "not a url", "http://h/?token=x"] {
            assert!(
                matches!(
                    Deployment::new(bad, "default", None, Duration::from_secs(1)),
                    Err(TgError::Url { .. })
                ),
                "{bad}"
            );
        }
        assert!(Deployment::new("http://h/", " ", None, Duration::from_secs(1)).is_err());
    }
}
