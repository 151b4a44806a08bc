//! When to retry, and how long to wait, as the providers' SDKs decide it
//! (anthropic 2.14 and openai 3.57 `_base_client.py`): a server's
//! `x-should-retry: true|false` is obeyed first; otherwise 408, 409, 429,
//! 529 and 5xx are retried and nothing else is. The wait is the server's
//! `retry-after-ms`, `retry-after` in seconds or as an HTTP date, or
//! Gemini's `RetryInfo` in the body, else exponential backoff with jitter.
//! A quota or billing error (OpenAI `insufficient_quota`, Anthropic
//! `billing_error` and spend limits) is never retried: it does not clear.
//! A 429/529 wait pauses every request of the process to that endpoint.

use std::time::Duration;

use reqwest::StatusCode;

use crate::llm::{ErrorKind, LlmError};

/// Retries for rate limits and server errors.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// First backoff; doubles each time, with jitter.
    pub base: Duration,
    /// The longest wait for one retry. A server that asks for a longer
    /// one (`retry-after`, Gemini's `RetryInfo`) gets an error naming its
    /// wait instead: cutline never sleeps longer than this unasked.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            base: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// A wait a server asked for: `retry-after-ms`, else `retry-after` in
/// seconds or as an HTTP date (from now; a past date is no wait). A number
/// too large for a `Duration` is `Duration::MAX`, which the cap then
/// refuses; an unreadable value is no request at all.
pub fn retry_after(headers: &reqwest::header::HeaderMap, now: std::time::SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|ms| *ms >= 0.0)
    {
        return Some(seconds(ms / 1000.0));
    }
    let v = header("retry-after")?;
    match v.parse::<f64>() {
        Ok(secs) if secs >= 0.0 => Some(seconds(secs)),
        Ok(_) => None,
        Err(_) => httpdate::parse_http_date(v)
            .ok()
            .map(|at| at.duration_since(now).unwrap_or(Duration::ZERO)),
    }
}

/// What the server said about retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Retry (after the server's wait, when it gave one).
    Retry,
    /// Do not: the status is final, or the server said so.
    Final,
}

/// Whether a failed response may be retried: the server's
/// `x-should-retry` first, else 408, 409, 429, 529 and 5xx.
pub fn verdict(status: StatusCode, headers: &reqwest::header::HeaderMap) -> Verdict {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return Verdict::Retry,
        Some("false") => return Verdict::Final,
        _ => {}
    }
    match status.as_u16() {
        408 | 409 | 429 | 529 => Verdict::Retry,
        c if c >= 500 => Verdict::Retry,
        _ => Verdict::Final,
    }
}

/// Whether an error body says the account is out of quota or credit, so
/// no retry can help: OpenAI's `insufficient_quota`, Anthropic's
/// `billing_error` type and its spend-limit `error_code`s.
pub fn quota_exhausted(body: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
        return false;
    };
    let word = |p: &str| v.pointer(p).and_then(serde_json::Value::as_str).unwrap_or("");
    let words = [
        word("/error/code"),
        word("/error/type"),
        word("/error/details/error_code"),
    ];
    words.iter().any(|w| {
        matches!(
            *w,
            "insufficient_quota"
                | "billing_error"
                | "billing_hard_limit_reached"
                | "enforced_spend_limit_reached"
                | "contract_spend_limit_reached"
                | "linked_organization_spend_limit_reached"
                | "linked_organization_billing_unavailable"
        )
    })
}

/// The error for a quota or billing failure, named as such.
pub fn quota_error(status: StatusCode, body: &str) -> LlmError {
    LlmError {
        kind: ErrorKind::Quota,
        status: Some(status.as_u16()),
        message: format!(
            "out of quota or credit (not retried: waiting does not clear it); check the account's plan and \
             billing: {body}"
        ),
        source: None,
    }
}

/// Seconds as a duration, saturating (NaN is 0, too large is `MAX`).
fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(if s > 0.0 { Duration::MAX } else { Duration::ZERO })
}

/// The wait in a Gemini error body: `error.details[]` entry of type
/// `type.googleapis.com/google.rpc.RetryInfo` with `retryDelay` like `"7s"`
/// or `"0.5s"` (Gemini sends no `retry-after` header).
pub fn retry_info(body: &str) -> Option<Duration> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let details = v.pointer("/error/details")?.as_array()?;
    details.iter().find_map(|d| {
        let is_retry = d
            .get("@type")
            .and_then(serde_json::Value::as_str)?
            .ends_with("google.rpc.RetryInfo");
        let delay = d.get("retryDelay")?.as_str()?.strip_suffix('s')?.parse::<f64>().ok()?;
        (is_retry && delay >= 0.0).then(|| seconds(delay))
    })
}

pub fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let exp = policy.base.saturating_mul(1 << attempt.min(10));
    let jitter = exp.mul_f64(fastrand::f64() * 0.5);
    (exp + jitter).min(policy.max_wait)
}

/// When each endpoint (scheme, host, port) may be sent to again after a
/// 429/529 with `retry-after`. Shared by every request of the process, so
/// one rate-limited request pauses the others to that endpoint too (an eval
/// with hundreds in flight backs off as a whole instead of hammering on).
static RATE_GATES: std::sync::Mutex<Vec<(String, tokio::time::Instant)>> = std::sync::Mutex::new(Vec::new());

pub fn endpoint_of(url: &reqwest::Url) -> String {
    format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str().unwrap_or(""),
        url.port_or_known_default().unwrap_or(0)
    )
}

/// Until when `endpoint` is paused, if it is.
pub fn gate_until(endpoint: &str) -> Option<tokio::time::Instant> {
    let now = tokio::time::Instant::now();
    let mut g = RATE_GATES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    g.retain(|(_, t)| *t > now);
    g.iter().find(|(e, _)| e == endpoint).map(|(_, t)| *t)
}

/// Pause `endpoint` until `until` (never shortening a longer pause).
pub fn close_gate(endpoint: &str, until: tokio::time::Instant) {
    let mut g = RATE_GATES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match g.iter_mut().find(|(e, _)| e == endpoint) {
        Some((_, t)) => *t = (*t).max(until),
        None => g.push((endpoint.to_owned(), until)),
    }
}

/// The error for a server that asked to wait longer than the cap.
pub fn wait_too_long(status: StatusCode, asked: Duration, cap: Duration, body: Option<&str>) -> LlmError {
    let asked = if asked == Duration::MAX {
        "longer than cutline can count".to_owned()
    } else {
        format!("{:.1} s", asked.as_secs_f64())
    };
    LlmError {
        kind: ErrorKind::RateLimited,
        status: Some(status.as_u16()),
        message: format!(
            "rate limited; the server asked to wait {asked}, over the {:.0} s cap (`retry_max_wait_secs` in \
             cutline.toml), so cutline stopped instead of waiting{}",
            cap.as_secs_f64(),
            body.map(|b| format!(": {b}")).unwrap_or_default()
        ),
        source: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_in_every_form() {
        let now = httpdate::parse_http_date("Wed, 25 Nov 2026 10:00:00 GMT").unwrap();
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "250")]), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "7")]), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "Wed, 25 Nov 2026 10:00:42 GMT")]), now),
            Some(Duration::from_secs(42))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "Wed, 25 Nov 2026 09:00:00 GMT")]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[]), now), None);
    }

    #[test]
    fn the_server_decides_first_then_the_status() {
        let code = |c| StatusCode::from_u16(c).unwrap();
        for c in [408, 409, 429, 500, 503, 529] {
            assert_eq!(verdict(code(c), &headers(&[])), Verdict::Retry, "{c}");
        }
        for c in [400, 401, 403, 404, 422] {
            assert_eq!(verdict(code(c), &headers(&[])), Verdict::Final, "{c}");
        }
        assert_eq!(
            verdict(code(400), &headers(&[("x-should-retry", "true")])),
            Verdict::Retry
        );
        assert_eq!(
            verdict(code(503), &headers(&[("x-should-retry", "false")])),
            Verdict::Final
        );
    }

    #[test]
    fn quota_errors_are_named() {
        assert!(quota_exhausted(
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#
        ));
        assert!(quota_exhausted(
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"spend limit","details":{"error_code":"enforced_spend_limit_reached"}}}"#
        ));
        assert!(!quota_exhausted(
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down","details":{"error_code":"ramp_limit_exceeded"}}}"#
        ));
        assert!(!quota_exhausted("not json"));
    }
}
