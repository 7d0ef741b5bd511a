//! What a record holds of a call's arguments, as `audit.argument_logging`
//! left them (mcp-audit-gateway 0.1.0 `gateway.py` `_audit_arguments`):
//!
//! * `redacted` (the default): the arguments object with every string
//!   value the redactor's detectors match replaced (`redaction.py`: mode
//!   `mask` writes `[REDACTED_EMAIL]`, `hash` writes `[EMAIL:<12 hex>]`,
//!   `partial` writes `a***@example.com` or `***1234`);
//! * `full`: the arguments object as sent;
//! * `keys_only`: the sorted list of argument names;
//! * `none`: `null`.
//!
//! `redaction_counts` is no help here: it counts what was redacted in the
//! *result*, not in the arguments. So the reader looks for the redactor's
//! marks in the logged values. A mark-like text the caller really sent
//! (`***1234`) is read as a redaction: the cautious error, it only says
//! that calls may look more alike than they were.

use crate::model::Arguments;
use serde_json::{Map, Value, json};

/// The redactor's detectors, as its marks spell them (`DETECTOR_ORDER` in
/// `redaction.py`, upper case).
const DETECTORS: [&str; 5] = ["CREDIT_CARD", "SSN", "SIN", "EMAIL", "PHONE"];

/// A call's arguments as retrace takes them: what is fingerprinted (always
/// an object), and how much of what was sent it is.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Logged {
    /// The arguments object of the action record: the logged object, or
    /// `{"_value": …}` around what was logged instead of one.
    pub value: Value,
    /// Whether the record holds the arguments as sent.
    pub arguments: Arguments,
}

/// Reads the `arguments` field of a `tools/call` record. `named` is false
/// for a record that names no tool (an internal error, a refused
/// authentication): the gateway logs no arguments for those.
pub(super) fn logged(v: Option<&Value>, named: bool) -> Logged {
    match v {
        None | Some(Value::Null) => Logged {
            value: json!({}),
            arguments: Arguments::No(if named {
                "the record's arguments are null (audit.argument_logging: none)".into()
            } else {
                "the gateway logs no arguments with an internal error or a refused authentication"
                    .into()
            }),
        },
        Some(Value::Object(m)) => {
            let mut marks = Marks::default();
            for v in m.values() {
                marks.walk(v);
            }
            Logged {
                value: Value::Object(m.clone()),
                arguments: match marks.words() {
                    None => Arguments::Full,
                    Some(w) => Arguments::Partly(format!(
                        "the gateway's redactor replaced {w} before logging; the fingerprint covers the redacted text, so calls that differ only there look alike"
                    )),
                },
            }
        }
        Some(Value::Array(names)) if names.iter().all(Value::is_string) => Logged {
            value: wrapped(v),
            arguments: Arguments::Partly(
                "argument names only (audit.argument_logging: keys_only): calls that differ only in values look alike".into(),
            ),
        },
        Some(other) => Logged {
            value: wrapped(v),
            arguments: Arguments::Partly(format!(
                "logged as {}, not as an object of arguments",
                crate::journal::fields::type_name(other)
            )),
        },
    }
}

fn wrapped(v: Option<&Value>) -> Value {
    let mut m = Map::new();
    m.insert("_value".into(), v.cloned().unwrap_or(Value::Null));
    Value::Object(m)
}

/// The redactor's marks found in logged values, by kind.
#[derive(Debug, Default)]
struct Marks {
    /// (kind, count) in order of first sight.
    found: Vec<(String, usize)>,
}

impl Marks {
    fn add(&mut self, kind: &str) {
        match self.found.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => *n += 1,
            None => self.found.push((kind.to_string(), 1)),
        }
    }

    fn walk(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.scan(s),
            Value::Array(a) => a.iter().for_each(|x| self.walk(x)),
            Value::Object(m) => m.values().for_each(|x| self.walk(x)),
            _ => {}
        }
    }

    /// Counts the marks in one string: `[REDACTED_X]`, `[X:<12 hex>]`, and
    /// the partial forms `***@` (an e-mail) and `***<digit>` (a number).
    fn scan(&mut self, s: &str) {
        for d in DETECTORS {
            let n = s.matches(&format!("[REDACTED_{d}]")).count();
            for _ in 0..n {
                self.add(&d.to_lowercase());
            }
            let open = format!("[{d}:");
            let mut rest = s;
            while let Some(i) = rest.find(&open) {
                let after = &rest[i + open.len()..];
                let hex = after
                    .get(..12)
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
                if hex.is_some() && after.as_bytes().get(12) == Some(&b']') {
                    self.add(&d.to_lowercase());
                }
                rest = after;
            }
        }
        let mut rest = s;
        while let Some(i) = rest.find("***") {
            let after = rest[i..].trim_start_matches('*');
            match after.chars().next() {
                Some('@') => self.add("email (partial)"),
                Some(c) if c.is_ascii_digit() => self.add("number (partial)"),
                _ => {}
            }
            rest = after;
        }
    }

    /// "2 values (email ×1, phone ×1)", or `None` when nothing was found.
    fn words(&self) -> Option<String> {
        let total: usize = self.found.iter().map(|(_, n)| n).sum();
        if total == 0 {
            return None;
        }
        let kinds: Vec<String> = self
            .found
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        Some(format!(
            "{total} value{} ({})",
            if total == 1 { "" } else { "s" },
            kinds.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_arguments_are_full() {
        let l = logged(Some(&json!({"service": "catalog", "n": 3})), true);
        assert_eq!(l.arguments, Arguments::Full);
        assert_eq!(l.value, json!({"service": "catalog", "n": 3}));
    }

    #[test]
    fn redaction_marks_of_every_mode_are_found() {
        let l = logged(
            Some(&json!({
                "to": "[REDACTED_EMAIL]",
                "notes": ["call [REDACTED_PHONE] or [REDACTED_PHONE]"],
                "card": "[CREDIT_CARD:0123456789ab]",
                "owner": {"mail": "a***@example.com", "ssn": "***6789"}
            })),
            true,
        );
        let Arguments::Partly(w) = &l.arguments else {
            panic!("{:?}", l.arguments)
        };
        assert!(
            w.starts_with("the gateway's redactor replaced 6 values ("),
            "{w}"
        );
        for k in [
            "email ×1",
            "phone ×2",
            "credit_card ×1",
            "email (partial) ×1",
            "number (partial) ×1",
        ] {
            assert!(w.contains(k), "{k}: {w}");
        }
        // The fingerprint covers what was logged.
        assert_eq!(l.value["to"], "[REDACTED_EMAIL]");
    }

    #[test]
    fn near_marks_are_not_marks() {
        for s in [
            "[EMAIL:xyz]",
            "[REDACTED]",
            "***",
            "a***b",
            "[SSN:0123456789abc]",
        ] {
            let l = logged(Some(&json!({ "v": s })), true);
            assert_eq!(l.arguments, Arguments::Full, "{s}");
        }
    }

    #[test]
    fn names_only_and_none() {
        let l = logged(Some(&json!(["service", "version"])), true);
        assert!(matches!(&l.arguments, Arguments::Partly(w) if w.contains("keys_only")));
        assert_eq!(l.value, json!({"_value": ["service", "version"]}));
        let l = logged(Some(&Value::Null), true);
        assert!(matches!(&l.arguments, Arguments::No(w) if w.contains("argument_logging: none")));
        assert_eq!(l.value, json!({}));
        let l = logged(None, false);
        assert!(matches!(&l.arguments, Arguments::No(w) if w.contains("internal error")));
        let l = logged(Some(&json!("x")), true);
        assert!(matches!(&l.arguments, Arguments::Partly(w) if w.contains("a string")));
    }
}
