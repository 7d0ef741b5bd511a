//! What a JSON line's hash cannot pin down (docs/design.md §6.4): a key
//! written twice (JSON readers disagree which value counts; retrace, like
//! serde_json and the chain rule's RFC 8785 canonicalization, keeps the
//! last) and an integer beyond ±2^53 (RFC 8785 numbers are IEEE doubles, so
//! `9007199254740993` and `9007199254740992` hash alike: the value can be
//! changed without breaking the chain).

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// 2^53: from here on, an IEEE double cannot tell an integer from its
/// neighbours (2^53 + 1 reads as 2^53); below it every integer is exact
/// (JavaScript's `Number.MAX_SAFE_INTEGER` is 2^53 − 1).
const EXACT: u64 = 1 << 53;

/// One thing a line's hash does not pin down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ambiguity {
    /// A key that appears more than once in one object.
    DuplicateKey {
        /// Where: `outcome`, `action.arguments.x`.
        path: String,
    },
    /// An integer that an IEEE double cannot hold exactly.
    BigInteger {
        /// Where.
        path: String,
        /// The value as read.
        value: String,
    },
}

impl fmt::Display for Ambiguity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ambiguity::DuplicateKey { path } => write!(
                f,
                "key `{path}` appears more than once: JSON readers disagree which value counts (retrace and the chain use the last)"
            ),
            Ambiguity::BigInteger { path, value } => write!(
                f,
                "`{path}` = {value} is beyond ±2^53: the chain's hash (RFC 8785 numbers are IEEE doubles) does not tell it from nearby integers, so it may have been changed without breaking the chain"
            ),
        }
    }
}

impl Ambiguity {
    /// In words without the value itself, for notes about the journal as a
    /// whole (`retrace verify` reads no contracts, so it cannot tell a
    /// secret value from another; docs/design.md §4.1).
    pub fn without_value(&self) -> String {
        match self {
            Ambiguity::DuplicateKey { .. } => self.to_string(),
            Ambiguity::BigInteger { path, .. } => format!(
                "`{path}` holds an integer beyond ±2^53: the chain's hash (RFC 8785 numbers are IEEE doubles) does not tell it from nearby integers, so it may have been changed without breaking the chain"
            ),
        }
    }
}

/// The ambiguities of one JSON line, in order; empty when the line is not
/// JSON (its reader reports that).
pub fn scan(bytes: &[u8]) -> Vec<Ambiguity> {
    let mut out = Vec::new();
    let walk = Walk {
        path: String::new(),
        out: &mut out,
    };
    // As in `Fields::parse`: UTF-8 checked once for the whole line.
    let _ = match std::str::from_utf8(bytes) {
        Ok(s) => walk.deserialize(&mut serde_json::Deserializer::from_str(s)),
        Err(_) => walk.deserialize(&mut serde_json::Deserializer::from_slice(bytes)),
    };
    out
}

/// Walks a JSON value, noting what it finds, with the path to it.
struct Walk<'a> {
    path: String,
    out: &'a mut Vec<Ambiguity>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Walk<'_> {
    fn big(self, value: String) {
        self.out.push(Ambiguity::BigInteger {
            path: if self.path.is_empty() {
                "(the line)".into()
            } else {
                self.path
            },
            value,
        });
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        if v >= EXACT {
            self.big(v.to_string());
        }
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        if v.unsigned_abs() >= EXACT {
            self.big(v.to_string());
        }
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        // An integer literal past the 64-bit range arrives as a double.
        if v.is_finite() && v.fract() == 0.0 && v.abs() >= u64::MAX as f64 {
            self.big(format!("{v:e}"));
        }
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let path = format!("{}[{i}]", self.path);
            if a.next_element_seed(Walk {
                path,
                out: &mut *self.out,
            })?
            .is_none()
            {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut seen: Vec<String> = Vec::new();
        while let Some(k) = a.next_key::<std::borrow::Cow<'de, str>>()? {
            let path = if self.path.is_empty() {
                k.to_string()
            } else {
                format!("{}.{k}", self.path)
            };
            if seen.iter().any(|s| *s == k) {
                if !self
                    .out
                    .iter()
                    .any(|x| matches!(x, Ambiguity::DuplicateKey { path: p } if *p == path))
                {
                    self.out
                        .push(Ambiguity::DuplicateKey { path: path.clone() });
                }
            } else {
                seen.push(k.into_owned());
            }
            a.next_value_seed(Walk {
                path,
                out: &mut *self.out,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_repeated_keys_and_big_integers_at_any_depth() {
        let a = scan(
            br#"{"outcome":"ok","x":{"n":9007199254740993,"m":-9007199254740993,"k":9007199254740991,"a":[1,{"b":1,"b":2}]},"outcome":"unknown","z":123456789012345678901234}"#,
        );
        let s: Vec<String> = a.iter().map(ToString::to_string).collect();
        assert_eq!(a.len(), 5, "{s:#?}");
        assert!(s[0].contains("`x.n` = 9007199254740993"), "{s:#?}");
        assert!(s[1].contains("`x.m` = -9007199254740993"));
        assert!(s[2].contains("`x.a[1].b` appears more than once"));
        assert!(s[3].contains("`outcome` appears more than once"));
        assert!(s[4].contains("`z`"));
        assert!(scan(br#"{"a":1,"b":[1,2],"c":1.5}"#).is_empty());
        assert!(scan(b"not json").is_empty());
    }
}
