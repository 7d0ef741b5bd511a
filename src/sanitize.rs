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
/// the 8-bit CSI and OSC introducers), and the Unicode bidirectional
/// overrides and isolates (U+202A–U+202E, U+2066–U+2069) that reorder
/// displayed text ("Trojan Source", CVE-2021-42574).
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        | '\u{200e}' | '\u{200f}' | '\u{61c}')
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
    fn safe_text_is_borrowed() {
        assert!(matches!(escape("deploy_release é ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn output_never_holds_unsafe_characters() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!escape(&all).chars().any(is_unsafe));
    }
}
