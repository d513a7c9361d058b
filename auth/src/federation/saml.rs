//! The SAML 2.0 service provider of an `adfs_strat`: an AuthnRequest sent by
//! the redirect binding, and the response of the POST binding verified with
//! samael (libxmlsec1): the signature against the strategy's certificate
//! (or a certificate in the response whose fingerprint is the configured
//! one), only the signed part kept (no signature wrapping), destination,
//! recipient, audience, `InResponseTo` of this browser's request, validity
//! times with two minutes of skew. A document with a DOCTYPE is refused
//! before any parsing (no entities). Replays are the caller's to refuse
//! ([`Verified::assertion_id`]).

use std::io::Write;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use samael::metadata::EntityDescriptor;
use samael::schema::{AuthnRequest, Response};
use samael::service_provider::ServiceProvider;
use samael::traits::ToXml;
use serde_json::{Map, Value};
use sha1::Sha1;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tolk_storage::auth::saml_strategies::SamlStrategy;
use url::Url;

use super::FederationError;
use super::identity::Identity;
use crate::pages::escape;

/// Clock skew allowed on validity times.
const SKEW_SECONDS: i64 = 120;
/// Largest decoded response read.
pub const MAX_RESPONSE_BYTES: usize = 256 * 1024;

/// Attribute names tried for our fields when `attribute_statements` does not
/// name them (the earlier deployment's defaults, plus the common claim URIs).
const DEFAULT_ATTRIBUTES: &[(&str, &[&str])] = &[
    (
        "email",
        &[
            "email",
            "mail",
            "emailAddress",
            "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
            "urn:oid:0.9.2342.19200300.100.1.3",
        ],
    ),
    (
        "name",
        &[
            "name",
            "displayName",
            "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
            "urn:oid:2.16.840.1.113730.3.1.241",
        ],
    ),
    (
        "first_name",
        &[
            "first_name",
            "firstName",
            "givenName",
            "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname",
            "urn:oid:2.5.4.42",
        ],
    ),
    (
        "last_name",
        &[
            "last_name",
            "lastName",
            "surname",
            "sn",
            "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname",
            "urn:oid:2.5.4.4",
        ],
    ),
];

fn config(why: impl Into<String>) -> FederationError {
    FederationError::Config(why.into())
}

fn refused(why: impl Into<String>) -> FederationError {
    FederationError::Provider(why.into())
}

/// A new request id (an XML ID: it must not start with a digit).
pub fn request_id() -> String {
    format!("_{}", hex::encode(rand::random::<[u8; 20]>()))
}

/// The provider's sign-on URL carrying a deflated, base64 AuthnRequest
/// (redirect binding) for `acs_url`, with `relay_state`.
pub fn authn_request_url(
    strategy: &SamlStrategy,
    acs_url: &str,
    id: &str,
    relay_state: &str,
) -> Result<Url, FederationError> {
    let mut url = Url::parse(strategy.idp_sso_target_url.trim())
        .map_err(|_| config("idp_sso_target_url is not a URL"))?;
    let sp = ServiceProvider {
        entity_id: Some(strategy.issuer.clone()),
        acs_url: Some(acs_url.to_owned()),
        authn_name_id_format: Some(strategy.name_identifier_format.clone())
            .filter(|f| !f.trim().is_empty()),
        ..ServiceProvider::default()
    };
    let mut request: AuthnRequest = sp
        .make_authentication_request(url.as_str())
        .map_err(|e| config(format!("the AuthnRequest: {e}")))?;
    request.id = id.to_owned();
    let xml = request
        .to_string()
        .map_err(|e| config(format!("the AuthnRequest: {e}")))?;
    let mut deflate =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    deflate
        .write_all(xml.as_bytes())
        .and_then(|()| deflate.try_finish())
        .map_err(|e| config(format!("deflating the AuthnRequest: {e}")))?;
    let encoded = STANDARD.encode(deflate.get_ref());
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("SAMLRequest", &encoded)
            .append_pair("RelayState", relay_state);
        if let Some(extra) = strategy.idp_sso_target_url_runtime_params.as_object() {
            for (k, v) in extra {
                if matches!(
                    k.as_str(),
                    "SAMLRequest" | "RelayState" | "SigAlg" | "Signature"
                ) {
                    continue;
                }
                if let Some(v) = v.as_str() {
                    q.append_pair(k, v);
                }
            }
        }
    }
    Ok(url)
}

/// The key that signs the service provider's metadata documents
/// (`SAML_SP_KEY_FILE`, `SAML_SP_CERT_FILE`).
#[derive(Clone)]
pub struct SpSigning {
    /// The private key, DER.
    key_der: Vec<u8>,
    /// The certificate, base64 DER.
    certificate: String,
}

impl std::fmt::Debug for SpSigning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SpSigning(..)")
    }
}

impl SpSigning {
    /// From PEM texts of a private key (PKCS#8 or PKCS#1) and its certificate.
    pub fn from_pem(key: &str, certificate: &str) -> Result<Self, FederationError> {
        let key_der = STANDARD
            .decode(certificate_body(key))
            .map_err(|e| config(format!("the SAML signing key is not PEM: {e}")))?;
        let certificate = certificate_body(certificate);
        STANDARD
            .decode(&certificate)
            .map_err(|e| config(format!("the SAML signing certificate is not PEM: {e}")))?;
        Ok(Self {
            key_der,
            certificate,
        })
    }
}

/// The strategy's service provider metadata, for the identity provider to
/// import (ADFS, Entra ID, Okta): our entity id, the consumer URL of the POST
/// binding, the NameID format asked for, and that assertions must be signed.
/// With a signing key (`signing`) the document names its certificate and is
/// signed (enveloped, RSA-SHA256); without one it is neither (Tolk signs no
/// request and decrypts no assertion).
pub fn sp_metadata(
    strategy: &SamlStrategy,
    acs_url: &str,
    signing: Option<&SpSigning>,
) -> Result<String, FederationError> {
    let name_id = match strategy.name_identifier_format.trim() {
        "" => String::new(),
        format => format!(
            "\n    <md:NameIDFormat>{}</md:NameIDFormat>",
            escape(format)
        ),
    };
    let id = format!(
        "_tolk-sp-{}",
        &hex::encode(Sha256::digest(strategy.id.as_bytes()))[..24]
    );
    let (signature, key) = match signing {
        Some(s) => (
            format!(
                r##"
  <ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/><ds:Reference URI="#{id}"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue></ds:DigestValue></ds:Reference></ds:SignedInfo><ds:SignatureValue></ds:SignatureValue><ds:KeyInfo><ds:X509Data><ds:X509Certificate>{}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></ds:Signature>"##,
                s.certificate
            ),
            format!(
                r#"
    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>{}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"#,
                s.certificate
            ),
        ),
        None => (String::new(), String::new()),
    };
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" ID="{id}" entityID="{}">{signature}
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false" WantAssertionsSigned="true">{key}{name_id}
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="{}" index="0" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>
"#,
        escape(&strategy.issuer),
        escape(acs_url),
    );
    match signing {
        None => Ok(xml),
        Some(s) => {
            use samael::crypto::CryptoProvider;
            samael::crypto::Crypto::sign_xml(&xml, &s.key_der)
                .map_err(|e| config(format!("signing the metadata: {e}")))
        }
    }
}

/// What a verified response says.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    /// The subject's NameID.
    pub name_id: String,
    /// Attributes by name (and by friendly name): a string, or an array when
    /// an attribute has several values.
    pub attributes: Map<String, Value>,
    /// The assertion's ID (a second response with it is a replay).
    pub assertion_id: String,
    /// Until when the assertion could be presented.
    pub expires_at: DateTime<Utc>,
}

/// The certificate's base64 DER (from PEM or base64).
fn certificate_body(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----"))
        .collect::<String>()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// Whether `der`'s SHA-1 or SHA-256 fingerprint is `fingerprint` (hex, any
/// case, colons allowed).
fn fingerprint_matches(der: &[u8], fingerprint: &str) -> bool {
    let wanted: String = fingerprint
        .chars()
        .filter(|c| c.is_ascii_hexdigit())
        .collect::<String>()
        .to_ascii_lowercase();
    let computed = match wanted.len() {
        40 => hex::encode(Sha1::digest(der)),
        64 => hex::encode(Sha256::digest(der)),
        _ => return false,
    };
    computed.as_bytes().ct_eq(wanted.as_bytes()).into()
}

/// The text of the first `<…:X509Certificate>` of a document.
fn embedded_certificate(xml: &str) -> Option<String> {
    let start = xml.find("X509Certificate>")? + "X509Certificate>".len();
    let end = start + xml[start..].find('<')?;
    Some(certificate_body(&xml[start..end]))
}

/// The certificate that signs for the strategy: the configured one, or one
/// carried by the response whose fingerprint is the configured fingerprint.
fn signing_certificate(strategy: &SamlStrategy, xml: &str) -> Result<String, FederationError> {
    let configured = certificate_body(&strategy.idp_cert);
    if !configured.is_empty() {
        STANDARD
            .decode(&configured)
            .map_err(|_| config("idp_cert is not a PEM or base64 certificate"))?;
        return Ok(configured);
    }
    if strategy.idp_cert_fingerprint.trim().is_empty() {
        return Err(config("neither idp_cert nor idp_cert_fingerprint is set"));
    }
    let carried =
        embedded_certificate(xml).ok_or_else(|| refused("the response carries no certificate"))?;
    let der = STANDARD
        .decode(&carried)
        .map_err(|_| refused("the response's certificate is not base64"))?;
    if !fingerprint_matches(&der, &strategy.idp_cert_fingerprint) {
        return Err(refused("the response is signed by an unknown certificate"));
    }
    Ok(carried)
}

/// The identity provider as samael wants it: an entity with one signing key.
fn idp_metadata(
    entity_id: &str,
    certificate: &str,
    sso: &str,
) -> Result<EntityDescriptor, FederationError> {
    let xml = format!(
        r#"<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="{}"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>{}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="{}"/></md:IDPSSODescriptor></md:EntityDescriptor>"#,
        escape(entity_id),
        escape(certificate),
        escape(sso)
    );
    xml.parse::<EntityDescriptor>()
        .map_err(|e| config(format!("the identity provider's certificate: {e}")))
}

/// Verifies the base64 `SAMLResponse` posted to `acs_url` in answer to the
/// request `request_id`. Blocking (libxmlsec1): run it off the async threads.
pub fn verify(
    strategy: &SamlStrategy,
    acs_url: &str,
    saml_response: &str,
    request_id: &str,
) -> Result<Verified, FederationError> {
    let compact: String = saml_response
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let bytes = STANDARD
        .decode(compact.as_bytes())
        .map_err(|_| refused("the SAML response is not base64"))?;
    if bytes.len() > MAX_RESPONSE_BYTES {
        return Err(refused("the SAML response is too large"));
    }
    let xml = String::from_utf8(bytes).map_err(|_| refused("the SAML response is not UTF-8"))?;
    if xml.to_ascii_uppercase().contains("<!DOCTYPE") || xml.contains("<!ENTITY") {
        return Err(refused(
            "the SAML response has a DOCTYPE (entities are not accepted)",
        ));
    }
    // The issuer the response names, before verification, only to hand it to
    // samael's issuer check: the trust anchor is the certificate.
    let issuer = xml
        .parse::<Response>()
        .ok()
        .and_then(|r| r.issuer.and_then(|i| i.value))
        .unwrap_or_default();
    let certificate = signing_certificate(strategy, &xml)?;
    let sp = ServiceProvider {
        entity_id: Some(strategy.issuer.clone()),
        metadata_url: None,
        acs_url: Some(acs_url.to_owned()),
        slo_url: None,
        idp_metadata: idp_metadata(&issuer, &certificate, &strategy.idp_sso_target_url)?,
        max_clock_skew: chrono::Duration::seconds(SKEW_SECONDS),
        max_issue_delay: chrono::Duration::seconds(SKEW_SECONDS + 180),
        allowed_signature_algorithms: Some(vec![
            samael::crypto::AllowedSignatureAlgorithm::RsaSha256,
            samael::crypto::AllowedSignatureAlgorithm::RsaSha384,
            samael::crypto::AllowedSignatureAlgorithm::RsaSha512,
            samael::crypto::AllowedSignatureAlgorithm::EcdsaSha256,
            samael::crypto::AllowedSignatureAlgorithm::EcdsaSha384,
        ]),
        ..ServiceProvider::default()
    };
    let assertion = sp
        .parse_xml_response(&xml, Some(&[request_id]))
        .map_err(|e| refused(format!("the SAML response was not accepted: {e}")))?;
    let name_id = assertion
        .subject
        .as_ref()
        .and_then(|s| s.name_id.as_ref())
        .map(|n| n.value.trim().to_owned())
        .unwrap_or_default();
    let mut attributes = Map::new();
    for statement in assertion.attribute_statements.iter().flatten() {
        for attribute in &statement.attributes {
            let values: Vec<Value> = attribute
                .values
                .iter()
                .filter_map(|v| v.value.as_deref())
                .map(|v| Value::String(v.trim().to_owned()))
                .collect();
            let value = match values.len() {
                0 => continue,
                1 => values[0].clone(),
                _ => Value::Array(values),
            };
            for key in [&attribute.name, &attribute.friendly_name]
                .into_iter()
                .flatten()
            {
                attributes
                    .entry(key.clone())
                    .or_insert_with(|| value.clone());
            }
        }
    }
    let expires_at = assertion
        .conditions
        .as_ref()
        .and_then(|c| c.not_on_or_after)
        .unwrap_or(assertion.issue_instant + chrono::Duration::hours(1))
        + chrono::Duration::seconds(SKEW_SECONDS);
    Ok(Verified {
        name_id,
        attributes,
        assertion_id: assertion.id,
        expires_at,
    })
}

/// Who signed in: uid from `uid_attribute` (or the NameID), the other
/// fields from `attribute_statements` (our field → attribute names) or the
/// defaults.
pub fn identity(strategy: &SamlStrategy, verified: &Verified) -> Result<Identity, FederationError> {
    let first = |names: &[String]| -> Option<String> {
        names.iter().find_map(|n| match verified.attributes.get(n) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Array(items)) => items.iter().find_map(|v| v.as_str().map(str::to_owned)),
            _ => None,
        })
    };
    let names_of = |ours: &str| -> Vec<String> {
        match strategy.attribute_statements.get(ours) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Some(Value::String(s)) => s.split(',').map(|n| n.trim().to_owned()).collect(),
            _ => DEFAULT_ATTRIBUTES
                .iter()
                .find(|(k, _)| *k == ours)
                .map(|(_, v)| v.iter().map(|n| (*n).to_owned()).collect())
                .unwrap_or_default(),
        }
    };
    let uid = match strategy.uid_attribute.trim() {
        "" => Some(verified.name_id.clone()).filter(|n| !n.is_empty()),
        attribute => first(&[attribute.to_owned()]),
    }
    .ok_or_else(|| refused("the assertion does not say who signed in"))?;
    let email = first(&names_of("email"))
        .or_else(|| Some(verified.name_id.clone()))
        .filter(|e| e.contains('@'));
    let name = first(&names_of("name"))
        .or_else(|| {
            let parts: Vec<String> = [
                first(&names_of("first_name")),
                first(&names_of("last_name")),
            ]
            .into_iter()
            .flatten()
            .collect();
            (!parts.is_empty()).then(|| parts.join(" "))
        })
        .unwrap_or_default();
    Ok(Identity {
        uid,
        email,
        name,
        email_unverified: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_and_certificate_bodies() {
        let der = b"not really a certificate";
        let sha1 = hex::encode(Sha1::digest(der));
        let colons: Vec<String> = sha1
            .as_bytes()
            .chunks(2)
            .map(|c| String::from_utf8_lossy(c).to_uppercase())
            .collect();
        assert!(fingerprint_matches(der, &colons.join(":")));
        assert!(fingerprint_matches(der, &hex::encode(Sha256::digest(der))));
        assert!(!fingerprint_matches(der, "00"));
        assert!(!fingerprint_matches(b"other", &sha1));
        assert_eq!(
            certificate_body(
                "-----BEGIN CERTIFICATE-----\nAB CD\nEF==\n-----END CERTIFICATE-----\n"
            ),
            "ABCDEF=="
        );
        assert_eq!(
            embedded_certificate("<ds:X509Certificate>\n QUJD \n</ds:X509Certificate>").as_deref(),
            Some("QUJD")
        );
    }
}
