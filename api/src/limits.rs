//! Metering of billable requests: reserve the amount against the key's limit
//! before the work (456 when it does not fit), append the ledger entry after it.
//!
//! ```ignore
//! let charge = Charge::reserve(&state, &key, Meter::Characters, chars).await?;
//! // … do the work; any early return releases the reservation …
//! charge.settle(&state, kind::TEXT_TRANSLATION, custom_tag).await?;
//! ```

use tolk_storage::keys::ApiKey;
use tolk_storage::limits::{self, Hold, Meter};
use tolk_storage::usage::UsageEvent;

use crate::{ApiError, AppState};

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

/// An amount reserved for a request in flight. Dropped without
/// [`settle`](Charge::settle), it releases the reservation (nothing is billed).
#[must_use = "a charge must be settled once the work is done"]
pub struct Charge {
    db: sqlx::PgPool,
    hold: Option<Hold>,
    organization_id: uuid::Uuid,
    api_key_id: String,
    amount: i64,
}

impl Charge {
    /// Reserves `amount` of `meter` for `key`; 456 when the key's limit is
    /// reached or the amount does not fit in what remains of it.
    pub async fn reserve(
        state: &AppState,
        key: &ApiKey,
        meter: Meter,
        amount: i64,
    ) -> Result<Self, ApiError> {
        match limits::reserve(&state.db, key, meter, amount).await? {
            Ok(hold) => Ok(Self {
                db: state.db.clone(),
                hold: Some(hold),
                organization_id: key.organization_id,
                api_key_id: key.key_id.clone(),
                amount,
            }),
            Err(reached) => {
                tracing::info!(
                    used = reached.used,
                    limit = reached.limit,
                    amount,
                    meter = meter.name(),
                    "usage limit reached"
                );
                Err(ApiError::QuotaExceeded(reached_message(meter).to_owned()))
            }
        }
    }

    /// The work is done: append the ledger entry (`kind`, the reserved amount)
    /// and drop the reservation, in one transaction.
    pub async fn settle(
        mut self,
        state: &AppState,
        kind: &str,
        custom_tag: Option<&str>,
    ) -> Result<(), ApiError> {
        let Some(hold) = self.hold.take() else {
            return Ok(());
        };
        if !state.record_usage {
            limits::release(&self.db, hold).await?;
            return Ok(());
        }
        limits::settle(
            &self.db,
            hold,
            &UsageEvent {
                organization_id: self.organization_id,
                api_key_id: &self.api_key_id,
                kind,
                amount: self.amount,
                custom_tag,
                document_id: None,
            },
            !state.async_ledger_commit,
        )
        .await?;
        Ok(())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if let Some(hold) = self.hold.take()
            && hold.id.is_some()
        {
            let db = self.db.clone();
            // Released off the request path; a hold that cannot be released
            // expires on its own.
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    if let Err(e) = limits::release(&db, hold).await {
                        tracing::warn!(error = %e, "releasing a usage hold failed");
                    }
                });
            }
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
