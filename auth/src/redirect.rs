//! Redirect URI matching (RFC 6749 §3.1.2, RFC 8252 §7.3) and the `continue`
//! parameter's sanitising (never off-host).

use url::Url;

/// Whether a URL host names this computer.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "[::1]" | "localhost")
}

/// Whether a redirect URI goes back to this computer.
pub(crate) fn is_loopback(redirect_uri: &str) -> bool {
    Url::parse(redirect_uri).is_ok_and(|u| u.host_str().is_some_and(is_loopback_host))
}

/// Whether `requested` is one of `registered`: exactly the same string, or, for
/// a loopback `http` URI, the same host, path and query on any port.
pub fn matches(registered: &[String], requested: &str) -> bool {
    if requested.contains('#') || requested.len() > 2048 {
        return false;
    }
    if registered.iter().any(|r| r == requested) {
        return true;
    }
    let Ok(req) = Url::parse(requested) else {
        return false;
    };
    if req.scheme() != "http" || !req.username().is_empty() || req.password().is_some() {
        return false;
    }
    let Some(host) = req.host_str() else {
        return false;
    };
    if !is_loopback_host(host) {
        return false;
    }
    // The raw string must carry the host as parsed (no userinfo or backslash tricks).
    if !requested.starts_with(&format!("http://{host}")) {
        return false;
    }
    registered.iter().any(|r| {
        Url::parse(r).is_ok_and(|reg| {
            reg.scheme() == "http"
                && reg.host_str() == Some(host)
                && reg.path() == req.path()
                && reg.query() == req.query()
        })
    })
}

/// A `continue` target that stays on this site: a path (`/…`, not `//` and no
/// backslash), or an absolute http(s) URL on `host`, reduced to its path.
pub fn sanitize_continue(target: &str, host: &str) -> Option<String> {
    let target = target.trim();
    if target.is_empty() || target.contains('\\') || target.chars().any(char::is_control) {
        return None;
    }
    if target.starts_with('/') {
        if target.starts_with("//") {
            return None;
        }
        return Some(target.to_owned());
    }
    let url = Url::parse(target).ok()?;
    if !matches!(url.scheme(), "http" | "https") || !url.username().is_empty() {
        return None;
    }
    let same = url.host_str().is_some_and(|h| h.eq_ignore_ascii_case(host));
    if !same {
        return None;
    }
    let mut out = url.path().to_owned();
    if let Some(q) = url.query() {
        out.push('?');
        out.push_str(q);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_loopback_any_port() {
        let reg = vec![
            "https://app.example.com/cb".to_owned(),
            "http://127.0.0.1/callback".to_owned(),
        ];
        assert!(matches(&reg, "https://app.example.com/cb"));
        assert!(matches(&reg, "http://127.0.0.1:53682/callback"));
        for bad in [
            "https://app.example.com/cb/",
            "https://app.example.com/cb/extra",
            "https://app.example.com/CB",
            "https://app.example.com/cb?x=1",
            "https://app.example.com/cb#frag",
            "https://app.example.com:444/cb",
            "https://app.example.com/../cb",
            "https:app.example.com/cb",
            "https://app.example.com@evil.com/cb",
            "http://app.example.com%25@evil.com/cb",
            "https://app.example.com.evil.com/cb",
            "https://evil.com/cb",
            "javascript:alert(1)",
            "data:text/html,x",
            "http://127.0.0.1:5/other",
            "http://localhost:5/callback",
            "http://[::1]:5/callback",
            "http://127.0.0.1@evil.com/callback",
            "http://127.0.0.1\\@evil.com/callback",
        ] {
            assert!(!matches(&reg, bad), "{bad} must not match");
        }
    }

    #[test]
    fn continue_never_leaves_the_host() {
        let h = "localhost";
        assert_eq!(
            sanitize_continue("/auth/authorize?a=1", h).as_deref(),
            Some("/auth/authorize?a=1")
        );
        assert_eq!(
            sanitize_continue("http://localhost:8080/x?y", h).as_deref(),
            Some("/x?y")
        );
        for bad in [
            "//evil",
            "/\\evil",
            "/\\/evil",
            "https://evil",
            "https://localhost.evil",
            "https://localhost@evil",
            "javascript:alert(1)",
            "",
        ] {
            assert_eq!(sanitize_continue(bad, h), None, "{bad}");
        }
    }
}
