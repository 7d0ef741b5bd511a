//! The canonical action record of docs/design.md §3 and §4.1, kept compact.
//!
//! A journal's action object used to be held as a `serde_json` map: a tree
//! of separately allocated nodes, keys and strings, about 1.4 KB per
//! accepted event. Analysis reads a handful of its string fields and the
//! fingerprint needs its RFC 8785 form, so the record is kept as that form
//! instead: one allocation holding the compact JSON text, sorted by member
//! name, preceded by the byte ranges of the fields analysis reads.
//!
//! The text is exactly what `serde_json` writes for the map, and is kept
//! only when that output is the RFC 8785 form (no floats, no integers
//! beyond 2^53, no member names that sort differently in UTF-16; see
//! [`crate::canonical`]) and the indexed string fields need no escaping.
//! Then parsing the text gives back the very map that was recorded. Any
//! other record stays a map, so nothing recorded is ever rounded or
//! reordered: unknown fields survive and canonicalization sees exactly what
//! was recorded.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// The fields whose place in the text is remembered, in slot order.
const INDEXED: [&str; 6] = [
    "actor",
    "tool",
    "channel",
    "target",
    "intent_scope",
    "arguments",
];
/// Slot of `arguments` in [`INDEXED`]: a JSON object, not a string.
const ARGUMENTS: usize = 5;
/// Offset of the flags byte: after a start and an end (`u32`, little
/// endian) per slot.
const FLAGS: usize = INDEXED.len() * 8;
/// Bytes of the header: the slots' ranges and the flags byte.
const HEADER: usize = FLAGS + 1;
/// Flag: the record is its own fingerprint input when the contract adds
/// nothing (see [`ActionRecord::plain_canonical_bytes`]).
const PLAIN: u8 = 1;

/// Top-level fields of an action record that carry no intent: protocol
/// correlation, timestamps and trace context. Dropped before hashing
/// (docs/design.md §4.1).
pub const NON_SEMANTIC_FIELDS: &[&str] = &[
    "request_id",
    "requestId",
    "jsonrpc_id",
    "call_id",
    "timestamp",
    "ts",
    "at",
    "received_at",
    "trace_id",
    "traceId",
    "traceparent",
    "tracestate",
    "span_id",
    "spanId",
    "_meta",
];

/// Argument fields dropped before hashing: MCP `_meta` and trace context.
/// Argument timestamps are kept: a scheduled time can be the intent
/// (docs/design.md §4.1).
pub const NON_SEMANTIC_ARGUMENTS: &[&str] = &[
    "_meta",
    "request_id",
    "requestId",
    "trace_id",
    "traceId",
    "traceparent",
    "tracestate",
    "span_id",
    "spanId",
];
/// A slot's start when the field is absent (or not of the indexed type).
const ABSENT: u32 = u32::MAX;

#[derive(Clone, PartialEq)]
enum Repr {
    /// [`HEADER`] bytes of field ranges (relative to the text), then the
    /// compact JSON text of the object, which is its RFC 8785 form.
    /// Shared: executions that asked for the same action hold one text
    /// ([`ActionPool`]).
    Text(Arc<[u8]>),
    /// A record whose compact text would not be its RFC 8785 form, or
    /// whose indexed strings need escaping: kept as recorded.
    Tree(Box<Map<String, Value>>),
}

/// The canonical action record of docs/design.md §3 and docs/design.md §4.1:
/// `actor`, `tool`, `channel`, `target`, `credential_ref`, `method`,
/// `arguments`, `intent_scope`, and for SSH `host_key`, `account`,
/// `command`, `cwd`.
///
/// Holds the JSON object the journal wrote, so that unknown fields survive
/// and canonicalization sees exactly what was recorded; most records are
/// stored as their RFC 8785 text in one allocation (module doc). Build one
/// with [`ActionRecord::from_map`]; read it with the typed accessors, or
/// [`ActionRecord::to_map`] for the whole object (parsed on demand).
#[derive(Clone, PartialEq)]
pub struct ActionRecord(Repr);

impl Default for ActionRecord {
    fn default() -> Self {
        ActionRecord::from_map(Map::new())
    }
}

impl From<Map<String, Value>> for ActionRecord {
    fn from(m: Map<String, Value>) -> Self {
        ActionRecord::from_map(m)
    }
}

impl ActionRecord {
    /// A copy in a block of its own, allocated by the calling thread: what
    /// a model keeps of a record a reader made on another thread, so that
    /// the reader's memory, all of it freed but this, is not held for it
    /// (docs/design.md §9.8).
    pub(in crate::model) fn copied(&self) -> ActionRecord {
        match &self.0 {
            Repr::Text(t) => ActionRecord(Repr::Text(Arc::from(&**t))),
            Repr::Tree(m) => ActionRecord(Repr::Tree(m.clone())),
        }
    }

    /// The record of a journal's action object, as recorded.
    pub fn from_map(m: Map<String, Value>) -> ActionRecord {
        match encode(&m) {
            Some(bytes) => ActionRecord(Repr::Text(bytes)),
            None => ActionRecord(Repr::Tree(Box::new(m))),
        }
    }

    /// The record of an action object given as its RFC 8785 text: what
    /// [`ActionRecord::from_map`] gives the object that text parses to,
    /// built from the text itself, without a value tree. `None` when that
    /// record would not be stored as text (a member name at or beyond
    /// U+E000, an indexed string that needs escaping, nesting of
    /// `MAX_DEPTH` levels) or `text` is not an object: parse it and use
    /// [`ActionRecord::from_map`] then.
    ///
    /// `text` must be in RFC 8785 form (a native journal line the raw chain
    /// hash accepted is, and so is every object in it, docs/design.md
    /// §6.8); for other text the record may differ from the map's.
    pub fn from_canonical_json(text: &str) -> Option<ActionRecord> {
        encode_text(text.as_bytes()).map(|b| ActionRecord(Repr::Text(b)))
    }

    /// The whole object as recorded: parsed from the text, or a copy.
    pub fn to_map(&self) -> Map<String, Value> {
        match &self.0 {
            // The text was written from a map by serde_json: it parses.
            Repr::Text(b) => serde_json::from_slice(&b[HEADER..]).unwrap_or_default(),
            Repr::Tree(m) => (**m).clone(),
        }
    }

    /// The whole object, taken apart (see [`ActionRecord::to_map`]).
    pub fn into_map(self) -> Map<String, Value> {
        match self.0 {
            Repr::Tree(m) => *m,
            Repr::Text(_) => self.to_map(),
        }
    }

    /// The RFC 8785 form of the whole object when it is stored as such;
    /// `None` for records kept as a map (floats, big integers, ...).
    pub fn canonical_bytes(&self) -> Option<&[u8]> {
        match &self.0 {
            Repr::Text(b) => Some(&b[HEADER..]),
            Repr::Tree(_) => None,
        }
    }

    /// The RFC 8785 form of the record when it is also the canonical
    /// record a fingerprint hashes under a contract that adds, drops and
    /// redacts nothing (docs/design.md §4.1): stored as text, no
    /// [`NON_SEMANTIC_FIELDS`], and `arguments` an object without
    /// [`NON_SEMANTIC_ARGUMENTS`]. `None` otherwise: then the record must
    /// be taken apart first.
    pub fn plain_canonical_bytes(&self) -> Option<&[u8]> {
        match &self.0 {
            Repr::Text(b) if b[FLAGS] & PLAIN != 0 => Some(&b[HEADER..]),
            _ => None,
        }
    }

    /// One member of the object, parsed (`None` when absent).
    pub fn get(&self, key: &str) -> Option<Value> {
        match &self.0 {
            Repr::Tree(m) => m.get(key).cloned(),
            Repr::Text(_) => {
                let found = match INDEXED.iter().position(|k| *k == key) {
                    Some(ARGUMENTS) => self.arguments().map(Value::Object),
                    Some(slot) => self.slot(slot).map(|s| Value::String(s.to_string())),
                    None => None,
                };
                // Unindexed members (and indexed ones of another type) are
                // only shown, never judged: parsing the whole text is fine.
                found.or_else(|| self.to_map().remove(key))
            }
        }
    }

    /// A string member (`None` when absent or not a string).
    pub fn get_str(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    fn slot(&self, slot: usize) -> Option<&str> {
        match &self.0 {
            Repr::Text(b) => {
                let (start, end) = range(b, slot)?;
                std::str::from_utf8(&b[HEADER + start..HEADER + end]).ok()
            }
            Repr::Tree(m) => m.get(INDEXED[slot]).and_then(Value::as_str),
        }
    }

    /// Authenticated caller identity, e.g. `signed-process:com.example.agent`.
    pub fn actor(&self) -> Option<&str> {
        self.slot(0)
    }
    /// Tool name as listed by the MCP server, e.g. `deploy_release`.
    pub fn tool(&self) -> Option<&str> {
        self.slot(1)
    }
    /// `http`, `ssh` or `mcp`.
    pub fn channel(&self) -> Option<&str> {
        self.slot(2)
    }
    /// Where the effect lands, e.g. `deploy-api.internal.example/releases`.
    pub fn target(&self) -> Option<&str> {
        self.slot(3)
    }
    /// Context in which a retry can reasonably happen, e.g. `run:5f8097`.
    pub fn intent_scope(&self) -> Option<&str> {
        self.slot(4)
    }
    /// Tool arguments, parsed on demand; `None` when absent or not an
    /// object.
    pub fn arguments(&self) -> Option<Map<String, Value>> {
        match &self.0 {
            Repr::Text(b) => {
                let (start, end) = range(b, ARGUMENTS)?;
                serde_json::from_slice(&b[HEADER + start..HEADER + end]).ok()
            }
            Repr::Tree(m) => m.get("arguments").and_then(Value::as_object).cloned(),
        }
    }
    /// How many tool arguments the record carries (0 when absent or not an
    /// object), without parsing their values.
    pub fn argument_count(&self) -> usize {
        match &self.0 {
            Repr::Text(_) => self.arguments().map_or(0, |m| m.len()),
            Repr::Tree(m) => m
                .get("arguments")
                .and_then(Value::as_object)
                .map_or(0, Map::len),
        }
    }
}

/// The range of a slot in the text, from the header.
fn range(b: &[u8], slot: usize) -> Option<(usize, usize)> {
    let word = |i: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&b[i..i + 4]);
        u32::from_le_bytes(w)
    };
    let start = word(slot * 8);
    (start != ABSENT).then(|| (start as usize, word(slot * 8 + 4) as usize))
}

/// Nesting a record's text may have: serde_json parses at most 128 levels,
/// and the text must read back. A journal line is parsed under that limit,
/// so only a reader wrapping values deeper could exceed it; such a record
/// stays a map.
const MAX_DEPTH: usize = 100;

/// Levels of arrays and objects in `v` (0 for a scalar).
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// A member of an object's text: its name's raw bytes, its value's range.
type Member<'a> = (&'a [u8], usize, usize);

/// The members of the JSON object at the start of `b` (RFC 8785 text):
/// each name's raw bytes (between its quotes) and its value's byte range,
/// with the deepest nesting of any value; `None` when `b` is not an object.
fn members(b: &[u8]) -> Option<(Vec<Member<'_>>, usize)> {
    /// The end of the string whose opening quote is at `i`.
    fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
        i += 1;
        loop {
            match *b.get(i)? {
                b'"' => return Some(i + 1),
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
    }
    /// The end of the value at `i` and its nesting (0 for a scalar);
    /// `None` for a number with a fraction or exponent, or beyond 2^53,
    /// which `serde_json` would not write back as RFC 8785 does.
    fn value_end(b: &[u8], mut i: usize) -> Option<(usize, usize)> {
        let (mut depth, mut deepest) = (0usize, 0usize);
        loop {
            match *b.get(i)? {
                b'"' => i = string_end(b, i)?,
                b'{' | b'[' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                    i += 1;
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    i += 1;
                }
                b'-' | b'0'..=b'9' => {
                    let start = i;
                    while matches!(
                        b.get(i),
                        Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                    ) {
                        i += 1;
                    }
                    // An integer serde_json writes back as it is: within
                    // 2^53 (as `canonical::fast_path_applies`), not `-0`.
                    let n: i128 = std::str::from_utf8(&b[start..i]).ok()?.parse().ok()?;
                    if n.unsigned_abs() > 1 << 53 || &b[start..i] == b"-0" {
                        return None;
                    }
                }
                b'a'..=b'z' => {
                    while matches!(b.get(i), Some(b'a'..=b'z')) {
                        i += 1;
                    }
                }
                _ => i += 1,
            }
            if depth == 0 {
                return Some((i, deepest));
            }
        }
    }
    if b.first() != Some(&b'{') {
        return None;
    }
    let (mut out, mut deepest, mut i) = (Vec::new(), 0, 1);
    if b.get(i) == Some(&b'}') {
        return Some((out, 0));
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let name_end = string_end(b, i)?;
        let name = &b[i + 1..name_end - 1];
        if b.get(name_end) != Some(&b':') {
            return None;
        }
        let start = name_end + 1;
        let (end, d) = value_end(b, start)?;
        deepest = deepest.max(d);
        out.push((name, start, end));
        match b.get(end) {
            Some(b',') => i = end + 1,
            Some(b'}') => return Some((out, deepest)),
            _ => return None,
        }
    }
}

/// [`encode`] of the object whose RFC 8785 text is `text`, from the text.
fn encode_text(text: &[u8]) -> Option<Arc<[u8]>> {
    // Member names sort by UTF-16 code units in RFC 8785 and by bytes in a
    // map: alike unless a character at or beyond U+E000 (lead byte 0xEE
    // or above) is in the text.
    if text.iter().any(|&c| c >= 0xEE) || u32::try_from(text.len()).is_err() {
        return None;
    }
    let (top, deepest) = members(text)?;
    if deepest >= MAX_DEPTH {
        return None;
    }
    let mut out = vec![0u8; HEADER];
    for slot in 0..INDEXED.len() {
        out[slot * 8..slot * 8 + 4].copy_from_slice(&ABSENT.to_le_bytes());
    }
    let mut plain = true;
    let mut arguments_plain = false;
    for &(name, start, end) in &top {
        if NON_SEMANTIC_FIELDS.iter().any(|f| f.as_bytes() == name) {
            plain = false;
        }
        let Some(slot) = INDEXED.iter().position(|f| f.as_bytes() == name) else {
            continue;
        };
        let value = &text[start..end];
        let (s, e) = match value.first() {
            Some(b'{') if slot == ARGUMENTS => {
                let (args, _) = members(value)?;
                arguments_plain = args
                    .iter()
                    .all(|(n, _, _)| !NON_SEMANTIC_ARGUMENTS.iter().any(|f| f.as_bytes() == *n));
                (start, end)
            }
            // Kept only when the text is the string itself, unescaped.
            Some(b'"') if slot != ARGUMENTS => {
                if value.contains(&b'\\') {
                    return None;
                }
                (start + 1, end - 1)
            }
            _ => continue,
        };
        out[slot * 8..slot * 8 + 4].copy_from_slice(&u32::try_from(s).ok()?.to_le_bytes());
        out[slot * 8 + 4..slot * 8 + 8].copy_from_slice(&u32::try_from(e).ok()?.to_le_bytes());
    }
    if plain && arguments_plain {
        out[FLAGS] = PLAIN;
    }
    out.extend_from_slice(text);
    Some(Arc::from(out))
}

/// The header and text of a record, or `None` when it must stay a map.
fn encode(m: &Map<String, Value>) -> Option<Arc<[u8]>> {
    if !m.iter().all(|(k, v)| {
        crate::canonical::name_sorts_alike(k)
            && crate::canonical::fast_path_applies(v)
            && depth(v) < MAX_DEPTH
    }) {
        return None;
    }
    let mut out = vec![0u8; HEADER];
    for slot in 0..INDEXED.len() {
        out[slot * 8..slot * 8 + 4].copy_from_slice(&ABSENT.to_le_bytes());
    }
    // Writes exactly what serde_json writes for the map, remembering where
    // the indexed fields' values are.
    out.push(b'{');
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, k);
        out.push(b':');
        let start = out.len();
        let _ = serde_json::to_writer(&mut out, v);
        let end = out.len();
        let Some(slot) = INDEXED.iter().position(|f| f == k) else {
            continue;
        };
        let (s, e) = match v {
            Value::Object(_) if slot == ARGUMENTS => (start, end),
            // Kept only when the text is the string itself, unescaped.
            Value::String(s) if slot != ARGUMENTS => {
                if out[start + 1..end - 1] != *s.as_bytes() {
                    return None;
                }
                (start + 1, end - 1)
            }
            _ => continue,
        };
        let (s, e) = (
            u32::try_from(s - HEADER).ok()?,
            u32::try_from(e - HEADER).ok()?,
        );
        out[slot * 8..slot * 8 + 4].copy_from_slice(&s.to_le_bytes());
        out[slot * 8 + 4..slot * 8 + 8].copy_from_slice(&e.to_le_bytes());
    }
    out.push(b'}');
    u32::try_from(out.len()).ok()?;
    let plain = m.keys().all(|k| !NON_SEMANTIC_FIELDS.contains(&k.as_str()))
        && m.get("arguments")
            .and_then(Value::as_object)
            .is_some_and(|a| {
                a.keys()
                    .all(|k| !NON_SEMANTIC_ARGUMENTS.contains(&k.as_str()))
            });
    if plain {
        out[FLAGS] = PLAIN;
    }
    Some(Arc::from(out))
}

impl Serialize for ActionRecord {
    /// The object as recorded (parsed from the text first, so that every
    /// serializer, pretty ones included, writes it its own way).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Tree(m) => m.serialize(s),
            Repr::Text(_) => self.to_map().serialize(s),
        }
    }
}

impl fmt::Debug for ActionRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ActionRecord").field(&self.to_map()).finish()
    }
}

#[cfg(test)]
mod tests;
