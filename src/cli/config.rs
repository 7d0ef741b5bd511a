//! The settings file and how it meets the flags: `--config FILE`, else
//! `$XDG_CONFIG_HOME/retrace/config.toml`, else
//! `~/.config/retrace/config.toml` (the XDG Base Directory rule). Flags win
//! over the file, the file over the environment (the login name for the
//! reviewer, `NO_COLOR`), and those over the defaults. `retrace config`
//! prints what came from where.
//!
//! ```toml
//! contracts = ["~/ops/contracts.toml", "contracts.local.toml"]
//! key_file = "~/ops/fingerprint.key"
//! signer_key = "~/ops/sallyport-signer.pub"
//! audit_identity = "~/ops/sallyport-identity"
//! attestation_key = "~/ops/mcp-audit.key"
//! theme = "high-contrast"
//! reviewer = "alice"
//! read_only = false
//! color = "auto"
//! mouse = true
//! ```
//!
//! Relative paths in the file are relative to the file's folder; a leading
//! `~/` is the home folder. An unknown key is an error naming its line.

use super::args::{AnalysisOpts, CaseOpts, ColorWhen, ReadOpts, ReviewerOpts, TuiOpts, WindowOpts};
use crate::query::Setup;
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// The settings file's keys; every one optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Default contracts files, in order.
    pub contracts: Option<Vec<PathBuf>>,
    /// Deployment key for HMAC fingerprints.
    pub key_file: Option<PathBuf>,
    /// Sallyport signer public key.
    pub signer_key: Option<PathBuf>,
    /// Sallyport audit identity.
    pub audit_identity: Option<PathBuf>,
    /// mcp-audit attestation key.
    pub attestation_key: Option<PathBuf>,
    /// TUI theme name or file.
    pub theme: Option<String>,
    /// Reviewer name.
    pub reviewer: Option<String>,
    /// Never write anything.
    pub read_only: Option<bool>,
    /// When to colour output.
    pub color: Option<ColorWhen>,
    /// Whether the TUI takes the mouse (clicks select, the wheel scrolls).
    pub mouse: Option<bool>,
}

/// A settings file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// It could not be read.
    #[error("{path}: cannot read the settings file: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// It is not valid settings TOML.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// Line, column, the line itself, and what is wrong.
        message: String,
    },
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A command-line flag.
    Flag,
    /// The settings file.
    File(PathBuf),
    /// The environment (a login name, `NO_COLOR`).
    Environment(&'static str),
    /// Nobody set it.
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag => f.write_str("flag"),
            Source::File(p) => write!(f, "settings file {}", p.display()),
            Source::Environment(v) => write!(f, "environment ({v})"),
            Source::Default => f.write_str("default"),
        }
    }
}

/// The settings file in use: the one given, else the XDG one when it exists.
fn settings_path(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    let p = base.join("retrace").join("config.toml");
    p.exists().then_some(p)
}

/// `~/x` is `$HOME/x`; a relative path is relative to `dir`.
fn resolve_path(p: &Path, dir: &Path) -> PathBuf {
    if let Ok(rest) = p.strip_prefix("~")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    if p.is_relative() {
        dir.join(p)
    } else {
        p.to_path_buf()
    }
}

impl Settings {
    /// Reads the settings file (`explicit`, else the XDG one); none is
    /// empty settings. Paths in it are resolved against its folder.
    ///
    /// # Errors
    /// [`ConfigError`] naming the file, and for bad TOML its line and key.
    pub fn load(explicit: Option<&Path>) -> Result<Option<(PathBuf, Settings)>, ConfigError> {
        let Some(path) = settings_path(explicit) else {
            return Ok(None);
        };
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| ConfigError::Read {
            path: name.clone(),
            source: e,
        })?;
        let mut s: Settings = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: name,
            message: crate::toml_file::toml_error(&text, &e),
        })?;
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let fix = |p: &mut Option<PathBuf>| {
            if let Some(v) = p {
                *v = resolve_path(v, &dir);
            }
        };
        if let Some(c) = &mut s.contracts {
            for p in c.iter_mut() {
                *p = resolve_path(p, &dir);
            }
        }
        fix(&mut s.key_file);
        fix(&mut s.signer_key);
        fix(&mut s.audit_identity);
        fix(&mut s.attestation_key);
        Ok(Some((path, s)))
    }
}

/// One setting's value in words, with where it came from.
#[derive(Debug, Clone)]
pub struct Effective {
    /// The setting's name (as in the settings file).
    pub name: &'static str,
    /// Its value in words (`-` when unset).
    pub value: String,
    /// Where it came from.
    pub source: Source,
}

/// The flags of a command, merged with the settings file into a [`Setup`]
/// and the TUI's and output's choices, each with where it came from.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// What to investigate.
    pub setup: Setup,
    /// The TUI theme, if any.
    pub theme: Option<String>,
    /// Whether to colour output.
    pub color: ColorWhen,
    /// Whether the TUI takes the mouse.
    pub mouse: bool,
    /// Every setting with its source, for `retrace config`.
    pub effective: Vec<Effective>,
}

impl Resolved {
    /// What the TUI takes from these settings: the theme, the mouse, and
    /// colour off
    /// under `--color never`, `color = "never"` or (with `auto`)
    /// `NO_COLOR` (no-color.org: any non-empty value).
    pub fn tui_options(&self) -> crate::tui::Options {
        let no_color_env = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        crate::tui::Options {
            theme: self.theme.clone(),
            color: match self.color {
                ColorWhen::Always => true,
                ColorWhen::Never => false,
                ColorWhen::Auto => !no_color_env,
            },
            mouse: self.mouse,
        }
    }
}

/// The flags a command was given.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// Journals.
    pub journals: Vec<PathBuf>,
    /// How journals are read.
    pub read: ReadOpts,
    /// Contracts and key.
    pub analysis: AnalysisOpts,
    /// The case file.
    pub case: CaseOpts,
    /// The reviewer.
    pub reviewer: ReviewerOpts,
    /// The TUI.
    pub tui: TuiOpts,
    /// `--color`.
    pub color: Option<ColorWhen>,
    /// `--since`, `--until`.
    pub window: WindowOpts,
}

/// Picks a value: the flag's, else the file's, else none; with its source.
fn pick<T: Clone>(flag: Option<T>, file: Option<T>, path: Option<&Path>) -> (Option<T>, Source) {
    match (flag, file, path) {
        (Some(v), _, _) => (Some(v), Source::Flag),
        (None, Some(v), Some(p)) => (Some(v), Source::File(p.to_path_buf())),
        _ => (None, Source::Default),
    }
}

fn shown(p: &Option<PathBuf>) -> String {
    p.as_ref()
        .map_or_else(|| "-".into(), |p| p.display().to_string())
}

/// Merges a command's flags with the settings file (flags win).
pub fn resolve(flags: Flags, settings: Option<(PathBuf, Settings)>) -> Resolved {
    let (path, file) = match settings {
        Some((p, s)) => (Some(p), s),
        None => (None, Settings::default()),
    };
    let path = path.as_deref();
    let mut effective = Vec::new();
    let mut note = |name: &'static str, value: String, source: Source| {
        effective.push(Effective {
            name,
            value,
            source,
        });
    };

    let contracts_flag = (!flags.analysis.contracts.is_empty()).then_some(flags.analysis.contracts);
    let (contracts, src) = pick(contracts_flag, file.contracts, path);
    let contracts = contracts.unwrap_or_default();
    note(
        "contracts",
        if contracts.is_empty() {
            "-".into()
        } else {
            contracts
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        },
        src,
    );
    let mut path_setting = |name, flag: Option<PathBuf>, from_file: Option<PathBuf>| {
        let (v, src) = pick(flag, from_file, path);
        note(name, shown(&v), src);
        v
    };
    let key_file = path_setting("key_file", flags.analysis.key_file, file.key_file);
    let signer_key = path_setting("signer_key", flags.read.signer_key, file.signer_key);
    let audit_identity = path_setting(
        "audit_identity",
        flags.read.audit_identity,
        file.audit_identity,
    );
    let attestation_key = path_setting(
        "attestation_key",
        flags.read.attestation_key,
        file.attestation_key,
    );
    let (theme, src) = pick(flags.tui.theme, file.theme, path);
    note("theme", theme.clone().unwrap_or_else(|| "dark".into()), src);

    let (reviewer, mut src) = pick(flags.reviewer.reviewer, file.reviewer, path);
    let reviewer = match reviewer {
        Some(r) => Some(r),
        None => {
            let login = crate::review::reviewer(None);
            if login.is_some() {
                src = Source::Environment("login name");
            }
            login
        }
    };
    note(
        "reviewer",
        reviewer.clone().unwrap_or_else(|| "-".into()),
        src,
    );

    let (read_only, src) = pick(flags.case.read_only.then_some(true), file.read_only, path);
    let read_only = read_only.unwrap_or(false);
    note("read_only", read_only.to_string(), src);

    let (color, mut src) = pick(flags.color, file.color, path);
    let color = match color {
        Some(c) => c,
        None if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => {
            src = Source::Environment("NO_COLOR");
            ColorWhen::Never
        }
        None => ColorWhen::Auto,
    };
    note("color", format!("{color:?}").to_lowercase(), src);

    let (mouse, src) = pick(flags.tui.no_mouse.then_some(false), file.mouse, path);
    let mouse = mouse.unwrap_or(true);
    note("mouse", mouse.to_string(), src);

    let setup = Setup {
        // `-` is standard input, as for cat and jq.
        journals: flags
            .journals
            .into_iter()
            .map(|p| {
                if p.as_os_str() == "-" {
                    PathBuf::from("/dev/stdin")
                } else {
                    p
                }
            })
            .collect(),
        recursive: flags.read.recursive,
        input_format: flags.read.input_format,
        contracts,
        key_file,
        signer_key,
        audit_identity,
        attestation_key,
        case: flags.case.case,
        reviewer,
        read_only,
        window: flags.window.window(),
        // Only a follower keeps both of two alike files (`watch` asks).
        keep_copies: false,
    };
    Resolved {
        setup,
        theme,
        color,
        mouse,
        effective,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_the_file_over_defaults() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.toml");
        std::fs::write(
            &p,
            "contracts = [\"c.toml\"]\ntheme = \"light\"\nreviewer = \"bob\"\nread_only = true\n",
        )
        .unwrap();
        let s = Settings::load(Some(&p)).unwrap();
        let flags = Flags {
            tui: TuiOpts {
                theme: Some("dark".into()),
                ..TuiOpts::default()
            },
            ..Flags::default()
        };
        let r = resolve(flags, s);
        assert_eq!(r.theme.as_deref(), Some("dark"));
        assert_eq!(r.setup.contracts, vec![d.path().join("c.toml")]);
        assert_eq!(r.setup.reviewer.as_deref(), Some("bob"));
        assert!(r.setup.read_only);
        let src = |n: &str| {
            r.effective
                .iter()
                .find(|e| e.name == n)
                .unwrap()
                .source
                .clone()
        };
        assert_eq!(src("theme"), Source::Flag);
        assert_eq!(src("reviewer"), Source::File(p.clone()));
        assert_eq!(src("key_file"), Source::Default);
    }

    #[test]
    fn the_tui_draws_without_colour_under_color_never() {
        let with = |color| {
            let flags = Flags {
                color: Some(color),
                ..Flags::default()
            };
            resolve(flags, None).tui_options().color
        };
        assert!(!with(ColorWhen::Never));
        assert!(with(ColorWhen::Always));
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.toml");
        std::fs::write(&p, "color = \"never\"\n").unwrap();
        let r = resolve(Flags::default(), Settings::load(Some(&p)).unwrap());
        assert!(!r.tui_options().color);
    }

    /// The mouse is on unless the settings file or `--no-mouse` turn it
    /// off; `retrace config` says which.
    #[test]
    fn the_mouse_setting_and_where_it_came_from() {
        let src = |r: &Resolved| {
            r.effective
                .iter()
                .find(|e| e.name == "mouse")
                .map(|e| (e.value.clone(), e.source.clone()))
                .unwrap()
        };
        let r = resolve(Flags::default(), None);
        assert!(r.tui_options().mouse);
        assert_eq!(src(&r), ("true".into(), Source::Default));
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.toml");
        std::fs::write(&p, "mouse = false\n").unwrap();
        let r = resolve(Flags::default(), Settings::load(Some(&p)).unwrap());
        assert!(!r.tui_options().mouse);
        assert_eq!(src(&r), ("false".into(), Source::File(p.clone())));
        let flags = Flags {
            tui: TuiOpts {
                no_mouse: true,
                ..TuiOpts::default()
            },
            ..Flags::default()
        };
        let r = resolve(flags, None);
        assert!(!r.tui_options().mouse);
        assert_eq!(src(&r), ("false".into(), Source::Flag));
    }

    #[test]
    fn a_bad_settings_file_names_its_line_and_key() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.toml");
        std::fs::write(&p, "theme = \"dark\"\nreveiwer = \"bob\"\n").unwrap();
        let e = Settings::load(Some(&p)).unwrap_err().to_string();
        assert!(e.contains("config.toml: line 2"), "{e}");
        assert!(e.contains("reveiwer"), "{e}");
        std::fs::write(&p, "read_only = \"yes\"\n").unwrap();
        let e = Settings::load(Some(&p)).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("read_only"), "{e}");
    }
}
