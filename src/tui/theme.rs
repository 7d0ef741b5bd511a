//! Semantic styles: screens ask for a role (critical, muted, selection, ...),
//! never for a color. Severity colors follow the verdict's severity
//! (DESIGN.md §5).

use crate::analysis::Severity;
use ratatui::style::{Color, Modifier, Style};

/// Styles by meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// Theme name.
    pub name: String,
    /// Text and background of the whole screen.
    pub base: Style,
    /// A second side effect happened.
    pub critical: Style,
    /// A second side effect may have happened.
    pub high: Style,
    /// A reviewer must decide.
    pub review: Style,
    /// Worth attention.
    pub warn: Style,
    /// Informational.
    pub info: Style,
    /// Nothing wrong.
    pub ok: Style,
    /// Secondary text: labels, times, borders.
    pub muted: Style,
    /// Titles, keys, the focused pane.
    pub accent: Style,
    /// The selected row.
    pub selection: Style,
}

impl Theme {
    /// The built-in dark theme.
    pub fn dark() -> Theme {
        Theme {
            name: "dark".into(),
            base: Style::default().fg(Color::Rgb(0xd0, 0xd0, 0xd0)),
            critical: Style::default()
                .fg(Color::Rgb(0xff, 0x5f, 0x5f))
                .add_modifier(Modifier::BOLD),
            high: Style::default().fg(Color::Rgb(0xff, 0x87, 0x00)),
            review: Style::default().fg(Color::Rgb(0xd7, 0xaf, 0xff)),
            warn: Style::default().fg(Color::Rgb(0xff, 0xd7, 0x00)),
            info: Style::default().fg(Color::Rgb(0x5f, 0xaf, 0xff)),
            ok: Style::default().fg(Color::Rgb(0x5f, 0xd7, 0x87)),
            muted: Style::default().fg(Color::Rgb(0x8a, 0x8a, 0x8a)),
            accent: Style::default()
                .fg(Color::Rgb(0x5f, 0xd7, 0xd7))
                .add_modifier(Modifier::BOLD),
            selection: Style::default()
                .fg(Color::Rgb(0x00, 0x00, 0x00))
                .bg(Color::Rgb(0x87, 0xaf, 0xd7)),
        }
    }

    /// The style of a severity.
    pub fn severity(&self, s: Severity) -> Style {
        match s {
            Severity::Critical => self.critical,
            Severity::High => self.high,
            Severity::Review => self.review,
            Severity::Warn => self.warn,
            Severity::Info => self.info,
            Severity::Ok => self.ok,
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::dark()
    }
}
