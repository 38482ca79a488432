//! The bridge token: 256 bits from the OS's CSPRNG, base64url without padding (43 characters),
//! and the one comparison every route uses ([`Token::matches`], constant time).
//!
//! The token is never logged: [`Token`]'s `Debug` prints nothing of it, and only
//! [`Token::reveal`] (the answer to `bridge/open`, over the 0600 control socket) gives it out.
//! The same socket is the only way back in: `bridge/open` with the token of an earlier answer
//! ([`Token::reuse`]) reopens a bridge under that token after a daemon restart, and only a
//! token of the generated form (256 bits, base64url) is taken.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use subtle::ConstantTimeEq;

/// Random bytes in a token (256 bits).
pub const TOKEN_BYTES: usize = 32;

/// A bridge's bearer token.
pub struct Token(String);

impl Token {
    /// A fresh token from the OS's random source.
    pub fn generate() -> std::io::Result<Token> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Token(URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// A token given back by the `browser-bridge` that held it before a restart: only the
    /// form [`Token::generate`] produces (43 characters of base64url without padding, decoding
    /// to 32 bytes), so no caller can weaken a bridge with a short or guessable token.
    pub fn reuse(text: &str) -> Option<Token> {
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        // Whatever the decoder's leniency about the unused trailing bits: the re-encoding must
        // give back the same text, or two spellings would name one token.
        (bytes.len() == TOKEN_BYTES && URL_SAFE_NO_PAD.encode(&bytes) == text)
            .then(|| Token(String::from(text)))
    }

    /// Whether `presented` is this token, in time that depends only on the lengths (which are
    /// public: every token is 43 characters). The only token comparison of the bridge: every
    /// route reaches it through `guard::authorize`.
    pub fn matches(&self, presented: &[u8]) -> bool {
        self.0.as_bytes().ct_eq(presented).into()
    }

    /// The token itself, for the answer to `bridge/open` only.
    pub fn reveal(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// A random identifier (128 bits, hex) for an attached browser, so the `client` of one
/// attachment never names a later one.
pub fn client_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_256_bit_base64url() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_ne!(a.reveal(), b.reveal());
        assert_eq!(a.reveal().len(), 43);
        let decoded = URL_SAFE_NO_PAD.decode(a.reveal()).unwrap();
        assert_eq!(decoded.len(), TOKEN_BYTES);
        assert!(!format!("{a:?}").contains(a.reveal()));
    }

    #[test]
    fn only_generated_tokens_are_reused() {
        let t = Token::generate().unwrap();
        let again = Token::reuse(t.reveal()).unwrap();
        assert!(again.matches(t.reveal().as_bytes()));
        // The last of 43 characters carries 2 unused bits, 0 in the canonical spelling.
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let last = ALPHABET.iter().position(|&c| c == t.reveal().as_bytes()[42]).unwrap();
        let non_canonical = format!("{}{}", &t.reveal()[..42], ALPHABET[last | 1] as char);
        for bad in [
            "",
            "short",
            &t.reveal()[..42],
            &format!("{}A", t.reveal()),
            &format!("{}=", t.reveal()),
            &format!("{}+", &t.reveal()[..42]),
            &format!("{}/", &t.reveal()[..42]),
            &"A".repeat(44),
            &non_canonical,
        ] {
            assert!(Token::reuse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn only_the_exact_token_matches() {
        let t = Token::generate().unwrap();
        let good = t.reveal().as_bytes().to_vec();
        assert!(t.matches(&good));
        let mut first = good.clone();
        first[0] ^= 1;
        let mut last = good.clone();
        *last.last_mut().unwrap() ^= 1;
        let mut longer = good.clone();
        longer.push(b'A');
        for bad in [&first[..], &last[..], &good[..42], &longer[..], b""] {
            assert!(!t.matches(bad));
        }
    }

    /// The comparison is constant-time by construction (no timing tells how much of a guess
    /// matched). `subtle`'s `ct_eq` is the only comparison of token bytes in the bridge, and it
    /// lives in `Token::matches` alone.
    #[test]
    fn ct_eq_is_the_only_token_comparison() {
        let sources = [
            ("token.rs", include_str!("token.rs")),
            ("guard.rs", include_str!("guard.rs")),
            ("routes.rs", include_str!("routes.rs")),
            ("browser.rs", include_str!("browser.rs")),
            ("rpc_clients.rs", include_str!("rpc_clients.rs")),
            ("listener.rs", include_str!("listener.rs")),
            ("control.rs", include_str!("control.rs")),
            ("http.rs", include_str!("http.rs")),
            ("../bridge.rs", include_str!("../bridge.rs")),
        ];
        let mut uses = Vec::new();
        for (file, text) in sources {
            let code = text.split("#[cfg(test)]").next().unwrap();
            for (n, line) in code.lines().enumerate() {
                if line.contains(".ct_eq(") {
                    uses.push(format!("{file}:{}", n + 1));
                }
                assert!(
                    !line.contains("reveal() ==") && !line.contains("== token"),
                    "{file}:{}: a token compared with ==",
                    n + 1
                );
            }
        }
        assert_eq!(uses.len(), 1, "ct_eq uses: {uses:?}");
        assert!(uses[0].starts_with("token.rs:"), "{uses:?}");
        let guard = include_str!("guard.rs");
        assert_eq!(guard.matches(".matches(").count(), 1, "guard.rs calls Token::matches once");
    }
}
