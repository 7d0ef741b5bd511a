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

/// One member of an object's RFC 8785 text ([`members`]): byte ranges
/// into that text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Member {
    /// The whole member, `"name":value`.
    pub whole: (usize, usize),
    /// The name as written, without its quotes (escapes left as they are).
    pub name: (usize, usize),
    /// The value's text.
    pub value: (usize, usize),
}

/// The top-level members of an object's RFC 8785 text (compact, no
/// whitespace; see [`write`]), in the order written, which is the order
/// RFC 8785 sorts them in. `None` when `text` is not one object written so.
///
/// The text of the object without some of its members is then the
/// remaining members joined by `,` inside braces: exactly what [`write`]
/// gives for the object without them (removing members keeps the others'
/// order), and a member's value text is what [`write`] gives for the value.
/// Lets a caller that holds a record's canonical text take it apart
/// without building a value tree.
pub(crate) fn members(text: &[u8]) -> Option<Vec<Member>> {
    /// The end of the string starting at `i` (a `"`), past its closing quote.
    fn string_end(t: &[u8], mut i: usize) -> Option<usize> {
        i += 1;
        loop {
            match *t.get(i)? {
                b'"' => return Some(i + 1),
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
    }
    /// The end of the value starting at `i`.
    fn value_end(t: &[u8], i: usize) -> Option<usize> {
        match *t.get(i)? {
            b'"' => string_end(t, i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut j = i;
                loop {
                    match *t.get(j)? {
                        b'"' => {
                            j = string_end(t, j)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            _ => {
                let mut j = i;
                while j < t.len() && !matches!(t[j], b',' | b'}' | b']') {
                    j += 1;
                }
                (j > i).then_some(j)
            }
        }
    }
    if text.first() != Some(&b'{') || text.last() != Some(&b'}') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    if text.get(i) == Some(&b'}') {
        return (text.len() == 2).then_some(out);
    }
    loop {
        if text.get(i) != Some(&b'"') {
            return None;
        }
        let name_end = string_end(text, i)?;
        if text.get(name_end) != Some(&b':') {
            return None;
        }
        let end = value_end(text, name_end + 1)?;
        out.push(Member {
            whole: (i, end),
            name: (i + 1, name_end - 1),
            value: (name_end + 1, end),
        });
        match text.get(end) {
            Some(b',') => i = end + 1,
            Some(b'}') if end + 1 == text.len() => return Some(out),
            _ => return None,
        }
    }
}

/// Appends to `out` the object text made of `members` of `text` (ranges
/// from [`members`]), in the order given: `{m1,m2,...}`.
pub(crate) fn write_kept(
    text: &[u8],
    members: &mut dyn Iterator<Item = &Member>,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    for (n, m) in members.enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&text[m.whole.0..m.whole.1]);
    }
    out.push(b'}');
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
        let mut rng = crate::testing::XorShift::new(0x1234_5678_9abc_def0);
        let mut next = move || rng.next_u64();
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
                taken_apart_like_the_reference(m, &reference);
            }
            fast += usize::from(fast_path_applies(&v));
        }
        assert!(fast > 5_000, "the fast path was taken only {fast} times");
    }

    /// [`members`] of an object's RFC 8785 text: each member's name and
    /// value text, and the text without it, are what the reference gives
    /// for the name, the value and the object without that member.
    fn taken_apart_like_the_reference(m: &Map<String, Value>, reference: &str) {
        let text = reference.as_bytes();
        let found = members(text).unwrap_or_else(|| panic!("not taken apart: {reference}"));
        assert_eq!(found.len(), m.len(), "{reference}");
        for (n, member) in found.iter().enumerate() {
            let name: String =
                serde_json::from_slice(&text[member.name.0 - 1..member.name.1 + 1]).unwrap();
            let value = &m[&name];
            assert_eq!(
                &reference[member.value.0..member.value.1],
                serde_json_canonicalizer::to_string(value).unwrap()
            );
            let mut rest = m.clone();
            rest.remove(&name);
            let mut out = Vec::new();
            write_kept(
                text,
                &mut found
                    .iter()
                    .enumerate()
                    .filter(|&(o, _)| o != n)
                    .map(|(_, x)| x),
                &mut out,
            );
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json_canonicalizer::to_string(&Value::Object(rest)).unwrap()
            );
        }
    }

    #[test]
    fn members_refuses_what_is_not_one_object() {
        for t in [
            "",
            "{",
            "}",
            "[]",
            "{\"a\":1",
            "{\"a\":1}x",
            "{\"a\"}",
            "{\"a\":}",
            "{}{}",
        ] {
            assert_eq!(members(t.as_bytes()), None, "{t}");
        }
        assert_eq!(members(b"{}"), Some(vec![]));
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
