//! Consistent pseudonyms for `--anonymize` (docs/design.md §7.5:
//! lnav's `--anonymize`).
//!
//! Every report field passes through a [`Namer`] while the report is built:
//! [`Plain`] leaves it as it is, [`Pseudonyms`] replaces it. One original
//! always gets one pseudonym across the whole export (`actor-1`,
//! `execution-3`, ...), whatever field it shows in, so the story still
//! reads: the same execution id in the timeline, the answers and the
//! diagram is the same `execution-3`.
//!
//! Replaced: actors, targets, credential references, intent scopes,
//! argument values (recursively; object keys are kept), SSH host keys,
//! accounts, commands and working directories, execution, call, session
//! and MCP session ids, JSON-RPC ids, idempotency keys, result references,
//! fingerprints, group ids, process ids and process names, client names and
//! versions, approver, reviewer and author names, journal-derived free text
//! (error messages, reviewer notes) and file names. Kept: tool names, event
//! and verdict vocabulary, times and HTTP statuses.
//!
//! Free text that retrace writes itself (answers, reasons, findings) embeds
//! originals; [`Pseudonyms::text`] replaces every registered original in it
//! in one left-to-right pass, longest match first, only where the match is
//! not part of a longer word. Numeric ids are matched with their label
//! (`JSON-RPC id 41`, `pid 4242`) so that times and counts are left alone;
//! process names, often a common word (`agent`), only where question 1
//! lists them among a session's process details (`(pid 4242, agent,
//! started …)`), so that the same word in retrace's own sentences stays.
//! Originals shorter than two characters are not searched for in free text.

use serde_json::Value;
use std::collections::HashMap;

pub use crate::query::words::{Class, Namer, Plain};

/// Consistent pseudonyms: one original, one pseudonym.
#[derive(Debug, Default, Clone)]
pub struct Pseudonyms {
    names: HashMap<String, String>,
    counters: HashMap<&'static str, usize>,
    /// Phrases searched in free text: (original, replacement).
    phrases: HashMap<String, String>,
    /// For each first character of a phrase, the lengths in bytes of the
    /// phrases that start with it: where [`Pseudonyms::text`] looks for a
    /// match at a character, it looks up these prefixes of the text, the
    /// longest first, instead of going through every phrase.
    lengths: HashMap<char, std::collections::BTreeSet<usize>>,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Pseudonyms {
    /// An empty table.
    pub fn new() -> Pseudonyms {
        Pseudonyms::default()
    }

    /// Registers an original and returns its pseudonym (the existing one if
    /// it was seen before, in any class).
    ///
    /// The phrases searched for in free text depend on the class, and are
    /// added for every class an original is registered under: a process
    /// name that is also an argument value is searched for everywhere.
    pub fn register(&mut self, class: Class, original: &str) -> String {
        let p = match self.names.get(original) {
            Some(p) => p.clone(),
            None => {
                let n = self.counters.entry(class.prefix()).or_insert(0);
                *n += 1;
                let p = format!("{}-{n}", class.prefix());
                self.names.insert(original.to_string(), p.clone());
                p
            }
        };
        match class {
            // Numbers are only searched for with their label.
            Class::JsonRpc if original.parse::<i64>().is_ok() => {
                self.phrase(
                    &format!("JSON-RPC id {original}"),
                    &format!("JSON-RPC id {p}"),
                );
            }
            Class::Pid => {
                self.phrase(&format!("pid {original}"), &format!("pid {p}"));
                self.phrase(&format!("pid:{original}"), &format!("pid:{p}"));
            }
            // Where question 1 lists a session's process details:
            // `(pid 4242, agent, started …)`, `(agent)`.
            Class::Process => {
                for (before, after) in [("(", ","), ("(", ")"), (", ", ","), (", ", ")")] {
                    self.phrase(
                        &format!("{before}{original}{after}"),
                        &format!("{before}{p}{after}"),
                    );
                }
            }
            _ => {
                if original.chars().count() >= 2 {
                    self.phrase(original, &p);
                }
                if class == Class::JsonRpc {
                    // String ids are shown quoted (`JSON-RPC id "abc"`).
                    self.phrase(&format!("{original:?}"), &format!("{p:?}"));
                }
            }
        }
        p
    }

    /// Adds a phrase to search for in free text, with its replacement.
    pub fn phrase(&mut self, original: &str, replacement: &str) {
        let Some(first) = original.chars().next() else {
            return;
        };
        if let std::collections::hash_map::Entry::Vacant(v) =
            self.phrases.entry(original.to_string())
        {
            v.insert(replacement.to_string());
            self.lengths
                .entry(first)
                .or_default()
                .insert(original.len());
        }
    }

    /// Registers every leaf of an argument value (strings and numbers;
    /// booleans and null carry no identity and are kept).
    pub fn register_value(&mut self, v: &Value) {
        match v {
            Value::String(s) => {
                self.register(Class::Value, s);
            }
            Value::Number(n) => {
                self.register(Class::Value, &n.to_string());
            }
            Value::Array(a) => a.iter().for_each(|x| self.register_value(x)),
            Value::Object(m) => m.values().for_each(|x| self.register_value(x)),
            Value::Bool(_) | Value::Null => {}
        }
    }

    /// Number of distinct originals registered.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

impl Namer for Pseudonyms {
    fn id(&mut self, class: Class, original: &str) -> String {
        self.register(class, original)
    }

    fn text(&self, s: &str) -> String {
        if self.phrases.is_empty() {
            return s.to_string();
        }
        rewrite(s, |rest, c, prev| {
            // The phrases the rest of the text starts with, longest first
            // (one of each length can): the first not inside a longer word.
            self.lengths.get(&c).and_then(|lengths| {
                lengths.iter().rev().find_map(|&n| {
                    let o = rest.get(..n)?;
                    let r = self.phrases.get(o)?;
                    whole_word(o, prev, rest[n..].chars().next()).then_some((n, r.as_str()))
                })
            })
        })
    }

    fn value(&mut self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.register(Class::Value, s)),
            Value::Number(n) => Value::String(self.register(Class::Value, &n.to_string())),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.value(x)).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), self.value(x))).collect())
            }
            Value::Bool(_) | Value::Null => v.clone(),
        }
    }

    fn anonymizes(&self) -> bool {
        true
    }
}

/// Whether phrase `o`, between the character `prev` before it and
/// `after` after it, is not part of a longer word: a match that starts
/// (ends) with a word character must not follow (precede) one.
fn whole_word(o: &str, prev: Option<char>, after: Option<char>) -> bool {
    let starts_inside = o.chars().next().is_some_and(is_word) && prev.is_some_and(is_word);
    let ends_inside = o.chars().last().is_some_and(is_word) && after.is_some_and(is_word);
    !starts_inside && !ends_inside
}

/// `s` with each phrase `find` finds replaced, left to right: `find` is
/// given the rest of the text, its first character and the character
/// before it, and answers the length in bytes of the phrase the rest
/// starts with and its replacement; where it finds none, the character is
/// kept.
fn rewrite<'p>(
    s: &str,
    mut find: impl FnMut(&str, char, Option<char>) -> Option<(usize, &'p str)>,
) -> String {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut prev: Option<char> = None;
    while let Some(c) = s[i..].chars().next() {
        match find(&s[i..], c, prev) {
            Some((n, r)) if n > 0 => {
                out.push_str(r);
                prev = s[i..i + n].chars().next_back();
                i += n;
            }
            _ => {
                out.push(c);
                prev = Some(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Pseudonyms::text`] as it was written first: every phrase that
    /// starts with the character, longest first, tried in turn. The
    /// reference the lookup by length is held to.
    fn text_by_scan(p: &Pseudonyms, s: &str) -> String {
        let mut by_first: HashMap<char, Vec<(&str, &str)>> = HashMap::new();
        for (o, r) in &p.phrases {
            if let Some(c) = o.chars().next() {
                by_first
                    .entry(c)
                    .or_default()
                    .push((o.as_str(), r.as_str()));
            }
        }
        for v in by_first.values_mut() {
            v.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        }
        rewrite(s, |rest, c, prev| {
            by_first.get(&c).and_then(|cands| {
                cands
                    .iter()
                    .find(|(o, _)| {
                        rest.starts_with(o) && whole_word(o, prev, rest[o.len()..].chars().next())
                    })
                    .map(|&(o, r)| (o.len(), r))
            })
        })
    }

    /// Free text is rewritten as going through every phrase rewrote it:
    /// phrases that share first characters, are prefixes of one another,
    /// end inside words, hold multi-byte characters and labels, in texts
    /// made of their pieces.
    #[test]
    fn text_finds_what_trying_every_phrase_finds() {
        let mut rng = crate::testing::XorShift::new(0x2545_F491_4F6C_DD1D);
        let mut next = |n: usize| rng.below(n as u64) as usize;
        let pieces = [
            "a", "ab", "abc", "act_1", "act_12", "é", "日本", " ", "(", ",", "_", "7", "pid 7", "x",
        ];
        for _ in 0..400 {
            let mut p = Pseudonyms::new();
            for _ in 0..1 + next(8) {
                let original: String = (0..1 + next(3))
                    .map(|_| pieces[next(pieces.len())])
                    .collect();
                let class = [
                    Class::Execution,
                    Class::Value,
                    Class::Pid,
                    Class::Process,
                    Class::JsonRpc,
                ][next(5)];
                p.register(class, &original);
            }
            for _ in 0..10 {
                let text: String = (0..next(12)).map(|_| pieces[next(pieces.len())]).collect();
                assert_eq!(
                    p.text(&text),
                    text_by_scan(&p, &text),
                    "{text:?} with {:?}",
                    p.phrases
                );
            }
        }
    }

    #[test]
    fn one_original_one_pseudonym() {
        let mut p = Pseudonyms::new();
        let a = p.id(Class::Execution, "act_1");
        let b = p.id(Class::Execution, "act_2");
        assert_ne!(a, b);
        assert_eq!(p.id(Class::Execution, "act_1"), a);
        // The same original in another class keeps its first pseudonym.
        assert_eq!(p.id(Class::Value, "act_1"), a);
    }

    #[test]
    fn text_replaces_whole_words_longest_first() {
        let mut p = Pseudonyms::new();
        p.register(Class::Execution, "act_1");
        p.register(Class::Execution, "act_10");
        p.register(Class::Actor, "signed-process:com.example.agent");
        p.register(Class::Value, "agent");
        let t = p.text("act_10 and act_1 by signed-process:com.example.agent; agentic");
        assert_eq!(t, "execution-2 and execution-1 by actor-1; agentic");
    }

    #[test]
    fn replacements_are_not_replaced_again() {
        let mut p = Pseudonyms::new();
        p.register(Class::Value, "value");
        p.register(Class::Value, "value-1x");
        let t = p.text("value value-1x");
        assert_eq!(t, "value-1 value-2");
    }

    #[test]
    fn numeric_ids_only_with_their_label() {
        let mut p = Pseudonyms::new();
        p.register(Class::JsonRpc, "42");
        p.register(Class::Pid, "4242");
        assert_eq!(
            p.text("JSON-RPC id 42 at 14:04:42 (pid 4242, 42 calls)"),
            "JSON-RPC id rpc-1 at 14:04:42 (pid pid-1, 42 calls)"
        );
    }

    #[test]
    fn process_names_only_among_process_details() {
        let mut p = Pseudonyms::new();
        p.register(Class::Pid, "4242");
        p.register(Class::Process, "agent");
        p.register(Class::Process, "SECRETPROC");
        assert_eq!(
            p.text("session s (pid 4242, agent, started 2026) and session t (SECRETPROC); the agent retried"),
            "session s (pid pid-1, process-1, started 2026) and session t (process-2); the agent retried"
        );
        assert_eq!(p.text("(pid 4242, SECRETPROC)"), "(pid pid-1, process-2)");
        // Registered again as an argument value: searched for everywhere.
        p.register(Class::Value, "SECRETPROC");
        assert_eq!(p.text("SECRETPROC ran"), "process-2 ran");
    }

    #[test]
    fn values_recursively_keys_kept() {
        let mut p = Pseudonyms::new();
        let v = serde_json::json!({"service": "catalog", "n": 38281, "tags": ["a1", {"x": "catalog"}], "ok": true});
        let a = p.value(&v);
        assert_eq!(a["service"], a["tags"][1]["x"]);
        assert!(a["service"].as_str().unwrap().starts_with("value-"));
        assert_eq!(a["ok"], true);
        let leaves = [&a["service"], &a["n"], &a["tags"][0]];
        for (i, x) in leaves.iter().enumerate() {
            for y in &leaves[i + 1..] {
                assert_ne!(x, y);
            }
        }
        assert!(!a.to_string().contains("catalog") && !a.to_string().contains("38281"));
    }
}
