//! Secret values kept out of every output (docs/design.md §4.1, §4.4:
//! `secret_fields`). The contract names the fields; the values found there
//! are collected once, so that a raw journal line, an unknown field or a
//! reader's layout that puts the arguments elsewhere cannot show them
//! either.

use super::words::SECRET;
use serde_json::Value;

/// Values shorter than this are redacted where their field is named, but
/// not searched for in other text (a two-letter value would mangle it).
const MIN_SEARCHED: usize = 4;

/// The secret values of an investigation's arguments.
#[derive(Debug, Clone, Default)]
pub(super) struct Secrets {
    values: Vec<String>,
}

impl Secrets {
    /// Adds the values `secret_fields` name in `args`.
    pub(super) fn collect(&mut self, args: &Value, secret_fields: &[String]) {
        let mut args = args.clone();
        crate::analysis::for_each_secret(&mut args, secret_fields, &mut |_, v| {
            leaves(v, &mut self.values);
        });
    }

    /// Sorts the values, longest first, so that a value containing another
    /// is replaced whole.
    pub(super) fn finish(&mut self) {
        self.values.retain(|v| v.chars().count() >= MIN_SEARCHED);
        self.values
            .sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        self.values.dedup();
    }

    /// Whether there is nothing to hide.
    pub(super) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `s` with every secret value replaced.
    pub(super) fn text(&self, s: &str) -> String {
        let mut out = s.to_string();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), SECRET);
            }
        }
        out
    }

    /// `v` with every string holding a secret value, and every number or
    /// key equal to one, replaced.
    pub(super) fn value(&self, v: &mut Value) {
        match v {
            Value::String(s) => {
                let t = self.text(s);
                if t != *s {
                    *s = t;
                }
            }
            Value::Number(n) if self.values.contains(&n.to_string()) => {
                *v = Value::String(SECRET.into());
            }
            Value::Array(a) => a.iter_mut().for_each(|c| self.value(c)),
            Value::Object(m) => {
                let keys: Vec<String> = m.keys().cloned().collect();
                for k in keys {
                    let t = self.text(&k);
                    if t != k
                        && let Some(c) = m.remove(&k)
                    {
                        m.insert(t.clone(), c);
                    }
                    if let Some(c) = m.get_mut(&t) {
                        self.value(c);
                    }
                }
            }
            _ => {}
        }
    }

    /// A raw journal line with every secret value replaced: re-written as
    /// JSON when it is JSON and held one, else replaced in the text.
    pub(super) fn line(&self, raw: String) -> String {
        if self.is_empty() {
            return raw;
        }
        if !self.values.iter().any(|v| raw.contains(v.as_str())) {
            // A value written with JSON escapes is still caught below.
            if let Ok(mut v) = serde_json::from_str::<Value>(&raw) {
                let before = v.clone();
                self.value(&mut v);
                if v != before {
                    return serde_json::to_string(&v).unwrap_or_else(|_| self.text(&raw));
                }
            }
            return raw;
        }
        match serde_json::from_str::<Value>(&raw) {
            Ok(mut v) => {
                self.value(&mut v);
                serde_json::to_string(&v).unwrap_or_else(|_| self.text(&raw))
            }
            Err(_) => self.text(&raw),
        }
    }
}

/// Every scalar under `v`, as text.
fn leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Bool(_) | Value::Null => {}
        Value::Array(a) => a.iter().for_each(|c| leaves(c, out)),
        Value::Object(m) => m.values().for_each(|c| leaves(c, out)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_replaced_wherever_they_are() {
        let mut s = Secrets::default();
        s.collect(
            &json!({"auth": {"Token": "hunter22"}, "pin": 123456, "x": "ok"}),
            &["token".into(), "pin".into()],
        );
        s.finish();
        let line = r#"{"params":{"arguments":"{\"auth\":{\"Token\":\"hunter22\"}}"},"pin":123456,"hunter22":1}"#;
        let out = s.line(line.to_string());
        assert!(
            !out.contains("hunter22") && !out.contains("123456"),
            "{out}"
        );
        assert_eq!(
            s.line("not json hunter22".into()),
            "not json [secret field]"
        );
        assert_eq!(s.line(r#"{"a":"ok"}"#.into()), r#"{"a":"ok"}"#);
    }
}
