//! The HTML pages: sign-in, consent and failure. Plain forms that work without
//! JavaScript, labelled fields, no external assets (inline style only), every
//! value HTML-escaped.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;\
background:#f4f5f7;color:#1d2330;margin:0}\
main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem 2.25rem;border-radius:10px;\
box-shadow:0 1px 3px rgba(0,0,0,.12)}\
h1{font-size:1.4rem;margin:0 0 1.25rem}\
label{display:block;font-weight:600;margin:1rem 0 .35rem}\
input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:.6rem .7rem;\
font-size:1rem;border:1px solid #8a93a6;border-radius:6px}\
input:focus,button:focus{outline:3px solid #1f6feb;outline-offset:1px}\
button{font-size:1rem;padding:.6rem 1.2rem;border-radius:6px;border:1px solid #1f4fbf;\
background:#1f5fdf;color:#fff;cursor:pointer;margin-top:1.4rem}\
button.secondary{background:#fff;color:#1f4fbf;margin-left:.5rem}\
.error{background:#fdecea;border:1px solid #d93025;color:#8a1c12;padding:.6rem .8rem;\
border-radius:6px}\
ul{padding-left:1.2rem}code{background:#eef0f4;padding:0 .25rem;border-radius:3px}";

fn layout(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title}</title><style>{STYLE}</style></head>\
<body><main>{body}</main></body></html>",
        title = escape(title)
    )
}

/// Adds the headers every page carries: no framing, no caching, no external loads.
pub fn page(status: StatusCode, html: String) -> Response {
    let mut res = (status, Html(html)).into_response();
    let h = res.headers_mut();
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
             form-action 'self' http: https:; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    res
}

/// The sign-in page; `failed` shows an error above the form.
pub fn login(continue_to: Option<&str>, failed: bool, email: &str) -> Response {
    let alert = if failed {
        "<p class=\"error\" role=\"alert\" id=\"login-error\">The email or password is not correct. Please try again.</p>"
    } else {
        ""
    };
    let described = if failed {
        " aria-describedby=\"login-error\""
    } else {
        ""
    };
    let hidden = continue_to
        .map(|c| {
            format!(
                "<input type=\"hidden\" name=\"continue\" value=\"{}\">",
                escape(c)
            )
        })
        .unwrap_or_default();
    let body = format!(
        "<h1>Sign in</h1>{alert}\
<form method=\"post\" action=\"/auth/signin\" id=\"signin\">{hidden}\
<label for=\"email\">Email</label>\
<input type=\"email\" id=\"email\" name=\"email\" autocomplete=\"username\" required autofocus value=\"{email}\"{described}>\
<label for=\"password\">Password</label>\
<input type=\"password\" id=\"password\" name=\"password\" autocomplete=\"current-password\" required{described}>\
<button type=\"submit\" id=\"submit\">Sign in</button></form>",
        email = escape(email)
    );
    page(
        if failed {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::OK
        },
        layout("Sign in", &body),
    )
}

/// What the consent page shows and posts back.
pub struct Consent<'a> {
    /// The application's name.
    pub client_name: &'a str,
    /// The host of the metadata document the application describes itself
    /// in, when it does (its name is then its own claim).
    pub described_at: Option<&'a str>,
    /// It describes itself and can only send the browser back to this
    /// computer.
    pub local_only: bool,
    /// Where the browser goes afterwards, in plain words.
    pub destination: String,
    /// The user's email (who is signed in).
    pub user_email: &'a str,
    /// The scopes asked for.
    pub scopes: &'a [String],
    /// Hidden fields: every authorization parameter and the consent token.
    pub fields: Vec<(&'a str, String)>,
}

fn scope_text(s: &str) -> &str {
    match s {
        "public" => "Use the platform on your behalf",
        "openid" => "Confirm who you are",
        "profile" => "See your name",
        "email" => "See your email address",
        "offline_access" => "Stay signed in when you are away",
        "translate" => "Translate text and documents",
        "voice" => "Use the voice service",
        other => other,
    }
}

/// The consent page.
pub fn consent(c: &Consent<'_>) -> Response {
    let hidden: String = c
        .fields
        .iter()
        .map(|(k, v)| {
            format!(
                "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
                escape(k),
                escape(v)
            )
        })
        .collect();
    let scopes: String = c
        .scopes
        .iter()
        .map(|s| {
            format!(
                "<li>{} <code>{}</code></li>",
                escape(scope_text(s)),
                escape(s)
            )
        })
        .collect();
    let origin = match c.described_at {
        Some(host) => format!(
            "<p id=\"client-origin\">This application describes itself at <strong>{}</strong>; \
its name is its own claim.</p>",
            escape(host)
        ),
        None => String::new(),
    };
    let warning = match c.local_only {
        true => {
            "<p class=\"error\" role=\"alert\" id=\"local-only\">This application can only \
send you back to a program on this computer. Allow it only if you started that program \
yourself, just now.</p>"
        }
        false => "",
    };
    let body = format!(
        "<h1>Allow {name}?</h1>{origin}{warning}\
<p>You are signed in as <strong>{email}</strong>.</p>\
<p><strong>{name}</strong> asks to:</p><ul aria-label=\"Requested permissions\">{scopes}</ul>\
<p>After you answer, you will be sent to {dest}.</p>\
<form method=\"post\" action=\"/auth/authorize\" id=\"consent\">{hidden}\
<button type=\"submit\" name=\"consent\" value=\"allow\" id=\"allow\">Allow</button>\
<button type=\"submit\" name=\"consent\" value=\"deny\" id=\"deny\" class=\"secondary\">Deny</button>\
</form>",
        name = escape(c.client_name),
        email = escape(c.user_email),
        dest = escape(&c.destination),
    );
    page(StatusCode::OK, layout("Authorize application", &body))
}

/// An error page (authorization errors that must not redirect, sign-in failures).
pub fn error(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<h1>{}</h1><p class=\"error\" role=\"alert\">{}</p><p><a href=\"/auth/login\">Sign in again</a></p>",
        escape(title),
        escape(text)
    );
    page(status, layout(title, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
