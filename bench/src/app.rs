//! The API state the benches serve: the platform's defaults
//! ([`AppState::new`], rate limiting off: a bench hammers one key on purpose).

use std::sync::Arc;

use tolk_api::AppState;
use tolk_engine::Translator;
use tolk_storage::objects::Objects;

/// [`AppState::new`] with `max_upload_bytes` as given.
pub fn api_state(
    db: sqlx::PgPool,
    objects: Objects,
    translator: Arc<Translator>,
    max_upload_bytes: usize,
) -> AppState {
    AppState {
        max_upload_bytes,
        ..AppState::new(db, objects, translator)
    }
}

/// Serves `state` on a free loopback port in this process until `stop` says
/// true; its base URL.
pub async fn serve(
    state: AppState,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let stopped = async move {
            let _ = stop.wait_for(|v| *v).await;
        };
        if let Err(e) = tolk_api::serve(listener, state, stopped).await {
            eprintln!("api: {e}");
        }
    });
    Ok(base)
}
