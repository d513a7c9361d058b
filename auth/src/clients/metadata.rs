//! Client ID metadata documents (the MCP draft): a client whose `client_id` is
//! an https URL serves its metadata there, and needs no registration.
//!
//! The document is fetched only over https, only from public addresses (the
//! host is resolved first and every address must be public: private,
//! loopback, link-local, shared, multicast and reserved ranges are refused,
//! and the connection goes to the address checked, so a DNS answer cannot
//! change in between), without following redirects, within short timeouts and
//! at most [`MAX_DOCUMENT_BYTES`]; `MCP_CLIENT_ID_HOSTS`, when set, lists the
//! hosts allowed. Its metadata is checked like a dynamic registration's (see
//! [`crate::routes::register`]) and its `client_id` must be the URL itself.
//! The client is then kept as a row of `oauth_applications` (so codes and
//! tokens refer to it like to any client) until the document's cache time
//! ends — `Cache-Control: max-age` held between 5 minutes and 1 hour — when it
//! is fetched again; the scheduler deletes such rows once expired unless a
//! code or token of the client is alive (a client nobody consented to leaves
//! nothing lasting). Fetches are limited and refusals remembered
//! ([`super::fetches`]).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use chrono::Utc;
use serde_json::Value;
use tolk_storage::auth::applications::{self, Application, NewApplication};
use tolk_storage::auth::authorities::Authority;

use super::fetches::NotNow;
use crate::AuthState;

/// Largest metadata document read.
pub const MAX_DOCUMENT_BYTES: usize = 10 * 1024;
/// Shortest and longest time a document is kept.
const MIN_CACHE: Duration = Duration::from_secs(300);
const MAX_CACHE: Duration = Duration::from_secs(3600);
/// Timeouts of the fetch: name resolution, connection, the whole request.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether a `client_id` names a metadata document.
pub fn is_metadata_url(client_id: &str) -> bool {
    client_id.starts_with("https://")
}

/// Why a metadata document cannot be used (shown to the user or the client).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MetadataError(String);

fn refuse(why: impl Into<String>) -> MetadataError {
    MetadataError(why.into())
}

/// The client whose metadata document is at `url`, from the cache or fetched
/// (for a request from `address`).
pub async fn client(
    state: &AuthState,
    authority: &Authority,
    url: &str,
    address: Option<IpAddr>,
) -> Result<Application, MetadataError> {
    let parsed = check_url(url, &state.config().mcp_client_id_hosts)?;
    let db_error = |e: tolk_storage::StorageError| {
        tracing::error!(error = %e, "client metadata cache");
        refuse("the client could not be looked up")
    };
    if let Some(app) = applications::cached_metadata_client(state.db(), authority.id, url)
        .await
        .map_err(db_error)?
    {
        return Ok(app);
    }
    let tenant = authority.id.to_string();
    match state
        .metadata_fetches()
        .admit(&tenant, url, parsed.host_str().unwrap_or(""), address)
        .await
    {
        Ok(()) => {}
        Err(NotNow::Refused(why)) => return Err(refuse(why)),
        Err(NotNow::Limited(wait)) => {
            tracing::warn!(client_id = %url, address = ?address, "client metadata fetches limited");
            return Err(refuse(format!(
                "too many client metadata documents were fetched; try again in {} s",
                wait.as_secs().max(1)
            )));
        }
    }
    let (metadata, cache) = fetch_and_check(state, &parsed, url)
        .await
        .inspect_err(|e| {
            tracing::warn!(client_id = %url, reason = %e, "client metadata document refused");
            state.metadata_fetches().refuse(&tenant, url, &e.0);
        })?;
    let expires = Utc::now() + chrono::Duration::from_std(cache).unwrap_or_default();
    let stored = applications::store_metadata_client(
        state.db(),
        NewApplication {
            authority_id: authority.id,
            name: &metadata.name,
            uid: url,
            secret_digest: None,
            redirect_uris: &metadata.redirect_uris,
            scopes: &metadata.scopes,
            skip_authorization: false,
        },
        expires,
    )
    .await
    .map_err(db_error)?;
    tracing::info!(client_id = %url, "client metadata document fetched");
    stored.ok_or_else(|| refuse("this client ID is in use by another tenant"))
}

/// The document at `parsed` (`url`), fetched and checked: its metadata and
/// cache time.
async fn fetch_and_check(
    state: &AuthState,
    parsed: &url::Url,
    url: &str,
) -> Result<(crate::routes::register::Metadata, Duration), MetadataError> {
    let (document, cache) = fetch(state, parsed).await?;
    if document.get("client_id").and_then(Value::as_str) != Some(url) {
        return Err(refuse("its client_id is not the URL it is served at"));
    }
    let metadata = crate::routes::register::validate(&document)
        .map_err(|e| refuse(format!("its metadata is not acceptable: {}", e.description)))?;
    Ok((metadata, cache))
}

/// The URL, if it may name a metadata document here.
fn check_url(url: &str, allowed_hosts: &[String]) -> Result<url::Url, MetadataError> {
    let parsed = url::Url::parse(url).map_err(|_| refuse("the client ID is not a URL"))?;
    if parsed.scheme() != "https" {
        return Err(refuse(
            "a client metadata document is fetched over https only",
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(refuse("the client ID URL must not hold credentials"));
    }
    if parsed.fragment().is_some() || parsed.path() == "/" {
        return Err(refuse("the client ID URL needs a path and no fragment"));
    }
    let host = parsed.host_str().unwrap_or("").to_ascii_lowercase();
    if !allowed_hosts.is_empty() && !allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(&host)) {
        return Err(refuse(format!(
            "the host {host} is not among the allowed client metadata hosts"
        )));
    }
    Ok(parsed)
}

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared address space
                || (a == 192 && b == 0 && v4.octets()[2] == 0) // IETF protocol assignments
                || (a == 198 && (18..20).contains(&b)) // benchmarking
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
                || (first == 0x0064 && v6.segments()[1] == 0xff9b)) // NAT64
        }
    }
}

/// Fetches and parses the document; its cache time.
async fn fetch(state: &AuthState, url: &url::Url) -> Result<(Value, Duration), MetadataError> {
    let host = url.host_str().unwrap_or("").to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let addrs: Vec<SocketAddr> = tokio::time::timeout(
        RESOLVE_TIMEOUT,
        tokio::net::lookup_host((host.as_str(), port)),
    )
    .await
    .map_err(|_| refuse(format!("{host} did not resolve in time")))?
    .map_err(|_| refuse(format!("{host} does not resolve")))?
    .collect();
    let loopback_ok = state.config().test_client_metadata_loopback;
    let allowed = |a: &SocketAddr| is_public(a.ip()) || (loopback_ok && a.ip().is_loopback());
    if addrs.is_empty() || !addrs.iter().all(allowed) {
        return Err(refuse(format!(
            "{host} resolves to an address that is not public"
        )));
    }
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(FETCH_TIMEOUT)
        .https_only(true)
        .resolve_to_addrs(&host, &addrs);
    if let Some(path) = &state.config().test_client_metadata_ca {
        let pem = std::fs::read(path).map_err(|e| {
            refuse(format!(
                "the test CA {} cannot be read: {e}",
                path.display()
            ))
        })?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| refuse(format!("the test CA is not PEM: {e}")))?;
        builder = builder.tls_certs_merge(certs);
    }
    let http = builder
        .build()
        .map_err(|e| refuse(format!("no HTTP client: {e}")))?;
    let res = http
        .get(url.as_str())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| {
            refuse(if e.is_timeout() {
                "the document did not arrive in time".to_owned()
            } else {
                "the document could not be fetched".to_owned()
            })
        })?;
    let status = res.status();
    if status.is_redirection() {
        return Err(refuse(
            "the document URL redirects (redirects are not followed)",
        ));
    }
    if status != reqwest::StatusCode::OK {
        return Err(refuse(format!("the document URL answered {status}")));
    }
    let cache = cache_time(res.headers());
    let document = crate::outbound::read_json(res, MAX_DOCUMENT_BYTES)
        .await
        .map_err(|e| match e {
            crate::outbound::ReadError::TooLarge(_) => too_large(),
            crate::outbound::ReadError::Unreadable => refuse("the document could not be read"),
            crate::outbound::ReadError::NotJson => refuse("the document is not JSON"),
        })?;
    if !document.is_object() {
        return Err(refuse("the document is not a JSON object"));
    }
    Ok((document, cache))
}

fn too_large() -> MetadataError {
    refuse(format!(
        "the document is larger than {} KB",
        MAX_DOCUMENT_BYTES / 1024
    ))
}

/// `Cache-Control: max-age`, held between 5 minutes and 1 hour.
fn cache_time(headers: &reqwest::header::HeaderMap) -> Duration {
    let max_age = headers
        .get(reqwest::header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.split(',')
                .filter_map(|d| d.trim().strip_prefix("max-age="))
                .find_map(|n| n.trim().parse::<u64>().ok())
        })
        .map_or(MIN_CACHE, Duration::from_secs);
    max_age.clamp(MIN_CACHE, MAX_CACHE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_fetched_from() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "2001:db8::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["1.1.1.1", "93.184.216.34", "2606:4700:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn urls_must_be_https_with_a_path_on_an_allowed_host() {
        let any: &[String] = &[];
        assert!(check_url("https://app.example/client.json", any).is_ok());
        for bad in [
            "http://app.example/client.json",
            "https://app.example/",
            "https://user:pw@app.example/c.json",
            "https://app.example/c.json#x",
            "not a url",
        ] {
            assert!(check_url(bad, any).is_err(), "{bad}");
        }
        let only = &["clients.example".to_owned()];
        assert!(check_url("https://clients.example/a.json", only).is_ok());
        assert!(check_url("https://app.example/a.json", only).is_err());
    }

    #[test]
    fn cache_time_is_held_between_five_minutes_and_an_hour() {
        let with = |v: &str| {
            let mut h = reqwest::header::HeaderMap::new();
            h.insert(reqwest::header::CACHE_CONTROL, v.parse().unwrap());
            cache_time(&h)
        };
        assert_eq!(cache_time(&reqwest::header::HeaderMap::new()), MIN_CACHE);
        assert_eq!(with("max-age=10"), MIN_CACHE);
        assert_eq!(with("public, max-age=1200"), Duration::from_secs(1200));
        assert_eq!(with("max-age=86400"), MAX_CACHE);
    }
}
