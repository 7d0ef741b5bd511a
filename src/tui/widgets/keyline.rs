//! The key line at the bottom of every screen, built from the same binding
//! table that maps the keys.

use crate::tui::keys::Binding;
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
        spans.push(Span::raw(format!("{gap}{}", b.short.unwrap_or_default())));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keys::{Ctx, bindings};

    #[test]
    fn a_narrow_line_keeps_help_and_quit() {
        let theme = Theme::dark();
        for ctx in Ctx::ALL {
            let b = bindings(ctx);
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

    #[test]
    fn keys_read_as_keys_not_counts() {
        let theme = Theme::dark();
        let b = bindings(Ctx::Overview);
        let wide = keyline(&b, &theme, 400).to_string();
        assert!(wide.contains("[2] groups · [3] sessions"), "{wide}");
        let narrow = keyline(&b, &theme, 60).to_string();
        assert!(narrow.contains("[2]groups [3]sessions"), "{narrow}");
        assert!(!narrow.contains(" 2 groups"), "{narrow}");
    }
}
