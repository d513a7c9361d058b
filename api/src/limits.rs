//! Metering of billable requests: reserve the amount against the key's limit
//! before the work (456 when it does not fit), append the ledger entry
//! (beside the work for keys without a limit, after it for keys with one).
//!
//! ```ignore
//! let charge = Charge::reserve(&state, &key, Meter::Characters, chars,
//!                              kind::TEXT_TRANSLATION, custom_tag).await?;
//! // … do the work; an early return releases the hold or reverses the entry …
//! charge.settle(&state).await?;
//! ```

use tokio::task::JoinHandle;
use tolk_storage::StorageError;
use tolk_storage::keys::ApiKey;
use tolk_storage::limits::{self, Hold, Meter};
use tolk_storage::usage::{self, UsageEvent};
use tolk_storage::usage_appender::Entry;

use crate::{ApiError, AppState, LedgerWrites};

/// The 456 message for a character limit.
pub const CHARACTERS_REACHED: &str =
    "Quota exceeded. The character limit of this key has been reached.";

/// The 456 message of a meter.
pub fn reached_message(meter: Meter) -> &'static str {
    match meter {
        Meter::Characters => CHARACTERS_REACHED,
        Meter::SpeechToText => {
            "Quota exceeded. The speech-to-text limit of this key has been reached."
        }
        Meter::SpeechToSpeech => {
            "Quota exceeded. The speech-to-speech limit of this key has been reached."
        }
    }
}

/// The metering of a request in flight.
///
/// - A key with a limit on the meter: the amount is reserved (a hold, 456 when
///   it does not fit); [`settle`](Charge::settle) turns the hold into the ledger
///   entry in one transaction.
/// - A key without a limit, [`LedgerWrites::Batched`] (the default):
///   [`settle`](Charge::settle) hands the entry to the process's batching
///   appender (`tolk_storage::usage_appender`) and does not wait for it; a
///   failed request appends nothing.
/// - A key without a limit, [`LedgerWrites::Durable`] or `AsyncCommit`: the
///   ledger entry is appended at once, in a task that runs beside the work, so
///   its commit overlaps the work instead of following it;
///   [`settle`](Charge::settle) waits for that commit, so no answer goes out
///   before its entry is committed.
///
/// Dropped without `settle` (the work failed), a charge releases its hold, or
/// appends the reversal of its entry (`usage::reverse`): nothing is billed. A
/// process that dies between a failed request and its reversal leaves that one
/// request billed; a hold left by a crash expires on its own.
#[must_use = "a charge must be settled once the work is done"]
pub struct Charge {
    db: sqlx::PgPool,
    hold: Option<Hold>,
    /// The entry being appended (keys without a limit).
    entry: Option<JoinHandle<Result<i64, StorageError>>>,
    durable: bool,
    organization_id: uuid::Uuid,
    api_key_id: String,
    kind: &'static str,
    custom_tag: Option<String>,
    amount: i64,
}

impl Charge {
    /// Starts metering `amount` of `meter` (ledger kind `kind`) for `key`; 456
    /// when the key's limit is reached or the amount does not fit in what
    /// remains of it.
    pub async fn reserve(
        state: &AppState,
        key: &ApiKey,
        meter: Meter,
        amount: i64,
        kind: &'static str,
        custom_tag: Option<&str>,
    ) -> Result<Self, ApiError> {
        let hold = match limits::reserve(&state.db, key, meter, amount).await? {
            Ok(hold) => hold,
            Err(reached) => {
                tracing::info!(
                    used = reached.used,
                    limit = reached.limit,
                    amount,
                    meter = meter.name(),
                    "usage limit reached"
                );
                return Err(ApiError::QuotaExceeded(reached_message(meter).to_owned()));
            }
        };
        let mut charge = Self {
            db: state.db.clone(),
            hold: None,
            entry: None,
            durable: state.ledger_writes != LedgerWrites::AsyncCommit,
            organization_id: key.organization_id,
            api_key_id: key.key_id.clone(),
            kind,
            custom_tag: custom_tag.map(str::to_owned),
            amount,
        };
        if hold.id.is_some() || !state.record_usage || state.ledger_writes == LedgerWrites::Batched
        {
            charge.hold = Some(hold);
        } else {
            let db = state.db.clone();
            let (organization_id, api_key_id) = (key.organization_id, key.key_id.clone());
            let custom_tag = charge.custom_tag.clone();
            let durable = charge.durable;
            charge.entry = Some(tokio::spawn(async move {
                let event = UsageEvent {
                    organization_id,
                    api_key_id: &api_key_id,
                    kind,
                    amount,
                    custom_tag: custom_tag.as_deref(),
                    document_id: None,
                };
                usage::append(&db, &event, durable).await
            }));
        }
        Ok(charge)
    }

    /// The work is done: the ledger entry is durable when this returns (the hold,
    /// if any, becomes the entry in one transaction).
    pub async fn settle(mut self, state: &AppState) -> Result<(), ApiError> {
        if let Some(entry) = self.entry.take() {
            return match entry.await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(e.into()),
                Err(e) => Err(ApiError::failed("the metering task", e)),
            };
        }
        let Some(hold) = self.hold.take() else {
            return Ok(());
        };
        if !state.record_usage {
            limits::release(&self.db, hold).await?;
            return Ok(());
        }
        if hold.id.is_none() {
            // No limit, batched: the appender writes it.
            state
                .usage_appender
                .append(Entry {
                    organization_id: self.organization_id,
                    api_key_id: std::mem::take(&mut self.api_key_id),
                    kind: self.kind,
                    amount: self.amount,
                    custom_tag: self.custom_tag.take(),
                })
                .await?;
            return Ok(());
        }
        limits::settle(
            &self.db,
            hold,
            &UsageEvent {
                organization_id: self.organization_id,
                api_key_id: &self.api_key_id,
                kind: self.kind,
                amount: self.amount,
                custom_tag: self.custom_tag.as_deref(),
                document_id: None,
            },
            self.durable,
        )
        .await?;
        Ok(())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        let hold = self.hold.take().filter(|h| h.id.is_some());
        let entry = self.entry.take();
        if hold.is_none() && entry.is_none() {
            return;
        }
        let db = self.db.clone();
        // Off the request path; a hold that cannot be released expires on its own.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Some(hold) = hold
                    && let Err(e) = limits::release(&db, hold).await
                {
                    tracing::warn!(error = %e, "releasing a usage hold failed");
                }
                if let Some(entry) = entry
                    && let Ok(Ok(id)) = entry.await
                    && let Err(e) = usage::reverse(&db, id).await
                {
                    tracing::error!(error = %e, entry = id, "reversing the ledger entry of a failed request failed");
                }
            });
        }
    }
}

/// Refuses (456) work of unknown size when the key's limit on `meter` is already
/// reached (document uploads: billed in full when they finish).
pub async fn refuse_if_reached(
    state: &AppState,
    key: &ApiKey,
    meter: Meter,
) -> Result<(), ApiError> {
    match limits::reached(&state.db, key, meter).await? {
        None => Ok(()),
        Some(_) => Err(ApiError::QuotaExceeded(reached_message(meter).to_owned())),
    }
}
