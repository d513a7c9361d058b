//! Per-key rate limits (HTTP 429 with `Retry-After`).
//!
//! The algorithm is GCRA (a token bucket written as one timestamp per key, the
//! "theoretical arrival time"): a key may send `burst` requests at once, then
//! `per_second` requests a second. With Redis (`REDIS_URL`) the timestamp lives
//! in Redis and is updated by one Lua script, atomically, with Redis's clock: all
//! API replicas share the limit. Without Redis it lives in this process (each
//! replica then limits on its own, which is logged as a warning at start). When
//! Redis fails at run time, the request is limited in-process and a warning is
//! logged (availability before strictness).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;

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
/// requests; ARGV[2]: burst. Returns 0 (allowed) or the milliseconds to wait.
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
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil(new_tat - now) + 1000)
return 0
";

/// Prefix of the Redis keys.
const PREFIX: &str = "tolk:ratelimit:";

/// The per-key rate limiter (cheap to clone).
#[derive(Clone)]
pub struct RateLimiter {
    config: RateLimit,
    redis: Option<ConnectionManager>,
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

    /// A limiter shared through Redis at `url`.
    pub async fn shared(config: RateLimit, url: &str) -> Result<Self, redis::RedisError> {
        let client = redis::Client::open(url)?;
        let manager_config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_millis(500)))
            .set_number_of_retries(2);
        let conn = client
            .get_connection_manager_with_config(manager_config)
            .await?;
        Ok(Self {
            redis: Some(conn),
            ..Self::local(config)
        })
    }

    /// Whether the limit is shared through Redis.
    pub fn is_shared(&self) -> bool {
        self.redis.is_some()
    }

    /// Counts one request of `key_id`.
    pub async fn check(&self, key_id: &str) -> Decision {
        if self.config.per_second <= 0.0 {
            return Decision::Allow;
        }
        let interval_ms = 1000.0 / self.config.per_second;
        if let Some(conn) = &self.redis {
            let mut conn = conn.clone();
            let res: Result<i64, _> = self
                .script
                .key(format!("{PREFIX}{key_id}"))
                .arg(interval_ms)
                .arg(self.config.burst.max(1))
                .invoke_async(&mut conn)
                .await;
            match res {
                Ok(0) => return Decision::Allow,
                Ok(wait_ms) => {
                    return Decision::Deny(Duration::from_millis(wait_ms.unsigned_abs()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "Redis rate limit failed; limiting in this process");
                }
            }
        }
        self.check_local(key_id, Instant::now(), interval_ms)
    }

    fn check_local(&self, key_id: &str, now: Instant, interval_ms: f64) -> Decision {
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
        local.tat.insert(key_id.to_owned(), new_tat);
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
            assert_eq!(rl.check_local("k", t0, 100.0), Decision::Allow);
        }
        match rl.check_local("k", t0, 100.0) {
            Decision::Deny(wait) => assert!(wait <= Duration::from_millis(100), "{wait:?}"),
            Decision::Allow => panic!("fourth request of a burst of 3 allowed"),
        }
        // Another key has its own bucket.
        assert_eq!(rl.check_local("other", t0, 100.0), Decision::Allow);
        // After one interval, one more request.
        let t1 = t0 + Duration::from_millis(100);
        assert_eq!(rl.check_local("k", t1, 100.0), Decision::Allow);
        assert!(matches!(rl.check_local("k", t1, 100.0), Decision::Deny(_)));
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
}
