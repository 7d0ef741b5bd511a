//! Semantic styles: screens ask for a role (critical, muted, selection, ...),
//! never for a color. Severity colors follow the verdict's severity
//! (docs/design.md §5: critical, high, review, warn, info, ok).
//!
//! Themes are TOML files (`themes/*.toml`): a `name`, an optional
//! `extends = "NAME"` to start from another theme, and a `[roles]` table of
//! styles. The shipped themes are compiled into the binary, so
//! `--theme light` works from any directory; `--theme path/to/file.toml`
//! loads a file. A mistake is reported naming the file and the key.

use crate::query::Severity;
use ratatui::style::{Color, Modifier, Style};
use std::path::Path;

/// The shipped themes: (name, TOML).
pub const BUILTIN: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

/// Role names, in the order of [`Theme`]'s fields.
pub const ROLES: [&str; 11] = [
    "base",
    "critical",
    "high",
    "review",
    "warn",
    "info",
    "ok",
    "muted",
    "accent",
    "selection",
    "highlight",
];

/// A theme that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("theme {source_name}: {message}")]
pub struct ThemeError {
    /// The file (or built-in name) the theme came from.
    pub source_name: String,
    /// What is wrong, naming the key.
    pub message: String,
}

/// Styles by meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// Theme name.
    pub name: String,
    /// Text and background of the whole screen.
    pub base: Style,
    /// A second side effect happened.
    pub critical: Style,
    /// A second side effect may have happened, or keys were misused.
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
    /// Characters that matched the filter.
    pub highlight: Style,
}

impl Theme {
    /// The built-in dark theme.
    pub fn dark() -> Theme {
        Theme::builtin("dark").unwrap_or_else(|_| Theme::plain("dark"))
    }

    /// The built-in light theme.
    pub fn light() -> Theme {
        Theme::builtin("light").unwrap_or_else(|_| Theme::plain("light"))
    }

    /// A theme with no colors, only text attributes (the fallback should a
    /// shipped file ever fail to parse; a unit test keeps them parsing).
    fn plain(name: &str) -> Theme {
        let b = Style::default().add_modifier(Modifier::BOLD);
        Theme {
            name: name.into(),
            base: Style::default(),
            critical: b.add_modifier(Modifier::REVERSED),
            high: b,
            review: b.add_modifier(Modifier::UNDERLINED),
            warn: Style::default().add_modifier(Modifier::UNDERLINED),
            info: Style::default(),
            ok: Style::default(),
            muted: Style::default().add_modifier(Modifier::DIM),
            accent: b,
            selection: Style::default().add_modifier(Modifier::REVERSED),
            highlight: b.add_modifier(Modifier::UNDERLINED),
        }
    }

    /// A shipped theme by name.
    ///
    /// # Errors
    /// [`ThemeError`] when no theme has that name.
    pub fn builtin(name: &str) -> Result<Theme, ThemeError> {
        let (n, text) = BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| ThemeError {
                source_name: name.to_string(),
                message: format!(
                    "no such theme; shipped themes are {}, or give a path to a .toml file",
                    BUILTIN.map(|(n, _)| n).join(", ")
                ),
            })?;
        Theme::parse(text, &format!("{n} (built in)"))
    }

    /// A theme by name (a shipped one) or by path (a `.toml` file, or any
    /// name with a path separator or that names an existing file).
    ///
    /// # Errors
    /// [`ThemeError`] naming the file and the key at fault.
    pub fn load(name_or_path: &str) -> Result<Theme, ThemeError> {
        let p = Path::new(name_or_path);
        let is_path = name_or_path.ends_with(".toml")
            || name_or_path.contains(std::path::MAIN_SEPARATOR)
            || name_or_path.contains('/')
            || p.is_file();
        if !is_path {
            return Theme::builtin(name_or_path);
        }
        let text = std::fs::read_to_string(p).map_err(|e| ThemeError {
            source_name: name_or_path.to_string(),
            message: format!("cannot read: {e}"),
        })?;
        Theme::parse(&text, name_or_path)
    }

    /// Parses a theme file's text; `source_name` names it in errors.
    ///
    /// # Errors
    /// [`ThemeError`]: TOML syntax (with line and column), an unknown key,
    /// a missing role, a bad color or flag, each naming the key.
    pub fn parse(text: &str, source_name: &str) -> Result<Theme, ThemeError> {
        let err = |message: String| ThemeError {
            source_name: source_name.to_string(),
            message,
        };
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| err(crate::toml_file::toml_error(text, &e)))?;
        let mut name = None;
        let mut base: Option<Theme> = None;
        let mut roles = None;
        for (k, v) in &table {
            match k.as_str() {
                "name" => {
                    name = Some(
                        v.as_str()
                            .ok_or_else(|| err("name: expected a string".into()))?
                            .to_string(),
                    )
                }
                "extends" => {
                    let parent = v
                        .as_str()
                        .ok_or_else(|| err("extends: expected a theme name".into()))?;
                    base = Some(
                        Theme::builtin(parent)
                            .map_err(|e| err(format!("extends: {}", e.message)))?,
                    );
                }
                "roles" => {
                    roles = Some(
                        v.as_table()
                            .ok_or_else(|| err("roles: expected a table of styles".into()))?,
                    )
                }
                other => {
                    return Err(err(format!(
                        "unknown key `{other}` (a theme has name, extends, [roles])"
                    )));
                }
            }
        }
        let mut slots: [Option<Style>; 11] = match &base {
            Some(b) => b.roles().map(Some),
            None => [None; 11],
        };
        if let Some(roles) = roles {
            for (k, v) in roles {
                let i = ROLES.iter().position(|r| r == k).ok_or_else(|| {
                    err(format!(
                        "unknown role `roles.{k}`; roles are {}",
                        ROLES.join(", ")
                    ))
                })?;
                slots[i] =
                    Some(parse_style(v, &format!("roles.{k}")).map_err(|e| err(e.to_string()))?);
            }
        }
        let missing: Vec<&str> = ROLES
            .iter()
            .zip(&slots)
            .filter(|(_, s)| s.is_none())
            .map(|(r, _)| *r)
            .collect();
        if !missing.is_empty() {
            return Err(err(format!(
                "missing role{} {} in [roles] (or start from a shipped theme with extends = \"dark\")",
                if missing.len() == 1 { "" } else { "s" },
                missing
                    .iter()
                    .map(|r| format!("`roles.{r}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let s = slots.map(Option::unwrap_or_default);
        Ok(Theme::visible_selection(Theme {
            name: name
                .or_else(|| base.map(|b| b.name))
                .unwrap_or_else(|| source_name.to_string()),
            base: s[0],
            critical: s[1],
            high: s[2],
            review: s[3],
            warn: s[4],
            info: s[5],
            ok: s[6],
            muted: s[7],
            accent: s[8],
            selection: s[9],
            highlight: s[10],
        }))
    }

    /// `t` with a selection that shows without colour: a `selection` role
    /// with no background and no reverse video (a theme file written for a
    /// monochrome terminal, or one whose colours were taken away) becomes
    /// reverse video, so that moving the cursor always moves something
    /// visible.
    fn visible_selection(mut t: Theme) -> Theme {
        if t.selection.bg.is_none() && !t.selection.add_modifier.contains(Modifier::REVERSED) {
            t.selection = t.selection.add_modifier(Modifier::REVERSED);
        }
        t
    }

    /// This theme without colour, for `NO_COLOR` and `--color never`
    /// (no-color.org: a program's colour is off, its other text
    /// attributes may stay): every role keeps its text attributes and
    /// loses its colours, secondary text is dim, and the selection is
    /// reverse video (`Theme::visible_selection`). The name stays, so
    /// that the theme key still cycles the shipped themes.
    pub fn without_color(&self) -> Theme {
        let strip = |s: Style| {
            let mut s = s;
            s.fg = None;
            s.bg = None;
            s
        };
        let [
            base,
            critical,
            high,
            review,
            warn,
            info,
            ok,
            muted,
            accent,
            selection,
            highlight,
        ] = self.roles().map(strip);
        Theme::visible_selection(Theme {
            name: self.name.clone(),
            base,
            critical,
            high,
            review,
            warn,
            info,
            ok,
            muted: muted.add_modifier(Modifier::DIM),
            accent,
            selection: selection.add_modifier(Modifier::REVERSED),
            highlight,
        })
    }

    /// Whether any role sets a colour (false for [`Theme::without_color`]).
    pub fn has_color(&self) -> bool {
        self.roles()
            .iter()
            .any(|s| s.fg.is_some() || s.bg.is_some())
    }

    fn roles(&self) -> [Style; 11] {
        [
            self.base,
            self.critical,
            self.high,
            self.review,
            self.warn,
            self.info,
            self.ok,
            self.muted,
            self.accent,
            self.selection,
            self.highlight,
        ]
    }

    /// The next shipped theme after this one (for the theme key).
    pub fn next_builtin(&self) -> Theme {
        let i = BUILTIN
            .iter()
            .position(|(n, _)| *n == self.name)
            .map_or(0, |i| (i + 1) % BUILTIN.len());
        Theme::builtin(BUILTIN[i].0).unwrap_or_else(|_| Theme::plain(BUILTIN[i].0))
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

/// Why a style or a color in a theme file cannot be used, naming its key
/// (`roles.critical.fg`); [`Theme::parse`] wraps it in a [`ThemeError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum StyleError {
    /// A role is not a table of style keys.
    #[error("{key}: expected a style table like {{ fg = \"red\", bold = true }}")]
    NotATable {
        /// The role's key.
        key: String,
    },
    /// A text attribute is not `true` or `false`.
    #[error("{key}: expected true or false")]
    NotAFlag {
        /// The attribute's key.
        key: String,
    },
    /// A style holds a key that is no style key.
    #[error(
        "{key}: unknown key `{other}` (a style has fg, bg, bold, dim, italic, underline, reversed)"
    )]
    UnknownKey {
        /// The style's key.
        key: String,
        /// The unknown key.
        other: String,
    },
    /// A color that is not one.
    #[error(
        "{key}: {what} (expected a color name such as \"red\" or \"darkgray\", \"#rrggbb\", or an index 0-255)"
    )]
    BadColor {
        /// The color's key.
        key: String,
        /// What is wrong with it.
        what: String,
    },
}

fn parse_style(v: &toml::Value, key: &str) -> Result<Style, StyleError> {
    let t = v
        .as_table()
        .ok_or_else(|| StyleError::NotATable { key: key.into() })?;
    let mut s = Style::default();
    for (k, v) in t {
        let at = format!("{key}.{k}");
        match k.as_str() {
            "fg" => s = s.fg(parse_color(v, &at)?),
            "bg" => s = s.bg(parse_color(v, &at)?),
            "bold" | "dim" | "italic" | "underline" | "reversed" => {
                let on = v.as_bool().ok_or(StyleError::NotAFlag { key: at })?;
                let m = match k.as_str() {
                    "bold" => Modifier::BOLD,
                    "dim" => Modifier::DIM,
                    "italic" => Modifier::ITALIC,
                    "underline" => Modifier::UNDERLINED,
                    _ => Modifier::REVERSED,
                };
                if on {
                    s = s.add_modifier(m);
                }
            }
            other => {
                return Err(StyleError::UnknownKey {
                    key: key.into(),
                    other: other.into(),
                });
            }
        }
    }
    Ok(s)
}

fn parse_color(v: &toml::Value, key: &str) -> Result<Color, StyleError> {
    let bad = |what: String| StyleError::BadColor {
        key: key.into(),
        what,
    };
    match v {
        toml::Value::Integer(i) => u8::try_from(*i)
            .map(Color::Indexed)
            .map_err(|_| bad(format!("color index {i} is out of range"))),
        toml::Value::String(s) => {
            if let Some(hex) = s.strip_prefix('#') {
                if hex.len() == 6
                    && let Ok(n) = u32::from_str_radix(hex, 16)
                {
                    return Ok(Color::Rgb((n >> 16) as u8, (n >> 8) as u8, n as u8));
                }
                return Err(bad(format!("invalid color {s:?}")));
            }
            let c = match s.to_ascii_lowercase().replace(['-', '_', ' '], "").as_str() {
                "reset" | "default" => Color::Reset,
                "black" => Color::Black,
                "red" => Color::Red,
                "green" => Color::Green,
                "yellow" => Color::Yellow,
                "blue" => Color::Blue,
                "magenta" => Color::Magenta,
                "cyan" => Color::Cyan,
                "gray" | "grey" => Color::Gray,
                "darkgray" | "darkgrey" => Color::DarkGray,
                "lightred" => Color::LightRed,
                "lightgreen" => Color::LightGreen,
                "lightyellow" => Color::LightYellow,
                "lightblue" => Color::LightBlue,
                "lightmagenta" => Color::LightMagenta,
                "lightcyan" => Color::LightCyan,
                "white" => Color::White,
                _ => return Err(bad(format!("unknown color {s:?}"))),
            };
            Ok(c)
        }
        other => Err(bad(format!(
            "expected a string or an integer, not {}",
            other.type_str()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_themes_parse_and_differ() {
        let themes: Vec<Theme> = BUILTIN
            .iter()
            .map(|(n, _)| Theme::builtin(n).unwrap())
            .collect();
        for (t, (n, _)) in themes.iter().zip(BUILTIN) {
            assert_eq!(t.name, n);
        }
        assert_ne!(themes[0].critical, themes[1].critical);
        assert_ne!(themes[0].base, themes[2].base);
    }

    #[test]
    fn errors_name_the_key() {
        let e = Theme::parse("[roles]\ncritcal = { fg = \"red\" }\n", "x.toml").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("theme x.toml: unknown role `roles.critcal`"),
            "{e}"
        );
        let e = Theme::parse(
            "extends = \"dark\"\n[roles]\nok = { fg = \"#12345\" }\n",
            "x.toml",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("roles.ok.fg: invalid color \"#12345\""),
            "{e}"
        );
        let e = Theme::parse(
            "extends = \"dark\"\n[roles]\nok = { fg = \"blurple\" }\n",
            "y",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("roles.ok.fg: unknown color \"blurple\""),
            "{e}"
        );
        let e = Theme::parse(
            "extends = \"dark\"\n[roles]\nok = { bold = \"yes\" }\n",
            "y",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("roles.ok.bold: expected true or false"),
            "{e}"
        );
        let e =
            Theme::parse("extends = \"dark\"\n[roles]\nok = { fgg = \"red\" }\n", "y").unwrap_err();
        assert!(e.to_string().contains("roles.ok: unknown key `fgg`"), "{e}");
        let e = Theme::parse("[roles]\nok = { fg = \"red\" }\n", "y").unwrap_err();
        assert!(e.to_string().contains("missing roles `roles.base`"), "{e}");
        let e = Theme::parse("colour = 1\n", "y").unwrap_err();
        assert!(e.to_string().contains("unknown key `colour`"), "{e}");
        let e = Theme::parse("[roles\n", "z.toml").unwrap_err();
        assert!(e.to_string().starts_with("theme z.toml: "), "{e}");
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = Theme::load("no-such-theme").unwrap_err();
        assert!(e.to_string().contains("dark, light, high-contrast"), "{e}");
    }

    #[test]
    fn extends_overrides_part_of_a_base() {
        let t = Theme::parse(
            "name = \"mine\"\nextends = \"light\"\n[roles]\ncritical = { fg = 196 }\n",
            "mine.toml",
        )
        .unwrap();
        let light = Theme::light();
        assert_eq!(t.name, "mine");
        assert_eq!(t.critical, Style::default().fg(Color::Indexed(196)));
        assert_eq!(t.ok, light.ok);
        assert_eq!(t.base, light.base);
    }

    #[test]
    fn without_color_keeps_attributes_and_a_reversed_selection() {
        for (n, _) in BUILTIN {
            let t = Theme::builtin(n).unwrap().without_color();
            assert!(!t.has_color(), "{n}");
            assert!(t.selection.add_modifier.contains(Modifier::REVERSED), "{n}");
            assert_eq!(t.name, n);
        }
        assert!(Theme::dark().has_color());
        assert!(
            Theme::dark()
                .without_color()
                .critical
                .add_modifier
                .contains(Modifier::BOLD)
        );
        // A theme file without colour gets a selection that shows.
        let mono = Theme::parse(
            "extends = \"dark\"\n[roles]\nselection = { bold = true }\n",
            "mono.toml",
        )
        .unwrap();
        assert_eq!(
            mono.selection,
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        );
    }

    #[test]
    fn cycling_visits_every_shipped_theme() {
        let mut t = Theme::dark();
        let mut seen = vec![t.name.clone()];
        for _ in 0..BUILTIN.len() - 1 {
            t = t.next_builtin();
            seen.push(t.name.clone());
        }
        assert_eq!(seen, BUILTIN.map(|(n, _)| n.to_string()));
        assert_eq!(t.next_builtin().name, "dark");
    }
}
