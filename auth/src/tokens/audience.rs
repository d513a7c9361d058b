//! The audience of an access token, bound to the resources it was asked for
//! (RFC 8707 resource indicators, as MCP requires).
//!
//! A token asked for with one or more `resource` parameters (absolute URLs on
//! the authority's domain) names exactly those resources in `aud`: a string
//! for one, an array for several. A token asked for without any names the
//! authority's domain, as tokens always did, and is good for every resource
//! server of that authority. A resource server accepts a token whose audience
//! is its authority or one of its own resources ([`Audience::admits`]), so a
//! token issued for one MCP server is refused by another.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What `aud` names: the requested resources, or the authority's domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audience(Vec<String>);

impl Audience {
    /// The audience of a token of the authority `domain` asked for
    /// `resources` (none: the whole authority).
    pub fn of(domain: &str, resources: &[String]) -> Self {
        if resources.is_empty() {
            Self(vec![domain.to_owned()])
        } else {
            Self(resources.to_vec())
        }
    }

    /// The names in `aud`, in order.
    pub fn entries(&self) -> &[String] {
        &self.0
    }

    /// Whether the token was issued by the authority of `domain`: for the
    /// authority itself, or for resources on its domain only.
    pub fn of_authority(&self, domain: &str) -> bool {
        !self.0.is_empty()
            && self
                .0
                .iter()
                .all(|a| a.eq_ignore_ascii_case(domain) || on_authority(a, domain))
    }

    /// Whether a resource server of the authority `domain` accepts the token:
    /// it was issued for the whole authority, or for a resource whose path
    /// `own` says the server serves.
    pub fn admits(&self, domain: &str, own: impl Fn(&str) -> bool) -> bool {
        self.of_authority(domain)
            && self.0.iter().any(|a| {
                a.eq_ignore_ascii_case(domain) || url::Url::parse(a).is_ok_and(|u| own(u.path()))
            })
    }
}

impl From<&str> for Audience {
    fn from(name: &str) -> Self {
        Self(vec![name.to_owned()])
    }
}

impl Serialize for Audience {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => s.serialize_str(one),
            many => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Audience {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            One(String),
            Many(Vec<String>),
        }
        Ok(match Form::deserialize(d)? {
            Form::One(one) => Self(vec![one]),
            Form::Many(many) => Self(many),
        })
    }
}

/// Whether `resource` (RFC 8707) is an absolute http(s) URL on the
/// authority's domain, without a fragment or credentials.
pub fn on_authority(resource: &str, domain: &str) -> bool {
    url::Url::parse(resource).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.fragment().is_none()
            && u.username().is_empty()
            && u.host_str().is_some_and(|h| h.eq_ignore_ascii_case(domain))
    })
}

/// The resources of a grant as stored (one column): space-separated, as
/// URLs hold no spaces; `None` for none.
pub fn stored(resources: &[String]) -> Option<String> {
    (!resources.is_empty()).then(|| resources.join(" "))
}

/// The resources of a stored grant ([`stored`]).
pub fn from_stored(stored: Option<&str>) -> Vec<String> {
    stored
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One resource is a string, several an array, none the domain; each
    /// reads back the same.
    #[test]
    fn audiences_are_a_string_or_an_array() {
        let one = Audience::of("localhost", &["http://localhost:8/mcp".to_owned()]);
        assert_eq!(
            serde_json::to_value(&one).unwrap(),
            "http://localhost:8/mcp"
        );
        let two = Audience::of(
            "localhost",
            &[
                "http://localhost:8/mcp".to_owned(),
                "http://localhost:9/".to_owned(),
            ],
        );
        let json = serde_json::to_value(&two).unwrap();
        assert!(json.is_array());
        assert_eq!(serde_json::from_value::<Audience>(json).unwrap(), two);
        let none = Audience::of("localhost", &[]);
        assert_eq!(serde_json::to_value(&none).unwrap(), "localhost");
        assert_eq!(from_stored(stored(two.entries()).as_deref()), two.entries());
        assert_eq!(stored(&[]), None);
    }

    /// A token for one MCP server is refused by another and by a server of
    /// another authority; a token for the authority goes everywhere on it.
    #[test]
    fn resource_servers_admit_their_own_resources_only() {
        let mcp = |path: &str| path == "/mcp";
        let api = |path: &str| path == "/";
        let for_mcp = Audience::of("localhost", &["http://localhost:8/mcp".to_owned()]);
        assert!(for_mcp.of_authority("localhost"));
        assert!(for_mcp.admits("localhost", mcp));
        assert!(!for_mcp.admits("localhost", api));
        assert!(!for_mcp.admits("example.com", mcp));
        let whole = Audience::of("localhost", &[]);
        assert!(whole.admits("localhost", api) && whole.admits("localhost", mcp));
        assert!(!whole.of_authority("example.com"));
        let mixed = Audience(vec!["http://localhost/".into(), "http://evil.com/".into()]);
        assert!(!mixed.of_authority("localhost"));
        assert!(on_authority("https://LOCALHOST:3/x", "localhost"));
        assert!(!on_authority("https://localhost/x#f", "localhost"));
        assert!(!on_authority("not a url", "localhost"));
    }
}
