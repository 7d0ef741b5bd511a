//! The key line at the bottom of every screen and the help listing, both
//! built from the same binding table that maps the keys.

use crate::tui::keys::{Binding, Ctx, Typing};
use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};

/// `[Enter] open · [2] groups · [j/↓] move · [?] help · [q/C-c] quit` for
/// the bindings that have a short name, in table order, with up to two
/// keys each; each key in brackets, so that `[2] groups` reads as a key and
/// not as a count. When that is wider than `width` columns, with one key
/// each and narrower spacing (`[2]groups [?]help`), so that the last
/// bindings (help, quit) stay on screen.
pub fn keyline(bindings: &[&Binding], theme: &Theme, width: u16) -> Line<'static> {
    let full = build(bindings, theme, 2, " · ", " ");
    if full.width() <= usize::from(width) {
        return full;
    }
    build(bindings, theme, 1, " ", "")
}

/// The help listing of a context: one line per binding, in table order,
/// with every key of it and its help text; then, where a text field is
/// typed, what any other character does; then how to close help.
pub fn help_lines(bindings: &[&Binding], ctx: Ctx, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![];
    for b in bindings {
        let keys: Vec<String> = b.keys.iter().map(|k| k.label()).collect();
        lines.push(Line::from(vec![
            Span::styled(format!(" {:<22}", keys.join(" ")), theme.accent),
            Span::raw(b.help.clone()),
        ]));
    }
    let typed = match ctx.typing {
        Typing::Keys => None,
        Typing::Filter => Some("added to the filter"),
        Typing::Field => Some("typed into the field"),
    };
    if let Some(what) = typed {
        lines.push(Line::from(vec![
            Span::styled(format!(" {:<22}", "any character"), theme.accent),
            Span::raw(what),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(" Esc or ? closes this help", theme.muted));
    lines
}

fn build(
    bindings: &[&Binding],
    theme: &Theme,
    keys_each: usize,
    sep: &'static str,
    gap: &'static str,
) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    for b in bindings.iter().filter(|b| b.short.is_some()) {
        if spans.len() > 1 {
            spans.push(Span::styled(sep, theme.muted));
        }
        let keys: Vec<String> = b.keys.iter().take(keys_each).map(|k| k.label()).collect();
        spans.push(Span::styled("[", theme.muted));
        spans.push(Span::styled(keys.join("/"), theme.accent));
        spans.push(Span::styled("]", theme.muted));
        spans.push(Span::raw(format!(
            "{gap}{}",
            b.short.as_deref().unwrap_or_default()
        )));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keys::table::{self, keymap};

    #[test]
    fn a_narrow_line_keeps_help_and_quit() {
        let theme = Theme::dark();
        let m = keymap();
        for ctx in table::ALL.map(|t| t.ctx) {
            let b: Vec<&Binding> = m.bindings(ctx).collect();
            let wide = keyline(&b, &theme, 400).to_string();
            let narrow = keyline(&b, &theme, 80).to_string();
            assert!(narrow.chars().count() <= wide.chars().count(), "{ctx:?}");
            if wide.chars().count() > 80 {
                assert!(!narrow.contains("q/C-c"), "{ctx:?}: {narrow}");
            }
            // Every context's line fits 80 columns once narrowed.
            assert!(narrow.chars().count() <= 80, "{ctx:?}: {narrow}");
        }
    }

    /// Help lists exactly the table of its context: one line per binding,
    /// in order, with every key and the help text, and nothing else but
    /// what typed characters do and how to close it.
    #[test]
    fn help_lists_exactly_the_table() {
        let theme = Theme::dark();
        let m = keymap();
        for ctx in table::ALL.map(|t| t.ctx) {
            let b: Vec<&Binding> = m.bindings(ctx).collect();
            let lines: Vec<String> = help_lines(&b, ctx, &theme)
                .iter()
                .map(|l| l.to_string())
                .collect();
            let typed = usize::from(ctx.is_text_input());
            assert_eq!(lines.len(), b.len() + typed + 2, "{}", ctx.id);
            for (line, b) in lines.iter().zip(&b) {
                let keys: Vec<String> = b.keys.iter().map(|k| k.label()).collect();
                assert_eq!(
                    *line,
                    format!(" {:<22}{}", keys.join(" "), b.help),
                    "{}",
                    ctx.id
                );
            }
            assert_eq!(
                lines.last().map(String::as_str),
                Some(" Esc or ? closes this help")
            );
        }
    }

    /// The key line shows exactly the bindings with a short name, in order.
    #[test]
    fn the_key_line_shows_the_short_names_in_order() {
        let theme = Theme::dark();
        let m = keymap();
        for ctx in table::ALL.map(|t| t.ctx) {
            let b: Vec<&Binding> = m.bindings(ctx).collect();
            let line = keyline(&b, &theme, 400).to_string();
            let mut at = 0;
            for s in b.iter().filter_map(|b| b.short.as_deref()) {
                let found = line[at..].find(&format!("] {s}"));
                assert!(
                    found.is_some(),
                    "{}: {s} missing or out of order in {line}",
                    ctx.id
                );
                at += found.unwrap_or(0) + 1;
            }
            let shown = line.matches("] ").count();
            assert_eq!(
                shown,
                b.iter().filter(|b| b.short.is_some()).count(),
                "{line}"
            );
        }
    }

    #[test]
    fn keys_read_as_keys_not_counts() {
        let theme = Theme::dark();
        let m = keymap();
        let b: Vec<&Binding> = m.bindings(table::OVERVIEW.ctx).collect();
        let wide = keyline(&b, &theme, 400).to_string();
        assert!(wide.contains("[2] groups · [3] sessions"), "{wide}");
        let narrow = keyline(&b, &theme, 60).to_string();
        assert!(narrow.contains("[2]groups [3]sessions"), "{narrow}");
        assert!(!narrow.contains(" 2 groups"), "{narrow}");
    }
}
