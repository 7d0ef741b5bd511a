//! The native chain hash straight from a line's bytes, for lines that are
//! already written in their RFC 8785 form (what [`super::NativeChainWriter`]
//! and most gateways write: members sorted, no spaces, integers, strings
//! escaped the canonical way). Such a line's canonical record is the line
//! itself without its `prev_hash` and `hash` members, so the hash needs no
//! parse into values and no writing back: one pass checks the form and
//! finds the members, and the hasher reads the line's own bytes.
//!
//! The check is strict: anything it is not sure of (a float, a large
//! integer, a space, an escape RFC 8785 would not write, keys out of order
//! or repeated, a name with a character at or above U+E000, deep nesting)
//! answers `None`, and the caller hashes the parsed record as before. Both
//! ways give the same hash for every line the check accepts (tests compare
//! them).

use super::chain::lower_hex;
use sha2::{Digest, Sha256};

/// Nesting deeper than this is left to the parser (which has its own
/// limit, and says so).
const MAX_DEPTH: usize = 64;

/// 2^53: integers of smaller magnitude are written alike by JSON and
/// RFC 8785, and are not ambiguous ([`crate::journal::ambiguity`] flags
/// 2^53 and beyond).
const MAX_EXACT: u64 = 1 << 53;

/// The native chain hash (lowercase hex of sha256(prev_hash ‖ JCS(record)))
/// of a line whose bytes are their own RFC 8785 form and whose `prev_hash`
/// and `hash` are strings without escapes; `None` for any other line,
/// which must then be hashed from its parsed record.
///
/// Any bytes may be given ([`raw_scan`] checks UTF-8).
///
/// A line this answers for holds nothing the chain's hash cannot pin down
/// (docs/design.md §6.4): its keys are in strictly increasing order in
/// every object, so none is repeated, and its integers are below 2^53.
pub(super) fn raw_chain_hash(line: &[u8]) -> Option<String> {
    let mut members = Vec::with_capacity(24);
    raw_scan(line, &mut members).map(|r| lower_hex(&r.digest))
}

/// One top-level member of a line [`raw_scan`] accepted: byte ranges into
/// the line (end exclusive).
#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    /// The name's contents, without quotes (no escapes: the scan declines
    /// names with one).
    pub key: (usize, usize),
    /// The value as written (a string with its quotes).
    pub value: (usize, usize),
}

impl Member {
    /// Where the member starts (its name's opening quote).
    fn start(&self) -> usize {
        self.key.0 - 1
    }
}

/// What [`raw_scan`] found in a line in RFC 8785 form.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawLine {
    /// sha256(prev_hash ‖ JCS(record)), the native chain hash before hex
    /// (docs/design.md §6).
    pub digest: [u8; 32],
    /// The contents of `prev_hash` (a string without escapes).
    pub prev: (usize, usize),
    /// The contents of `hash` (a string without escapes).
    pub stored: (usize, usize),
}

/// The strict scan behind [`raw_chain_hash`]: checks that `line` is an
/// object in RFC 8785 form with `prev_hash` and `hash` strings without
/// escapes, and hashes it from its bytes. `members` is cleared and filled
/// with the line's other top-level members in order (sorted by name, each
/// name once). `None` when the line is anything else.
///
/// Any bytes may be given: the scan checks UTF-8 as it goes (a line it
/// accepts is valid UTF-8; one that is not is declined).
pub(super) fn raw_scan(line: &[u8], members: &mut Vec<Member>) -> Option<RawLine> {
    let (raw, end) = raw_scan_prefix(line, members)?;
    (end == line.len()).then_some(raw)
}

/// [`raw_scan`] of the object `b` starts with, whatever follows it:
/// returns where the object ends too (the byte after its `}`). The scan
/// reads no byte past that end, and no line end (a newline, a control
/// byte, is in no string and between no tokens of a line it accepts), so
/// a line's object found this way in the bytes from its start on is the
/// one [`raw_scan`] finds in the line alone.
pub(super) fn raw_scan_prefix(b: &[u8], members: &mut Vec<Member>) -> Option<(RawLine, usize)> {
    members.clear();
    if b.first() != Some(&b'{') {
        return None;
    }
    let mut s = Scan {
        b,
        i: 1,
        escaped: false,
    };
    let mut prev: Option<(usize, usize)> = None;
    let mut stored: Option<(usize, usize)> = None;
    let mut last_key: Option<(usize, usize)> = None;
    if s.peek()? == b'}' {
        s.i += 1;
    } else {
        loop {
            let key = s.key()?;
            if let Some(k) = last_key
                && !before(&b[k.0..k.1], &b[key.0..key.1])
            {
                return None;
            }
            last_key = Some(key);
            s.expect(b':')?;
            let vstart = s.i;
            s.value(1)?;
            let vend = s.i;
            match &b[key.0..key.1] {
                b"prev_hash" => prev = Some(plain_string(b, vstart, vend, s.escaped)?),
                b"hash" => stored = Some(plain_string(b, vstart, vend, s.escaped)?),
                _ => members.push(Member {
                    key,
                    value: (vstart, vend),
                }),
            }
            match s.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    }
    let end = s.i;
    let stored = stored?;
    let prev = prev?;
    let digest = digest_of(b, prev, members);
    Some((
        RawLine {
            digest,
            prev,
            stored,
        },
        end,
    ))
}

/// sha256(prev_hash ‖ JCS(record)) of a line in RFC 8785 form: the
/// contents of its `prev_hash` at `prev`, then `{`, its other members
/// (`members`, in order) joined by commas, and `}`. Members next to each
/// other in the line are hashed as one run of bytes (the comma between
/// them included).
fn digest_of(b: &[u8], prev: (usize, usize), members: &[Member]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(&b[prev.0..prev.1]);
    h.update(b"{");
    let mut run: Option<(usize, usize)> = None;
    let mut first = true;
    let mut flush = |h: &mut Sha256, (a, z): (usize, usize)| {
        if !first {
            h.update(b",");
        }
        first = false;
        h.update(&b[a..z]);
    };
    for m in members {
        run = match run {
            Some((a, z)) if m.start() == z + 1 => Some((a, m.value.1)),
            Some(r) => {
                flush(&mut h, r);
                Some((m.start(), m.value.1))
            }
            None => Some((m.start(), m.value.1)),
        };
    }
    if let Some(r) = run {
        flush(&mut h, r);
    }
    h.update(b"}");
    h.finalize().into()
}

/// The members of an object value of a line [`raw_scan`] accepted (its
/// range as a [`Member::value`]), in order; `None` when the range is not
/// an object.
pub(super) fn object_members(
    line: &[u8],
    (a, z): (usize, usize),
    out: &mut Vec<Member>,
) -> Option<()> {
    out.clear();
    let b = line.get(..z)?;
    let mut s = Scan {
        b,
        i: a,
        escaped: false,
    };
    s.expect(b'{')?;
    if s.peek()? == b'}' {
        return (s.i + 1 == z).then_some(());
    }
    loop {
        let key = s.key()?;
        s.expect(b':')?;
        let vstart = s.i;
        s.value(2)?;
        out.push(Member {
            key,
            value: (vstart, s.i),
        });
        match s.next()? {
            b',' => continue,
            b'}' => break,
            _ => return None,
        }
    }
    (s.i == z).then_some(())
}

/// Where the plain run of a string ends: the first `"`, `\\` or C0
/// control in `s` (with `high`, or byte of 0x80 and above), sixteen bytes
/// at a time in two words, then eight, then byte by byte (the lowest byte
/// each test flags is exact: a borrow only carries upwards).
#[inline]
fn first_special(s: &[u8], high: bool) -> Option<usize> {
    let mut i = 0;
    while let Some(words) = s.get(i..i + 16) {
        let (lo, hi) = words.split_at(8);
        let (a, b) = (special_bits(lo, high), special_bits(hi, high));
        if a | b != 0 {
            return Some(if a != 0 {
                i + (a.trailing_zeros() / 8) as usize
            } else {
                i + 8 + (b.trailing_zeros() / 8) as usize
            });
        }
        i += 16;
    }
    if let Some(word) = s.get(i..i + 8) {
        let t = special_bits(word, high);
        if t != 0 {
            return Some(i + (t.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20 || (high && c >= 0x80))
        .map(|p| i + p)
}

/// The high bit of each byte of `word` (eight bytes, little-endian) set
/// where the byte is `"`, `\\` or a C0 control (with `high`, or 0x80 and
/// above); exact for the lowest such byte.
#[inline]
fn special_bits(word: &[u8], high: bool) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut w = [0u8; 8];
    w.copy_from_slice(word);
    let x = u64::from_le_bytes(w);
    let q = x ^ (LO * u64::from(b'"'));
    let e = x ^ (LO * u64::from(b'\\'));
    let mut t =
        (q.wrapping_sub(LO) & !q) | (e.wrapping_sub(LO) & !e) | (x.wrapping_sub(LO * 0x20) & !x);
    if high {
        t |= x;
    }
    t & HI
}

/// The length of the UTF-8 character `s` starts with, whose first byte is
/// 0x80 or above; `None` when it is not one (a stray continuation byte,
/// an overlong form, a surrogate, beyond U+10FFFF, or cut short), as
/// `std::str::from_utf8` judges (RFC 3629 §4).
#[inline]
fn utf8_char(s: &[u8]) -> Option<usize> {
    let cont = |i: usize| s.get(i).is_some_and(|&c| c & 0xC0 == 0x80);
    let second = |lo: u8, hi: u8| s.get(1).is_some_and(|&c| (lo..=hi).contains(&c));
    let (n, ok) = match s[0] {
        0xC2..=0xDF => (2, cont(1)),
        0xE0 => (3, second(0xA0, 0xBF) && cont(2)),
        0xE1..=0xEC | 0xEE..=0xEF => (3, cont(1) && cont(2)),
        0xED => (3, second(0x80, 0x9F) && cont(2)),
        0xF0 => (4, second(0x90, 0xBF) && cont(2) && cont(3)),
        0xF1..=0xF3 => (4, cont(1) && cont(2) && cont(3)),
        0xF4 => (4, second(0x80, 0x8F) && cont(2) && cont(3)),
        _ => (0, false),
    };
    ok.then_some(n)
}

/// [`first_special`] stopping at non-ASCII bytes too.
#[inline]
fn special_or_high(s: &[u8]) -> Option<usize> {
    first_special(s, true)
}

/// Whether name `a` sorts strictly before name `b`, bytewise (names
/// differ within their first bytes: a loop beats a `memcmp` call).
#[inline]
fn before(a: &[u8], b: &[u8]) -> bool {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x < y;
        }
    }
    a.len() < b.len()
}

/// The contents of a string value with no escapes (a hash is hex):
/// `escaped` is whether the scan met one in the last string it read, which
/// is this value when the value is a string.
fn plain_string(b: &[u8], start: usize, end: usize, escaped: bool) -> Option<(usize, usize)> {
    let v = &b[start..end];
    (v.len() >= 2 && v[0] == b'"' && v[v.len() - 1] == b'"' && !escaped)
        .then_some((start + 1, end - 1))
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// Whether the last string value read had an escape.
    escaped: bool,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }
    fn expect(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    /// A member name: a string without escapes whose characters all sort
    /// alike in UTF-8 and UTF-16 (below U+E000: no lead byte 0xEE or
    /// above). Returns the range of its contents.
    #[inline]
    fn key(&mut self) -> Option<(usize, usize)> {
        self.expect(b'"')?;
        let start = self.i;
        let rest = self.b.get(start..)?;
        // Names are short and mostly ASCII: the first byte that is not a
        // plain ASCII character is found a word at a time, and only a
        // non-ASCII one is looked at byte by byte.
        let mut n = special_or_high(rest)?;
        while rest[n] >= 0x80 {
            if rest[n] >= 0xEE {
                return None;
            }
            n += utf8_char(&rest[n..])?;
            n += special_or_high(rest.get(n..)?)?;
        }
        if rest[n] != b'"' {
            return None;
        }
        self.i = start + n + 1;
        Some((start, start + n))
    }

    /// A string value written as RFC 8785 writes it: raw characters but
    /// for `"`, `\` and the C0 controls, which take `\b \f \n \r \t` or a
    /// lowercase `\u00xx`.
    fn string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        self.escaped = false;
        // The position is kept in a local while the string is read.
        let b = self.b;
        let mut i = self.i;
        loop {
            // Skip the plain run fast: it stops at non-ASCII bytes too,
            // whose character is checked for UTF-8 here.
            let rest = b.get(i..)?;
            let run = special_or_high(rest)?;
            let c = rest[run];
            i += run + 1;
            match c {
                b'"' => {
                    self.i = i;
                    return Some(());
                }
                0x80.. => i += utf8_char(&rest[run..])? - 1,
                b'\\' => {
                    self.escaped = true;
                    match *b.get(i)? {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 1,
                        b'u' => {
                            let h = b.get(i + 1..i + 5)?;
                            i += 5;
                            let lower = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c);
                            if !(h[0] == b'0' && h[1] == b'0' && (h[2] == b'0' || h[2] == b'1'))
                                || !lower(h[3])
                                || matches!(&h[2..4], b"08" | b"09" | b"0a" | b"0c" | b"0d")
                            {
                                return None;
                            }
                        }
                        _ => return None,
                    }
                }
                // A C0 control (the run stops at nothing else).
                _ => return None,
            }
        }
    }

    /// An integer of magnitude below 2^53 written without a sign on zero,
    /// leading zeros, fraction or exponent.
    fn integer(&mut self) -> Option<()> {
        let b = self.b;
        let mut i = self.i;
        let neg = b.get(i) == Some(&b'-');
        if neg {
            i += 1;
        }
        let start = i;
        // Read as they are checked; more than 16 digits are too many
        // (and 17 cannot overflow).
        let mut n = 0u64;
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 || i - start > 16 {
                break;
            }
            n = n * 10 + u64::from(d);
            i += 1;
        }
        let len = i - start;
        if len == 0
            || len > 16
            || (b[start] == b'0' && (len > 1 || neg))
            || matches!(b.get(i), Some(b'.' | b'e' | b'E'))
            || n >= MAX_EXACT
        {
            return None;
        }
        self.i = i;
        Some(())
    }

    /// Any value at nesting `depth`.
    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string()?,
            b'{' => {
                self.i += 1;
                if self.peek()? == b'}' {
                    self.i += 1;
                    return Some(());
                }
                let mut last: Option<(usize, usize)> = None;
                loop {
                    let key = self.key()?;
                    if let Some(k) = last
                        && !before(&self.b[k.0..k.1], &self.b[key.0..key.1])
                    {
                        return None;
                    }
                    last = Some(key);
                    self.expect(b':')?;
                    self.value(depth + 1)?;
                    match self.next()? {
                        b',' => continue,
                        b'}' => break,
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.value(depth + 1)?;
                    match self.next()? {
                        b',' => continue,
                        b']' => break,
                        _ => return None,
                    }
                }
            }
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            _ => return self.integer(),
        }
        Some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + word.len())? == word {
            self.i += word.len();
            Some(())
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::fields::Fields;
    use crate::journal::native::NativeChainWriter;
    use crate::journal::native::chain::{ChainFields, chain_hash_of};
    use serde_json::{Value, json};

    /// The hash of a line through its parsed record, as the reader does
    /// when the fast path declines.
    fn slow(line: &[u8]) -> Option<String> {
        let mut m = Fields::parse(line, &[], &[]).ok()?;
        use crate::journal::fields::FieldMap;
        match (m.remove("prev_hash"), m.remove("hash")) {
            (Some(Value::String(p)), Some(Value::String(_))) => {
                Some(chain_hash_of(&p, m.members()))
            }
            _ => None,
        }
    }

    fn written(records: &[Value]) -> Vec<String> {
        let mut w = NativeChainWriter::new(Vec::new());
        records
            .iter()
            .map(|r| w.append(r.as_object().cloned().unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn written_lines_hash_alike_from_their_bytes() {
        let lines = written(&[
            json!({"kind":"event","seq":1,"at":"2026-07-22T14:03:18Z","execution_id":"act_1",
                   "event":"accepted","call":{"jsonrpc_id":41,"call_id":"c\"1\\\n\u{1}\u{7f}"},
                   "action":{"tool":"deploy","arguments":{"z":[1,-2,{"b":null,"a":true}],"é":"日本"}}}),
            json!({"kind":"event","seq":2,"event":"outcome","outcome":"success","x":{},"y":[]}),
            json!({"kind":"session","session_id":"s","zzz":"\u{1f600}","n":9007199254740991i64}),
            json!({}),
            // Long messages, some a block's length off another.
            json!({"a":"x".repeat(1000),"b":"y".repeat(3000),"c":1,"d":"q".repeat(1019)}),
            json!({"a":"x".repeat(955)}),
            json!({"a":"x".repeat(956)}),
            json!({"a":"x".repeat(957),"b":2}),
        ]);
        for l in &lines {
            let fast = raw_chain_hash(l.as_bytes());
            assert!(fast.is_some(), "declined {l}");
            assert_eq!(fast, slow(l.as_bytes()), "{l}");
        }
    }

    #[test]
    fn lines_not_in_canonical_form_are_declined() {
        let h = "\"prev_hash\":\"00\",\"hash\":\"11\"";
        for l in [
            format!("{{\"a\":1.5,{h}}}"),
            format!("{{\"a\":1e3,{h}}}"),
            format!("{{\"a\":-0,{h}}}"),
            format!("{{\"a\":01,{h}}}"),
            format!("{{\"a\":9007199254740993,{h}}}"),
            // 2^53 is exact, but ambiguous to the reader (its neighbour
            // 2^53 + 1 reads as it): such a line is scanned for it.
            format!("{{\"a\":9007199254740992,{h}}}"),
            format!("{{\"a\":-9007199254740992,{h}}}"),
            format!("{{\"a\": 1,{h}}}"),
            format!("{{\"a\":\"\\u0041\",{h}}}"),
            format!("{{\"a\":\"\\/\",{h}}}"),
            format!("{{\"a\":\"\\u000a\",{h}}}"),
            format!("{{\"a\":\"\\u001F\",{h}}}"),
            format!("{{\"b\":1,\"a\":2,{h}}}"),
            format!("{{\"a\":{{\"y\":1,\"x\":2}},{h}}}"),
            format!("{{\"a\":1,\"a\":2,{h}}}"),
            format!("{{\"\u{e000}\":1,{h}}}"),
            format!("{{\"a\\n\":1,{h}}}"),
            "{\"hash\":\"11\",\"prev_hash\":\"0\\u0030\"}".to_string(),
            "{\"a\":1,\"hash\":\"11\"}".to_string(),
            "{\"a\":1,\"hash\":1,\"prev_hash\":\"00\"}".to_string(),
            "{\"a\":1,\"hash\":\"11\",\"prev_hash\":\"00\"} ".to_string(),
            format!("{{\"a\":{}1{},{h}}}", "[".repeat(70), "]".repeat(70)),
        ] {
            assert_eq!(raw_chain_hash(l.as_bytes()), None, "{l}");
        }
    }

    #[test]
    fn accepted_escapes_are_the_canonical_ones() {
        let l = "{\"a\":\"\\u001f\\u0000\\b\\t\\\"\",\"hash\":\"11\",\"prev_hash\":\"00\"}";
        assert!(raw_chain_hash(l.as_bytes()).is_some());
        assert_eq!(raw_chain_hash(l.as_bytes()), slow(l.as_bytes()));
    }

    /// The word-at-a-time search finds the same byte as a plain loop, for
    /// every length and every position of every kind of byte it stops at.
    #[test]
    fn first_special_is_the_first_such_byte() {
        let naive = |s: &[u8], high: bool| {
            s.iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20 || (high && c >= 0x80))
        };
        for len in 0..40 {
            for at in 0..=len {
                for stop in [b'"', b'\\', 0x00, 0x1f, 0x80, 0xc3, 0xff, b'a'] {
                    let mut s = vec![b'x'; len];
                    if at < len {
                        s[at] = stop;
                    }
                    // A second stop after the first must not be the answer.
                    if at + 3 < len {
                        s[at + 3] = b'"';
                    }
                    for high in [false, true] {
                        assert_eq!(
                            first_special(&s, high),
                            naive(&s, high),
                            "{s:?} high={high}"
                        );
                    }
                }
            }
        }
    }

    /// The UTF-8 check of the scan judges every character as the
    /// standard library does: each lead byte with every second byte, and
    /// the third and fourth from the bytes where the rules change.
    #[test]
    fn utf8_chars_are_judged_as_the_standard_library_does() {
        let reference = |s: &[u8]| -> Option<usize> {
            let valid = match std::str::from_utf8(s) {
                Ok(t) => t,
                Err(e) => std::str::from_utf8(&s[..e.valid_up_to()]).ok()?,
            };
            valid.chars().next().map(char::len_utf8)
        };
        let edges = [
            0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff,
        ];
        for lead in 0x80..=0xffu8 {
            for second in 0..=0xffu8 {
                for &third in &edges {
                    for &fourth in &edges {
                        let s = [lead, second, third, fourth];
                        assert_eq!(utf8_char(&s), reference(&s), "{s:x?}");
                        for cut in 1..4 {
                            assert_eq!(
                                utf8_char(&s[..cut]),
                                reference(&s[..cut]),
                                "{:x?}",
                                &s[..cut]
                            );
                        }
                    }
                }
            }
        }
    }

    /// A line the scan accepts is valid UTF-8, wherever a bad byte is put
    /// (in a value, in a name, cut at the end), and a line with good
    /// characters of every length is hashed as its parsed record is.
    #[test]
    fn the_scan_checks_utf8() {
        let good = written(&[json!({"a":"x\u{e9}\u{65e5}\u{1f600}y","\u{e9}":"\u{10ffff}"})]);
        let good = good[0].as_bytes();
        assert_eq!(raw_chain_hash(good), slow(good));
        assert!(raw_chain_hash(good).is_some());
        let bad: [&[u8]; 9] = [
            b"\x80",
            b"\xc3",
            b"\xc0\xaf",
            b"\xe0\x80\xaf",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xf5\x80\x80\x80",
            b"\xe6\x97",
            b"\xff",
        ];
        for b in bad {
            for at in 0..good.len() {
                let mut l = good[..at].to_vec();
                l.extend_from_slice(b);
                l.extend_from_slice(&good[at..]);
                let mut members = Vec::new();
                if raw_scan(&l, &mut members).is_some() {
                    assert!(std::str::from_utf8(&l).is_ok(), "{l:x?}");
                }
                if let Some(h) = raw_chain_hash(&l) {
                    assert_eq!(Some(h), slow(&l), "{l:x?}");
                }
            }
        }
    }

    /// A hash field is taken only when its own string has no escape: an
    /// escape in a string before it does not matter, one in it does.
    #[test]
    fn escapes_are_judged_in_the_hash_fields_themselves() {
        let ok = "{\"a\":\"x\\ny\",\"hash\":\"11\",\"prev_hash\":\"00\"}";
        assert!(raw_chain_hash(ok.as_bytes()).is_some());
        assert_eq!(raw_chain_hash(ok.as_bytes()), slow(ok.as_bytes()));
        let escaped_hash = "{\"a\":\"x\",\"hash\":\"1\\t\",\"prev_hash\":\"00\"}";
        assert_eq!(raw_chain_hash(escaped_hash.as_bytes()), None);
    }

    /// On every line of the repository's journals the fast path either
    /// declines or agrees with the parsed record.
    #[test]
    fn agrees_with_the_parsed_record_on_the_journals_here() {
        let mut stack = vec![
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-journals"),
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
        ];
        while let Some(p) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&p) else {
                continue;
            };
            for e in rd.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "jsonl") {
                    let data = std::fs::read(&path).unwrap();
                    for l in data.split(|&c| c == b'\n') {
                        if let Some(fast) = raw_chain_hash(l) {
                            assert_eq!(Some(fast), slow(l), "{}", String::from_utf8_lossy(l));
                        }
                    }
                }
            }
        }
    }
}
