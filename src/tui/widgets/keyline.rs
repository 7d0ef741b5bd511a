//! The key line at the bottom of every screen, built from the same binding
//! table that maps the keys.

use crate::tui::keys::Binding;
use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};

/// `j/↓ move · Enter open · ? help · q quit` for the bindings that have a
/// short name, in table order.
pub fn keyline(bindings: &[&Binding], theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    for b in bindings.iter().filter(|b| b.short.is_some()) {
        if spans.len() > 1 {
            spans.push(Span::styled(" · ", theme.muted));
        }
        let keys: Vec<String> = b.keys.iter().take(2).map(|k| k.label()).collect();
        spans.push(Span::styled(keys.join("/"), theme.accent));
        spans.push(Span::raw(format!(" {}", b.short.unwrap_or_default())));
    }
    Line::from(spans)
}
