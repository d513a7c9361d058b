//! What every federated sign-in shares: the provider's profile read through
//! the strategy's mappings, the `ensure_matching` restriction, and the user
//! it resolves to.

use regex::RegexBuilder;
use serde_json::Value;
use tolk_storage::PgPool;
use tolk_storage::auth::users::{self, User};
use uuid::Uuid;

use super::FederationError;

/// Who the provider says signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The provider's stable subject id.
    pub uid: String,
    /// Email address, when the provider gave one.
    pub email: Option<String>,
    /// Display name (may be empty).
    pub name: String,
    /// The provider says the email is not verified (`email_verified: false`):
    /// it must not link to an existing account.
    pub email_unverified: bool,
}

/// Provider fields tried for each of our fields when the strategy's
/// `info_mappings` does not name them (OpenID Connect, Microsoft Graph,
/// GitHub-style profiles).
const DEFAULT_MAPPINGS: &[(&str, &str)] = &[
    ("uid", "sub,id,oid,user_id"),
    ("email", "email,mail,userPrincipalName,upn"),
    ("name", "name,displayName,display_name,login"),
    ("first_name", "given_name,givenName,first_name"),
    ("last_name", "family_name,surname,last_name"),
];

/// A profile value as text (numbers too: GitHub's ids are numbers).
fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(items) => items.iter().find_map(text),
        _ => None,
    }
    .filter(|s| !s.is_empty())
}

/// Our field `ours`: the first of its provider fields (the strategy's
/// mapping, comma-separated, else the default) with a value in `raw`, then in
/// `credentials` (the token response).
pub fn mapped(mappings: &Value, ours: &str, raw: &Value, credentials: &Value) -> Option<String> {
    let candidates = mappings.get(ours).and_then(Value::as_str).or_else(|| {
        DEFAULT_MAPPINGS
            .iter()
            .find(|(k, _)| *k == ours)
            .map(|(_, v)| *v)
    })?;
    let fields: Vec<&str> = candidates
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    [raw, credentials]
        .iter()
        .find_map(|source| fields.iter().find_map(|f| source.get(*f).and_then(text)))
}

/// The identity in a provider profile (`raw`) and token response.
pub fn identity(
    mappings: &Value,
    raw: &Value,
    credentials: &Value,
) -> Result<Identity, FederationError> {
    let uid = mapped(mappings, "uid", raw, credentials).ok_or_else(|| {
        FederationError::Provider("the identity provider did not say who signed in".into())
    })?;
    let email = mapped(mappings, "email", raw, credentials).filter(|e| e.contains('@'));
    let name = mapped(mappings, "name", raw, credentials)
        .or_else(|| {
            let first = mapped(mappings, "first_name", raw, credentials);
            let last = mapped(mappings, "last_name", raw, credentials);
            let both: Vec<String> = first.into_iter().chain(last).collect();
            (!both.is_empty()).then(|| both.join(" "))
        })
        .unwrap_or_default();
    Ok(Identity {
        uid,
        email,
        name,
        email_unverified: raw.get("email_verified") == Some(&Value::Bool(false)),
    })
}

/// Largest compiled `ensure_matching` pattern (memory, not time: `regex`
/// runs in linear time).
const MAX_PATTERN_BYTES: usize = 1 << 20;

/// The `ensure_matching` restriction: for every field, at least one of the
/// profile's values (a scalar or an array of them) matches at least one of
/// its regexes, case-insensitively. Fields are ANDed, regexes ORed. Refused:
/// the first field that fails.
pub fn ensure_matching(rules: &Value, raw: &Value) -> Result<(), FederationError> {
    let Some(rules) = rules.as_object() else {
        return match rules {
            Value::Null => Ok(()),
            _ => Err(FederationError::Config(
                "ensure_matching must be an object".into(),
            )),
        };
    };
    for (field, patterns) in rules {
        let patterns: Vec<&str> = match patterns {
            Value::String(p) => vec![p.as_str()],
            Value::Array(ps) => ps.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut compiled = Vec::with_capacity(patterns.len());
        for p in patterns {
            compiled.push(
                RegexBuilder::new(p)
                    .case_insensitive(true)
                    .size_limit(MAX_PATTERN_BYTES)
                    .build()
                    .map_err(|e| {
                        FederationError::Config(format!("ensure_matching.{field}: {e}"))
                    })?,
            );
        }
        let values: Vec<String> = match raw.get(field) {
            Some(Value::Array(items)) => items.iter().filter_map(text).collect(),
            Some(v) => text(v).into_iter().collect(),
            None => Vec::new(),
        };
        let ok = values
            .iter()
            .any(|v| compiled.iter().any(|re| re.is_match(v)));
        if !ok {
            return Err(FederationError::Refused(format!(
                "your account is not allowed to sign in here ({field} does not match)"
            )));
        }
    }
    Ok(())
}

/// The user `identity` is on `authority_id` through `provider` (a strategy
/// id): the one its lookup record names, else the one with its email (a
/// verified email only; the lookup is then recorded), else a new user.
pub async fn resolve_user(
    db: &PgPool,
    authority_id: Uuid,
    provider: &str,
    identity: &Identity,
) -> Result<User, FederationError> {
    let gone = || FederationError::Refused("this account has been deleted".into());
    if let Some(user) = users::by_lookup(db, authority_id, provider, &identity.uid).await? {
        return if user.deleted_at.is_none() {
            Ok(user)
        } else {
            Err(gone())
        };
    }
    let email = identity.email.as_deref().ok_or_else(|| {
        FederationError::Provider("the identity provider gave no email address".into())
    })?;
    let user = match users::by_email(db, authority_id, email).await? {
        Some(_) if identity.email_unverified => {
            return Err(FederationError::Refused(
                "an account with this email exists, and the identity provider has not verified \
                 the email"
                    .into(),
            ));
        }
        Some(existing) => existing,
        None => match users::create(db, authority_id, email, &identity.name, "", 0).await? {
            Some(created) => {
                tracing::info!(user_id = %created.id, provider, "user created by federated sign-in");
                created
            }
            // Created by a concurrent sign-in in between.
            None => users::by_email(db, authority_id, email)
                .await?
                .ok_or_else(|| FederationError::Provider("the user could not be created".into()))?,
        },
    };
    if user.deleted_at.is_some() {
        return Err(gone());
    }
    users::add_lookup(db, authority_id, &user.id, provider, &identity.uid).await?;
    Ok(user)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mappings_pick_the_first_non_empty_field_then_the_credentials() {
        let raw = json!({"id": 4211, "mail": "", "userPrincipalName": "Ann@Example.org",
                         "displayName": "Ann"});
        let creds = json!({"sub": "ignored"});
        let who = identity(&json!({}), &raw, &creds).expect("identity");
        assert_eq!(who.uid, "4211");
        assert_eq!(who.email.as_deref(), Some("Ann@Example.org"));
        assert_eq!(who.name, "Ann");
        let custom = json!({"uid": "employee_id, sub", "email": "work_email"});
        let who = identity(&custom, &json!({"work_email": "a@b.c"}), &creds).expect("identity");
        assert_eq!(who.uid, "ignored", "falls back to the token response");
        assert_eq!(who.email.as_deref(), Some("a@b.c"));
        assert!(identity(&json!({}), &json!({"email": "x@y.z"}), &json!({})).is_err());
        let unverified = identity(
            &json!({}),
            &json!({"sub": "1", "email_verified": false}),
            &json!({}),
        )
        .expect("identity");
        assert!(unverified.email_unverified);
        let names = identity(
            &json!({}),
            &json!({"sub": "1", "given_name": "A", "family_name": "B"}),
            &json!({}),
        )
        .expect("identity");
        assert_eq!(names.name, "A B");
    }

    #[test]
    fn ensure_matching_ands_fields_and_ors_patterns_case_insensitively() {
        let rules = json!({"email": ["@example\\.org$", "@example\\.com$"],
                           "groups": "^staff$"});
        let ok = json!({"email": "ann@EXAMPLE.org", "groups": ["guests", "Staff"]});
        assert!(ensure_matching(&rules, &ok).is_ok());
        let wrong_domain = json!({"email": "ann@evil.test", "groups": ["staff"]});
        let e = ensure_matching(&rules, &wrong_domain).expect_err("refused");
        assert!(e.to_string().contains("email"), "{e}");
        let no_group = json!({"email": "ann@example.com"});
        assert!(ensure_matching(&rules, &no_group).is_err());
        assert!(ensure_matching(&json!({}), &no_group).is_ok());
        assert!(ensure_matching(&Value::Null, &no_group).is_ok());
        assert!(matches!(
            ensure_matching(&json!({"email": ["("]}), &ok),
            Err(FederationError::Config(_))
        ));
    }
}
