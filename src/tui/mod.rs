//! The terminal UI (ratatui + crossterm).
//!
//! Shape (DESIGN.md §8–§9): an [`Action`] enum is the one vocabulary that
//! keys map to and tests send; [`App::update`] applies actions to the
//! state; [`render::render`] draws the state and changes nothing; journals
//! load on a background thread that reports progress and the result over a
//! channel; the screen is redrawn only after something happened, once per
//! batch of events.

pub mod action;
pub mod app;
pub mod clipboard;
pub mod dialog;
pub mod input;
pub mod jobs;
pub mod keys;
pub mod render;
pub mod screens;
pub mod theme;
pub mod widgets;

pub use action::Action;
pub use app::App;

use crate::cli::{Common, Inputs};
use crate::journal::{self, Progress};
use crate::query::Investigation;
use app::{Data, LoadMsg};
use ratatui::crossterm::event::{self, DisableBracketedPaste, EnableBracketedPaste, Event};
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
}

/// Starts loading `inputs` on a background thread; progress and the result
/// arrive through `send`.
fn spawn_loader(
    inputs: Inputs,
    forced: Option<journal::Format>,
    send: impl Fn(LoadMsg) + Send + 'static,
) {
    std::thread::spawn(move || {
        let mut last = Instant::now() - Duration::from_secs(1);
        let mut progress = |p: Progress| {
            // At most ~30 reports a second: the UI redraws on each.
            if last.elapsed() >= Duration::from_millis(33) {
                last = Instant::now();
                send(LoadMsg::Progress(p));
            }
        };
        let loaded = journal::load(inputs.sources, forced, &mut progress);
        let result = loaded.map(|(journals, model)| {
            send(LoadMsg::Analysing);
            Box::new(Data::with_decisions(
                Investigation::analyze(journals, model, &inputs.config),
                &inputs.case.decisions,
            ))
        });
        send(LoadMsg::Done(result.map_err(|e| e.to_string())));
    });
}

/// Runs the TUI until the user quits. The case file in `inputs` (its
/// decisions already in the configuration) is where decisions are
/// recorded; `common` gives the reviewer name and read-only mode.
///
/// # Errors
/// Terminal errors; and when the journals could not be loaded, the load
/// error (naming file and line) once the user has read it on screen and
/// quit, so that the process exits 2 as for any unreadable input
/// (DESIGN.md §7).
pub fn run(inputs: Inputs, common: &Common) -> Result<(), std::io::Error> {
    let names: Vec<String> = inputs.sources.iter().map(|s| s.name.clone()).collect();
    let review = app::ReviewSetup::new(inputs.case.clone(), common);
    // A bad theme is reported before the screen is taken over.
    let theme = match &common.theme {
        Some(t) => theme::Theme::load(t).map_err(std::io::Error::other)?,
        None => theme::Theme::default(),
    };
    {
        use std::io::IsTerminal;
        if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
            return Err(std::io::Error::other(
                "the TUI needs a terminal; for output to a pipe or a file use a headless command: \
                 retrace groups, investigate, verify, review or export (retrace --help)",
            ));
        }
    }
    // `try_init` enters the alternate screen and raw mode, and installs a
    // panic hook that restores the terminal before the panic is reported.
    let mut terminal = ratatui::try_init()?;
    // A paste arrives as one event (not one key per character) where the
    // terminal supports it.
    let _ = execute!(std::io::stdout(), EnableBracketedPaste);
    let result = (|| {
        let size = terminal.size()?;
        let mut app = App::new(names, theme, Rect::new(0, 0, size.width, size.height));
        app.review = review;
        let (tx, rx) = mpsc::channel::<Msg>();
        let load_tx = tx.clone();
        let job_tx = tx.clone();
        spawn_loader(inputs, common.input_format, move |m| {
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
                        Msg::Term(ev) => typed.event(&mut app, ev),
                    }
                    if app.quit {
                        return match app.load_error() {
                            Some(e) => Err(std::io::Error::other(format!(
                                "could not load the journals: {}",
                                crate::sanitize::escape(e)
                            ))),
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
                }
            }
            terminal.draw(|f| render::render(&app, f))?;
            last_draw = Instant::now();
        }
        Ok(())
    })();
    let _ = execute!(std::io::stdout(), DisableBracketedPaste);
    ratatui::restore();
    result
}
