//! The Mermaid `sequenceDiagram` of a group: agent, gateway and target
//! (named by the target), a message for each call, dispatch, outcome and
//! delivery or delivery failure, and a note for every unknown outcome and
//! every reviewer decision.
//!
//! Text from journals can hold anything. Mermaid reads `;` and newlines as
//! statement ends, `#…;` as entity codes and `%%` as comments, and gives
//! meaning to `<`, `>`, `{`, `}` and quotes in places. [`escape`] therefore
//! writes every character outside a small safe set as a Mermaid entity
//! code (`#59;` for `;`, Mermaid docs "Entity codes to escape characters"),
//! after [`crate::sanitize::escape`] has made control characters visible.

use super::abridge::{Piece, Shown, left_out};
use super::{GroupReport, hms};
use std::collections::HashSet;
use std::fmt::Write;

/// Longest message text kept, in characters, before `…`.
pub const MAX_TEXT: usize = 80;

/// Makes text safe inside a Mermaid message, note or participant alias.
/// `:` stays as it is: after the message's own `:` Mermaid reads the rest
/// of the line as text (checked with Mermaid's CLI by `tests/mermaid/check.sh`).
pub fn escape(s: &str) -> String {
    let clean = crate::sanitize::escape(s);
    let (kept, cut) = shorten(&clean, MAX_TEXT);
    let mut out = String::with_capacity(kept.len());
    for c in kept.chars() {
        if c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | ':'
                    | '.'
                    | ','
                    | '/'
                    | '('
                    | ')'
                    | '_'
                    | '-'
                    | '+'
                    | '='
                    | '@'
                    | '*'
                    | '\''
                    | '?'
                    | '!'
                    | '['
                    | ']'
                    | '$'
                    | '^'
                    | '~'
                    | '|'
            )
        {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", c as u32);
        }
    }
    if cut {
        out.push_str("#8230;");
    }
    // Mermaid trims message text; keep at least one visible character.
    if out.trim().is_empty() {
        out.push('-');
    }
    out
}

/// `s` cut to at most `max` characters, at the end of a word when one ends
/// in the last third (a diagram never shows half a word), and whether it
/// was cut.
fn shorten(s: &str, max: usize) -> (&str, bool) {
    let Some((end, _)) = s.char_indices().nth(max) else {
        return (s, false);
    };
    let head = &s[..end];
    let word_end = head
        .char_indices()
        .rev()
        .take_while(|&(i, _)| i * 3 >= end * 2)
        .find(|&(_, c)| c == ' ')
        .map(|(i, _)| i);
    let kept = match word_end {
        Some(i) => head[..i].trim_end_matches([' ', ',', ';', ':', '·']),
        None => head,
    };
    (kept, true)
}

/// The diagram for one group report (built from its timeline, so it
/// shows exactly what the report shows, anonymized or not), drawing the
/// executions `shown` keeps: a group of many is abridged
/// ([`super::abridge`]) so that Mermaid draws it.
pub fn sequence_diagram(g: &GroupReport, shown: &Shown<'_>) -> String {
    let mut d = String::from("sequenceDiagram\n");
    let _ = writeln!(d, "    participant A as Agent");
    let _ = writeln!(d, "    participant G as Gateway");
    match g.target.as_deref() {
        Some(target) => {
            let _ = writeln!(d, "    participant T as Target {}", escape(target));
        }
        None => {
            let _ = writeln!(d, "    participant T as Target");
        }
    }
    // Executions already drawn as called and as dispatched: a call several
    // layers recorded (client and server spans, docs/design.md §5.12) is
    // one call and one dispatch, each later layer's record a note.
    let mut called: HashSet<&str> = HashSet::new();
    let mut dispatched: HashSet<&str> = HashSet::new();
    for piece in shown.timeline(g) {
        let r = match piece {
            Piece::Row(r) => r,
            Piece::Gap { events, executions } => {
                let _ = writeln!(
                    d,
                    "    Note over A,T: {}",
                    escape(&format!("{} not drawn", left_out(events, executions)))
                );
                continue;
            }
        };
        let t = hms(r.at);
        let id = r.execution_id.as_deref().unwrap_or("?");
        let x = &*short_id(id);
        let call = r.call_id.as_deref().unwrap_or("a call");
        let layer = r.detail.rsplit_once("seen by the ").map(|(_, l)| l);
        let line = match r.stage.as_str() {
            "accepted" if !called.insert(id) => format!(
                "Note over G,T: {}",
                escape(&format!(
                    "{t} {x} reaches the {}",
                    layer.unwrap_or("next layer")
                ))
            ),
            // The same dispatch, as another layer recorded it.
            "dispatched" if !dispatched.insert(id) => continue,
            "accepted" => format!(
                "A->>G: {}",
                escape(&format!("{t} {call}: tools/call {}", g.tool))
            ),
            "attached" => format!(
                "A->>G: {}",
                escape(&format!(
                    "{t} {call}: again, attached to {x} ({})",
                    r.detail
                ))
            ),
            "authorized" => format!(
                "Note over G: {}",
                escape(&format!("{t} {x} authorized: {}", r.detail))
            ),
            "rejected" => format!(
                "G-->>A: {}",
                escape(&format!("{t} {x} rejected: {}", r.detail))
            ),
            "dispatched" => {
                let key = if r.detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", r.detail)
                };
                format!("G->>T: {}", escape(&format!("{t} dispatch {x}{key}")))
            }
            "dispatch_failed" => format!(
                "Note over G: {}",
                escape(&format!(
                    "{t} {x} dispatch failed, nothing sent: {}",
                    r.detail
                ))
            ),
            "outcome" if r.detail.starts_with("unknown") => format!(
                "Note over G,T: {}",
                escape(&format!(
                    "{t} outcome of {x} UNKNOWN: {}",
                    // What the outcome says beyond its being unknown
                    // through a response.
                    r.detail
                        .split(" · ")
                        .filter(|p| !matches!(*p, "unknown" | "via response"))
                        .collect::<Vec<_>>()
                        .join(" · ")
                ))
            ),
            "outcome" => {
                let mut s = String::new();
                if r.detail.contains("via status_query") {
                    let _ = writeln!(
                        d,
                        "    G->>T: {}",
                        escape(&format!("{t} status query for {x}"))
                    );
                } else if r.detail.contains("via durable_marker") {
                    let _ = writeln!(
                        d,
                        "    G->>T: {}",
                        escape(&format!("{t} read durable marker of {x}"))
                    );
                }
                s.push_str(&format!(
                    "T-->>G: {}",
                    escape(&format!("{t} {x}: {}", r.detail))
                ));
                s
            }
            "delivered" => format!(
                "G-->>A: {}",
                escape(&format!("{t} result of {x} delivered"))
            ),
            "delivery_failed" => format!(
                "G--xA: {}",
                escape(&format!("{t} result of {x} NOT delivered: {}", r.detail))
            ),
            "cancelled" => format!(
                "Note over A,G: {}",
                escape(&format!("{t} {x} cancelled {}", r.detail))
            ),
            "reviewer_decision" => format!(
                "Note over G,T: {}",
                escape(&format!(
                    "{} reviewer decision on {x}: {}",
                    r.at.format("%Y-%m-%d %H:%M:%SZ"),
                    r.detail
                ))
            ),
            other => format!(
                "Note over G: {}",
                escape(&format!("{t} {x} {other} {}", r.detail))
            ),
        };
        let _ = writeln!(d, "    {line}");
    }
    d
}

/// An execution id as a diagram shows it: a long one (an OpenTelemetry
/// trace and span id) as its first 12 and last 8 characters around `…`,
/// so that a message or note keeps room for what it says; the report's
/// table beside the diagram gives it whole.
fn short_id(id: &str) -> std::borrow::Cow<'_, str> {
    let n = id.chars().count();
    if n <= 24 {
        return id.into();
    }
    let head: String = id.chars().take(12).collect();
    let tail: String = id.chars().skip(n - 8).collect();
    format!("{head}…{tail}").into()
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_text_is_cut_between_words() {
        let long = "outcome of act_R1 UNKNOWN: read timeout after 30s: connection to vault.acme.example reset by peer";
        let e = super::escape(long);
        assert!(e.ends_with("#8230;"), "{e}");
        let kept = e.trim_end_matches("#8230;");
        assert!(long.starts_with(kept.trim_end()), "{e}");
        // The character after the kept text starts a new word.
        let next = long[kept.len()..].chars().next();
        assert!(matches!(next, Some(' ' | ':')), "{e}");
        assert_eq!(super::escape("short"), "short");
    }

    use super::*;

    #[test]
    fn escape_leaves_no_statement_breakers() {
        let e = escape("a;b#c%%d\ne<br>f:g\"h{i}");
        assert!(e.starts_with("a#59;b#35;c#37;#37;d"), "{e}");
        // With the entity codes taken out, nothing Mermaid reads is left.
        let mut rest = String::new();
        let mut chars = e.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '#' {
                let mut code = String::new();
                while let Some(&d) = chars.peek() {
                    chars.next();
                    if d == ';' {
                        break;
                    }
                    code.push(d);
                }
                assert!(code.parse::<u32>().is_ok(), "bad entity {code:?} in {e}");
            } else {
                rest.push(c);
            }
        }
        for bad in [';', '#', '%', '\n', '<', '>', '"', '{', '}'] {
            assert!(!rest.contains(bad), "{bad:?} in {rest}");
        }
    }

    #[test]
    fn escape_clips_and_never_empties() {
        assert_eq!(escape(""), "-");
        let long = "x".repeat(200);
        assert!(escape(&long).ends_with("#8230;"));
        assert_eq!(escape(&long).len(), MAX_TEXT + "#8230;".len());
    }
}
