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
    let mut ser = serde_json::Serializer::with_formatter(w, SafeFormatter(Default::default()));
    value.serialize(&mut ser).map_err(std::io::Error::from)
}

/// A pretty formatter that escapes terminal-unsafe characters in strings.
struct SafeFormatter<'a>(serde_json::ser::PrettyFormatter<'a>);

impl serde_json::ser::Formatter for SafeFormatter<'_> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
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
