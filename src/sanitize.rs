//! Makes journal text safe to put on a terminal.
//!
//! Journal strings are attacker-influenced (tool arguments come from a model
//! that may have read hostile input). Written raw, an ESC sequence can clear
//! the screen, set the window title (OSC 0/2), write the clipboard (OSC 52) or
//! hide text. Every string from a journal passes through [`escape`] before
//! any front end shows it; escaped characters stay visible as `\x1b`, `\n`,
//! `\u{202e}` so that an investigator sees that they were there.

use std::borrow::Cow;
use std::fmt::Write;

/// True for characters that must not reach a terminal raw: C0 controls
/// (including TAB, CR, LF), DEL, C1 controls (U+0080–U+009F, which include
/// the 8-bit CSI and OSC introducers), the Unicode bidirectional marks,
/// overrides and isolates (U+061C, U+200E–U+200F, U+202A–U+202E,
/// U+2066–U+2069) that reorder displayed text ("Trojan Source",
/// CVE-2021-42574), the line and paragraph separators (U+2028, U+2029), and
/// the invisible characters that make two different ids look alike (soft
/// hyphen U+00AD, zero-width space, joiners U+200B–U+200D, word joiner and
/// invisible operators U+2060–U+2064, byte order mark U+FEFF).
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{ad}'
        | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{61c}')
}

/// Returns `s` with every unsafe character written as a visible escape:
/// `\n`, `\r`, `\t`, `\x1b` for other C0/DEL/C1 controls, `\u{202e}` for
/// bidirectional controls. Safe input is returned without copying.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !is_unsafe(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// Writes `value` as pretty JSON in which every character [`is_unsafe`]
/// would flag is written as a `\uXXXX` escape. The JSON means the same;
/// only its spelling changes, so that printing it to a terminal cannot run
/// an escape sequence (serde_json escapes C0 controls itself, but C1
/// controls, bidirectional overrides and invisible characters are valid
/// JSON text and would pass raw).
///
/// # Errors
/// Write errors.
pub fn write_json_pretty<W: std::io::Write, T: serde::Serialize + ?Sized>(
    w: W,
    value: &T,
) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(
        w,
        SafeFormatter(serde_json::ser::PrettyFormatter::default()),
    );
    value.serialize(&mut ser).map_err(std::io::Error::from)
}

/// [`write_json_pretty`] of a value that stands `depth` arrays deep in a
/// pretty document: its inner lines are indented as they are there (two
/// spaces a level), its first line not at all. The elements of a list
/// written this way, each after `,\n` and the indent of `depth`, make
/// the bytes [`write_json_pretty`] gives the list, so that a long list can
/// be written piece by piece, and its pieces made on every core.
///
/// # Errors
/// Write errors.
pub fn write_json_pretty_nested<W: std::io::Write, T: serde::Serialize + ?Sized>(
    w: W,
    value: &T,
    depth: usize,
) -> std::io::Result<()> {
    use serde_json::ser::Formatter;
    let mut f = SafeFormatter(serde_json::ser::PrettyFormatter::default());
    // The formatter knows how deep it is only from the arrays it began.
    let mut none = std::io::sink();
    for _ in 0..depth {
        f.begin_array(&mut none)?;
        f.begin_array_value(&mut none, true)?;
    }
    let mut ser = serde_json::Serializer::with_formatter(w, f);
    value.serialize(&mut ser).map_err(std::io::Error::from)
}

/// Writes `value` as compact JSON (one line, as JSONL wants it), escaped
/// like [`write_json_pretty`]: the same JSON, safe to print.
///
/// # Errors
/// Write errors.
pub fn write_json_compact<W: std::io::Write, T: serde::Serialize + ?Sized>(
    w: W,
    value: &T,
) -> std::io::Result<()> {
    let mut ser =
        serde_json::Serializer::with_formatter(w, SafeFormatter(serde_json::ser::CompactFormatter));
    value.serialize(&mut ser).map_err(std::io::Error::from)
}

/// [`write_json_compact`] into a string: one JSON line without its newline.
///
/// # Errors
/// When `value` cannot be serialized (a map with non-string keys, say).
pub fn to_json_line<T: serde::Serialize + ?Sized>(value: &T) -> std::io::Result<String> {
    let mut out = Vec::new();
    write_json_compact(&mut out, value)?;
    // The formatter writes only what it was given and ASCII escapes.
    String::from_utf8(out).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// JSON text (a journal line, as the journal wrote it) with every
/// character [`is_unsafe`] would flag written so that it cannot reach a
/// terminal raw, and so that valid JSON stays valid JSON with the same
/// meaning: inside a string, as a `\uXXXX` escape; outside one (where JSON
/// allows only the whitespace TAB, CR and LF), as a space. Text that is not
/// JSON comes out just as safe. Used for what retrace copies to the
/// clipboard, which is pasted into terminals (docs/design.md §8.5).
pub fn escape_json_text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let (mut in_string, mut escaped) = (false, false);
    for c in s.chars() {
        if is_unsafe(c) {
            if in_string {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            } else if matches!(c, '\t' | '\r' | '\n') {
                out.push(' ');
            } else {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            escaped = false;
            continue;
        }
        out.push(c);
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        }
    }
    Cow::Owned(out)
}

/// A pretty or compact formatter that escapes terminal-unsafe characters in
/// strings.
struct SafeFormatter<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for SafeFormatter<F> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        // Printable ASCII, most of what is written, needs no look at its
        // characters: every character `is_unsafe` flags is below 0x20,
        // 0x7f, or beyond ASCII.
        if fragment.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            return w.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_unsafe(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                write!(w, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// The last line of defence on retrace's own output streams: a writer that
/// lets through what retrace itself writes (text, newlines, CSV's CR LF line
/// ends, and the SGR
/// colour sequences `ESC [ <digits and ;> m` of `--color`) and writes every
/// other character [`is_unsafe`] flags escaped, as [`escape`] would. Journal
/// strings are escaped where they are formatted; this guard makes a string
/// that was missed harmless anyway: it can at most change a colour, never
/// move the cursor, clear the screen, set the title or write the clipboard.
///
/// Bytes may arrive in any pieces: a character or an SGR sequence cut
/// between two writes is held until it is complete (or until
/// [`std::io::Write::flush`], which writes what is held, escaped). Bytes that
/// are not UTF-8 are written as `\xNN`.
#[derive(Debug)]
pub struct TerminalGuard<W: std::io::Write> {
    inner: W,
    held: Vec<u8>,
    /// Whether SGR colour sequences go through (else they are dropped:
    /// output to a pipe or a file, `--color never`).
    colour: bool,
}

/// Longest SGR sequence held while it is incomplete; longer ones are not
/// retrace's and are escaped.
const MAX_SGR: usize = 32;

impl<W: std::io::Write> TerminalGuard<W> {
    /// Guards `inner`, letting retrace's colours through.
    pub fn new(inner: W) -> Self {
        TerminalGuard {
            inner,
            held: Vec::new(),
            colour: true,
        }
    }

    /// Guards `inner`, and drops retrace's colours (SGR sequences): for
    /// output that is not to be coloured. Everything else is as for
    /// [`TerminalGuard::new`].
    pub fn without_colour(inner: W) -> Self {
        TerminalGuard {
            inner,
            held: Vec::new(),
            colour: false,
        }
    }

    /// The guarded writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Writes out everything in `held` that is complete; at the end
    /// (`last`), everything.
    fn drain(&mut self, last: bool) -> std::io::Result<()> {
        let mut out: Vec<u8> = Vec::with_capacity(self.held.len() + 16);
        let b = &self.held;
        let mut i = 0;
        while i < b.len() {
            // Printable ASCII and newlines, most of any output, go through
            // as one run.
            let run = plain_prefix(&b[i..]);
            if run > 0 {
                out.extend_from_slice(&b[i..i + run]);
                i += run;
                continue;
            }
            let c = b[i];
            if c == 0x1b {
                match sgr_len(&b[i..]) {
                    Sgr::Complete(n) => {
                        // Digits, `;`, `:`, `[`, `m` and ESC: ASCII.
                        if self.colour {
                            out.extend_from_slice(&b[i..i + n]);
                        }
                        i += n;
                        continue;
                    }
                    Sgr::Incomplete if !last => break,
                    _ => {
                        out.extend_from_slice(b"\\x1b");
                        i += 1;
                        continue;
                    }
                }
            }
            if c < 0x80 {
                match (c, b.get(i + 1)) {
                    // CSV's line end (RFC 4180): as harmless as a newline.
                    (b'\r', Some(b'\n')) => {
                        out.extend_from_slice(b"\r\n");
                        i += 2;
                        continue;
                    }
                    (b'\r', None) if !last => break,
                    (b'\n', _) => out.push(b'\n'),
                    (0..=0x1f | 0x7f, _) => {
                        out.extend_from_slice(escape(&char::from(c).to_string()).as_bytes())
                    }
                    _ => out.push(c),
                }
                i += 1;
                continue;
            }
            let need = match c {
                0xc2..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf4 => 4,
                _ => 0,
            };
            if need > 0 && i + need > b.len() {
                let cut_short =
                    std::str::from_utf8(&b[i..]).is_err_and(|e| e.error_len().is_none());
                if !last && cut_short {
                    break;
                }
            }
            match b.get(i..i + need).map(std::str::from_utf8) {
                Some(Ok(s)) if need > 0 => {
                    out.extend_from_slice(escape(s).as_bytes());
                    i += need;
                }
                _ => {
                    out.extend_from_slice(format!("\\x{c:02x}").as_bytes());
                    i += 1;
                }
            }
        }
        self.held.drain(..i);
        self.inner.write_all(&out)
    }
}

enum Sgr {
    Complete(usize),
    Incomplete,
    Not,
}

/// Whether `b` (starting with ESC) starts with an SGR sequence.
fn sgr_len(b: &[u8]) -> Sgr {
    if b.len() < 2 {
        return Sgr::Incomplete;
    }
    if b[1] != b'[' {
        return Sgr::Not;
    }
    for (k, &c) in b.iter().enumerate().skip(2) {
        match c {
            b'0'..=b'9' | b';' | b':' if k < MAX_SGR => {}
            b'm' => return Sgr::Complete(k + 1),
            _ => return Sgr::Not,
        }
    }
    if b.len() >= MAX_SGR {
        Sgr::Not
    } else {
        Sgr::Incomplete
    }
}

/// How many bytes `b` starts with that need no escaping: printable ASCII
/// and newlines (what JSON and most text output is made of). Looks at 8
/// bytes at a time; a word holding anything else (a newline too) is looked
/// at byte by byte.
fn plain_prefix(b: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let plain = |c: u8| matches!(c, b'\n' | 0x20..=0x7e);
    let mut i = 0;
    for word in b.chunks_exact(8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_ne_bytes(w);
        // Per byte: at or above 0x80, below 0x20, or 0x7f (DEL); each test
        // is exact for the word as a whole (Hacker's Delight, 6-1).
        let del = w ^ (0x7f * ONES);
        let odd = (w | (w.wrapping_sub(0x20 * ONES) & !w) | (del.wrapping_sub(ONES) & !del)) & HIGH;
        if odd != 0
            && let Some(k) = word.iter().position(|&c| !plain(c))
        {
            return i + k;
        }
        i += 8;
    }
    i + b[i..]
        .iter()
        .position(|&c| !plain(c))
        .unwrap_or(b.len() - i)
}

impl<W: std::io::Write> std::io::Write for TerminalGuard<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // With nothing held, what needs no escaping goes through as it is,
        // uncopied: a large JSON document is written in one piece.
        let rest = if self.held.is_empty() {
            let run = plain_prefix(buf);
            if run > 0 {
                self.inner.write_all(&buf[..run])?;
            }
            &buf[run..]
        } else {
            buf
        };
        if !rest.is_empty() {
            self.held.extend_from_slice(rest);
            self.drain(false)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.drain(true)?;
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for TerminalGuard<W> {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_controls() {
        assert_eq!(
            escape("\x1b[2J\x1b]0;pwned\x07"),
            "\\x1b[2J\\x1b]0;pwned\\x07"
        );
        assert_eq!(escape("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(escape("\u{9b}31m"), "\\x9b31m");
        assert_eq!(escape("abc\u{202e}fed"), "abc\\u{202e}fed");
    }

    #[test]
    fn json_output_escapes_what_a_terminal_would_run() {
        let v = serde_json::json!({"tool": "a\u{9b}31m\u{202e}b\u{200b}c\u{1b}[2J", "ok": "é✓"});
        let mut out = Vec::new();
        write_json_pretty(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.chars().any(is_unsafe_but_newline), "{text:?}");
        assert!(
            text.contains("a\\u009b31m\\u202eb\\u200bc\\u001b[2J"),
            "{text}"
        );
        assert!(text.contains("é✓"));
        // Still the same JSON.
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn compact_json_is_one_safe_line() {
        let v = serde_json::json!({"id": "x\u{9b}31m\u{202e}\u{200b}\u{1b}]0;t\u{7}", "n": "a\nb"});
        let line = to_json_line(&v).unwrap();
        assert!(
            !line.contains('\n') && !line.chars().any(is_unsafe),
            "{line:?}"
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&line).unwrap(), v);
    }

    #[test]
    fn json_text_stays_json_and_safe() {
        let raw = "{\"a\":\"x\u{9b}\u{202e}y\",\t\"b\":1}";
        let safe = escape_json_text(raw);
        assert!(!safe.chars().any(is_unsafe), "{safe:?}");
        let a: serde_json::Value = serde_json::from_str(raw).unwrap();
        let b: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(a, b);
        // Not JSON: still safe.
        let s = escape_json_text("\u{1b}]52;c;AAAA\u{7}\"\u{1b}[2J");
        assert!(!s.chars().any(is_unsafe), "{s:?}");
        assert!(matches!(escape_json_text("{\"ok\":1}"), Cow::Borrowed(_)));
    }

    fn guarded(pieces: &[&[u8]]) -> String {
        use std::io::Write as _;
        let mut g = TerminalGuard::new(Vec::new());
        for p in pieces {
            g.write_all(p).unwrap();
        }
        g.flush().unwrap();
        String::from_utf8(g.get_ref().clone()).unwrap()
    }

    #[test]
    fn the_guard_passes_colours_and_escapes_everything_else() {
        let s = guarded(&[b"\x1b[1;31mred\x1b[0m ok\n"]);
        assert_eq!(s, "\x1b[1;31mred\x1b[0m ok\n");
        let s = guarded(&["t\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{9b}31m\u{202e}x\u{200b}\n".as_bytes()]);
        assert_eq!(
            s,
            "t\\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m\\u{202e}x\\u{200b}\n"
        );
        // Cut anywhere, the same.
        let whole = "a\u{1b}[31mb\u{9b}c\u{202e}d\u{1b}]0;x\u{7}é".as_bytes();
        let once = guarded(&[whole]);
        for cut in 0..whole.len() {
            assert_eq!(
                guarded(&[&whole[..cut], &whole[cut..]]),
                once,
                "cut at {cut}"
            );
        }
        // Not UTF-8, or cut short at the end.
        assert_eq!(guarded(&[b"\xff\xe2\x80"]), "\\xff\\xe2\\x80");
        assert_eq!(guarded(&[b"\x1b["]), "\\x1b[");
        assert_eq!(guarded(&[b"a,b\r", b"\nc\rd\r"]), "a,b\r\nc\\rd\\r");
    }

    #[test]
    fn without_colour_the_guard_drops_colours_and_still_escapes() {
        let strip = |pieces: &[&[u8]]| {
            use std::io::Write as _;
            let mut g = TerminalGuard::without_colour(Vec::new());
            for p in pieces {
                g.write_all(p).unwrap();
            }
            g.flush().unwrap();
            String::from_utf8(g.get_ref().clone()).unwrap()
        };
        assert_eq!(strip(&[b"\x1b[1;31mred\x1b[0m ok\n"]), "red ok\n");
        let whole = "a\u{1b}[31mb\u{9b}c\u{1b}[0m\u{1b}]0;x\u{7}é\u{1b}[".as_bytes();
        let once = strip(&[whole]);
        assert_eq!(once, "ab\\x9bc\\x1b]0;x\\x07é\\x1b[");
        for cut in 0..whole.len() {
            assert_eq!(strip(&[&whole[..cut], &whole[cut..]]), once, "cut at {cut}");
        }
    }

    #[test]
    fn the_plain_prefix_stops_at_the_first_byte_that_needs_escaping() {
        let naive = |b: &[u8]| {
            b.iter()
                .position(|&c| !matches!(c, b'\n' | 0x20..=0x7e))
                .unwrap_or(b.len())
        };
        // Every byte value at every place of a word, and after whole words.
        for len in [1, 7, 8, 9, 23, 24, 40] {
            for at in 0..len {
                for c in 0..=255u8 {
                    let mut b = vec![b'a'; len];
                    b[at] = c;
                    b[len - 1 - (at % 3).min(len - 1)] = b'\n';
                    b[at] = c;
                    assert_eq!(plain_prefix(&b), naive(&b), "{c:#x} at {at} of {len}");
                }
            }
        }
        assert_eq!(plain_prefix(b""), 0);
    }

    #[test]
    fn a_large_plain_write_goes_through_whole_and_the_rest_is_guarded() {
        let mut text = "{\n  \"a\": \"b\"\n}\n".repeat(10_000).into_bytes();
        assert_eq!(guarded(&[&text]), String::from_utf8(text.clone()).unwrap());
        text.extend_from_slice(b"x\x1b]0;t\x07\x1b[1m");
        let s = guarded(&[&text, b"y\x1b[0m"]);
        assert!(
            s.ends_with("x\\x1b]0;t\\x07\x1b[1my\x1b[0m"),
            "{}",
            &s[s.len() - 40..]
        );
    }

    fn is_unsafe_but_newline(c: char) -> bool {
        c != '\n' && is_unsafe(c)
    }

    #[test]
    fn invisible_characters_are_shown() {
        assert_eq!(escape("ad\u{200b}min\u{feff}"), "ad\\u{200b}min\\u{feff}");
    }

    #[test]
    fn safe_text_is_borrowed() {
        assert!(matches!(escape("deploy_release é ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn output_never_holds_unsafe_characters() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!escape(&all).chars().any(is_unsafe));
    }
}
