//! The TUI state and how actions change it. Drawing lives in
//! [`super::render`] and the screen modules; it only reads this state.

use super::action::Action;
use super::keys::Ctx;
use super::screens::{detail, execution, groups};
use super::theme::Theme;
use crate::journal::Progress;
use crate::query::Investigation;
use ratatui::layout::Rect;

/// Loaded journals with the views the screens keep over them.
#[derive(Debug)]
pub struct Data {
    /// The investigation (read only through the query layer).
    pub inv: Investigation,
}

impl Data {
    /// Prepares what the screens need once, off the UI thread.
    pub fn new(inv: Investigation) -> Data {
        Data { inv }
    }
}

/// How far loading has come.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadProgress {
    /// Names of the journals being loaded.
    pub journals: Vec<String>,
    /// The latest progress report, if any.
    pub progress: Option<Progress>,
    /// Reading is done; the analysis runs.
    pub analysing: bool,
}

/// Loading, failed, or ready.
#[derive(Debug)]
pub enum Load {
    /// Journals are being read.
    Loading(LoadProgress),
    /// Loading failed (the message names file and line).
    Failed(String),
    /// Ready.
    Ready(Box<Data>),
}

/// What the background loader reports.
#[derive(Debug)]
pub enum LoadMsg {
    /// Bytes read so far.
    Progress(Progress),
    /// Reading is done; analysis runs.
    Analysing,
    /// The result.
    Done(Result<Box<Data>, String>),
}

/// A screen on the navigation stack with its own state.
#[derive(Debug)]
pub enum View {
    /// The groups table (its state lives in [`App::groups`]).
    Groups,
    /// One group.
    Detail(Box<detail::State>),
    /// One execution.
    Execution(Box<execution::State>),
}

/// The whole TUI state.
#[derive(Debug)]
pub struct App {
    /// Styles.
    pub theme: Theme,
    /// Loading or loaded data.
    pub load: Load,
    /// Screens, the current one last. Never empty.
    pub stack: Vec<View>,
    /// The groups table.
    pub groups: groups::State,
    /// Help is open, with its scroll position.
    pub help: Option<usize>,
    /// The terminal size, for page lengths.
    pub area: Rect,
    /// Set by [`Action::Quit`].
    pub quit: bool,
}

impl App {
    /// A new app waiting for journals with these names.
    pub fn new(journals: Vec<String>, theme: Theme, area: Rect) -> App {
        App {
            theme,
            load: Load::Loading(LoadProgress {
                journals,
                ..LoadProgress::default()
            }),
            stack: vec![View::Groups],
            groups: groups::State::default(),
            help: None,
            area,
            quit: false,
        }
    }

    /// A ready app over an investigation (tests and benches use this).
    pub fn ready(inv: Investigation, theme: Theme, area: Rect) -> App {
        let mut app = App::new(Vec::new(), theme, area);
        app.on_load(LoadMsg::Done(Ok(Box::new(Data::new(inv)))));
        app
    }

    /// The loaded data, if ready.
    pub fn data(&self) -> Option<&Data> {
        match &self.load {
            Load::Ready(d) => Some(d),
            _ => None,
        }
    }

    /// The current screen.
    pub fn view(&self) -> &View {
        // The stack is never empty; Groups is the fallback for the type.
        self.stack.last().unwrap_or(&View::Groups)
    }

    /// Which key table applies now.
    pub fn ctx(&self) -> Ctx {
        if self.help.is_some() {
            return Ctx::Help;
        }
        self.screen_ctx()
    }

    /// Which key table the current screen uses (under help, if open).
    pub fn screen_ctx(&self) -> Ctx {
        if self.data().is_none() {
            return Ctx::Loading;
        }
        match self.view() {
            View::Groups => Ctx::Groups,
            View::Detail(_) => Ctx::Detail,
            View::Execution(_) => Ctx::Execution,
        }
    }

    /// Applies a loader message.
    pub fn on_load(&mut self, msg: LoadMsg) {
        match msg {
            LoadMsg::Progress(p) => {
                if let Load::Loading(lp) = &mut self.load {
                    lp.progress = Some(p);
                }
            }
            LoadMsg::Analysing => {
                if let Load::Loading(lp) = &mut self.load {
                    lp.analysing = true;
                }
            }
            LoadMsg::Done(Err(e)) => self.load = Load::Failed(e),
            LoadMsg::Done(Ok(d)) => {
                self.groups = groups::State::new(&d);
                self.load = Load::Ready(d);
            }
        }
    }

    /// Applies an action.
    pub fn update(&mut self, action: Action) {
        match action {
            Action::Quit => {
                self.quit = true;
                return;
            }
            Action::Resize(w, h) => {
                self.area = Rect::new(0, 0, w, h);
                return;
            }
            Action::ToggleHelp => {
                self.help = if self.help.is_some() { None } else { Some(0) };
                return;
            }
            _ => {}
        }
        if let Some(scroll) = &mut self.help {
            match action {
                Action::Back => self.help = None,
                Action::Down => *scroll += 1,
                Action::Up => *scroll = scroll.saturating_sub(1),
                Action::PageDown => *scroll += 10,
                Action::PageUp => *scroll = scroll.saturating_sub(10),
                Action::Top => *scroll = 0,
                _ => {}
            }
            return;
        }
        let body = super::render::body_area(self.area);
        let Load::Ready(data) = &self.load else {
            return;
        };
        let top = self.stack.len() - 1;
        let push = match &mut self.stack[top] {
            View::Groups => groups::update(data, &mut self.groups, action, body),
            View::Detail(st) => detail::update(data, st, action, body),
            View::Execution(st) => execution::update(data, st, action, body),
        };
        match push {
            Nav::Stay => {}
            Nav::Back => {
                if self.stack.len() > 1 {
                    self.stack.pop();
                }
            }
            Nav::Push(v) => self.stack.push(v),
        }
    }
}

/// What a screen's update asks of the navigation stack.
#[derive(Debug)]
pub enum Nav {
    /// Stay on this screen.
    Stay,
    /// Go back one screen.
    Back,
    /// Open another screen on top.
    Push(View),
}
