//! Typed field extraction from a parsed JSON object, with messages that name
//! the field and what was expected (shown with file and line by the caller).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// A field-level problem: the message names the field.
pub type FieldResult<T> = Result<T, String>;

/// Removes `key` and returns it as a string; `null` and absence give `None`.
pub fn opt_str(m: &mut Map<String, Value>, key: &str) -> FieldResult<Option<String>> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(format!(
            "field `{key}` must be a string, found {}",
            type_name(&other)
        )),
    }
}

/// Removes `key` and returns it as a string, or an error naming the field.
pub fn req_str(m: &mut Map<String, Value>, key: &str) -> FieldResult<String> {
    opt_str(m, key)?.ok_or_else(|| format!("missing field `{key}`"))
}

/// Removes `key` and returns it as an unsigned integer.
pub fn opt_u64(m: &mut Map<String, Value>, key: &str) -> FieldResult<Option<u64>> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("field `{key}` must be a non-negative integer, found {n}")),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| format!("field `{key}` must be a non-negative integer, found {s:?}")),
        Some(other) => Err(format!(
            "field `{key}` must be an integer, found {}",
            type_name(&other)
        )),
    }
}

/// Removes `key` and returns it as a signed integer.
pub fn opt_i64(m: &mut Map<String, Value>, key: &str) -> FieldResult<Option<i64>> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("field `{key}` must be an integer, found {n}")),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| format!("field `{key}` must be an integer, found {s:?}")),
        Some(other) => Err(format!(
            "field `{key}` must be an integer, found {}",
            type_name(&other)
        )),
    }
}

/// Removes `key` and returns it as a boolean (absent is `false`).
pub fn opt_bool(m: &mut Map<String, Value>, key: &str) -> FieldResult<bool> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(other) => Err(format!(
            "field `{key}` must be true or false, found {}",
            type_name(&other)
        )),
    }
}

/// Removes `key` and returns it as an object.
pub fn opt_object(
    m: &mut Map<String, Value>,
    key: &str,
) -> FieldResult<Option<Map<String, Value>>> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(other) => Err(format!(
            "field `{key}` must be an object, found {}",
            type_name(&other)
        )),
    }
}

/// Parses an RFC 3339 time (any offset; converted to UTC).
pub fn parse_time(key: &str, s: &str) -> FieldResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("field `{key}` is not an RFC 3339 time ({e}): {s:?}"))
}

/// Removes `key` and parses it as an RFC 3339 time.
pub fn opt_time(m: &mut Map<String, Value>, key: &str) -> FieldResult<Option<DateTime<Utc>>> {
    opt_str(m, key)?.map(|s| parse_time(key, &s)).transpose()
}

/// Removes `key` and parses it as an RFC 3339 time, or errors when absent.
pub fn req_time(m: &mut Map<String, Value>, key: &str) -> FieldResult<DateTime<Utc>> {
    opt_time(m, key)?.ok_or_else(|| format!("missing field `{key}`"))
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
        Ok(other) => Err(format!(
            "expected a JSON object, found {}",
            type_name(&other)
        )),
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_name_the_field() {
        let mut m = json!({"seq": "x", "at": "yesterday", "n": 3})
            .as_object()
            .cloned()
            .unwrap();
        assert!(opt_u64(&mut m, "seq").unwrap_err().contains("`seq`"));
        assert!(req_time(&mut m, "at").unwrap_err().contains("`at`"));
        assert_eq!(opt_str(&mut m, "n").unwrap().as_deref(), Some("3"));
        assert!(
            req_str(&mut m, "gone")
                .unwrap_err()
                .contains("missing field `gone`")
        );
    }

    #[test]
    fn parse_object_rejects_non_objects() {
        assert!(parse_object(b"[1]").unwrap_err().contains("an array"));
        assert!(parse_object(b"{").unwrap_err().contains("not valid JSON"));
    }
}
