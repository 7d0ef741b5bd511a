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
///
/// When even that is too wide, the bindings before the last two (help and
/// quit) give way from the end, and a `…` says that `?` lists the rest.
pub fn keyline(bindings: &[&Binding], theme: &Theme, width: u16) -> Line<'static> {
    let full = build(bindings, theme, 2, " · ", " ");
    if full.width() <= usize::from(width) {
        return full;
    }
    let narrow = build(bindings, theme, 1, " ", "");
    if narrow.width() <= usize::from(width) {
        return narrow;
    }
    let shown: Vec<&Binding> = bindings
        .iter()
        .copied()
        .filter(|b| b.short.is_some())
        .collect();
    let keep = 2.min(shown.len());
    let tail = build(&shown[shown.len() - keep..], theme, 1, " ", "");
    for first in (0..shown.len() - keep).rev() {
        let mut line = build(&shown[..first], theme, 1, " ", "");
        line.spans.push(Span::styled(
            if first > 0 { " …" } else { "…" },
            theme.muted,
        ));
        line.spans.extend(tail.spans.iter().cloned());
        if line.width() <= usize::from(width) {
            return line;
        }
    }
    narrow
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
