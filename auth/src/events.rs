//! Login events: `{"user_id", "provider"}` published on `LOGIN_EVENTS_CHANNEL`
//! through Redis pub/sub after every successful login.
//!
//! Publishing never holds a login up: events go through a bounded queue to a
//! background task that (re)connects as needed; when Redis is down or the queue
//! is full, the event is dropped with a warning.

use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc;

/// Events that may wait for Redis before new ones are dropped.
const QUEUE: usize = 500;
/// Longest connect or publish attempt.
const REDIS_TIMEOUT: Duration = Duration::from_secs(2);

/// The login message.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LoginEvent {
    /// The user who signed in.
    pub user_id: String,
    /// How: `internal` for the password sign-in.
    pub provider: String,
}

/// Hands login events to the publishing task.
#[derive(Debug, Clone)]
pub struct LoginEvents {
    tx: Option<mpsc::Sender<LoginEvent>>,
}

impl LoginEvents {
    /// Starts the publisher; without a Redis URL nothing is published (a warning says so).
    pub fn start(redis_url: Option<&str>, channel: &str) -> Self {
        let Some(url) = redis_url.filter(|u| !u.is_empty()) else {
            tracing::warn!("REDIS_URL is not set: login events are not published");
            return Self { tx: None };
        };
        let client = match redis::Client::open(url) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "REDIS_URL is not usable: login events are not published");
                return Self { tx: None };
            }
        };
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(publish_loop(client, channel.to_owned(), rx));
        Self { tx: Some(tx) }
    }

    /// A publisher that publishes nothing.
    pub fn disabled() -> Self {
        Self { tx: None }
    }

    /// Queues a login event (never waits).
    pub fn login(&self, user_id: &str, provider: &str) {
        let Some(tx) = &self.tx else { return };
        let event = LoginEvent {
            user_id: user_id.to_owned(),
            provider: provider.to_owned(),
        };
        if let Err(e) = tx.try_send(event) {
            tracing::warn!(error = %e, "login event dropped (publisher queue full or stopped)");
        }
    }
}

async fn publish_loop(client: redis::Client, channel: String, mut rx: mpsc::Receiver<LoginEvent>) {
    let mut conn: Option<redis::aio::MultiplexedConnection> = None;
    while let Some(event) = rx.recv().await {
        let payload = match serde_json::to_string(&event) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "login event not serializable");
                continue;
            }
        };
        if conn.is_none() {
            match tokio::time::timeout(REDIS_TIMEOUT, client.get_multiplexed_async_connection())
                .await
            {
                Ok(Ok(c)) => conn = Some(c),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, user_id = %event.user_id, "Redis unavailable: login event dropped");
                    continue;
                }
                Err(_) => {
                    tracing::warn!(user_id = %event.user_id, "Redis connect timed out: login event dropped");
                    continue;
                }
            }
        }
        let Some(c) = conn.as_mut() else { continue };
        let mut cmd = redis::cmd("PUBLISH");
        cmd.arg(&channel).arg(&payload);
        let publish = cmd.query_async::<i64>(c);
        match tokio::time::timeout(REDIS_TIMEOUT, publish).await {
            Ok(Ok(_)) => tracing::debug!(user_id = %event.user_id, "login event published"),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, user_id = %event.user_id, "login event not published");
                conn = None;
            }
            Err(_) => {
                tracing::warn!(user_id = %event.user_id, "login event publish timed out");
                conn = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_shape() {
        let e = LoginEvent {
            user_id: "user-1".into(),
            provider: "internal".into(),
        };
        assert_eq!(
            serde_json::to_string(&e).expect("json"),
            r#"{"user_id":"user-1","provider":"internal"}"#
        );
    }

    #[tokio::test]
    async fn unreachable_redis_never_blocks() {
        // A closed port: connecting fails, the login call returns at once.
        let ev = LoginEvents::start(Some("redis://127.0.0.1:1"), "c");
        let t = std::time::Instant::now();
        for _ in 0..1000 {
            ev.login("user-1", "internal");
        }
        assert!(t.elapsed() < Duration::from_millis(500));
    }
}
