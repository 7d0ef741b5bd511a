//! The terminal UI (ratatui, with crossterm as ratatui re-exports it:
//! `ratatui::crossterm`, so that the two can never disagree on a version).
//!
//! Shape (docs/design.md §8–§9): an [`Action`] enum is the one vocabulary that
//! keys map to and tests send; the key table ([`keys::KeyMap`], data) maps
//! keys to actions and is what help and the key line show; [`App::update`]
//! applies actions to the state; [`render::render`] draws the state and
//! changes nothing; journals load on a background thread that reports
//! progress and the result over a channel; the screen is redrawn only
//! after something happened, once per batch of events.
//!
//! Screens ([`screens`]) implement [`screen::Screen`]: each owns its state
//! on the app's stack ([`stack::Stack`]), updates from an action given a
//! read-only [`screen::Context`], draws as a pure function of its state,
//! and returns what it asks of the app ([`screen::Nav`]). The shared types
//! live in [`screen`], [`data`], [`keys`] and [`widgets`], which know no
//! screen; the app knows the screens only through [`screens::REGISTRY`].
//! Everything is read through [`crate::query`].

pub mod action;
pub mod app;
pub mod clipboard;
pub mod data;
pub mod dialog;
pub mod follow;
pub mod input;
pub mod jobs;
pub mod keys;
pub mod render;
pub mod screen;
pub mod screens;
pub mod search;
pub mod stack;
pub mod theme;
pub mod widgets;

pub use action::Action;
pub use app::App;

use crate::query::{Investigation, LoadStage, Prepared, QueryError, Setup, SetupError};
use data::{Data, LoadMsg};
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event,
};
use ratatui::crossterm::execute;
use ratatui::layout::Rect;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The shortest time between two frames while input streams in.
const FRAME: Duration = Duration::from_millis(16);

enum Msg {
    Term(Event),
    Load(LoadMsg),
    Job(jobs::JobMsg),
    Follow(follow::FollowMsg),
}

/// Why the TUI could not run; the binary maps it to an exit code (2 for
/// input that could not be used, 1 for a terminal that failed).
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// A file the setup names could not be used (said before the screen is
    /// taken over).
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The theme could not be read.
    #[error(transparent)]
    Theme(#[from] theme::ThemeError),
    /// The journals could not be loaded (said on screen first).
    #[error("could not load the journals: {0}")]
    Load(#[source] QueryError),
    /// No terminal, or the terminal failed.
    #[error("{0}")]
    Terminal(#[from] std::io::Error),
}

/// How the TUI looks and takes input: the TUI's flags merged with the
/// settings file (README "Settings, colour, completions").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// A theme name from `themes/` or a theme file; `None` is `dark`.
    pub theme: Option<String>,
    /// Whether to draw in colour: false under `NO_COLOR` and `--color
    /// never` (then every theme is [`theme::Theme::without_color`] and the
    /// selection is reverse video).
    pub color: bool,
    /// Whether the TUI takes the mouse: clicks select rows and jump to
    /// evidence, the wheel scrolls. Off, mouse reporting stays off and the
    /// terminal keeps its own selection.
    pub mouse: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            theme: None,
            color: true,
            mouse: true,
        }
    }
}

/// Starts loading on a background thread; progress and the result arrive
/// through `send`.
fn spawn_loader(prepared: Prepared, send: impl Fn(LoadMsg) + Send + 'static) {
    std::thread::spawn(move || {
        let mut last = Instant::now() - Duration::from_secs(1);
        let mut progress = |s: LoadStage| match s {
            // At most ~30 reports a second: the UI redraws on each.
            LoadStage::Reading(p) if last.elapsed() >= Duration::from_millis(33) => {
                last = Instant::now();
                send(LoadMsg::Progress(p));
            }
            LoadStage::Reading(_) => {}
            LoadStage::Analysing => send(LoadMsg::Analysing),
        };
        let result =
            Investigation::load(prepared, &mut progress).map(|inv| Box::new(Data::new(inv)));
        send(LoadMsg::Done(result));
    });
}

/// Runs the TUI until the user quits: prepares the setup (contracts, keys,
/// the case file, read here so that a bad one is said before the screen is
/// taken over), loads the journals off the UI thread, and draws, as
/// `options` say.
///
/// # Errors
/// [`TuiError`]; when the journals could not be loaded, the load error
/// (naming file and line) once the user has read it on screen and quit, so
/// that the process exits 2 as for any unreadable input (docs/design.md §7).
pub fn run(setup: &Setup, options: &Options) -> Result<(), TuiError> {
    // A bad theme is reported before the screen is taken over.
    let theme = match options.theme.as_deref() {
        Some(t) => theme::Theme::load(t)?,
        None => theme::Theme::default(),
    };
    let theme = if options.color {
        theme
    } else {
        theme.without_color()
    };
    let prepared = setup.prepare()?;
    {
        use std::io::IsTerminal;
        if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
            return Err(TuiError::Terminal(std::io::Error::other(
                "the TUI needs a terminal; for output to a pipe or a file use a headless command: \
                 retrace groups, investigate, verify, review or export (retrace --help)",
            )));
        }
    }
    crate::cli::warn(&prepared.warnings);
    let names = prepared.journal_names();
    // `try_init` enters the alternate screen and raw mode, and installs a
    // panic hook that restores the terminal before the panic is reported.
    let mut terminal = ratatui::try_init()?;
    // A paste arrives as one event (not one key per character) where the
    // terminal supports it; the mouse reports clicks and the wheel only
    // when it is on.
    let _ = execute!(std::io::stdout(), EnableBracketedPaste);
    if options.mouse {
        let _ = execute!(std::io::stdout(), EnableMouseCapture);
    }
    // A panic hands the terminal back as it was: mouse reporting and
    // bracketed paste off, then ratatui's hook leaves raw mode and the
    // alternate screen. (A shell would otherwise get escape sequences for
    // every mouse move.)
    let restore_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(
            std::io::stdout(),
            DisableMouseCapture,
            DisableBracketedPaste
        );
        restore_hook(info);
    }));
    let result = (|| -> Result<(), TuiError> {
        let size = terminal.size()?;
        let mut app = App::new(names, theme, Rect::new(0, 0, size.width, size.height));
        app.color = options.color;
        app.mouse = options.mouse;
        let (tx, rx) = mpsc::channel::<Msg>();
        let load_tx = tx.clone();
        let job_tx = tx.clone();
        let follow_tx = tx.clone();
        spawn_loader(prepared, move |m| {
            let _ = load_tx.send(Msg::Load(m));
        });
        std::thread::spawn(move || {
            while let Ok(ev) = event::read() {
                if tx.send(Msg::Term(ev)).is_err() {
                    break;
                }
            }
        });
        terminal.draw(|f| render::render(&app, f))?;
        let mut typed = input::Typed::default();
        let mut last_draw = Instant::now();
        while let Ok(first) = rx.recv() {
            // Apply everything that is waiting (characters typed into a
            // field as one edit), then draw once. Input that streams in
            // (a paste sent as keys) is drawn at most once a frame: what
            // arrives before the next frame is due joins this batch.
            let mut next = Some(first);
            loop {
                while let Some(msg) = next {
                    match msg {
                        Msg::Load(m) => {
                            typed.flush(&mut app);
                            app.on_load(m);
                        }
                        Msg::Job(m) => {
                            typed.flush(&mut app);
                            app.on_job(m);
                        }
                        Msg::Follow(m) => {
                            typed.flush(&mut app);
                            app.on_follow(m);
                        }
                        Msg::Term(ev) => typed.event(&mut app, ev),
                    }
                    if app.quit {
                        return match app.take_load_error() {
                            Some(e) => Err(TuiError::Load(e)),
                            None => Ok(()),
                        };
                    }
                    next = rx.try_recv().ok();
                }
                let due = last_draw + FRAME;
                let now = Instant::now();
                if now >= due {
                    break;
                }
                match rx.recv_timeout(due - now) {
                    Ok(m) => next = Some(m),
                    Err(_) => break,
                }
            }
            typed.flush(&mut app);
            let effects: Vec<app::Effect> = app.effects.drain(..).collect();
            for effect in effects {
                match effect {
                    app::Effect::Clipboard(text) => {
                        use std::io::Write;
                        let out = terminal.backend_mut();
                        out.write_all(clipboard::osc52(&text).as_bytes())?;
                        out.flush()?;
                    }
                    app::Effect::Job(job) => match app.shared_data() {
                        Some(data) => {
                            let tx = job_tx.clone();
                            jobs::spawn(*job, data, move |m| {
                                let _ = tx.send(Msg::Job(m));
                            });
                        }
                        None => app.job = None,
                    },
                    app::Effect::Follow {
                        generation,
                        control,
                    } => {
                        let tx = follow_tx.clone();
                        follow::spawn(setup.clone(), generation, control, move |m| {
                            let _ = tx.send(Msg::Follow(m));
                        });
                    }
                }
            }
            terminal.draw(|f| render::render(&app, f))?;
            last_draw = Instant::now();
        }
        Ok(())
    })();
    // Whatever ended the loop (quit, a load error, a terminal error).
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste
    );
    ratatui::restore();
    result
}
