//! How far a stream's audio runs ahead of its listener.
//!
//! espeak-ng speaks far faster than real time, and a socket takes megabytes
//! before it pushes back: a client reading audio at its own pace would find
//! the answer to its ping behind all of it, and drop the stream as dead. So
//! the stream pings the client every [`PING_EVERY`] of audio, the ping
//! carrying how many bytes of audio were sent before it (after a tag); the client's pong
//! comes back once it has read up to the ping, which tells how much it has
//! read. The stream sends no more audio while more than [`AHEAD`] of it is
//! unread, so anything the server sends (a pong, a close) reaches the client
//! after at most that much audio.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::ws::Message;
use tokio::sync::Notify;

/// Audio the client may have unread.
pub const AHEAD: Duration = Duration::from_secs(1);
/// Audio between the stream's pings.
pub const PING_EVERY: Duration = Duration::from_millis(250);
/// What the stream's ping payloads start with (the count of bytes follows,
/// big-endian), so that a client's own pongs are not taken for answers.
const TAG: &[u8; 4] = b"tolk";

/// What a stream has sent and its client has read, in bytes of audio.
#[derive(Debug)]
pub struct Pace {
    /// Bytes a second of the stream's audio.
    bytes_per_second: u64,
    sent: AtomicU64,
    /// What was sent when the last ping went.
    pinged: AtomicU64,
    /// What the client has read (its latest pong).
    read: AtomicU64,
    /// A pong moved `read`.
    moved: Notify,
}

/// The client read nothing for the patience given.
#[derive(Debug, PartialEq, Eq)]
pub struct Stalled;

impl Pace {
    /// For audio of `bytes_per_second`.
    pub fn new(bytes_per_second: u64) -> Self {
        Self {
            bytes_per_second: bytes_per_second.max(1),
            sent: AtomicU64::new(0),
            pinged: AtomicU64::new(0),
            read: AtomicU64::new(0),
            moved: Notify::new(),
        }
    }

    fn bytes(&self, d: Duration) -> u64 {
        (u128::from(self.bytes_per_second) * d.as_millis() / 1000) as u64
    }

    /// Counts `n` bytes of audio sent; the ping to send after them, when one
    /// is due.
    pub fn sent(&self, n: usize) -> Option<Message> {
        let sent = self.sent.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        let pinged = self.pinged.load(Ordering::Relaxed);
        if sent - pinged < self.bytes(PING_EVERY) {
            return None;
        }
        self.pinged.store(sent, Ordering::Relaxed);
        Some(Message::Ping(
            [&TAG[..], &sent.to_be_bytes()].concat().into(),
        ))
    }

    /// A pong from the client: it has read up to the ping it answers. A
    /// payload that is not one of ours is ignored.
    pub fn pong(&self, payload: &[u8]) {
        let Some(Ok(bytes)) = payload.strip_prefix(TAG).map(<[u8; 8]>::try_from) else {
            return;
        };
        let read = u64::from_be_bytes(bytes).min(self.sent.load(Ordering::Relaxed));
        if self.read.fetch_max(read, Ordering::Relaxed) < read {
            self.moved.notify_waiters();
        }
    }

    /// Waits until no more than [`AHEAD`] of the audio sent is unread;
    /// [`Stalled`] when the client reads nothing for `patience`.
    pub async fn wait(&self, patience: Duration) -> Result<(), Stalled> {
        let ahead = self.bytes(AHEAD);
        loop {
            let moved = self.moved.notified();
            let unread = self
                .sent
                .load(Ordering::Relaxed)
                .saturating_sub(self.read.load(Ordering::Relaxed));
            if unread <= ahead {
                return Ok(());
            }
            if tokio::time::timeout(patience, moved).await.is_err() {
                return Err(Stalled);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(m: Message) -> Vec<u8> {
        match m {
            Message::Ping(p) => p.to_vec(),
            other => panic!("not a ping: {other:?}"),
        }
    }

    #[test]
    fn a_ping_goes_every_quarter_second_of_audio_carrying_what_was_sent() {
        let pace = Pace::new(1000);
        assert!(pace.sent(100).is_none());
        assert!(pace.sent(100).is_none());
        let ping = payload(pace.sent(100).expect("a ping after 300 ms of audio"));
        assert_eq!(ping, [&b"tolk"[..], &300u64.to_be_bytes()].concat());
        assert!(pace.sent(200).is_none());
        assert_eq!(
            payload(pace.sent(60).unwrap()),
            [&b"tolk"[..], &560u64.to_be_bytes()].concat()
        );
    }

    #[tokio::test]
    async fn the_stream_waits_while_more_than_a_second_is_unread() {
        let pace = std::sync::Arc::new(Pace::new(1000));
        let ping = payload(pace.sent(1500).unwrap());
        assert_eq!(
            pace.wait(Duration::from_millis(50)).await,
            Err(Stalled),
            "1.5 s unread and no pong"
        );
        pace.pong(b"not ours");
        pace.pong(&u64::MAX.to_be_bytes());
        pace.pong(b"tolk1234567");
        assert_eq!(pace.wait(Duration::from_millis(50)).await, Err(Stalled));
        let waiting = tokio::spawn({
            let pace = pace.clone();
            async move { pace.wait(Duration::from_secs(5)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        pace.pong(&ping);
        assert_eq!(waiting.await.unwrap(), Ok(()));
        // A pong can never count more than was sent.
        pace.pong(&[&b"tolk"[..], &u64::MAX.to_be_bytes()].concat());
        pace.sent(1200);
        assert_eq!(pace.wait(Duration::from_millis(50)).await, Err(Stalled));
    }
}
