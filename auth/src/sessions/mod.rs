//! The browser session: an encrypted and authenticated cookie `_coauth_session`
//! at Path=/auth holding who signed in and when ([`cookie`]).

pub mod cookie;

pub use cookie::{COOKIE_NAME, Session, SessionKey};
