//! Throttling of failed sign-ins and failed client authentications, against
//! password and secret guessing.
//!
//! Only failures count; before an attempt the buckets are looked at (nothing
//! counted), and an attempt whose bucket is empty is refused with 429 and
//! `Retry-After` — the right password included. The buckets refill at a
//! steady rate, so a lock lasts seconds to a minute after the guessing stops:
//!
//! | bucket | failures at once | then |
//! |---|---|---|
//! | an account from one address | 5 | one a minute |
//! | an account from all addresses | 20 | one every 15 s |
//! | one address, all accounts of a tenant | 30 | one every 6 s |
//! | a client's secret, from all addresses | 10 | one every 10 s |
//!
//! An attacker elsewhere can thus keep a real user out only while sending
//! more than four guesses a minute at that account, and only for up to 15 s
//! once they stop. The buckets are shared through Redis when `REDIS_URL` is
//! set ([`tolk_storage::rate_limit`]), else kept in each process.

use std::net::IpAddr;
use std::time::Duration;

use tolk_storage::rate_limit::{Decision, RateLimit, RateLimiter};

/// The throttles of one auth service.
#[derive(Debug, Clone)]
pub struct Throttle {
    account_from_address: RateLimiter,
    account: RateLimiter,
    address: RateLimiter,
    client: RateLimiter,
}

/// What an attempt is: a sign-in to an account, or a client authenticating.
#[derive(Debug, Clone, Copy)]
pub enum Attempt<'a> {
    /// A password for `account` (a lower-cased email) of `authority`.
    SignIn {
        /// The authority (tenant) id.
        authority: &'a str,
        /// The account.
        account: &'a str,
        /// Where the attempt comes from, when known.
        address: Option<IpAddr>,
    },
    /// A secret for the client `client_id` of `authority`.
    Client {
        /// The authority (tenant) id.
        authority: &'a str,
        /// The client.
        client_id: &'a str,
        /// Where the attempt comes from, when known.
        address: Option<IpAddr>,
    },
}

fn limit(burst: u32, every: Duration) -> RateLimit {
    RateLimit {
        per_second: 1.0 / every.as_secs_f64(),
        burst,
    }
}

impl Throttle {
    /// Throttles shared through Redis at `redis_url` (else in this process).
    pub fn new(redis_url: Option<&str>) -> Self {
        let make = |config| RateLimiter::shared_or_local(config, redis_url, "throttling");
        Self {
            account_from_address: make(limit(5, Duration::from_secs(60))),
            account: make(limit(20, Duration::from_secs(15))),
            address: make(limit(30, Duration::from_secs(6))),
            client: make(limit(10, Duration::from_secs(10))),
        }
    }

    /// The buckets an attempt draws on, with their keys.
    fn buckets(&self, attempt: Attempt<'_>) -> Vec<(&RateLimiter, String)> {
        match attempt {
            Attempt::SignIn {
                authority,
                account,
                address,
            } => {
                let mut buckets =
                    vec![(&self.account, format!("auth:signin:{authority}:{account}"))];
                if let Some(ip) = address {
                    buckets.push((
                        &self.account_from_address,
                        format!("auth:signin:{authority}:{account}:{ip}"),
                    ));
                    buckets.push((&self.address, format!("auth:address:{authority}:{ip}")));
                }
                buckets
            }
            Attempt::Client {
                authority,
                client_id,
                address,
            } => {
                let mut buckets =
                    vec![(&self.client, format!("auth:client:{authority}:{client_id}"))];
                if let Some(ip) = address {
                    buckets.push((&self.address, format!("auth:address:{authority}:{ip}")));
                }
                buckets
            }
        }
    }

    /// How long the attempt must wait, when one of its buckets is empty.
    pub async fn wait(&self, attempt: Attempt<'_>) -> Option<Duration> {
        let mut longest = None;
        for (limiter, key) in self.buckets(attempt) {
            if let Decision::Deny(wait) = limiter.peek(&key).await {
                longest = Some(longest.map_or(wait, |w: Duration| w.max(wait)));
            }
        }
        longest
    }

    /// Counts a failed attempt.
    pub async fn failed(&self, attempt: Attempt<'_>) {
        for (limiter, key) in self.buckets(attempt) {
            let _ = limiter.check(&key).await;
        }
    }
}

/// `Retry-After` seconds for a wait (at least 1).
pub fn retry_after(wait: Duration) -> String {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
        .max(1)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn five_failures_from_one_address_lock_that_account_there_only() {
        let throttle = Throttle::new(None);
        let here = Some(IpAddr::from([10, 0, 0, 1]));
        let there = Some(IpAddr::from([10, 0, 0, 2]));
        let ann = |address| Attempt::SignIn {
            authority: "a",
            account: "ann@example.com",
            address,
        };
        for _ in 0..5 {
            assert_eq!(throttle.wait(ann(here)).await, None);
            throttle.failed(ann(here)).await;
        }
        let wait = throttle.wait(ann(here)).await.expect("locked");
        assert!(wait <= Duration::from_secs(60), "{wait:?}");
        // The same account from elsewhere, another account from here: open.
        assert_eq!(throttle.wait(ann(there)).await, None);
        let bob = Attempt::SignIn {
            authority: "a",
            account: "bob@example.com",
            address: here,
        };
        assert_eq!(throttle.wait(bob).await, None);
        // Looking counts nothing.
        for _ in 0..100 {
            assert_eq!(throttle.wait(bob).await, None);
        }
    }

    #[tokio::test]
    async fn a_client_secret_is_guessed_ten_times_at_most_at_once() {
        let throttle = Throttle::new(None);
        let client = Attempt::Client {
            authority: "a",
            client_id: "app",
            address: None,
        };
        for _ in 0..10 {
            assert_eq!(throttle.wait(client).await, None);
            throttle.failed(client).await;
        }
        assert!(throttle.wait(client).await.is_some());
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after(Duration::from_millis(10)), "1");
        assert_eq!(retry_after(Duration::from_millis(1500)), "2");
        assert_eq!(retry_after(Duration::from_secs(60)), "60");
    }
}
