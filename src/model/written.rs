//! An intent fingerprint as a journal wrote it, held compactly.

use serde::{Serialize, Serializer};
use std::borrow::Cow;

/// The `fingerprint` an accepted record carries (docs/design.md §4: the
/// gateway's own, which the analysis checks against its recomputed one).
///
/// Held as its scheme and 32 bytes when it has the form gateways write,
/// `sha256:` or `hmac-sha256:` then 64 lowercase hex digits: 33 bytes in
/// place of a 71- or 76-byte text, which every accepted record of a
/// journal of millions would hold (docs/design.md §9.8). Anything else
/// (another scheme, upper-case hex, a short digest) is kept as written.
/// Either is behind one pointer, so an accepted record without a
/// fingerprint spends 8 bytes on it. [`WrittenFingerprint::text`] gives
/// back exactly the text read, and it is serialized as that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFingerprint(Box<Held>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Held {
    /// `sha256:<hex>` (`hmac` false) or `hmac-sha256:<hex>` (`hmac` true).
    Digest { hmac: bool, bytes: [u8; 32] },
    /// Any other text, as written.
    Text(Box<str>),
}

impl WrittenFingerprint {
    /// The fingerprint written as `text`.
    pub fn new(text: &str) -> WrittenFingerprint {
        let (hmac, hex_digits) = if let Some(h) = text.strip_prefix("hmac-sha256:") {
            (true, h)
        } else if let Some(h) = text.strip_prefix("sha256:") {
            (false, h)
        } else {
            return WrittenFingerprint(Box::new(Held::Text(text.into())));
        };
        let lower = hex_digits.len() == 64
            && hex_digits
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let mut bytes = [0u8; 32];
        let held = if lower && hex::decode_to_slice(hex_digits, &mut bytes).is_ok() {
            Held::Digest { hmac, bytes }
        } else {
            Held::Text(text.into())
        };
        WrittenFingerprint(Box::new(held))
    }

    /// The scheme (`true`: `hmac-sha256`, `false`: `sha256`) and digest,
    /// when the text has the usual form; `None` otherwise.
    pub fn digest(&self) -> Option<(bool, &[u8; 32])> {
        match &*self.0 {
            Held::Digest { hmac, bytes } => Some((*hmac, bytes)),
            Held::Text(_) => None,
        }
    }

    /// Whether it names the `hmac-sha256` scheme (its text begins
    /// `hmac-sha256:`).
    pub fn is_hmac(&self) -> bool {
        match &*self.0 {
            Held::Digest { hmac, .. } => *hmac,
            Held::Text(t) => t.starts_with("hmac-sha256:"),
        }
    }

    /// The text as the journal wrote it.
    pub fn text(&self) -> Cow<'_, str> {
        match &*self.0 {
            Held::Digest { hmac, bytes } => {
                let prefix = if *hmac { "hmac-sha256:" } else { "sha256:" };
                // One allocation: the digits are written on the stack first.
                let mut digits = [0u8; 64];
                let mut text = String::with_capacity(prefix.len() + digits.len());
                text.push_str(prefix);
                if hex::encode_to_slice(bytes, &mut digits).is_ok() {
                    text.push_str(std::str::from_utf8(&digits).unwrap_or_default());
                }
                Cow::Owned(text)
            }
            Held::Text(t) => Cow::Borrowed(t),
        }
    }
}

impl WrittenFingerprint {
    /// The fingerprint, borrowed.
    pub fn view(&self) -> WrittenRef<'_> {
        match &*self.0 {
            Held::Digest { hmac, bytes } => WrittenRef::Digest { hmac: *hmac, bytes },
            Held::Text(t) => WrittenRef::Text(t),
        }
    }
}

/// A [`WrittenFingerprint`], borrowed from where a model holds it: the
/// same scheme and digest, or the text as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrittenRef<'a> {
    /// `sha256:<hex>` (`hmac` false) or `hmac-sha256:<hex>` (`hmac` true).
    Digest {
        /// Whether the scheme is `hmac-sha256`.
        hmac: bool,
        /// The digest.
        bytes: &'a [u8; 32],
    },
    /// Any other text, as written.
    Text(&'a str),
}

impl<'a> WrittenRef<'a> {
    /// As [`WrittenFingerprint::digest`].
    pub fn digest(self) -> Option<(bool, &'a [u8; 32])> {
        match self {
            WrittenRef::Digest { hmac, bytes } => Some((hmac, bytes)),
            WrittenRef::Text(_) => None,
        }
    }

    /// As [`WrittenFingerprint::is_hmac`].
    pub fn is_hmac(self) -> bool {
        match self {
            WrittenRef::Digest { hmac, .. } => hmac,
            WrittenRef::Text(t) => t.starts_with("hmac-sha256:"),
        }
    }

    /// The text as the journal wrote it.
    pub fn text(self) -> String {
        match self {
            WrittenRef::Digest { hmac, bytes } => {
                let prefix = if hmac { "hmac-sha256:" } else { "sha256:" };
                format!("{prefix}{}", hex::encode(bytes))
            }
            WrittenRef::Text(t) => t.to_string(),
        }
    }

    /// An owned copy.
    pub fn to_owned(self) -> WrittenFingerprint {
        let held = match self {
            WrittenRef::Digest { hmac, bytes } => Held::Digest {
                hmac,
                bytes: *bytes,
            },
            WrittenRef::Text(t) => Held::Text(t.into()),
        };
        WrittenFingerprint(Box::new(held))
    }
}

impl Serialize for WrittenRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl From<&str> for WrittenFingerprint {
    fn from(text: &str) -> Self {
        WrittenFingerprint::new(text)
    }
}

impl Serialize for WrittenFingerprint {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text comes back as it was written; only the usual form is
    /// held as a digest.
    #[test]
    fn the_text_read_is_the_text_given_back() {
        let hex = "cebf9490e9f470331183094a8deb02ef8c2753011bce94ace6bc6d899bcbddc3";
        let cases = [
            (format!("sha256:{hex}"), true),
            (format!("hmac-sha256:{hex}"), true),
            (format!("sha256:{}", hex.to_uppercase()), false),
            (format!("sha256:{}", &hex[..63]), false),
            (format!("sha256:{hex}0"), false),
            (format!("sha512:{hex}"), false),
            (format!("hmac-sha256:{}g", &hex[..63]), false),
            ("sha256:".to_string(), false),
            (String::new(), false),
            ("not a fingerprint, é".to_string(), false),
        ];
        for (text, digest) in cases {
            let w = WrittenFingerprint::new(&text);
            assert_eq!(w.text(), text.as_str(), "{text}");
            assert_eq!(w.is_hmac(), text.starts_with("hmac-sha256:"), "{text}");
            assert_eq!(w.digest().is_some(), digest, "{text}");
            assert_eq!(
                serde_json::to_string(&w).ok(),
                serde_json::to_string(&text).ok()
            );
        }
        let w = WrittenFingerprint::new(&format!("hmac-sha256:{hex}"));
        assert_eq!(w.digest().map(|(hmac, _)| hmac), Some(true));
        assert_eq!(size_of::<Option<WrittenFingerprint>>(), 8);
    }
}
