//! What keeps client metadata documents from being a free lunch: anyone may
//! name any https URL as a `client_id`, and each new one makes the auth
//! service fetch a document. So fetches are limited per host of the documents
//! and per address asking, on each tenant (shared through Redis when
//! `REDIS_URL` is set, like the sign-in throttle), and a refused document is
//! remembered for [`REFUSAL_MEMORY`] instead of being fetched again on every
//! request.
//!
//! | bucket (per tenant) | fetches at once | then |
//! |---|---|---|
//! | one host's documents, asked from anywhere | 30 | one every 10 s |
//! | one address asking, for any host | 10 | one a minute |

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tolk_storage::rate_limit::{Decision, RateLimit, RateLimiter};

/// How long a refused document is answered from memory.
pub const REFUSAL_MEMORY: Duration = Duration::from_secs(60);
/// Refusals remembered at most (the oldest are forgotten first).
const MAX_REFUSALS: usize = 10_000;

fn limit(burst: u32, every: Duration) -> RateLimit {
    RateLimit {
        per_second: 1.0 / every.as_secs_f64(),
        burst,
    }
}

/// The fetch limits and refusals of one auth service.
#[derive(Debug)]
pub struct Fetches {
    host: RateLimiter,
    address: RateLimiter,
    refusals: Mutex<HashMap<String, (String, Instant)>>,
}

/// Why a document is not fetched now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotNow {
    /// Refused a moment ago, for this reason.
    Refused(String),
    /// Too many fetches from this address or of this host; the wait.
    Limited(Duration),
}

impl Fetches {
    /// Limits shared through Redis at `redis_url` (else in this process).
    pub fn new(redis_url: Option<&str>) -> Self {
        let make = |config| RateLimiter::shared_or_local(config, redis_url, "metadata fetches");
        Self {
            host: make(limit(30, Duration::from_secs(10))),
            address: make(limit(10, Duration::from_secs(60))),
            refusals: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the document `url` (on `host`) may be fetched now for
    /// `tenant` (its authority's id) and a request from `address`; a fetch
    /// allowed is counted.
    pub async fn admit(
        &self,
        tenant: &str,
        url: &str,
        host: &str,
        address: Option<IpAddr>,
    ) -> Result<(), NotNow> {
        if let Some(why) = self.refused(&format!("{tenant}:{url}")) {
            return Err(NotNow::Refused(why));
        }
        if let Some(ip) = address
            && let Decision::Deny(wait) = self
                .address
                .check(&format!("auth:metadata:address:{tenant}:{ip}"))
                .await
        {
            return Err(NotNow::Limited(wait));
        }
        let host = host.to_ascii_lowercase();
        match self
            .host
            .check(&format!("auth:metadata:host:{tenant}:{host}"))
            .await
        {
            Decision::Allow => Ok(()),
            Decision::Deny(wait) => Err(NotNow::Limited(wait)),
        }
    }

    /// Remembers that the document `url` was refused for `tenant`, and why.
    pub fn refuse(&self, tenant: &str, url: &str, why: &str) {
        let key = format!("{tenant}:{url}");
        let now = Instant::now();
        let mut refusals = self.lock();
        if refusals.len() >= MAX_REFUSALS {
            refusals.retain(|_, (_, at)| now.duration_since(*at) < REFUSAL_MEMORY);
            if refusals.len() >= MAX_REFUSALS {
                refusals.clear();
            }
        }
        refusals.insert(key, (why.to_owned(), now));
    }

    /// Why the document `key` was refused, if it was a moment ago.
    fn refused(&self, key: &str) -> Option<String> {
        let mut refusals = self.lock();
        match refusals.get(key) {
            Some((why, at)) if at.elapsed() < REFUSAL_MEMORY => Some(why.clone()),
            Some(_) => {
                refusals.remove(key);
                None
            }
            None => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, Instant)>> {
        self.refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_document_is_answered_from_memory() {
        let fetches = Fetches::new(None);
        assert_eq!(
            fetches
                .admit("t", "https://a.example/c", "a.example", None)
                .await,
            Ok(())
        );
        fetches.refuse("t", "https://a.example/c", "the document URL answered 404");
        assert_eq!(
            fetches
                .admit("t", "https://a.example/c", "a.example", None)
                .await,
            Err(NotNow::Refused("the document URL answered 404".into()))
        );
        assert_eq!(
            fetches
                .admit("u", "https://a.example/c", "a.example", None)
                .await,
            Ok(()),
            "another tenant's key"
        );
    }

    #[tokio::test]
    async fn fetches_are_limited_per_address_then_per_host() {
        let fetches = Fetches::new(None);
        let one: IpAddr = "203.0.113.7".parse().unwrap();
        for n in 0..10 {
            let url = format!("https://a.example/{n}");
            assert_eq!(
                fetches.admit("t", &url, "a.example", Some(one)).await,
                Ok(()),
                "{n}"
            );
        }
        assert!(
            matches!(
                fetches.admit("t", "https://b.example/x", "b.example", Some(one)).await,
                Err(NotNow::Limited(wait)) if wait > Duration::from_secs(30)
            ),
            "the address's eleventh fetch, whatever the host"
        );
        // Other addresses go on until the host's own limit.
        for n in 10..30 {
            let from = IpAddr::from([198, 51, 100, n as u8]);
            let url = format!("https://a.example/{n}");
            assert_eq!(
                fetches.admit("t", &url, "A.example", Some(from)).await,
                Ok(()),
                "{n}"
            );
        }
        assert!(
            matches!(
                fetches
                    .admit(
                        "t",
                        "https://a.example/31",
                        "a.example",
                        Some(IpAddr::from([198, 51, 100, 99]))
                    )
                    .await,
                Err(NotNow::Limited(_))
            ),
            "the host's thirty-first fetch"
        );
    }
}
