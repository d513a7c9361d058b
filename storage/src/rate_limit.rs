//! Per-key rate limits (the API's per-key limit; the auth service's sign-in
//! and client-secret throttles): callers answer HTTP 429 with `Retry-After`.
//!
//! The algorithm is GCRA (a token bucket written as one timestamp per key, the
//! "theoretical arrival time"): a key may send `burst` requests at once, then
//! `per_second` requests a second. With Redis (`REDIS_URL`) the timestamp lives
//! in Redis and is updated by one Lua script, atomically, with Redis's clock: all
//! API replicas share the limit. Without Redis it lives in this process (each
//! replica then limits on its own, which is logged as a warning at start).
//!
//! Redis is optional at run time (availability before strictness):
//! - the connection is made in the background, so a process whose Redis is
//!   down starts and serves, limiting in-process until Redis answers;
//! - a failed Redis call opens a circuit breaker: for [`BREAKER_OPEN`] every
//!   request is limited in-process without asking Redis, then one request
//!   tries Redis again;
//! - the failure is logged at most once per [`WARN_EVERY`], not per request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;

/// How long the limiter stops asking Redis after a failed call.
pub const BREAKER_OPEN: Duration = Duration::from_secs(5);
/// Least time between two warnings about Redis.
pub const WARN_EVERY: Duration = Duration::from_secs(60);
/// Longest a rate-limit call waits for Redis's answer.
const RESPONSE_TIMEOUT: Duration = Duration::from_millis(250);

/// Settings of the limiter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// Sustained requests per second per key; 0 disables rate limiting.
    pub per_second: f64,
    /// Requests a key may send at once.
    pub burst: u32,
}

impl Default for RateLimit {
    fn default() -> Self {
        Self {
            per_second: 100.0,
            burst: 200,
        }
    }
}

/// The answer for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Go ahead.
    Allow,
    /// Refuse; a request would be accepted after this long.
    Deny(Duration),
}

/// GCRA in Redis. KEYS[1]: the key's timestamp; ARGV[1]: milliseconds between
/// requests; ARGV[2]: burst; ARGV[3]: `1` to only look (nothing is counted).
/// Returns 0 (allowed) or the milliseconds to wait.
const SCRIPT: &str = r"
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - interval * burst
if allow_at > now then
  return math.ceil(allow_at - now)
end
if ARGV[3] == '1' then
  return 0
end
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil(new_tat - now) + 1000)
return 0
";

/// Prefix of the Redis keys.
const PREFIX: &str = "tolk:ratelimit:";

/// The per-key rate limiter (cheap to clone).
#[derive(Clone)]
pub struct RateLimiter {
    config: RateLimit,
    redis: Option<Arc<SharedRedis>>,
    script: Arc<redis::Script>,
    local: Arc<Mutex<Local>>,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("config", &self.config)
            .field("shared", &self.redis.is_some())
            .finish()
    }
}

/// Redis as the limiter sees it: a connection once the background task made
/// one, and the circuit breaker.
#[derive(Default)]
struct SharedRedis {
    conn: OnceLock<ConnectionManager>,
    breaker: Mutex<Breaker>,
}

/// When Redis may be asked again, and when the last warning was logged.
#[derive(Debug, Default)]
struct Breaker {
    open_until: Option<Instant>,
    last_warning: Option<Instant>,
    /// Failures not yet in a warning.
    failures: u64,
}

impl Breaker {
    fn is_open(&self, now: Instant) -> bool {
        self.open_until.is_some_and(|t| now < t)
    }

    /// Opens the breaker after a failure; returns the number of failures to
    /// report when a warning is due.
    fn trip(&mut self, now: Instant) -> Option<u64> {
        self.open_until = Some(now + BREAKER_OPEN);
        self.failures += 1;
        if self
            .last_warning
            .is_none_or(|t| now.duration_since(t) >= WARN_EVERY)
        {
            self.last_warning = Some(now);
            return Some(std::mem::take(&mut self.failures));
        }
        None
    }

    fn close(&mut self) {
        self.open_until = None;
    }
}

impl SharedRedis {
    /// Records a failure; logs a warning at most once per [`WARN_EVERY`].
    fn failed(&self, what: &str, error: &dyn std::fmt::Display) {
        let due = lock(&self.breaker).trip(Instant::now());
        if let Some(failures) = due {
            tracing::warn!(
                error = %error,
                failures,
                "{what}; limiting in this process (Redis is tried again every {} s; this warning repeats at most every {} s)",
                BREAKER_OPEN.as_secs(),
                WARN_EVERY.as_secs()
            );
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Connects to Redis until it works (the connection manager reconnects by
/// itself afterwards).
async fn connect(client: redis::Client, shared: Arc<SharedRedis>) {
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
        .set_number_of_retries(1);
    let mut delay = Duration::from_millis(250);
    loop {
        match client
            .get_connection_manager_with_config(config.clone())
            .await
        {
            Ok(conn) => {
                let _ = shared.conn.set(conn);
                lock(&shared.breaker).close();
                tracing::info!("connected to Redis: rate limits are shared");
                return;
            }
            Err(e) => {
                shared.failed("Redis is unreachable", &e);
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(BREAKER_OPEN);
            }
        }
    }
}

/// In-process state: theoretical arrival time per key.
#[derive(Debug, Default)]
struct Local {
    tat: HashMap<String, Instant>,
    last_prune: Option<Instant>,
}

impl RateLimiter {
    /// A limiter kept in this process only.
    pub fn local(config: RateLimit) -> Self {
        Self {
            config,
            redis: None,
            script: Arc::new(redis::Script::new(SCRIPT)),
            local: Arc::default(),
        }
    }

    /// A limiter shared through Redis at `url`. Fails only on a malformed URL:
    /// the connection is made in the background (needs a Tokio runtime), and
    /// until it is, requests are limited in this process.
    pub fn shared(config: RateLimit, url: &str) -> Result<Self, redis::RedisError> {
        let client = redis::Client::open(url)?;
        let shared = Arc::new(SharedRedis::default());
        tokio::spawn(connect(client, shared.clone()));
        Ok(Self {
            redis: Some(shared),
            ..Self::local(config)
        })
    }

    /// A limiter shared through Redis at `url` when one is given and well
    /// formed, else kept in this process (a malformed URL is logged, naming
    /// `what` is limited).
    pub fn shared_or_local(config: RateLimit, url: Option<&str>, what: &str) -> Self {
        match url {
            Some(url) => Self::shared(config, url).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "REDIS_URL is malformed: {what} limited in this process");
                Self::local(config)
            }),
            None => Self::local(config),
        }
    }

    /// Whether the limit is shared through Redis.
    pub fn is_shared(&self) -> bool {
        self.redis.is_some()
    }

    /// Counts one request of `key_id`.
    pub async fn check(&self, key_id: &str) -> Decision {
        self.decide(key_id, false).await
    }

    /// Whether one more request of `key_id` would be allowed, counting
    /// nothing (with [`Self::check`] only on failures, a throttle of failed
    /// attempts).
    pub async fn peek(&self, key_id: &str) -> Decision {
        self.decide(key_id, true).await
    }

    async fn decide(&self, key_id: &str, peek: bool) -> Decision {
        if self.config.per_second <= 0.0 {
            return Decision::Allow;
        }
        let interval_ms = 1000.0 / self.config.per_second;
        if let Some(shared) = &self.redis
            && let Some(conn) = shared.conn.get()
            && !lock(&shared.breaker).is_open(Instant::now())
        {
            let mut conn = conn.clone();
            let res: Result<i64, _> = self
                .script
                .key(format!("{PREFIX}{key_id}"))
                .arg(interval_ms)
                .arg(self.config.burst.max(1))
                .arg(if peek { "1" } else { "0" })
                .invoke_async(&mut conn)
                .await;
            match res {
                Ok(0) => return Decision::Allow,
                Ok(wait_ms) => {
                    return Decision::Deny(Duration::from_millis(wait_ms.unsigned_abs()));
                }
                Err(e) => shared.failed("the Redis rate limit failed", &e),
            }
        }
        self.check_local(key_id, Instant::now(), interval_ms, peek)
    }

    fn check_local(&self, key_id: &str, now: Instant, interval_ms: f64, peek: bool) -> Decision {
        let interval = Duration::from_secs_f64(interval_ms / 1000.0);
        let burst = self.config.burst.max(1);
        let Ok(mut local) = self.local.lock() else {
            // A poisoned lock: a panic elsewhere; do not refuse traffic for it.
            return Decision::Allow;
        };
        // Forget keys idle for long enough that their bucket is full again.
        if local
            .last_prune
            .is_none_or(|t| now.duration_since(t) > Duration::from_secs(60))
        {
            local.tat.retain(|_, tat| *tat > now);
            local.last_prune = Some(now);
        }
        let tat = local.tat.get(key_id).copied().unwrap_or(now).max(now);
        let new_tat = tat + interval;
        let window = interval * burst;
        let allow_at = new_tat.checked_sub(window).unwrap_or(now);
        if allow_at > now {
            return Decision::Deny(allow_at - now);
        }
        if !peek {
            local.tat.insert(key_id.to_owned(), new_tat);
        }
        Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_bucket_allows_a_burst_then_the_rate() {
        let rl = RateLimiter::local(RateLimit {
            per_second: 10.0,
            burst: 3,
        });
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(rl.check_local("k", t0, 100.0, false), Decision::Allow);
        }
        match rl.check_local("k", t0, 100.0, false) {
            Decision::Deny(wait) => assert!(wait <= Duration::from_millis(100), "{wait:?}"),
            Decision::Allow => panic!("fourth request of a burst of 3 allowed"),
        }
        // Another key has its own bucket.
        assert_eq!(rl.check_local("other", t0, 100.0, false), Decision::Allow);
        // After one interval, one more request.
        let t1 = t0 + Duration::from_millis(100);
        assert_eq!(rl.check_local("k", t1, 100.0, false), Decision::Allow);
        assert!(matches!(
            rl.check_local("k", t1, 100.0, false),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn peeking_counts_nothing() {
        let rl = RateLimiter::local(RateLimit {
            per_second: 1.0,
            burst: 1,
        });
        let t0 = Instant::now();
        for _ in 0..5 {
            assert_eq!(rl.check_local("k", t0, 1000.0, true), Decision::Allow);
        }
        assert_eq!(rl.check_local("k", t0, 1000.0, false), Decision::Allow);
        assert!(matches!(
            rl.check_local("k", t0, 1000.0, true),
            Decision::Deny(_)
        ));
    }

    #[tokio::test]
    async fn zero_rate_disables() {
        let rl = RateLimiter::local(RateLimit {
            per_second: 0.0,
            burst: 1,
        });
        for _ in 0..100 {
            assert_eq!(rl.check("k").await, Decision::Allow);
        }
    }

    #[test]
    fn the_breaker_opens_for_a_while_and_warns_once_a_minute() {
        let mut b = Breaker::default();
        let t0 = Instant::now();
        assert!(!b.is_open(t0));
        assert_eq!(b.trip(t0), Some(1));
        assert!(b.is_open(t0 + BREAKER_OPEN / 2));
        assert!(!b.is_open(t0 + BREAKER_OPEN));
        // Failures within the minute are counted, not logged.
        for i in 1..10u32 {
            assert_eq!(b.trip(t0 + BREAKER_OPEN * i), None);
        }
        assert_eq!(b.trip(t0 + WARN_EVERY), Some(10));
        b.close();
        assert!(!b.is_open(t0 + WARN_EVERY));
    }

    #[tokio::test]
    async fn an_unreachable_redis_limits_in_process_at_once() {
        let rl = RateLimiter::shared(
            RateLimit {
                per_second: 1.0,
                burst: 2,
            },
            "redis://127.0.0.1:1",
        )
        .expect("a well-formed URL");
        assert!(rl.is_shared());
        assert_eq!(rl.check("k").await, Decision::Allow);
        assert_eq!(rl.check("k").await, Decision::Allow);
        assert!(matches!(rl.check("k").await, Decision::Deny(_)));
    }
}
