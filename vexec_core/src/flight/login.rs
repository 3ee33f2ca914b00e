//! A Flight SQL login: the credentials of the handshake's `authorization`
//! header and the messages a refused login gets, worded as pgwire words
//! them (auth.c), so a client learns no more than over pgwire.

use std::net::IpAddr;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// User and password of an `authorization: Basic <base64(user:password)>`
/// header (RFC 7617: the user name ends at the first colon).
pub fn basic_credentials(header: &str) -> Option<(String, String)> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = STANDARD.decode(rest.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// The token of an `authorization: Bearer <token>` header.
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim()).filter(|t| !t.is_empty())
}

/// A session token from 32 random bytes (URL-safe base64, no padding).
pub fn token_from(random: &[u8; 32]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random)
}

fn encryption(tls: bool) -> &'static str {
    if tls {
        "SSL encryption"
    } else {
        "no encryption"
    }
}

/// No pg_hba.conf line matched.
pub fn no_entry(addr: IpAddr, user: &str, database: &str, tls: bool) -> String {
    format!(
        "no pg_hba.conf entry for host \"{addr}\", user \"{user}\", database \"{database}\", {}",
        encryption(tls)
    )
}

/// The matching line says `reject`.
pub fn rejected(addr: IpAddr, user: &str, database: &str, tls: bool) -> String {
    format!(
        "pg_hba.conf rejects connection for host \"{addr}\", user \"{user}\", database \"{database}\", {}",
        encryption(tls)
    )
}

/// A password method failed (wrong password, no such role, no secret,
/// expired): one message for all, as pgwire.
pub fn password_failed(user: &str) -> String {
    format!("password authentication failed for user \"{user}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_header_gives_user_and_password() {
        // "alice:s3cr:t" -> the password keeps its colon.
        let h = format!("Basic {}", STANDARD.encode("alice:s3cr:t"));
        assert_eq!(basic_credentials(&h), Some(("alice".into(), "s3cr:t".into())));
        assert_eq!(
            basic_credentials(&format!("basic  {}", STANDARD.encode("u:"))),
            Some(("u".into(), "".into()))
        );
        assert_eq!(basic_credentials("Basic !!!"), None);
        assert_eq!(basic_credentials(&format!("Basic {}", STANDARD.encode("nocolon"))), None);
        assert_eq!(basic_credentials("Bearer abc"), None);
    }

    #[test]
    fn bearer_header_gives_the_token() {
        assert_eq!(bearer_token("Bearer abc-_1"), Some("abc-_1"));
        assert_eq!(bearer_token("bearer  t "), Some("t"));
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Basic abc"), None);
    }

    #[test]
    fn tokens_are_43_url_safe_characters() {
        let t = token_from(&[0xff; 32]);
        assert_eq!(t.len(), 43);
        assert!(t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_ne!(t, token_from(&[0xfe; 32]));
    }

    #[test]
    fn messages_are_pgwires() {
        let a: IpAddr = "10.0.0.7".parse().unwrap();
        assert_eq!(
            no_entry(a, "bob", "sales", false),
            "no pg_hba.conf entry for host \"10.0.0.7\", user \"bob\", database \"sales\", no encryption"
        );
        assert_eq!(
            rejected(a, "bob", "sales", true),
            "pg_hba.conf rejects connection for host \"10.0.0.7\", user \"bob\", database \"sales\", SSL encryption"
        );
        assert_eq!(password_failed("bob"), "password authentication failed for user \"bob\"");
    }
}
