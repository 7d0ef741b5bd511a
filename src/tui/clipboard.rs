//! Copying to the clipboard with OSC 52 (`ESC ] 52 ; c ; <base64> BEL`),
//! which terminals that allow it (xterm, kitty, iTerm2, WezTerm, tmux with
//! `set-clipboard on`, ...) turn into a clipboard write, also over SSH.
//! Terminals that do not allow it ignore the sequence.

use base64::Engine;

/// The largest text sent: many terminals drop longer OSC 52 payloads.
pub const MAX_BYTES: usize = 74_994;

/// The OSC 52 sequence that puts `text` on the clipboard (cut at a
/// character boundary to [`MAX_BYTES`]). The text is escaped as the screen
/// escapes it ([`crate::sanitize::escape`]) before it is encoded: what is
/// pasted from the clipboard goes into a terminal too, and must not run
/// anything there (docs/design.md §8.5).
pub fn osc52(text: &str) -> String {
    let text = crate::sanitize::escape(text);
    let mut end = text.len().min(MAX_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let b64 = base64::engine::general_purpose::STANDARD.encode(&text.as_bytes()[..end]);
    format!("\x1b]52;c;{b64}\x07")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_text_in_base64() {
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
        // The payload never carries raw control characters from the text.
        let s = osc52("\x1b]0;pwned\x07");
        assert!(s.starts_with("\x1b]52;c;") && s.ends_with('\x07'));
        assert!(
            !s["\x1b]52;c;".len()..s.len() - 1]
                .chars()
                .any(|c| c.is_control())
        );
    }

    #[test]
    fn the_payload_is_escaped_as_the_screen() {
        let s = osc52("\x1b]0;pwned\x07\u{9b}2J\u{202e}");
        let b64 = &s["\x1b]52;c;".len()..s.len() - 1];
        let text = String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(text, "\\x1b]0;pwned\\x07\\x9b2J\\u{202e}");
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary() {
        let s = "é".repeat(MAX_BYTES);
        let out = osc52(&s);
        assert!(out.len() < MAX_BYTES * 2);
    }
}
