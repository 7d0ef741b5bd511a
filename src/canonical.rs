//! RFC 8785 JSON Canonicalization Scheme (JCS), the one implementation both
//! intent fingerprints (docs/design.md §4) and native chain hashes (§6) use.
//!
//! `serde_json_canonicalizer` is the reference implementation. It buffers and
//! re-sorts every object member, which costs about 16 times what
//! `serde_json`'s own writer needs for the same record: fingerprinting every
//! execution, and hashing every line of a million-line chained journal, made
//! it the largest cost of loading. For values where `serde_json`'s compact
//! output already is the canonical form, that output is used instead:
//!
//! * serde_json's maps are sorted by UTF-8 bytes, which agrees with RFC
//!   8785's UTF-16 code-unit order when no member name holds a character at
//!   or above U+E000 (only supplementary characters, written as surrogates
//!   D800–DFFF, and U+E000–U+FFFF sort differently);
//! * integers of magnitude up to 2^53 print the same (RFC 8785 prints all
//!   numbers as IEEE 754 doubles, so larger integers lose digits there);
//! * both escape exactly `"`, `\` and the C0 controls, with the short forms
//!   `\b \f \n \r \t` and lowercase `\u00xx` for the rest.
//!
//! Values with floats, big integers or such names go to the reference
//! implementation. Tests compare the two on generated values.

use serde_json::{Map, Value};

/// Whether `serde_json`'s compact output of `v` is its RFC 8785 form.
pub(crate) fn fast_path_applies(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(_) | Value::String(_) => true,
        Value::Number(n) => n
            .as_i64()
            .map(i64::unsigned_abs)
            .or(n.as_u64())
            .is_some_and(|i| i <= 1 << 53),
        Value::Array(a) => a.iter().all(fast_path_applies),
        Value::Object(m) => m
            .iter()
            .all(|(k, v)| name_sorts_alike(k) && fast_path_applies(v)),
    }
}

pub(crate) fn name_sorts_alike(k: &str) -> bool {
    k.chars().all(|c| c < '\u{e000}')
}

/// Appends the RFC 8785 form of `v` to `out`.
pub fn write(v: &Value, out: &mut Vec<u8>) {
    if fast_path_applies(v) {
        // Writing a `Value` into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, v);
    } else {
        // The canonicalizer fails only on non-finite floats, which a
        // serde_json `Value` cannot hold.
        let _ = serde_json_canonicalizer::to_writer(v, &mut *out);
    }
}

/// The RFC 8785 form of `v`.
pub fn to_string(v: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    write(v, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Appends the RFC 8785 form of the object made of `members` (in any order,
/// names unique) to `out`, without building the object first: a journal
/// line's members minus its chain fields.
pub fn write_members(members: &mut [(&str, &Value)], out: &mut Vec<u8>) {
    if members
        .iter()
        .all(|(k, v)| name_sorts_alike(k) && fast_path_applies(v))
    {
        members.sort_unstable_by(|a, b| a.0.cmp(b.0));
        out.push(b'{');
        for (i, (k, v)) in members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let _ = serde_json::to_writer(&mut *out, k);
            out.push(b':');
            let _ = serde_json::to_writer(&mut *out, v);
        }
        out.push(b'}');
    } else {
        let m: Map<String, Value> = members
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).clone()))
            .collect();
        let _ = serde_json_canonicalizer::to_writer(&Value::Object(m), &mut *out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The fast path must give exactly what the reference implementation
    /// gives, on values built to stress escaping, key order and nesting.
    #[test]
    fn agrees_with_the_reference_on_generated_values() {
        let pieces = [
            "",
            "a",
            "Z",
            "é",
            "€",
            "\u{1f600}",
            "\u{e000}",
            "\u{ffff}",
            "\u{7f}",
            "\u{1b}[2J",
            "\n\t\r",
            "\u{8}\u{c}",
            "\"",
            "\\",
            "/",
            "<>&",
            "\u{2028}\u{2029}",
            "\u{0}",
            "\u{1f}",
            "日本",
        ];
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        fn build(depth: u32, next: &mut dyn FnMut() -> u64, pieces: &[&str]) -> Value {
            let pick = |n: &mut dyn FnMut() -> u64| -> String {
                (0..(n() % 3))
                    .map(|_| pieces[(n() % pieces.len() as u64) as usize])
                    .collect()
            };
            match next() % if depth == 0 { 6 } else { 8 } {
                0 => Value::Null,
                1 => Value::Bool(next().is_multiple_of(2)),
                2 => Value::from(next() as i64 / 3),
                3 => Value::from(next() >> (next() % 64)),
                4 => Value::String(pick(next)),
                5 => json!((next() % 100_000) as f64 / 7.0),
                6 => Value::Array(
                    (0..next() % 4)
                        .map(|_| build(depth - 1, next, pieces))
                        .collect(),
                ),
                _ => Value::Object(
                    (0..next() % 5)
                        .map(|_| (pick(next), build(depth - 1, next, pieces)))
                        .collect(),
                ),
            }
        }
        let mut fast = 0;
        for _ in 0..20_000 {
            let v = build(4, &mut next, &pieces);
            let reference = serde_json_canonicalizer::to_string(&v).unwrap();
            assert_eq!(to_string(&v), reference, "{v:?}");
            if let Value::Object(m) = &v {
                let mut members: Vec<(&str, &Value)> =
                    m.iter().map(|(k, v)| (k.as_str(), v)).collect();
                let mut out = Vec::new();
                write_members(&mut members, &mut out);
                assert_eq!(String::from_utf8(out).unwrap(), reference, "{v:?}");
            }
            fast += usize::from(fast_path_applies(&v));
        }
        assert!(fast > 5_000, "the fast path was taken only {fast} times");
    }

    #[test]
    fn follows_rfc_8785_examples() {
        // RFC 8785 §3.2.3 sorting and number forms.
        let v = json!({"b": 1.0, "a": [1e30, 4.50, "\u{20ac}"], "\u{00e9}": null, "n": 9007199254740993u64});
        assert_eq!(
            to_string(&v),
            "{\"a\":[1e+30,4.5,\"€\"],\"b\":1,\"n\":9007199254740992,\"é\":null}"
        );
    }
}
