//! Typed field extraction from a parsed JSON object, with messages that name
//! the field and what was expected (shown with file and line by the caller).

use super::BadLine;
use chrono::{DateTime, Utc};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A line-level problem, naming the field at fault when one is.
pub type FieldResult<T> = Result<T, BadLine>;

/// Something fields can be taken out of: a JSON object, or the [`Fields`]
/// of one line.
pub trait FieldMap {
    /// Removes and returns the value of `key`.
    fn remove(&mut self, key: &str) -> Option<Value>;
}

impl FieldMap for Map<String, Value> {
    fn remove(&mut self, key: &str) -> Option<Value> {
        Map::remove(self, key)
    }
}

/// The fields of one JSON object line, parsed in one pass without building
/// an intermediate map: fields whose names the reader lists as known are
/// kept in a short vector (a line holds a handful), and every other field
/// goes to `extra`, kept and shown as the journal wrote it.
///
/// Fields a reader asks for raw ([`Fields::parse`]) are kept as
/// their JSON text, unparsed, until [`Fields::take_raw`] takes one or
/// [`Fields::materialize`] parses them all.
#[derive(Debug, Default)]
pub struct Fields {
    known: Vec<(&'static str, Value)>,
    raw: Vec<(&'static str, Box<RawValue>)>,
    extra: Map<String, Value>,
}

impl FieldMap for Fields {
    fn remove(&mut self, key: &str) -> Option<Value> {
        if let Some(i) = self.known.iter().position(|(k, _)| *k == key) {
            return Some(self.known.swap_remove(i).1);
        }
        if let Some(i) = self.raw.iter().position(|(k, _)| *k == key) {
            return Some(parse_raw(&self.raw.swap_remove(i).1));
        }
        self.extra.remove(key)
    }
}

/// The value of a raw field's text. The text was read as JSON by the line's
/// parser, so it parses; should it not (a number beyond what a value
/// holds), it is kept as a string rather than lost.
fn parse_raw(r: &RawValue) -> Value {
    serde_json::from_str(r.get()).unwrap_or_else(|_| Value::String(r.get().to_owned()))
}

impl Fields {
    /// Parses a JSON object line; names listed in `known` are kept apart,
    /// and those listed in `raw` are kept as their JSON text (a reader that
    /// can use the text as it is spares a value tree; docs/design.md §6.8).
    ///
    /// # Errors
    /// A message saying what is wrong with the line.
    pub fn parse(
        bytes: &[u8],
        known: &'static [&'static str],
        raw: &'static [&'static str],
    ) -> FieldResult<Fields> {
        use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
        use std::borrow::Cow;
        use std::fmt;
        struct Seed(&'static [&'static str], &'static [&'static str]);
        impl<'de> DeserializeSeed<'de> for Seed {
            type Value = Fields;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fields, D::Error> {
                d.deserialize_map(self)
            }
        }
        impl<'de> Visitor<'de> for Seed {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Fields, A::Error> {
                let mut out = Fields::default();
                while let Some(key) = a.next_key::<Cow<'de, str>>()? {
                    if let Some(k) = self.1.iter().find(|k| **k == key) {
                        let value: Box<RawValue> = a.next_value()?;
                        // A repeated key: the last one wins, as below.
                        out.raw.retain(|(x, _)| x != k);
                        out.raw.push((k, value));
                        continue;
                    }
                    let value: Value = a.next_value()?;
                    match self.0.iter().find(|k| **k == key) {
                        // A repeated key: the last one wins, as in serde_json.
                        Some(k) => {
                            out.known.retain(|(x, _)| x != k);
                            out.known.push((k, value));
                        }
                        None => {
                            out.extra.insert(key.into_owned(), value);
                        }
                    }
                }
                Ok(out)
            }
        }
        fn run<'de, R: serde_json::de::Read<'de>>(
            mut de: serde_json::Deserializer<R>,
            known: &'static [&'static str],
            raw: &'static [&'static str],
        ) -> Result<Fields, serde_json::Error> {
            let f = Seed(known, raw).deserialize(&mut de)?;
            de.end()?;
            Ok(f)
        }
        // A line checked as UTF-8 once, as a whole, spares the parser a
        // check of every string in it; a line that is not UTF-8 is left to
        // the parser, which says where the bad byte is.
        let parsed = match std::str::from_utf8(bytes) {
            Ok(s) => run(serde_json::Deserializer::from_str(s), known, raw),
            Err(_) => run(serde_json::Deserializer::from_slice(bytes), known, raw),
        };
        match parsed {
            Ok(f) => Ok(f),
            Err(e) if e.classify() == serde_json::error::Category::Data => {
                // Valid JSON that is not an object: say what it is.
                match serde_json::from_slice::<Value>(bytes) {
                    Ok(v) => Err(not_an_object(&v)),
                    Err(e) => Err(not_json(&e)),
                }
            }
            Err(e) => Err(not_json(&e)),
        }
    }

    /// Takes the text of a field kept raw, if present and not parsed yet.
    pub fn take_raw(&mut self, key: &str) -> Option<Box<RawValue>> {
        let i = self.raw.iter().position(|(k, _)| *k == key)?;
        Some(self.raw.swap_remove(i).1)
    }

    /// Parses every field kept raw, so that [`Fields::get`] and
    /// [`Fields::iter`] see it.
    ///
    /// # Errors
    /// A field whose text holds a value `serde_json` cannot hold (a number
    /// beyond `f64`), named.
    pub fn materialize(&mut self) -> FieldResult<()> {
        for (k, r) in std::mem::take(&mut self.raw) {
            let v = serde_json::from_str(r.get())
                .map_err(|e| BadLine::in_field(k, format!("field `{k}` cannot be read: {e}")))?;
            self.known.retain(|(x, _)| *x != k);
            self.known.push((k, v));
        }
        Ok(())
    }

    /// The value of `key`, if present (not a field kept raw: see
    /// [`Fields::materialize`]).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self.known.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => Some(v),
            None => self.extra.get(key),
        }
    }

    /// Every field, known and unknown, in no particular order (for hashing
    /// the line as a whole); fields kept raw only once materialized.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.known
            .iter()
            .map(|(k, v)| (*k, v))
            .chain(self.extra.iter().map(|(k, v)| (k.as_str(), v)))
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.known.iter().any(|(k, _)| *k == key)
            || self.raw.iter().any(|(k, _)| *k == key)
            || self.extra.contains_key(key)
    }

    /// Everything not taken: unknown fields, and known ones this record did
    /// not use.
    pub fn into_extra(self) -> Map<String, Value> {
        let mut m = self.extra;
        for (k, v) in self.known {
            m.insert(k.to_string(), v);
        }
        for (k, r) in self.raw {
            m.insert(k.to_string(), parse_raw(&r));
        }
        m
    }
}

impl From<Map<String, Value>> for Fields {
    fn from(extra: Map<String, Value>) -> Self {
        Fields {
            known: Vec::new(),
            raw: Vec::new(),
            extra,
        }
    }
}

/// Removes `key` and returns it as a string; `null` and absence give `None`.
pub fn opt_str(m: &mut impl FieldMap, key: &str) -> FieldResult<Option<String>> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(BadLine::in_field(
            key,
            format!(
                "field `{key}` must be a string, found {}",
                type_name(&other)
            ),
        )),
    }
}

/// The error for a required field that is absent.
pub fn missing(key: &str) -> BadLine {
    BadLine::in_field(key, format!("missing field `{key}`"))
}

/// Removes `key` and returns it as a string, or an error naming the field.
pub fn req_str(m: &mut impl FieldMap, key: &str) -> FieldResult<String> {
    opt_str(m, key)?.ok_or_else(|| missing(key))
}

/// Removes `key` and returns it as an unsigned integer.
pub fn opt_u64(m: &mut impl FieldMap, key: &str) -> FieldResult<Option<u64>> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| integral(&n).and_then(|f| (f >= 0.0).then_some(f as u64)))
            .map(Some)
            .ok_or_else(|| {
                BadLine::in_field(
                    key,
                    format!("field `{key}` must be a non-negative integer, found {n}"),
                )
            }),
        Some(Value::String(s)) => s.parse().map(Some).map_err(|_| {
            BadLine::in_field(
                key,
                format!("field `{key}` must be a non-negative integer, found {s:?}"),
            )
        }),
        Some(other) => Err(BadLine::in_field(
            key,
            format!(
                "field `{key}` must be an integer, found {}",
                type_name(&other)
            ),
        )),
    }
}

/// A number written with a fraction that is whole and exactly
/// representable (`4.0`, `201.0`): the same integer to JSON and to RFC 8785
/// (so the chain hash does not change), so it reads as that integer.
fn integral(n: &serde_json::Number) -> Option<f64> {
    n.as_f64()
        .filter(|f| f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0)
}

/// Removes `key` and returns it as a signed integer.
pub fn opt_i64(m: &mut impl FieldMap, key: &str) -> FieldResult<Option<i64>> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| integral(&n).map(|f| f as i64))
            .map(Some)
            .ok_or_else(|| {
                BadLine::in_field(key, format!("field `{key}` must be an integer, found {n}"))
            }),
        Some(Value::String(s)) => s.parse().map(Some).map_err(|_| {
            BadLine::in_field(
                key,
                format!("field `{key}` must be an integer, found {s:?}"),
            )
        }),
        Some(other) => Err(BadLine::in_field(
            key,
            format!(
                "field `{key}` must be an integer, found {}",
                type_name(&other)
            ),
        )),
    }
}

/// Removes `key` and returns it as a boolean (absent is `false`).
pub fn opt_bool(m: &mut impl FieldMap, key: &str) -> FieldResult<bool> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(other) => Err(BadLine::in_field(
            key,
            format!(
                "field `{key}` must be true or false, found {}",
                type_name(&other)
            ),
        )),
    }
}

/// Removes `key` and returns it as an object.
pub fn opt_object(m: &mut impl FieldMap, key: &str) -> FieldResult<Option<Map<String, Value>>> {
    object_value(key, m.remove(key))
}

/// The object a field `key` holds (`v`; `null` and absence give `None`),
/// or an error naming the field.
pub fn object_value(key: &str, v: Option<Value>) -> FieldResult<Option<Map<String, Value>>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(other) => Err(BadLine::in_field(
            key,
            format!(
                "field `{key}` must be an object, found {}",
                type_name(&other)
            ),
        )),
    }
}

/// Parses an RFC 3339 time (any offset; converted to UTC).
pub fn parse_time(key: &str, s: &str) -> FieldResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            BadLine::in_field(
                key,
                format!("field `{key}` is not an RFC 3339 time ({e}): {s:?}"),
            )
        })
}

/// Removes `key` and parses it as an RFC 3339 time.
pub fn opt_time(m: &mut impl FieldMap, key: &str) -> FieldResult<Option<DateTime<Utc>>> {
    opt_str(m, key)?.map(|s| parse_time(key, &s)).transpose()
}

/// Removes `key` and parses it as an RFC 3339 time, or errors when absent.
pub fn req_time(m: &mut impl FieldMap, key: &str) -> FieldResult<DateTime<Utc>> {
    opt_time(m, key)?.ok_or_else(|| missing(key))
}

/// A JSON type name for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses one JSONL line into an object, with a message that says what is wrong.
pub fn parse_object(bytes: &[u8]) -> FieldResult<Map<String, Value>> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(not_an_object(&other)),
        Err(e) => Err(not_json(&e)),
    }
}

fn not_an_object(v: &Value) -> BadLine {
    BadLine::new(format!("expected a JSON object, found {}", type_name(v)))
}

fn not_json(e: &serde_json::Error) -> BadLine {
    BadLine::new(format!("not valid JSON: {}", json_error(e)))
}

/// A JSON parse error of one journal line in words that do not clash with
/// the journal's own line number: serde_json counts lines within the text
/// it parsed, so "at line 1 column 19" of journal line 6 becomes "at
/// character 19" (a line's text with a newline inside keeps its line).
pub(crate) fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    let what = text.strip_suffix(&at).unwrap_or(&text);
    match (e.line(), e.column()) {
        (0, _) => what.to_string(),
        (1, c) => format!("{what} at character {c}"),
        (l, c) => format!("{what} at line {l}, character {c} of its text"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_json_error_names_the_character_not_a_line_of_its_own() {
        let e = serde_json::from_str::<serde_json::Value>("{\"a\": tru}").unwrap_err();
        assert_eq!(super::json_error(&e), "expected ident at character 10");
        let e = serde_json::from_str::<serde_json::Value>("{\"a\":\n x}").unwrap_err();
        assert_eq!(
            super::json_error(&e),
            "expected value at line 2, character 2 of its text"
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn messages_name_the_field() {
        let mut m = json!({"seq": "x", "at": "yesterday", "n": 3})
            .as_object()
            .cloned()
            .unwrap();
        let e = opt_u64(&mut m, "seq").unwrap_err();
        assert!(e.message.contains("`seq`"), "{e}");
        assert_eq!(e.field.as_deref(), Some("seq"));
        assert!(req_time(&mut m, "at").unwrap_err().message.contains("`at`"));
        assert_eq!(opt_str(&mut m, "n").unwrap().as_deref(), Some("3"));
        let e = req_str(&mut m, "gone").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.field.as_deref()),
            ("missing field `gone`", Some("gone"))
        );
    }

    #[test]
    fn whole_numbers_written_with_a_fraction_are_integers() {
        let mut m = json!({"seq": 4.0, "st": 201.0, "half": 1.5, "neg": -2.0})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(opt_u64(&mut m, "seq").unwrap(), Some(4));
        assert_eq!(opt_u64(&mut m, "st").unwrap(), Some(201));
        assert!(opt_u64(&mut m, "half").is_err());
        assert!(opt_u64(&mut m, "neg").is_err());
    }

    #[test]
    fn parse_object_rejects_non_objects() {
        assert!(
            parse_object(b"[1]")
                .unwrap_err()
                .message
                .contains("an array")
        );
        let e = parse_object(b"{").unwrap_err();
        assert!(
            e.message.contains("not valid JSON") && e.field.is_none(),
            "{e}"
        );
    }
}
