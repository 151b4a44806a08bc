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
    url: reqwest::Url,
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
    /// that cutline keeps on disk).
    pub fn new(url: &str, workspace: &str, token: Option<ApiKey>, timeout: Duration) -> Result<Self, TgError> {
        let bad = |reason: &str| TgError::Url {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let mut parsed = reqwest::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
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
            return Err(TgError::Url {
                url: url.to_owned(),
                reason: "the workspace is empty".to_owned(),
            });
        }
        Ok(Self {
            url: parsed,
            workspace: workspace.to_owned(),
            token: token.filter(|t| !t.is_empty()),
            timeout,
        })
    }

    /// The base URL as written to `pull.json` and shown (no credential is
    /// ever part of it).
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// `{base}api/v1/{path}`.
    pub fn endpoint(&self, path: &str) -> Result<reqwest::Url, TgError> {
        self.url.join(&format!("api/v1/{path}")).map_err(|e| TgError::Url {
            url: self.url.to_string(),
            reason: e.to_string(),
        })
    }

    /// The token, for the request header only.
    pub(crate) fn token(&self) -> Option<&ApiKey> {
        self.token.as_ref()
    }

    /// `text` with the token in every form a server can echo it replaced.
    pub fn scrub(&self, text: &str) -> String {
        match &self.token {
            Some(t) => t.scrub(text),
            None => text.to_owned(),
        }
    }
}

/// A deployment that could not be asked, or refused.
#[derive(Debug, thiserror::Error)]
pub enum TgError {
    /// The URL or workspace given is unusable.
    #[error("TrustGraph URL {url:?}: {reason}")]
    Url {
        /// As given.
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
